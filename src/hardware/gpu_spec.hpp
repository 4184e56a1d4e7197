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
#include <unordered_map>
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

  double memory_bytes = 0;                   ///< HBM/GDDR capacity per GPU, bytes (decimal GB × 1e9); always > 0
  std::string memory_type;                   ///< "HBM3", "HBM3e", "GDDR6", ...; "" when not published
  /// Peak memory bandwidth, bytes/s. 0 only for the few rows whose bandwidth no stored source
  /// gives (e.g. Radeon Pro V520, TPU v2): use memory_bandwidth() to get nullopt for those.
  double memory_bandwidth_bytes_per_s = 0;
  /// Dense peak FLOP/s (OP/s for int8) per dtype; nullopt = not supported or not published.
  std::array<std::optional<double>, kAllDtypes.size()> dense_flops_per_s{};

  std::string interconnect;                  ///< "NVLink 4", "none (PCIe only)", ...
  /// GPU-to-GPU link bandwidth per GPU, bytes/s, total bidirectional (NVLink convention:
  /// H100 SXM 900 GB/s = 450 GB/s each way). 0 = no GPU-GPU link (PCIe only) or its bandwidth
  /// is not published (the `interconnect` text then says so); planners treat both as "no link".
  double gpu_link_bytes_per_s = 0;
  std::optional<int> pcie_gen;
  std::optional<double> tdp_watts;
  std::optional<int> release_year;
  /// Memory the driver reports (nvidia-smi "Memory-Usage" total, MiB × 2^20), bytes: an "80 GB" H100 shows
  /// 81,559 MiB = 85.52e9 bytes. nullopt when no published driver total is in the sources (column
  /// `usable_memory_mib`, each figure cited in gpus.SOURCES.md). What frameworks can allocate is this minus the
  /// CUDA context (a few hundred MiB), which the sizing layer's reserve covers.
  std::optional<double> usable_memory_bytes;
  /// How many GPUs share the `gpu_link_bytes_per_s` link as one all-to-all domain (column `nvlink_domain_gpus`):
  /// 2 for NVLink bridges on PCIe cards (consumer / workstation: a bridge joins a pair), 8 for HGX/DGX
  /// baseboards, 72 for NVL72 racks. nullopt = no GPU link, or its domain is not stated in the sources.
  std::optional<int> nvlink_domain_gpus;
  /// CPU and GPU share one memory pool (GB10 / DGX Spark, GH200-style superchips counted here only when the GPU
  /// has no memory of its own): memory_bytes is the whole pool, which the OS and the CPU side also use.
  bool unified_memory = false;
  std::string source_ids;       ///< keys into gpus.SOURCES.md
  std::string uncertain_cells;  ///< cells that have a single or conflicting source

  std::optional<double> dense_flops(Dtype d) const { return dense_flops_per_s[static_cast<std::size_t>(d)]; }
  /// memory_bandwidth_bytes_per_s, or nullopt when not published (stored as 0).
  std::optional<double> memory_bandwidth() const {
    return memory_bandwidth_bytes_per_s > 0 ? std::optional<double>(memory_bandwidth_bytes_per_s) : std::nullopt;
  }
  bool is_hbm() const;                ///< memory_type starts with "HBM" (case-insensitive)
  bool has_gpu_link() const { return gpu_link_bytes_per_s > 0; }
  bool supports(Dtype d) const { return dense_flops(d).has_value(); }
  /// Capacity a fit should use: the driver-reported total when known, else the marketed memory_bytes.
  double fit_memory_bytes() const { return usable_memory_bytes.value_or(memory_bytes); }
  /// True when `gpus` GPUs of one node all sit in one GPU-link (NVLink) domain, so TP/EP collectives among
  /// them run over the link; false means they run over PCIe (e.g. 4 RTX 3090s: the bridge joins only pairs).
  /// Without a domain figure: a link with "bridge" in `interconnect` spans 2, any other link 8.
  bool gpu_link_spans(int gpus) const {
    if (!has_gpu_link() || gpus < 1) return false;
    return gpus <= gpu_link_domain();
  }
  /// GPUs one GPU link joins: nvlink_domain_gpus, else 2 for a link with "bridge" in `interconnect`, else 8.
  int gpu_link_domain() const {
    return nvlink_domain_gpus.value_or(interconnect.find("bridge") != std::string::npos ? 2 : 8);
  }
};

/// A provider's GPU name reduced for matching (see GpuCatalog::try_find).
struct GpuNameKey {
  /// Lower-case letters and digits only, with these removed: separators (space, '-', '_', '/',
  /// parentheses), vendor/brand words (NVIDIA, AMD, Intel, Habana, Google, GeForce, Tesla,
  /// Instinct, HGX, "GPU", "Generation"), memory-type words (HBM*, GDDR*) and a memory-size
  /// token. "sxm2".."sxm6" become "sxm". "NVIDIA H100 80GB HBM3" -> "h100".
  std::string key;
  /// Memory size written in the name, decimal GB ("80GB", "80G", "(40 GB)", "80 GiB" read as 80),
  /// or nullopt when the name has none.
  std::optional<double> memory_gb;
};
/// Normalises a GPU name for lookup. Pure; never throws.
GpuNameKey normalize_gpu_name(std::string_view name);

