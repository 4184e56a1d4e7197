// SkyPilot service-catalog vms.csv importer (schemas v6..v9; columns found by header name).
// Format notes and quirks: data/offers/PROVENANCE.md §1.
#include <cctype>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include <map>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan {

using namespace import_detail;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Python repr (single-quoted strings, None/True/False) → JSON text. JSON input passes through
/// unchanged (double-quoted strings are copied, null/true/false are already JSON).
std::string python_repr_to_json(std::string_view s, const std::string& where) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\'' || c == '"') {
      const char quote = c;
      out.push_back('"');
      ++i;
      bool closed = false;
      while (i < s.size()) {
        const char d = s[i];
        if (d == '\\' && i + 1 < s.size()) {
          const char e = s[i + 1];
          if (e == '\'') {
            out.push_back('\'');
          } else {
            out.push_back('\\');
            out.push_back(e);
          }
          i += 2;
          continue;
        }
        if (d == quote) {
          closed = true;
          ++i;
          break;
        }
        if (d == '"') {
          out += "\\\"";
        } else {
          out.push_back(d);
        }
        ++i;
      }
      if (!closed) {
        throw Error(ErrorKind::invalid_input, where, "column GpuInfo: unterminated string",
                    "a Python-repr or JSON dict such as {'Gpus': [...]}");
      }
      out.push_back('"');
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j]))) ++j;
      const std::string_view word = s.substr(i, j - i);
      if (word == "None") {
        out += "null";
      } else if (word == "True") {
        out += "true";
      } else if (word == "False") {
        out += "false";
      } else {
        out += word;  // null/true/false already JSON; anything else fails in the JSON parser
      }
      i = j;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

struct GpuInfo {
  std::string name;
  std::optional<double> size_mib;   ///< Gpus[0].MemoryInfo.SizeInMiB as written
  std::optional<double> total_mib;  ///< TotalGpuMemoryInMiB (top level, or inside Gpus[0] for shadeform)
};

std::optional<double> json_number(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return std::nullopt;
  const nlohmann::json& v = j.at(key);
  if (!v.is_number()) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column GpuInfo: {} is not a number", key),
                fmt::format("{} as a number of MiB", key));
  }
  return v.get<double>();
}

GpuInfo parse_gpu_info(std::string_view cell, const std::string& where) {
  GpuInfo info;
  const std::string_view t = trim(cell);
  if (t.empty()) return info;
  if (t.front() != '{') {
    info.name = std::string(t);  // paperspace v6: the bare GPU name
    return info;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(python_repr_to_json(t, where));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorKind::invalid_input, where,
                fmt::format("column GpuInfo: malformed dict at character {}", e.byte),
                "a Python-repr or JSON dict such as {'Gpus': [{'Name': 'H100', 'Count': 8, ...}]}");
  } catch (const nlohmann::json::exception& e) {  // out_of_range: a number such as 1e400
    throw Error(ErrorKind::invalid_input, where, fmt::format("column GpuInfo: {}", e.what()),
                "a Python-repr or JSON dict with numbers in range");
  }
  if (!j.is_object() || !j.contains("Gpus") || !j.at("Gpus").is_array() || j.at("Gpus").empty() ||
      !j.at("Gpus").at(0).is_object()) {
    throw Error(ErrorKind::invalid_input, where, "column GpuInfo: no 'Gpus' list",
                "a dict with a non-empty 'Gpus' list");
  }
  const nlohmann::json& g = j.at("Gpus").at(0);
  if (g.contains("Name") && g.at("Name").is_string()) info.name = g.at("Name").get<std::string>();
  if (g.contains("MemoryInfo")) info.size_mib = json_number(g.at("MemoryInfo"), "SizeInMiB", where);
  info.total_mib = json_number(j, "TotalGpuMemoryInMiB", where);
  if (!info.total_mib) info.total_mib = json_number(g, "TotalGpuMemoryInMiB", where);
  return info;
}

