#pragma once
/// Hardware layer: GPU/accelerator specifications (data/gpus.csv, provenance in
/// data/gpus.SOURCES.md), compiled into the binary and overridable with --gpus-file.
///
/// Units: bytes, bytes/s, FLOP/s (dense, no 2:4 sparsity), watts. Datasheet figures are
/// converted on load: memory GB (decimal, as marketed) × 1e9, bandwidth GB/s × 1e9,
/// TFLOPS × 1e12. Unknown/unsupported values are std::nullopt, never 0 or -1.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

/// Numeric formats a GPU's tensor/matrix units execute. fp32 is the non-tensor (vector) rate.
enum class Dtype { fp32, tf32, bf16, fp16, fp8, int8, fp4 };
inline constexpr std::array<Dtype, 7> kAllDtypes = {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16,
                                                    Dtype::fp8,  Dtype::int8, Dtype::fp4};
std::string_view dtype_name(Dtype d) noexcept;

struct GpuSpec {
  std::string name;          ///< canonical name as in gpus.csv, e.g. "NVIDIA H100 SXM"
  std::string vendor;        ///< "NVIDIA", "AMD", "Intel (Habana)", "Google"
  std::string architecture;  ///< "Hopper", "CDNA 3", ...
  std::string form_factor;   ///< "SXM5", "PCIe dual-slot", "OAM", ...
  std::vector<std::string> aliases;  ///< extra names matched tolerantly (data column `aliases`)

  double memory_bytes = 0;                   ///< HBM/GDDR capacity per GPU, bytes (decimal GB × 1e9)
  std::string memory_type;                   ///< "HBM3", "HBM3e", "GDDR6", ...
  double memory_bandwidth_bytes_per_s = 0;   ///< peak memory bandwidth, bytes/s
  /// Dense peak FLOP/s (OP/s for int8) per dtype; nullopt = not supported or not published.
  std::array<std::optional<double>, kAllDtypes.size()> dense_flops_per_s{};

  std::string interconnect;                  ///< "NVLink 4", "none (PCIe only)", ...
  /// GPU-to-GPU link bandwidth per GPU, bytes/s, total bidirectional (NVLink convention:
  /// H100 SXM 900 GB/s = 450 GB/s each way). 0 = no GPU-GPU link (PCIe only).
  double gpu_link_bytes_per_s = 0;
  std::optional<int> pcie_gen;
  std::optional<double> tdp_watts;
  std::optional<int> release_year;
  std::string source_ids;       ///< keys into gpus.SOURCES.md
  std::string uncertain_cells;  ///< cells that have a single or conflicting source

  std::optional<double> dense_flops(Dtype d) const { return dense_flops_per_s[static_cast<std::size_t>(d)]; }
  bool is_hbm() const;                ///< memory_type starts with "HBM"
  bool has_gpu_link() const { return gpu_link_bytes_per_s > 0; }
  bool supports(Dtype d) const { return dense_flops(d).has_value(); }
};

/// The set of known GPUs with tolerant name lookup.
class GpuCatalog {
 public:
  /// Parses gpus.csv text (columns as in data/gpus.csv). `source` names the file in errors.
  /// Throws Error{invalid_input} with file:line for a malformed row.
  static GpuCatalog parse_csv(std::string_view text, const std::string& source);
  /// Reads a gpus.csv file (for --gpus-file).
  static GpuCatalog load_file(const std::string& path);
  /// The catalog compiled into the binary (data/gpus.csv).
  static const GpuCatalog& bundled();

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  /// Tolerant lookup: case, spaces, dashes, vendor prefix, memory size and memory-type
  /// suffixes are ignored where unambiguous ("h100", "H100-SXM5-80GB", "NVIDIA H100 80GB HBM3"
  /// all give "NVIDIA H100 SXM"). Returns nullptr when nothing matches.
  const GpuSpec* try_find(std::string_view name) const;
  /// As try_find, but throws Error{not_found} listing the nearest known names.
  const GpuSpec& find(std::string_view name) const;

 private:
  std::vector<GpuSpec> gpus_;
};

}  // namespace gpuplan