/// The set of known GPUs with tolerant name lookup.
///
/// Matching rules (try_find):
///  1. The query and every row's `name` and `aliases` are reduced with normalize_gpu_name; a row
///     matches when one of its keys equals the query's key.
///  2. Several rows may share a key (an alias like "A100" sits on both A100 SXM rows). Then a
///     memory size (from the name, or the memory_bytes argument, which wins) keeps the rows whose
///     memory is within 10% of it (10% so that GiB-vs-GB spellings, e.g. 81920 MiB = 85.9 GB, still
///     match an 80 GB part). If the size matches none of them, rows whose key extends the
///     query's key ("h100" -> "h100nvl") and whose memory matches are taken instead (vast.ai
///     sells its H100 NVL as "H100" with 95830 MiB); failing that the size is ignored (modded or
///     partitioned cards: "RTX 4090 (48 GB mod)", "A100 (20 GB)").
///  3. Among the rows left, the one listed FIRST in gpus.csv wins. Rows are ordered so that the
///     default comes first. Defaults chosen (documented in data/gpus.SOURCES.md too):
///       - "H100" (no form factor)  -> NVIDIA H100 SXM (the part in HGX/DGX servers most clouds rent);
///       - "A100" (no form factor)  -> NVIDIA A100 SXM 80GB; "A100 40GB" -> A100 SXM 40GB;
///       - "A100 PCIe"              -> A100 PCIe 80GB; "A100 PCIe 40GB" -> A100 PCIe 40GB;
///       - "V100" (no size)         -> V100 SXM2 16GB (AWS p3 / GCP V100 are 16 GB);
///       - "H200"                   -> H200 SXM; "B200" -> B200 (HGX); "GH200" -> its 96 GB HBM3 GPU;
///       - "RTX 6000" (no "Ada")    -> Quadro RTX 6000 (Turing), as in Lambda's and SkyPilot's names.
class GpuCatalog {
 public:
  /// Parses gpus.csv text (columns as in data/gpus.csv). `source` names the file in errors.
  /// Throws Error{invalid_input} with file:line for a malformed row.
  ///
  /// Required columns: name, vendor, memory_gb (a cell > 0 in every row), memory_bw_gbps and
  /// interconnect_bw_gbps (columns required; an empty cell = not published, stored as 0).
  /// Optional numeric cells (empty = unknown): memory_bw_gbps (> 0), interconnect_bw_gbps (>= 0),
  /// *_tflops / int8_tops (> 0), pcie_gen and release_year (integers), tdp_w (> 0).
  /// Optional column `aliases` (';'-separated). Optional columns `usable_memory_mib` (> 0, driver total),
  /// `nvlink_domain_gpus` (positive integer; only with interconnect_bw_gbps > 0) and `unified_memory` (yes/no/empty).
  /// Errors read "SOURCE:LINE: column X: ..." (kind invalid_input); also for a duplicate name.
  static GpuCatalog parse_csv(std::string_view text, const std::string& source);
  /// Reads a gpus.csv file (for --gpus-file).
  static GpuCatalog load_file(const std::string& path);
  /// The catalog compiled into the binary (data/gpus.csv), parsed once on first use
  /// (thread-safe function-local static); errors name the source "gpus.csv".
  static const GpuCatalog& bundled();

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  /// Tolerant lookup: case, spaces, dashes, vendor prefix, memory size and memory-type
  /// suffixes are ignored where unambiguous ("h100", "H100-SXM5-80GB", "NVIDIA H100 80GB HBM3"
  /// all give "NVIDIA H100 SXM"). Returns nullptr when nothing matches.
  const GpuSpec* try_find(std::string_view name) const;
  /// As try_find, with the offer's memory per GPU in bytes (e.g. SkyPilot MemoryInfo, tardellirs
  /// vram_gb × 1e9) used to pick among variants; it overrides a size written in the name.
  const GpuSpec* try_find(std::string_view name, std::optional<double> memory_bytes) const;
  /// As try_find, but throws Error{not_found} (where = the name) listing up to 5 nearest known
  /// names by edit distance between normalised keys.
  const GpuSpec& find(std::string_view name) const;
  const GpuSpec& find(std::string_view name, std::optional<double> memory_bytes) const;
  /// Canonical names of up to max_count rows whose keys are nearest (Levenshtein distance on
  /// normalize_gpu_name keys) to `name`, nearest first; ties keep gpus.csv order.
  std::vector<std::string> nearest_names(std::string_view name, std::size_t max_count = 5) const;

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<std::vector<std::string>> keys_;  ///< per row: normalised keys of name and aliases
  /// normalised key -> rows that carry it, in row order (an exact-key lookup is one hash probe:
  /// importers resolve a GPU name per row, issue 11's linear-import target).
  std::unordered_map<std::string, std::vector<std::size_t>> rows_by_key_;
  std::vector<std::size_t> candidates(std::string_view name, std::optional<double> memory_bytes) const;
};

}  // namespace gpuplan
