// End-to-end regression test (issue 8 data work, 2026-12-02): the `gpu_figures_unknown` warning
// named four GPUs and then promised "and N more (--json)", but the JSON carried only the same
// sentence. The warning now lists every skipped GPU in values.gpus (and their number in
// values.gpu_count), and the sentence points there.
// Through the built binary (GPUPLAN_BINARY): the bundled catalog, planned with a GPU file that is
// the bundled data/gpus.csv with the performance figures of six GPUs that bundled offers use
// blanked, so at least six GPUs are skipped whatever else the bundled file lacks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;
namespace fs = std::filesystem;

class GpuFiguresWarningE2E : public BinaryE2E<GpuFiguresWarningE2E> {
 public:
  static constexpr const char* kName = "gpu-figures-warning";
};

/// Splits one CSV record (RFC 4180 quotes, no embedded newlines in data/gpus.csv) into fields,
/// keeping each field's text as written (quotes included) so the line can be joined back.
std::vector<std::string> split_keep_quotes(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (const char ch : line) {
    if (ch == '"') quoted = !quoted;
    if (ch == ',' && !quoted) {
      out.emplace_back();
      continue;
    }
    out.back() += ch;
  }
  return out;
}

TEST_F(GpuFiguresWarningE2E, EverySkippedGpuIsListedInTheJson) {
  std::ifstream in(fs::path(GPUPLAN_SOURCE_DIR) / "data" / "gpus.csv");
  ASSERT_TRUE(in) << "data/gpus.csv";
  std::string header;
  std::getline(in, header);
  const std::vector<std::string> cols = split_keep_quotes(header);
  const std::set<std::string> figure_cols = {"memory_bw_gbps", "fp32_tflops", "tf32_tflops", "fp16_tflops",
                                             "bf16_tflops",    "fp8_tflops",  "int8_tops",   "fp4_tflops"};
  const std::set<std::string> blanked = {"NVIDIA L4",  "NVIDIA L40S", "NVIDIA L40",
                                         "NVIDIA A10G", "NVIDIA A10",  "NVIDIA T4"};
  std::ostringstream file;
  file << header << '\n';
  std::set<std::string> found;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = split_keep_quotes(line);
    ASSERT_EQ(f.size(), cols.size()) << line;
    if (blanked.count(f[0]) != 0) {
      found.insert(f[0]);
      for (std::size_t i = 0; i < cols.size(); ++i)
        if (figure_cols.count(cols[i]) != 0) f[i].clear();
    }
    for (std::size_t i = 0; i < f.size(); ++i) file << (i ? "," : "") << f[i];
    file << '\n';
  }
  ASSERT_EQ(found, blanked) << "the six GPUs are rows of data/gpus.csv";
  const fs::path gpus = dir_ / "gpus-blanked.csv";
  std::ofstream(gpus) << file.str();

  // Seed the store from the bundled catalog first (its rows resolve with the bundled GPU file).
  ASSERT_EQ(run("offers --limit 1").exit_code, 0);
  const RunResult r =
      run("--gpus-file '" + gpus.string() + "' plan --model llama-3.1-8b --task lora --tokens 1e8 --today 2026-11-30 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  const json* warning = nullptr;
  for (const json& w : j["warnings"])
    if (w["code"] == "gpu_figures_unknown") warning = &w;
  ASSERT_NE(warning, nullptr) << r.out.substr(0, 2000);
  ASSERT_TRUE(warning->contains("values")) << warning->dump();
  const std::string listed = (*warning)["values"]["gpus"].get<std::string>();
  std::set<std::string> names;
  std::stringstream ss(listed);
  for (std::string n; std::getline(ss, n, ',');) names.insert(n.substr(n.find_first_not_of(' ')));
  for (const std::string& g : blanked) EXPECT_EQ(names.count(g), 1U) << g << " missing from " << listed;
  EXPECT_EQ((*warning)["values"]["gpu_count"].get<std::string>(), std::to_string(names.size()));
  // The sentence names four and says how many more the JSON lists.
  const std::string message = (*warning)["message"].get<std::string>();
  EXPECT_NE(message.find("and " + std::to_string(names.size() - 4) + " more (all in --json: warnings[].values.gpus)"),
            std::string::npos)
      << message;
}

TEST_F(GpuFiguresWarningE2E, ANewStoreIsSeededWithAGpuFileThatLacksMostBundledGpus) {
  // Issue 12: the first-run seed resolves the bundled offers against --gpus-file. With a GPU file
  // that knows only the H100 SXM, the seed failed (exit 2): an A100 row of the ewyluda index and
  // one of the Azure table for one instance type were both unresolved, spelled "A100-80GB" and
  // "A100 SXM 80GB", and taken for two machines. Now the bundled GPU catalog's aliases still say
  // whether two unresolved spellings name one part, and the seed goes through.
  std::ifstream in(fs::path(GPUPLAN_SOURCE_DIR) / "data" / "gpus.csv");
  ASSERT_TRUE(in) << "data/gpus.csv";
  std::string header;
  std::getline(in, header);
  std::string h100;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("NVIDIA H100 SXM,", 0) == 0) h100 = line;
  ASSERT_FALSE(h100.empty()) << "NVIDIA H100 SXM is a row of data/gpus.csv";
  const fs::path gpus = dir_ / "gpus-h100-only.csv";
  std::ofstream(gpus) << header << '\n' << h100 << '\n';
  const std::string db = (dir_ / "seeded-with-h100-only.sqlite").string();
  fs::remove(db);

  // A store of its own (run() names the suite's store, which the other test seeds).
  const auto run_own = [&](const std::string& args) {
    return run_shell("XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" + db +
                     "' --gpus-file '" + gpus.string() + "' " + args + " 2>&1");
  };
  const RunResult seed = run_own("offers --limit 1");
  ASSERT_EQ(seed.exit_code, 0) << seed.out.substr(0, 2000);
  const RunResult r = run_own("plan --model llama-3.1-8b --task lora --tokens 1e8 --today 2026-11-30 --json --limit 0");
  ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  ASSERT_FALSE(j["plans"].empty()) << r.out.substr(0, 2000);
  // Only the GPU the file knows is planned: every other offer's GPU is unresolved here.
  for (const json& p : j["plans"]) EXPECT_EQ(p["gpu_name"], "NVIDIA H100 SXM") << p["offer_id"];
}

}  // namespace
