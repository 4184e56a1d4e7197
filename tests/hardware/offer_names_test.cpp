// Every GPU/accelerator name that appears in the real offer files bundled under data/offers/
// must resolve to a row of the bundled hardware catalog (issue: "Hardware catalog").
// Rows without an accelerator (CPU instances: empty name) are skipped.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "hardware/gpu_spec.hpp"
#include "util/csv.hpp"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
const fs::path kOffers = fs::path(GPUPLAN_SOURCE_DIR) / "data" / "offers";

/// name -> one file it was seen in (for the failure message).
using NameSet = std::map<std::string, std::string>;

void add(NameSet& names, const std::string& name, const std::string& where) {
  if (!name.empty()) names.emplace(name, where);
}

/// SkyPilot's GpuInfo cell is a Python dict literal ({'Gpus': [{'Name': 'A100', ...}], ...}),
/// sometimes with JSON null; v6 files hold a bare name instead.
void add_gpu_info(NameSet& names, const std::string& cell, const std::string& where) {
  if (cell.empty()) return;
  if (cell.front() != '{') {
    add(names, cell, where + " GpuInfo");
    return;
  }
  std::string json = cell;
  for (char& c : json)
    if (c == '\'') c = '"';
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"None", "null"}, {"True", "true"}, {"False", "false"}}) {
    for (auto pos = json.find(from); pos != std::string::npos; pos = json.find(from, pos + to.size()))
      json.replace(pos, from.size(), to);
  }
  auto doc = nlohmann::json::parse(json);
  for (const auto& g : doc.at("Gpus")) add(names, g.at("Name").get<std::string>(), where + " GpuInfo");
}

NameSet collect_offer_gpu_names() {
  NameSet names;
  for (const auto& entry : fs::recursive_directory_iterator(kOffers / "skypilot-catalog")) {
    if (entry.path().extension() != ".csv") continue;
    CsvTable t = CsvTable::read_file(entry.path().string());
    const std::string rel = fs::relative(entry.path(), kOffers).string();
    for (const auto& row : t.rows()) {
      if (auto v = t.cell_if(row, "AcceleratorName")) add(names, *v, rel);
      if (auto v = t.cell_if(row, "GPU")) add(names, *v, rel);  // v7/common/metadata.csv
      if (auto v = t.cell_if(row, "GpuInfo")) add_gpu_info(names, *v, rel);
    }
  }
  for (const char* f : {"fsdl-cloud-gpus/cloud-gpus.csv", "fsdl-cloud-gpus/serverless-gpus.csv"}) {
    CsvTable t = CsvTable::read_file((kOffers / f).string());
    for (const auto& row : t.rows()) add(names, t.cell(row, "GPU Type"), f);
  }
  {
    CsvTable t = CsvTable::read_file((kOffers / "ewyluda-gpu-price-index/index-history.csv").string());
    for (const auto& row : t.rows()) add(names, t.cell(row, "gpu_model"), "ewyluda index-history.csv");
  }
  {
    auto doc = nlohmann::json::parse(read_text_file((kOffers / "tardellirs-gpu-pricing/offerings.json").string()));
    for (const auto& o : doc)
      if (o.contains("gpu_model") && o.at("gpu_model").is_string())
        add(names, o.at("gpu_model").get<std::string>(), "tardellirs offerings.json");
  }
  {
    auto doc = nlohmann::json::parse(read_text_file((kOffers / "gpuhunt/tpu_pricing.json").string()));
    for (const auto& item : doc.items()) add(names, item.key(), "gpuhunt tpu_pricing.json");
  }
  return names;
}

TEST(OfferGpuNames, CollectsANonTrivialSet) {
  // Guards the collector itself: these spellings are in the files (checked by hand).
  NameSet names = collect_offer_gpu_names();
  EXPECT_GT(names.size(), 150u);
  for (const char* n : {"H100-80G-PCIe", "A100-80GB", "RTXPRO6000S", "NVIDIA-H100-80GB-HBM3", "TPU v5e", "B300"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(OfferGpuNames, EveryBundledOfferGpuResolves) {
  const GpuCatalog& cat = GpuCatalog::bundled();
  std::string missing;
  for (const auto& [name, where] : collect_offer_gpu_names()) {
    if (!cat.try_find(name)) missing += "  '" + name + "' (" + where + ")\n";
  }
  EXPECT_TRUE(missing.empty()) << "unresolved offer GPU names:\n" << missing;
}

TEST(OfferGpuNames, ProviderSpellingsResolveToTheRightVariant) {
  // Spellings taken from the offer files, with the part each provider documents.
  const GpuCatalog& cat = GpuCatalog::bundled();
  EXPECT_EQ(cat.find("H100-80G-SXM5").name, "NVIDIA H100 SXM");     // Hyperstack
  EXPECT_EQ(cat.find("H100-80G-PCIe-NVLink").name, "NVIDIA H100 PCIe");  // Hyperstack
  EXPECT_EQ(cat.find("A100-80G-PCIe").name, "NVIDIA A100 PCIe 80GB");  // Hyperstack
  EXPECT_EQ(cat.find("A100-80GB-SXM").name, "NVIDIA A100 SXM 80GB");   // SkyPilot common
  EXPECT_EQ(cat.find("NVIDIA A100 SXM4 80GB").name, "NVIDIA A100 SXM 80GB");  // tardellirs
  EXPECT_EQ(cat.find("NVIDIA A100 PCIe", 40e9).name, "NVIDIA A100 PCIe 40GB");  // tardellirs vram_gb 40
  EXPECT_EQ(cat.find("H100 PCIe (80GB)").name, "NVIDIA H100 PCIe");    // fsdl
  EXPECT_EQ(cat.find("NVIDIA H100 NVL").name, "NVIDIA H100 NVL");      // tardellirs
}

}  // namespace
}  // namespace gpuplan
