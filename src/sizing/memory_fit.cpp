// Which GPUs of the catalog hold a workload, and at what count (memory.hpp, fitting_gpus).
#include <fmt/core.h>

#include <algorithm>

#include "hardware/gpu_spec.hpp"
#include "sizing/memory.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

/// GPUs of one node: tensor parallelism stays within one (Megatron-LM runs TP inside a node, PP
/// and DP across nodes; Narayanan et al. 2021 §3.3).
constexpr int kGpusPerNode = 8;

/// Counts above one node only for GPUs whose NVLink spans a whole node (HGX/DGX boards): a
/// bridged pair of PCIe cards (RTX 3090, A6000) is not built into 16- to 64-GPU jobs (trial10c:
/// the size page listed "RTX 3090 × 64" for a 70B serve).
bool count_allowed(const GpuSpec& gpu, int count) { return count <= kGpusPerNode || gpu.gpu_link_spans(kGpusPerNode); }

void sort_fits(std::vector<GpuFit>& fits) {
  std::stable_sort(fits.begin(), fits.end(), [](const GpuFit& a, const GpuFit& b) {
    if (a.gpu_count != b.gpu_count) return a.gpu_count < b.gpu_count;
    return a.capacity_bytes < b.capacity_bytes;
  });
}

void check_margin(double margin) {
  if (!(margin >= 0 && margin < 1)) throw_invalid("--margin", "margin out of range", "a fraction in [0, 1)");
}

/// The training layout assumed at `count` GPUs, or nullopt when the count does not fit tp·pp·ep.
std::optional<ParallelLayout> training_layout_at(const ParallelLayout& given, int count) {
  const int mp = given.tp * given.pp;
  if (count % mp != 0) return std::nullopt;
  ParallelLayout l = given;
  l.dp = count / mp;
  if (!l.expert_grid_divides()) return std::nullopt;
  if (l.zero_stage == 0 && l.dp > 1) l.zero_stage = 3;
  if (l.dp == 1 && !l.offload_params) l.zero_stage = std::min(l.zero_stage, given.zero_stage);
  return l;
}

/// Per GPU of the catalog, the first (smallest) count whose per-GPU requirement fits with the
/// margin; `sized` holds (count, (layout, per-GPU bytes)) in increasing count order.
std::vector<GpuFit> smallest_fitting_counts(const std::vector<std::pair<int, std::pair<ParallelLayout, double>>>& sized,
                                            const GpuCatalog& catalog, double margin) {
  std::vector<GpuFit> fits;
  for (const GpuSpec& gpu : catalog.gpus()) {
    // Driver-reported capacity when the catalog has it (an "80 GB" H100 shows 85.5e9 bytes), else the datasheet's.
    const double capacity = gpu.fit_memory_bytes();
    if (capacity <= 0) continue;
    for (const auto& [count, lb] : sized) {
      if (!count_allowed(gpu, count)) continue;
      if (lb.second <= (1.0 - margin) * capacity) {
        fits.push_back(GpuFit{&gpu, count, lb.second, capacity, 1.0 - lb.second / capacity, lb.first});
        break;
      }
    }
  }
  sort_fits(fits);
  return fits;
}

}  // namespace

std::vector<GpuFit> fitting_gpus(const ModelArch& arch, const TrainingMemoryRequest& req, const GpuCatalog& catalog,
                                 const FitOptions& options) {
  check_margin(options.margin);
  req.validate();
  // Per-GPU requirement does not depend on the GPU model: size each count once.
  std::vector<std::pair<int, std::pair<ParallelLayout, double>>> sized;
  for (int count : options.counts) {
    auto layout = training_layout_at(req.layout, count);
    if (!layout) continue;
    TrainingMemoryRequest r = req;
    r.layout = *layout;
    sized.push_back({count, {*layout, training_memory(arch, r).total_bytes()}});
  }
  return smallest_fitting_counts(sized, catalog, options.margin);
}

std::vector<GpuFit> fitting_gpus(const ModelArch& arch, const ServingMemoryRequest& req, const GpuCatalog& catalog,
                                 const FitOptions& options) {
  check_margin(options.margin);
  req.validate();
  std::vector<std::pair<int, std::pair<ParallelLayout, double>>> sized;
  for (int count : options.counts) {
    if (count % req.pp != 0) continue;
    int tp = count / req.pp, pp = req.pp;
    // Past one node, TP stays within the node and the nodes form pipeline stages (tp 8, pp N/8)
    // when the request left pp at 1; a TP group spanning nodes is not a layout anyone serves with.
    if (tp > kGpusPerNode && pp == 1 && count % kGpusPerNode == 0) {
      tp = kGpusPerNode;
      pp = count / kGpusPerNode;
    }
    if (tp > kGpusPerNode) continue;
    // Encoders and encoder-decoders are sized whole on one GPU (memory.cpp validate_against_model): one GPU each.
    if ((arch.family == ModelFamily::encoder || arch.family == ModelFamily::encoder_decoder) && (tp > 1 || pp > 1)) continue;
    if (arch.num_attention_heads > 0 && arch.num_attention_heads % tp != 0) continue;
    if (arch.num_layers > 0 && pp > arch.num_layers) continue;
    ServingMemoryRequest r = req;
    r.tp = tp;
    r.pp = pp;
    ParallelLayout l;
    l.tp = tp;
    l.pp = pp;
    sized.push_back({count, {l, serving_memory(arch, r).total_bytes()}});
  }
  return smallest_fitting_counts(sized, catalog, options.margin);
}