/// AWS EFA networking per instance family, from the AWS instance-type pages
/// (https://aws.amazon.com/ec2/instance-types/p4/ "400 Gbps ... EFA",
///  https://aws.amazon.com/ec2/instance-types/p5/ "3,200 Gbps ... EFA" for p5/p5e/p5en .48xlarge — also the EC2 User
///  Guide p5-efa.html: "P5 and P5e instances support up to 32 network cards and up to 3,200 Gbps",
///  https://aws.amazon.com/ec2/instance-types/p3/ p3dn.24xlarge "100 Gbps ... EFA").
/// EFA runs over AWS's Ethernet fabric (SRD), so it maps to InterNodeNetwork::ethernet.
/// p6-b200/b300: EFA is published but the bandwidth was not checked here → bits/s unknown.
void set_aws_network(Offer& o) {
  struct Row {
    std::string_view instance_type;
    std::optional<double> bits_per_s;
  };
  static constexpr Row kRows[] = {
      {"p3dn.24xlarge", 100e9},   {"p4d.24xlarge", 400e9},    {"p4de.24xlarge", 400e9},
      {"p5.48xlarge", 3200e9},    {"p5e.48xlarge", 3200e9},   {"p5en.48xlarge", 3200e9},
      {"p6-b200.48xlarge", std::nullopt}, {"p6-b300.48xlarge", std::nullopt},
  };
  for (const Row& r : kRows) {
    if (o.instance_type == r.instance_type) {
      o.inter_node_network = InterNodeNetwork::ethernet;
      o.inter_node_bits_per_s = r.bits_per_s;
      return;
    }
  }
}

/// GCP GPU machine families: the host machine type fixes the accelerator and its count; the
/// SkyPilot GCP catalog prices the host (row with no accelerator) and the attached GPUs (rows with
/// an empty InstanceType) separately (PROVENANCE.md §1). Families and counts from Google Cloud's
/// "GPU machine types" page (https://cloud.google.com/compute/docs/gpus): A2 Standard A100 40GB,
/// A2 Ultra A100 80GB, A3 High/Edge H100, A3 Mega H100 (SkyPilot "H100-MEGA"), A3 Ultra H200,
/// A4 B200 (count = the "-<N>g" suffix); G2 L4 (1 GPU up to g2-standard-32, 2 / 4 / 8 for -24 / -48 / -96).
struct GcpGpuHost {
  std::string accelerator;  ///< SkyPilot AcceleratorName of the GPU rows
  int count = 0;
};

std::optional<GcpGpuHost> gcp_gpu_host(std::string_view machine_type) {
  static constexpr std::pair<std::string_view, std::string_view> kFamilies[] = {
      {"a2-highgpu-", "A100"},  {"a2-megagpu-", "A100"},      {"a2-ultragpu-", "A100-80GB"},
      {"a3-highgpu-", "H100"},  {"a3-edgegpu-", "H100"},      {"a3-megagpu-", "H100-MEGA"},
      {"a3-ultragpu-", "H200"}, {"a4-highgpu-", "B200"},
  };
  for (const auto& [prefix, accel] : kFamilies) {
    if (machine_type.rfind(prefix, 0) != 0) continue;
    std::string_view rest = machine_type.substr(prefix.size());
    if (rest.size() < 2 || rest.back() != 'g') return std::nullopt;
    rest.remove_suffix(1);
    int n = 0;
    for (char c : rest) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + (c - '0');
    }
    if (n < 1) return std::nullopt;
    return GcpGpuHost{std::string(accel), n};
  }
  static constexpr std::pair<std::string_view, int> kG2[] = {
      {"g2-standard-4", 1}, {"g2-standard-8", 1},  {"g2-standard-12", 1}, {"g2-standard-16", 1},
      {"g2-standard-32", 1}, {"g2-standard-24", 2}, {"g2-standard-48", 4}, {"g2-standard-96", 8},
  };
  for (const auto& [name, n] : kG2)
    if (machine_type == name) return GcpGpuHost{"L4", n};
  return std::nullopt;
}

/// One GCP accelerator-only price row (InstanceType empty), keyed for the host it attaches to.
struct GcpGpuPrice {
  std::optional<double> price;
  std::optional<double> spot;
  std::size_t line = 0;
  bool used = false;
};

std::string gcp_gpu_key(std::string_view accel, int count, std::string_view region, std::string_view zone) {
  return fmt::format("{}|{}|{}|{}", lower(accel), count, lower(region), lower(zone));
}

}  // namespace

