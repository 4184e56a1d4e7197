// Full Stack Deep Learning "Cloud GPUs" tables (cloud-gpus.csv, serverless-gpus.csv).
// Format notes: data/offers/PROVENANCE.md §2. No per-row dates: observed_at stays unknown.
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan {

using namespace import_detail;

namespace {

struct GpuType {
  std::string name;                      ///< "A100", "H100 HGX"
  std::optional<double> memory_gb;       ///< per GPU, from "(80 GB)"
};

/// "A100 (80 GB)" → {"A100", 80}; "A10" → {"A10", nullopt}; "H100 HGX (80GB)" → {"H100 HGX", 80}.
GpuType parse_gpu_type(std::string_view cell, const std::string& where) {
  GpuType t;
  const std::string_view s = trim(cell);
  const auto open = s.find('(');
  if (open == std::string_view::npos) {
    t.name = std::string(s);
    return t;
  }
  t.name = std::string(trim(s.substr(0, open)));
  const auto close = s.find(')', open);
  if (close == std::string_view::npos) {
    throw Error(ErrorKind::invalid_input, where, fmt::format("column GPU Type: unclosed '(' in '{}'", cell),
                "a GPU name optionally followed by its memory, e.g. 'A100 (80 GB)'");
  }
  const std::string inner(trim(s.substr(open + 1, close - open - 1)));
  t.memory_gb = cell_gb(inner, where, "GPU Type");
  return t;
}

struct Common {
  std::string provider;
  std::string instance_type;
  int gpus = 0;
  GpuType gpu;
  std::string gpu_type_raw;
};

Offer make_offer(const Common& c, const CsvTable& table, const CsvRow& row, const std::string& where,
                 ImportBatch& batch, const ImportSource& src) {
  Offer o;
  o.provider = c.provider;
  o.instance_type = c.instance_type;
  o.gpu_count = c.gpus;
  o.gpu_name_raw = c.gpu_type_raw;
  o.id = make_offer_id(o);
  if (c.gpu.memory_gb) o.gpu_memory_bytes = *c.gpu.memory_gb * 1e9;
  // vCPUs and RAM are sometimes ranges ("4-6", "12-16" GB): the value is then unknown.
  for (const char* col : {"vCPUs", "RAM"}) {
    const std::string& cell = table.cell(row, col);
    std::optional<double> v;
    if (auto range = parse_range(cell)) {
      report(batch, &o, where, import_rule::kRangeValue,
             fmt::format("{} is a range '{}': kept unknown", col, std::string(trim(cell))), false, false);
    } else if (std::string_view(col) == "vCPUs") {
      v = cell_number(cell, where, col);
      if (v) o.vcpus = *v;
    } else {
      v = cell_gb(cell, where, col);
      if (v) o.ram_bytes = *v * 1e9;
    }
  }
  const std::optional<double> total_gb = cell_gb(table.cell(row, "GPU RAM"), where, "GPU RAM");
  if (!o.gpu_memory_bytes && total_gb && c.gpus > 0) o.gpu_memory_bytes = *total_gb / c.gpus * 1e9;
  if (c.gpu.memory_gb && total_gb && std::abs(*total_gb - *c.gpu.memory_gb * c.gpus) > 0.5) {
    report(batch, &o, where, import_rule::kMemoryUnit,
           fmt::format("GPU RAM {} GB total does not equal {} x {} GB from GPU Type; per-GPU figure from GPU Type used",
                       *total_gb, c.gpus, *c.gpu.memory_gb),
           false, false);
  }
  const FormHint hint = form_hint({c.gpu.name, c.instance_type});
  resolve_gpu(o, {c.gpu.name, c.gpu_type_raw}, hint, batch, src, where);
  return o;
}

}  // namespace

ImportBatch import_fsdl_cloud_gpus_csv(std::string_view text, const ImportSource& src) {
  const CsvTable table = CsvTable::parse(text, src.file);
  for (const char* col : {"Cloud", "GPU Type", "GPUs", "GPU RAM", "vCPUs", "RAM", "On-demand", "Spot", "Name"})
    (void)table.column(col);
  ImportBatch batch;
  batch.dataset = src.dataset;

  // Instance names are not unique: GCP attaches different GPUs to one n1-highmem-8 host, and
  // several rows have no Name. Build a name that tells the rows apart (see docs/import-format.md).
  auto base_of = [&](const CsvRow& r) {
    const std::string name(trim(table.cell(r, "Name")));
    return name.empty() ? fmt::format("{}x {}", trim(table.cell(r, "GPUs")), trim(table.cell(r, "GPU Type"))) : name;
  };
  auto shape_of = [&](const CsvRow& r) {
    return fmt::format("{}x {}, {} vCPU, {} GB RAM", trim(table.cell(r, "GPUs")), trim(table.cell(r, "GPU Type")),
                       trim(table.cell(r, "vCPUs")), trim(table.cell(r, "RAM")));
  };
  auto price_of = [&](const CsvRow& r) {
    return std::string(trim(table.cell(r, "On-demand"))) + "|" + std::string(trim(table.cell(r, "Spot")));
  };
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> shapes;  // (cloud, base) → shapes
  std::map<std::string, std::vector<std::string>> prices;                          // full shape → price tuples
  for (const CsvRow& r : table.rows()) {
    const std::string cloud(trim(table.cell(r, "Cloud")));
    auto& v = shapes[{cloud, base_of(r)}];
    if (std::find(v.begin(), v.end(), shape_of(r)) == v.end()) v.push_back(shape_of(r));
    auto& p = prices[cloud + "|" + base_of(r) + "|" + shape_of(r)];
    if (std::find(p.begin(), p.end(), price_of(r)) == p.end()) p.push_back(price_of(r));
  }

  for (const CsvRow& row : table.rows()) {
    ++batch.rows_read;
    const std::string where = table.where(row);
    Common c;
    const std::string cloud(trim(table.cell(row, "Cloud")));
    if (cloud.empty()) throw Error(ErrorKind::invalid_input, where, "column Cloud is empty", "a provider name");
    c.provider = canonical_provider_id(cloud);
    c.gpus = cell_count(table.cell(row, "GPUs"), where, "GPUs");
    c.gpu_type_raw = std::string(trim(table.cell(row, "GPU Type")));
    c.gpu = parse_gpu_type(c.gpu_type_raw, where);
    const std::string base = base_of(row);
    c.instance_type = base;
    if (shapes[{cloud, base}].size() > 1) c.instance_type = fmt::format("{} [{}]", base, shape_of(row));
    const auto& p = prices[cloud + "|" + base + "|" + shape_of(row)];
    if (p.size() > 1) {
      const auto k = std::find(p.begin(), p.end(), price_of(row)) - p.begin() + 1;
      c.instance_type += fmt::format(" #{}", k);
    }
    if (c.gpus == 0 || c.gpu.name.empty()) {
      report(batch, nullptr, where, import_rule::kCpuRow, fmt::format("{} has no GPU: skipped", base), true, false);
      continue;
    }
    Offer o = make_offer(c, table, row, where, batch, src);
    const std::optional<double> on_demand = cell_price(table.cell(row, "On-demand"), where, "On-demand");
    const std::optional<double> spot = cell_price(table.cell(row, "Spot"), where, "Spot");
    if (!on_demand && !spot) {
      report(batch, nullptr, where, import_rule::kNoPrice,
             fmt::format("{} {}: On-demand and Spot are empty (a Per-GPU cell alone is not used: for these rows it "
                         "does not scale with GPUs, so its unit is unclear): skipped",
                         cloud, c.instance_type),
             true, false);
      continue;
    }
    const SourceRef ref{src.dataset, locator_line(src, row.line), std::nullopt};
    if (!on_demand) {
      report(batch, &o, where, import_rule::kNoOnDemandPrice, fmt::format("On-demand is empty: only Spot {}", *spot),
             false, false);
    }
    if (on_demand) {
      add_checked_price(batch, o, PriceKind::on_demand, *on_demand, ref, where);
    }
    if (spot) {
      add_checked_price(batch, o, PriceKind::spot, *spot, ref, where);
    }
    add_offer(batch, std::move(o));
  }
  return batch;
}

ImportBatch import_fsdl_serverless_gpus_csv(std::string_view text, const ImportSource& src) {
  const CsvTable table = CsvTable::parse(text, src.file);
  for (const char* col : {"Vendor", "GPU Type", "GPUs", "GPU RAM", "vCPUs", "RAM", "Per-Hour"}) (void)table.column(col);
  ImportBatch batch;
  batch.dataset = src.dataset;
  for (const CsvRow& row : table.rows()) {
    ++batch.rows_read;
    const std::string where = table.where(row);
    Common c;
    const std::string vendor(trim(table.cell(row, "Vendor")));
    if (vendor.empty()) throw Error(ErrorKind::invalid_input, where, "column Vendor is empty", "a provider name");
    c.provider = canonical_provider_id(vendor);
    c.gpus = cell_count(table.cell(row, "GPUs"), where, "GPUs");
    c.gpu_type_raw = std::string(trim(table.cell(row, "GPU Type")));
    c.gpu = parse_gpu_type(c.gpu_type_raw, where);
    // Serverless rows have no SKU; the shape (GPUs, type, GPU memory, vCPUs, RAM) names them
    // (without the GPU memory, Mystic AI's A100 40GB and 80GB rows shared one id and merged).
    const std::string gpu_ram(trim(table.cell(row, "GPU RAM")));  // named only when GPU Type has no "(80 GB)"
    c.instance_type = fmt::format("serverless {}x {}{}, {} vCPU, {} GB RAM", c.gpus, c.gpu_type_raw,
                                  gpu_ram.empty() || c.gpu.memory_gb ? "" : " " + gpu_ram, trim(table.cell(row, "vCPUs")),
                                  trim(table.cell(row, "RAM")));
    if (c.gpus == 0 || c.gpu.name.empty()) {
      report(batch, nullptr, where, import_rule::kCpuRow, fmt::format("{} has no GPU: skipped", c.instance_type), true,
             false);
      continue;
    }
    Offer o = make_offer(c, table, row, where, batch, src);
    const std::optional<double> per_hour = cell_price(table.cell(row, "Per-Hour"), where, "Per-Hour");
    if (!per_hour) {
      report(batch, nullptr, where, import_rule::kNoPrice, "Per-Hour is empty: skipped", true, false);
      continue;
    }
    add_checked_price(batch, o, PriceKind::on_demand, *per_hour, SourceRef{src.dataset, locator_line(src, row.line), std::nullopt}, where);
    add_offer(batch, std::move(o));
  }
  return batch;
}

}  // namespace gpuplan