std::string fit_assumption(const TrainingMemoryRequest& req) {
  const auto& l = req.layout;
  return fmt::format(
      "each count N keeps tp {} and pp {} (N a multiple of {}), dp = N / {}; weights, gradients and optimizer state "
      "sharded over dp with ZeRO-{}{}; counts above 8 only for accelerators whose GPU-to-GPU link (NVLink, Infinity Fabric, TPU ICI) joins 8 or more",
      l.tp, l.pp, l.tp * l.pp, l.tp * l.pp, l.zero_stage == 0 ? 3 : l.zero_stage,
      l.zero_stage == 0 ? " (FSDP full shard) when dp > 1" : "");
}

std::string fit_assumption(const ServingMemoryRequest& req) {
  return fmt::format(
      "each count N is tensor parallel tp = N / pp (pp {}), tp dividing the attention heads; weights and KV heads "
      "split by tp; past 8 GPUs tp stays 8 (one node) and the nodes are pipeline stages when pp is 1; counts above "
      "8 only for accelerators whose GPU-to-GPU link (NVLink, Infinity Fabric, TPU ICI) joins 8 or more",
      req.pp);
}

namespace {

/// Largest x in [1, hi] with fits(x), 0 if fits(1) is false (the total grows with x).
template <class Fits>
std::int64_t largest_fitting(std::int64_t hi, const Fits& fits) {
  if (hi < 1 || !fits(1)) return 0;
  std::int64_t lo = 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace

TrainingLimits training_limits(const ModelArch& arch, const TrainingMemoryRequest& req, double capacity_bytes,
                               double margin, std::int64_t max_tokens, std::int64_t max_micro_batch) {
  check_margin(margin);
  req.validate();
  const double usable = (1.0 - margin) * capacity_bytes;
  TrainingLimits out;
  // Within what the request accepts (TrainingMemoryRequest::validate: seq_len ≤
  // kMaxTrainingSeqLenTokens, micro-batch ≤ 1e6, seq_len × micro-batch ≤ 1e9 tokens).
  const auto batch = static_cast<std::int64_t>(std::max(req.layout.micro_batch, 1));
  max_tokens = std::min({max_tokens, kMaxTrainingSeqLenTokens, static_cast<std::int64_t>(1'000'000'000) / batch});
  max_micro_batch = std::min({max_micro_batch, static_cast<std::int64_t>(1'000'000),
                              static_cast<std::int64_t>(1'000'000'000) / std::max<std::int64_t>(req.seq_len, 1)});
  out.max_seq_len = largest_fitting(max_tokens, [&](std::int64_t seq) {
    TrainingMemoryRequest r = req;
    r.seq_len = seq;
    return training_memory(arch, r).total_bytes() <= usable;
  });
  out.max_micro_batch = largest_fitting(max_micro_batch, [&](std::int64_t mb) {
    TrainingMemoryRequest r = req;
    r.layout.micro_batch = static_cast<int>(mb);
    return training_memory(arch, r).total_bytes() <= usable;
  });
  return out;
}

ServingLimits serving_limits(const ModelArch& arch, const ServingMemoryRequest& req, double capacity_bytes,
                             double margin, std::int64_t max_tokens, std::int64_t max_sequences) {
  check_margin(margin);
  req.validate();
  const double usable = (1.0 - margin) * capacity_bytes;
  ServingLimits out;
  if (arch.max_position_embeddings > 0) max_tokens = std::min(max_tokens, arch.max_position_embeddings);
  out.max_context_tokens = largest_fitting(max_tokens, [&](std::int64_t ctx) {
    ServingMemoryRequest r = req;
    r.context_tokens = ctx;
    return serving_memory(arch, r).total_bytes() <= usable;
  });
  out.max_concurrency = largest_fitting(max_sequences, [&](std::int64_t n) {
    ServingMemoryRequest r = req;
    r.concurrency = n;
    return serving_memory(arch, r).total_bytes() <= usable;
  });
  return out;
}

}  // namespace gpuplan