std::optional<std::string> skypilot_provider_from_path(std::string_view path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  const std::string_view file = path.substr(slash + 1);
  if (file.rfind("vms", 0) != 0 || file.size() < 7 || file.substr(file.size() - 4) != ".csv") return std::nullopt;
  const std::string_view dir = path.substr(0, slash);
  const auto prev = dir.find_last_of('/');
  const std::string_view provider = prev == std::string_view::npos ? dir : dir.substr(prev + 1);
  if (provider.empty()) return std::nullopt;
  return lower(provider);
}

ImportBatch import_skypilot_vms_csv(std::string_view text, const ImportSource& src) {
  const CsvTable table = CsvTable::parse(text, src.file);
  std::string provider = src.provider;
  if (provider.empty()) {
    if (auto p = skypilot_provider_from_path(src.file)) provider = *p;
  }
  if (provider.empty()) {
    throw Error(ErrorKind::invalid_input, src.file, "cannot tell the SkyPilot provider from the file path",
                "a path ending in <provider>/vms.csv, or an explicit provider");
  }
  provider = canonical_provider_id(provider);
  for (const char* col : {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"})
    (void)table.column(col);  // throws "missing column" naming the file

  ImportBatch batch;
  batch.dataset = src.dataset;
  // GCP split pricing: first collect the accelerator-only rows (empty InstanceType) so each GPU
  // host row can be combined with the price of the GPUs it carries.
  std::map<std::string, GcpGpuPrice> gcp_gpu_prices;
  if (provider == "gcp") {
    for (const CsvRow& row : table.rows()) {
      if (!trim(table.cell(row, "InstanceType")).empty()) continue;
      const std::string where = table.where(row);
      const std::string accel(trim(table.cell(row, "AcceleratorName")));
      const std::string count_cell(trim(table.cell(row, "AcceleratorCount")));
      if (accel.empty() || count_cell.empty()) {
        throw Error(ErrorKind::invalid_input, where, "column InstanceType is empty and the row names no accelerator",
                    "a host machine type, or an accelerator-only price row (AcceleratorName, AcceleratorCount)");
      }
      GcpGpuPrice g;
      g.price = cell_number(table.cell(row, "Price"), where, "Price");
      if (auto sp = table.cell_if(row, "SpotPrice")) g.spot = cell_number(*sp, where, "SpotPrice");
      g.line = row.line;
      std::string zone;
      if (auto z = table.cell_if(row, "AvailabilityZone")) zone = std::string(trim(*z));
      gcp_gpu_prices[gcp_gpu_key(accel, cell_count(count_cell, where, "AcceleratorCount"),
                                 trim(table.cell(row, "Region")), zone)] = g;
    }
  }
  for (const CsvRow& row : table.rows()) {
    ++batch.rows_read;
    const std::string where = table.where(row);
    Offer o;
    o.provider = provider;
    o.instance_type = std::string(trim(table.cell(row, "InstanceType")));
    if (provider == "gcp" && o.instance_type.empty()) continue;  // accelerator-only row: combined below
    o.region = std::string(trim(table.cell(row, "Region")));
    if (auto z = table.cell_if(row, "AvailabilityZone")) o.zone = std::string(trim(*z));
    if (o.instance_type.empty()) {
      throw Error(ErrorKind::invalid_input, where, "column InstanceType is empty", "the provider's instance type");
    }
    std::optional<double> price = cell_number(table.cell(row, "Price"), where, "Price");
    std::optional<double> spot;
    if (auto s = table.cell_if(row, "SpotPrice")) spot = cell_number(*s, where, "SpotPrice");
    std::string accel(trim(table.cell(row, "AcceleratorName")));
    std::string count_cell(trim(table.cell(row, "AcceleratorCount")));
    int count = count_cell.empty() ? 0 : cell_count(count_cell, where, "AcceleratorCount");
    std::string gcp_combined;  // detail of the host + GPU combination, when one was made
    if (provider == "gcp" && (accel.empty() || count == 0)) {
      if (auto host = gcp_gpu_host(o.instance_type)) {
        auto it = gcp_gpu_prices.find(gcp_gpu_key(host->accelerator, host->count, o.region, o.zone));
        if (it == gcp_gpu_prices.end()) {
          report(batch, nullptr, where, import_rule::kSplitPriceUnmatched,
                 fmt::format("GCP host {} carries {} x {} but the file has no GPU price row for them in {}{}: skipped "
                             "(the host price alone is not the offer's price)",
                             o.instance_type, host->count, host->accelerator, o.region, o.zone.empty() ? "" : "/" + o.zone),
                 true, false);
          continue;
        }
        GcpGpuPrice& g = it->second;
        g.used = true;
        gcp_combined = fmt::format("GCP prices host and GPUs apart: host {} (line {}) + {} x {} (line {})", o.instance_type,
                                   row.line, host->count, host->accelerator, g.line);
        price = price && g.price ? std::optional<double>(*price + *g.price) : std::nullopt;
        spot = spot && g.spot ? std::optional<double>(*spot + *g.spot) : std::nullopt;
        accel = host->accelerator;
        count = host->count;
        count_cell = std::to_string(count);
      }
    }
    if (price && *price < 0) throw Error(ErrorKind::invalid_input, where, "column Price is negative", "a price >= 0");
    if (spot && *spot < 0) throw Error(ErrorKind::invalid_input, where, "column SpotPrice is negative", "a price >= 0");
    if (auto v = table.cell_if(row, "vCPUs")) o.vcpus = cell_number(*v, where, "vCPUs");
    if (auto m = table.cell_if(row, "MemoryGiB")) {
      if (auto gib = cell_number(*m, where, "MemoryGiB")) o.ram_bytes = *gib * kGiB;
    }
    // Host memory in the wrong unit: no cloud VM has over 64 GiB per vCPU (the largest memory-
    // optimised shapes are near 30) or under 1/16 GiB; such a number was written in MiB, MB or
    // bytes. Flagged and kept unknown rather than guessed.
    if (o.ram_bytes && o.vcpus && *o.vcpus > 0) {
      const double gib_per_vcpu = *o.ram_bytes / kGiB / *o.vcpus;
      if (gib_per_vcpu > 64 || gib_per_vcpu < 1.0 / 16) {
        report(batch, &o, where, import_rule::kHostMemoryUnit,
               fmt::format("MemoryGiB {:g} for {:g} vCPUs ({:.3g} GiB per vCPU) is not a plausible host memory in GiB "
                           "(wrong unit): host memory kept unknown",
                           *o.ram_bytes / kGiB, *o.vcpus, gib_per_vcpu),
               false, false);
        o.ram_bytes.reset();
      }
    }
    if (auto d = table.cell_if(row, "StorageGiB")) {
      if (auto gib = cell_number(*d, where, "StorageGiB")) o.local_disk_bytes = *gib * kGiB;
    }
    const GpuInfo info = table.has_column("GpuInfo") ? parse_gpu_info(table.cell(row, "GpuInfo"), where) : GpuInfo{};

    if (accel.empty() || count == 0) {
      report(batch, nullptr, where, import_rule::kCpuRow,
             fmt::format("{} has no GPU (AcceleratorName '{}', AcceleratorCount '{}'): skipped", o.instance_type,
                         accel, count_cell),
             true, false);
      continue;
    }
    o.gpu_count = count;
    o.gpu_name_raw = accel;
    o.id = make_offer_id(o);
    if (!gcp_combined.empty()) {
      report(batch, &o, where, import_rule::kSplitPriceCombined, gcp_combined + ": one offer at their sum", false, false);
    }

    // GPU memory per GPU, with the unit quirks of PROVENANCE.md §1.
    const FormHint hint = form_hint({accel, o.instance_type, info.name});
    if (info.size_mib && *info.size_mib > 0) {
      const double size = *info.size_mib;
      if (size < 1024) {
        // No GPU has less than 1 GiB: the number is in GB (shadeform writes 48 for an A6000).
        o.gpu_memory_bytes = size * 1e9;
        report(batch, &o, where, import_rule::kMemoryUnit,
               fmt::format("GpuInfo SizeInMiB {} is below 1 GiB, so it is read as GB: {} GB per GPU", size, size),
               false, false);
      } else {
        // SizeInMiB is per GPU in most files, but the total of all GPUs in primeintellect and vast.
        // Decide by the GPU's datasheet memory when the name resolves; otherwise by the provider
        // (PROVENANCE.md) or by size (> 320 GiB cannot be one GPU).
        bool total = false;
        if (count > 1) {
          const bool per_gpu_fits = match_gpu_memory({accel, info.name}, hint, size * kMiB, src) != nullptr;
          const bool total_fits = match_gpu_memory({accel, info.name}, hint, size / count * kMiB, src) != nullptr;
          if (per_gpu_fits != total_fits) {
            total = total_fits;
          } else {
            total = provider == "primeintellect" || provider == "vast" || size > 320 * 1024;
          }
        }
        if (total) {
          o.gpu_memory_bytes = size / count * kMiB;
          report(batch, &o, where, import_rule::kMemoryUnit,
                 fmt::format("GpuInfo SizeInMiB {} is the total of {} GPUs: {} MiB per GPU used", size, count,
                             size / count),
                 false, false);
        } else {
          o.gpu_memory_bytes = size * kMiB;
          if (count > 1 && info.total_mib && *info.total_mib == size) {
            report(batch, &o, where, import_rule::kMemoryUnit,
                   fmt::format("TotalGpuMemoryInMiB {} equals one GPU's SizeInMiB for {} GPUs; per-GPU SizeInMiB used",
                               *info.total_mib, count),
                   false, false);
          }
        }
      }
    }

    // SkyPilot names the 80 GB A100 "A100-80GB" in every cloud's catalog, so a bare "A100" is the
    // 40 GB card (Google's GPU machine types page: A2 Standard = A100 40GB, A2 Ultra = A100 80GB;
    // AWS p4d / p4de and Azure ND A100 v4 / NDm A100 v4 likewise). The GCP file gives no GpuInfo,
    // and with no memory the bare name resolved to the catalog's first A100, the 80 GB one
    // (trial9d D1): a job needing 80 GB would be planned on 40 GB GPUs.
    if (!o.gpu_memory_bytes && accel == "A100") o.gpu_memory_bytes = 40e9;
    resolve_gpu(o, {accel, info.name}, hint, batch, src, where);
    if (provider == "aws") set_aws_network(o);

    const SourceRef ref{src.dataset, locator_line(src, row.line), std::nullopt};
    if (spot && *spot == 0 && provider == "vast") {
      report(batch, &o, where, import_rule::kSpotZeroMeansNone,
             "SpotPrice 0.00: vast writes 0.00 for 'no interruptible price'; no spot observation recorded", false,
             false);
      spot.reset();
    }
    if (!price && !spot) {
      report(batch, nullptr, where, import_rule::kNoPrice,
             fmt::format("{} has neither Price nor SpotPrice: skipped", o.instance_type), true, false);
      continue;
    }
    if (price && spot && provider == "mithril" && *price == *spot) {
      report(batch, &o, where, import_rule::kBidFloorPrice,
             fmt::format("Price == SpotPrice == {}: the fetcher read mithril's bid floor, not a price "
                         "(skypilot-org/skypilot PR #9156); offer kept out of rankings",
                         *price),
             false, true);
    }
    if (!price) {
      report(batch, &o, where, import_rule::kNoOnDemandPrice,
             fmt::format("Price is empty: only a spot price ({}) is sold", *spot), false, false);
    }
    if (price) {
      add_checked_price(batch, o, PriceKind::on_demand, *price, ref, where);
    }
    if (spot) {
      add_checked_price(batch, o, PriceKind::spot, *spot, ref, where);
      if (provider == "vast") {
        report(batch, &o, where, import_rule::kMarketplaceBid,
               fmt::format("SpotPrice {:g} is a marketplace bid (vast interruptible): the instance stops whenever a "
                           "higher bid or an on-demand renter takes the machine; no preemption rate is published",
                           *spot),
               false, false);
      }
    }
    add_offer(batch, std::move(o));
  }
  for (const auto& [key, g] : gcp_gpu_prices) {
    if (g.used) continue;
    report(batch, nullptr, where_line(src, g.line), import_rule::kSplitPriceUnmatched,
           fmt::format("GCP GPU-only price ({}) attaches to a host VM of the user's choice: not an offer on its own, "
                       "never ranked as the GPU price",
                       key),
           true, false);
  }
  return batch;
}

}  // namespace gpuplan
