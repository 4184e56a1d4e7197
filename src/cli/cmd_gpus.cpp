// `gpuplan gpus [NAME] [--json]`: lists the hardware catalog, or resolves one name and prints
// its spec with sources and uncertain cells. Rendering only; numbers come from GpuCatalog
// (SI units inside; converted to GB, TB/s, TFLOPS here for display).
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "api/catalog_reads.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

std::string fmt_num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string fmt_opt(const std::optional<double>& v, double scale, int decimals) {
  return v ? fmt_num(*v / scale, decimals) : std::string("unknown");
}

/// Memory in GB: whole numbers as "80", others with one decimal ("34.4" for 32 GiB).
std::string fmt_gb(double bytes) {
  double gb = bytes / 1e9;
  return std::abs(gb - std::round(gb)) < 0.05 ? fmt_num(gb, 0) : fmt_num(gb, 1);
}

std::string fmt_bandwidth_tb_s(const GpuSpec& g, int decimals) {
  auto bw = g.memory_bandwidth();
  return bw ? fmt_num(*bw / 1e12, decimals) : std::string("unknown");
}

/// GPU-GPU link in GB/s: "0" only when the row says there is no link, "unknown" when unpublished.
std::string fmt_link_gb_s(const GpuSpec& g, int decimals) {
  if (g.has_gpu_link()) return fmt_num(g.gpu_link_bytes_per_s / 1e9, decimals);
  return g.interconnect.rfind("none", 0) == 0 ? std::string("0") : std::string("unknown");
}

void print_list(const GpuCatalog& catalog) {
  TextTable t;
  t.header = {"name", "memory GB", "type", "bandwidth TB/s", "BF16 TFLOPS", "FP8 TFLOPS", "link GB/s", "sources"};
  t.right_align = {false, true, false, true, true, true, true, false};
  for (const auto& g : catalog.gpus()) {
    t.rows.push_back({g.name, fmt_gb(g.memory_bytes), g.memory_type.empty() ? "unknown" : g.memory_type,
                      fmt_bandwidth_tb_s(g, 2), fmt_opt(g.dense_flops(Dtype::bf16), 1e12, 1),
                      fmt_opt(g.dense_flops(Dtype::fp8), 1e12, 1), fmt_link_gb_s(g, 0), g.source_ids});
  }
  fmt::print("{}", t.render());
  fmt::print("{} GPUs. Dense (no sparsity) peak rates; link = GPU-GPU bandwidth per GPU, both directions.\n",
             catalog.gpus().size());
}

void print_one(const GpuSpec& g) {
  TextTable t;
  t.header = {"field", "value"};
  auto row = [&](std::string k, std::string v) { t.rows.push_back({std::move(k), std::move(v)}); };
  row("name", g.name);
  row("vendor", g.vendor);
  row("architecture", g.architecture);
  row("form factor", g.form_factor);
  std::string aliases;
  for (const auto& a : g.aliases) aliases += (aliases.empty() ? "" : "; ") + a;
  row("aliases", aliases);
  row("memory", fmt::format("{} GB {} ({})", fmt_gb(g.memory_bytes), g.memory_type.empty() ? "(type unknown)" : g.memory_type,
                            format_gib(g.memory_bytes)));
  // What size and plan fit against (GpuSpec::fit_memory_bytes; trial48: `gpus H100` showed 74.5 GiB
  // while size used 79.6): the driver-reported total where the catalog has a sourced one.
  row("memory for fits", g.usable_memory_bytes
                             ? fmt::format("{} (driver-reported total, {:.0f} MiB; see the sources)", format_gib(*g.usable_memory_bytes),
                                           *g.usable_memory_bytes / 1048576.0)
                             : fmt::format("{} (the datasheet figure: no driver-reported total recorded)", format_gib(g.memory_bytes)));
  row("memory bandwidth", g.memory_bandwidth() ? fmt::format("{} TB/s", fmt_bandwidth_tb_s(g, 3)) : "unknown");
  for (Dtype d : kAllDtypes) {
    auto v = g.dense_flops(d);
    const char* unit = d == Dtype::int8 ? "TOPS" : "TFLOPS";
    row(fmt::format("dense {}", dtype_name(d)), v ? fmt::format("{} {}", fmt_num(*v / 1e12, 1), unit) : "unknown");
  }
  row("interconnect", g.interconnect);
  std::string link = fmt_link_gb_s(g, 1);
  row("GPU-GPU link", link == "0" ? "none" : link == "unknown" ? link : link + " GB/s");
  row("PCIe gen", g.pcie_gen ? std::to_string(*g.pcie_gen) : "unknown");
  row("TDP", g.tdp_watts ? fmt::format("{} W", fmt_num(*g.tdp_watts, 0)) : "unknown");
  row("release year", g.release_year ? std::to_string(*g.release_year) : "unknown");
  row("sources", g.source_ids + " (see data/gpus.SOURCES.md)");
  row("uncertain cells", g.uncertain_cells.empty() ? "none recorded" : g.uncertain_cells);
  fmt::print("{}", t.render());
}

GPUPLAN_REGISTER_COMMAND(Command{
    "gpus", "list the hardware catalog, or show one GPU's spec with its sources",
    [](CLI::App& sub, GlobalOptions& global) {
      auto in = std::make_shared<api::GpusInput>();
      auto json_out = std::make_shared<bool>(false);
      add_api_flags(sub, in, api::gpus_fields());
      sub.add_flag("--json", *json_out, "print JSON (SI units: bytes, bytes/s, FLOP/s)");
      sub.callback([in, json_out, &global] {
        const api::Context ctx = make_context(global);
        const std::vector<const GpuSpec*> gpus = api::run_gpus(*in, ctx);
        if (*json_out) {
          fmt::print("{}\n", dump_json(api::gpus_to_json(*in, gpus)));
        } else if (!in->name.empty()) {
          print_one(*gpus.front());
        } else {
          print_list(ctx.gpus());
        }
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
