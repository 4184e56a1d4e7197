#include "planner/planner.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "catalog/filter.hpp"
#include "catalog/importers.hpp"

#include "planner/pareto.hpp"
#include "planner/plan_inputs.hpp"
#include "sizing/diffusion_perf.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();


/// A GPU configuration shared by many offers: the search result depends only on this.
struct ClusterKey {
  const GpuSpec* gpu = nullptr;
  int gpus_per_node = 0;
  int nodes = 1;
  IntraNodeLink link = IntraNodeLink::unknown;
  double intra_bytes_per_s = 0;
  double inter_bytes_per_s = 0;
  double capacity_bytes = 0;
  auto tie() const {
    return std::tie(gpu, gpus_per_node, nodes, link, intra_bytes_per_s, inter_bytes_per_s, capacity_bytes);
  }
  bool operator<(const ClusterKey& o) const { return tie() < o.tie(); }
};

/// The best layout found for one cluster (or why none fits).
struct SearchOutcome {
  bool fits = false;
  ParallelLayout layout;
  Recompute recompute = Recompute::none;
  double per_gpu_bytes = 0;
  double smallest_per_gpu_bytes = kInf;  ///< over all layouts tried
  TrainingStepEstimate step;
  ServingEstimate serving;
  std::int64_t replicas_per_instance = 0;
  double work_seconds = kInf;  ///< per instance count 1 for serving; for training the whole run
  double images_per_hour_per_instance = 0;
  double kv_capacity_bytes = 0;
};

/// Inter-node bandwidth assumed when the offer names the network but not its speed, bits/s per
/// node. Stated in a link_assumed warning. Conservative single-NIC figures: 100 GbE, 200 Gb/s
/// RoCE, 400 Gb/s InfiniBand NDR (one NIC; 8-GPU HGX nodes usually have 8).
double assumed_inter_node_bits_per_s(InterNodeNetwork n) {
  switch (n) {
    case InterNodeNetwork::ethernet: return 100e9;
    case InterNodeNetwork::roce: return 200e9;
    case InterNodeNetwork::infiniband: return 400e9;
    case InterNodeNetwork::unknown: return 0;
  }
  return 0;
}

ClusterSpec cluster_for(const ClusterKey& key) {
  ClusterSpec c = make_cluster(*key.gpu, key.gpus_per_node, key.nodes, key.inter_bytes_per_s);
  if (key.link == IntraNodeLink::pcie) {
    c.intra_node_nvlink = false;
    c.intra_node_bytes_per_s = key.intra_bytes_per_s > 0 ? key.intra_bytes_per_s : pcie_x16_bytes_per_s(key.gpu->pcie_gen);
  } else if (key.link == IntraNodeLink::nvlink) {
    c.intra_node_nvlink = true;
    if (key.intra_bytes_per_s > 0) c.intra_node_bytes_per_s = key.intra_bytes_per_s;
  }
  return c;
}

std::vector<int> divisors(std::int64_t n) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

using detail::serving_memory_request;
using detail::serving_perf_request;

/// Training search over layouts for one cluster (see planner.hpp).
SearchOutcome search_training(const PlanRequest& r, const ModelArch& arch, const ClusterKey& key,
                              std::int64_t global_batch, double tokens, const PerfAssumptions& assumptions,
                              std::size_t& layouts_evaluated) {
  SearchOutcome best;
  const ClusterSpec cluster = cluster_for(key);
  const int n = key.gpus_per_node * key.nodes;
  const double usable = key.capacity_bytes * (1.0 - r.margin);
  const double tokens_per_step = static_cast<double>(global_batch) * static_cast<double>(r.seq_len);
  const double steps = std::ceil(tokens / tokens_per_step);
  const std::array<Recompute, 3> recomputes = {Recompute::none, Recompute::selective, Recompute::full};
  for (int tp = 1; tp <= key.gpus_per_node; tp *= 2) {
    if (arch.num_attention_heads % tp != 0) continue;
    if (key.gpus_per_node % tp != 0) continue;
    for (int pp : divisors(arch.num_layers)) {
      if (n % (tp * pp) != 0) continue;
      const int dp = n / (tp * pp);
      if (global_batch % dp != 0) continue;
      const std::int64_t per_dp = global_batch / dp;
      std::vector<int> zero_stages = dp == 1 ? std::vector<int>{0} : std::vector<int>{2, 3};
      for (int mb = 1; mb <= 64 && mb <= per_dp; mb *= 2) {
        if (per_dp % mb != 0) continue;
        bool any_fit_at_mb = false;
        for (int zero : zero_stages) {
          for (Recompute rc : recomputes) {
            ParallelLayout layout;
            layout.tp = tp;
            layout.pp = pp;
            layout.dp = dp;
            layout.zero_stage = zero;
            layout.sequence_parallel = tp > 1;
            layout.micro_batch = mb;
            double bytes = 0;
            try {
              bytes = training_memory(arch, detail::training_memory_request(r, layout, rc)).total_bytes();
            } catch (const Error&) {
              continue;  // the model cannot take this layout (e.g. kv heads)
            }
            ++layouts_evaluated;
            best.smallest_per_gpu_bytes = std::min(best.smallest_per_gpu_bytes, bytes);
            if (bytes > usable) continue;
            any_fit_at_mb = true;
            TrainingStepEstimate est =
                estimate_training_step(arch, detail::training_step_request(r, layout, rc, global_batch), cluster, assumptions);
            double work = steps * est.step_seconds;
            if (work < best.work_seconds) {
              best.fits = true;
              best.layout = layout;
              best.recompute = rc;
              best.per_gpu_bytes = bytes;
              best.step = est;
              best.work_seconds = work;
            }
            break;  // a heavier recompute only adds compute
          }
        }
        if (!any_fit_at_mb) break;  // larger micro-batches need more memory still
      }
    }
  }
  return best;
}

/// Serving search: the fastest-to-serve tensor-parallel degree per instance.
SearchOutcome search_serving(const PlanRequest& r, const ModelArch& arch, const ClusterKey& key,
                             const PerfAssumptions& assumptions, std::size_t& layouts_evaluated) {
  SearchOutcome best;
  const ClusterSpec cluster = cluster_for(key);
  const double usable = key.capacity_bytes * (1.0 - r.margin);
  double best_rate = 0;
  for (int tp = 1; tp <= key.gpus_per_node; tp *= 2) {
    if (arch.num_attention_heads % tp != 0 || key.gpus_per_node % tp != 0) continue;
    double one = 0, two = 0, kv_one = 0;
    try {
      MemoryBreakdown m1 = serving_memory(arch, serving_memory_request(r, tp, 1));
      one = m1.total_bytes();
      kv_one = m1.term_bytes("kv_cache");
      two = serving_memory(arch, serving_memory_request(r, tp, 2)).total_bytes();
    } catch (const Error&) {
      continue;
    }
    ++layouts_evaluated;
    const double per_seq = two - one;  // per GPU, fragmentation included
    const double base = one - per_seq;
    best.smallest_per_gpu_bytes = std::min(best.smallest_per_gpu_bytes, one);
    if (one > usable || per_seq <= 0) continue;
    // KV bytes (raw, across the replica's tp GPUs) that fit beside the weights.
    const double kv_capacity = static_cast<double>(tp) * (usable - base) * (kv_one / per_seq);
    ServingPerfRequest sp = serving_perf_request(r, tp, 1);
    ServingEstimate probe = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
    if (probe.max_concurrent_sequences < 1) continue;
    std::int64_t target = r.concurrency ? *r.concurrency : probe.max_concurrent_sequences;
    sp.concurrency = std::max<std::int64_t>(1, std::min(target, probe.max_concurrent_sequences));
    ServingEstimate est = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
    double bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
    while (bytes > usable && sp.concurrency > 1) {  // rounding of the KV split: step down
      sp.concurrency = std::max<std::int64_t>(1, sp.concurrency * 9 / 10);
      est = estimate_serving(arch, sp, cluster, kv_capacity, assumptions);
      bytes = serving_memory(arch, serving_memory_request(r, tp, est.batch)).total_bytes();
    }
    if (bytes > usable) continue;
    const std::int64_t replicas = key.gpus_per_node / tp;
    // Rank TP degrees by what the instance delivers: requests/s for --rps and batch jobs,
    // sequences held for --concurrency (then requests/s).
    double rate = r.concurrency ? static_cast<double>(est.batch * replicas) * 1e6 + est.requests_per_s_per_replica
                                : est.requests_per_s_per_replica * static_cast<double>(replicas);
    if (rate > best_rate) {
      best_rate = rate;
      best.fits = true;
      best.layout = ParallelLayout{};
      best.layout.tp = tp;
      best.layout.micro_batch = static_cast<int>(std::min<std::int64_t>(est.batch, 1 << 30));
      best.per_gpu_bytes = bytes;
      best.serving = est;
      best.kv_capacity_bytes = kv_capacity;
      best.replicas_per_instance = replicas;
    }
  }
  return best;
}

/// Image generation: one image per GPU (data parallel), model weights must fit one GPU.
SearchOutcome search_images(const PlanRequest& r, const ModelArch& arch, const ClusterKey& key,
                            const PerfAssumptions& assumptions, std::size_t& layouts_evaluated) {
  SearchOutcome best;
  const double usable = key.capacity_bytes * (1.0 - r.margin);
  // Weights in the serving precision + CUDA context + fragmentation (serving_memory with no KV:
  // diffusion models hold no KV cache; activations of one image are small against the weights).
  double bytes = 0;
  try {
    ServingMemoryRequest m = serving_memory_request(r, 1, 1);
    MemoryBreakdown mb = serving_memory(arch, m);
    bytes = mb.total_bytes() - mb.term_bytes("kv_cache");
  } catch (const Error&) {
    return best;
  }
  ++layouts_evaluated;
  best.smallest_per_gpu_bytes = bytes;
  if (bytes > usable) return best;
  const DiffusionRequest d = detail::diffusion_request(r, arch, key.gpus_per_node);
  DiffusionEstimate e = estimate_diffusion(arch, d, *key.gpu, assumptions);
  best.fits = true;
  best.per_gpu_bytes = bytes;
  best.images_per_hour_per_instance = e.images_per_hour;
  best.replicas_per_instance = key.gpus_per_node;
  return best;
}

std::string short_gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

/// Bytes of a full checkpoint (trainable weights + optimizer state + master copy) and of the
/// final weights to download, from the sizing layer's terms at one GPU, no sharding.
struct CheckpointSizes {
  double checkpoint_bytes = 0;
  double final_weights_bytes = 0;
};
CheckpointSizes checkpoint_sizes(const PlanRequest& r, const ModelArch& arch) {
  CheckpointSizes s;
  if (r.workload != PlanWorkload::training) {
    s.final_weights_bytes = 0;
    return s;
  }
  ParallelLayout one;
  MemoryBreakdown m;
  try {
    m = training_memory(arch, detail::training_memory_request(r, one, Recompute::full));
  } catch (const Error&) {
    return s;
  }
  if (r.task == Task::lora || r.task == Task::qlora) {
    // The adapters and their optimizer state (the frozen base is not checkpointed).
    s.checkpoint_bytes =
        m.term_bytes("lora_adapters") + m.term_bytes("optimizer_state") + m.term_bytes("master_weights");
    // The sizing layer holds adapters in fp32 (4 B/param, memory.cpp "4 B × adapter params");
    // they are released in 16 bits: half of that term.
    s.final_weights_bytes = m.term_bytes("lora_adapters") / 2.0;
  } else {
    s.checkpoint_bytes =
        m.term_bytes("weights") + m.term_bytes("optimizer_state") + m.term_bytes("master_weights");
    s.final_weights_bytes = static_cast<double>(arch.total_params()) * 2.0;  // bf16 release
  }
  return s;
}

double dataset_bytes(const PlanRequest& r, const ModelArch& arch) {
  if (r.workload != PlanWorkload::training) return 0;
  // Pre-tokenised dataset: uint16 token ids when the vocabulary fits (< 65536), else uint32
  // (Megatron-LM indexed datasets choose the dtype the same way).
  const double bytes_per_token = arch.vocab_size > 0 && arch.vocab_size < 65536 ? 2.0 : 4.0;
  const double unique_tokens = r.dataset_tokens ? *r.dataset_tokens : r.training_tokens();
  return unique_tokens * bytes_per_token;
}

void add_warning(std::vector<PlanWarning>& w, std::string code, std::string message) {
  w.push_back(PlanWarning{std::move(code), std::move(message)});
}

}  // namespace

PlanResult plan(const PlanRequest& request, const ModelArch& arch, const std::vector<Offer>& offers,
                const GpuCatalog& gpus, BillingLookup billing_of, const PerfAssumptions& assumptions) {
  PlanResult result;
  result.model_name = arch.name;
  const bool training = request.workload == PlanWorkload::training;
  const bool images = request.workload == PlanWorkload::image_generation;
  if (images && !arch.diffusion) {
    throw_invalid("--model", fmt::format("{} is not a diffusion model", arch.name),
                  "a diffusion model (SDXL UNet or FLUX transformer) for image generation");
  }
  if (!images && arch.family != ModelFamily::decoder) {
    throw_invalid("--model", fmt::format("{} is not a decoder language model", arch.name),
                  "a decoder LLM for training, serving and batch generation");
  }
  const double tokens = training ? request.training_tokens() : 0;
  result.training_tokens = tokens;
  const std::int64_t global_batch = training ? request.effective_global_batch_seqs() : 0;
  const CheckpointSizes ckpt = checkpoint_sizes(request, arch);
  const double data_bytes = dataset_bytes(request, arch);

  std::map<ClusterKey, SearchOutcome> cache;
  std::set<std::string> spot_rate_unknown;  ///< offers whose spot price could not be planned
  std::set<std::string> gpus_without_perf_figures;  ///< GPUs whose peak FLOP/s or bandwidth is unpublished
  double largest_gpu_bytes = 0;
  double smallest_need = kInf;
  bool any_multi_node = false;

  for (const Offer& offer : offers) {
    if (offer.excluded_from_ranking() || !offer.gpu_name || offer.gpu_count < 1) {
      ++result.offers_skipped;
      continue;
    }
    const GpuSpec* spec = gpus.try_find(*offer.gpu_name, offer.gpu_memory_bytes);
    const PriceObservation* od = offer.latest_price(PriceKind::on_demand);
    const PriceObservation* sp = offer.latest_price(PriceKind::spot);
    if (!spec || (!od && !sp)) {
      ++result.offers_skipped;
      continue;
    }
    // The time model needs a dense 16/32-bit peak and the memory bandwidth; gpus.csv leaves
    // figures no source publishes empty, and such offers cannot be timed (never guessed).
    if (!spec->memory_bandwidth() || !(spec->dense_flops(Dtype::bf16) || spec->dense_flops(Dtype::fp16) ||
                                       spec->dense_flops(Dtype::fp32))) {
      ++result.offers_skipped;
      gpus_without_perf_figures.insert(spec->name);
      continue;
    }
    ++result.offers_considered;
    // Per-GPU memory: the smaller of the offer's and the datasheet's when they agree within 15%
    // (feeds round or mix GiB and GB: a B200 listed as "180 GiB" is 193 GB, the datasheet's
    // usable 180 GB is what fits), otherwise the datasheet's (some feeds list the instance total
    // as the per-GPU size), with a warning.
    double capacity = spec->memory_bytes;
    bool memory_mismatch = false;
    if (offer.gpu_memory_bytes) {
      if (std::abs(*offer.gpu_memory_bytes - spec->memory_bytes) <= 0.15 * spec->memory_bytes) {
        capacity = std::min(*offer.gpu_memory_bytes, spec->memory_bytes);
      } else {
        memory_mismatch = true;
      }
    }
    largest_gpu_bytes = std::max(largest_gpu_bytes, capacity);

    // Node counts: multi-node training only with a known inter-node network.
    const bool network_known = offer.inter_node_network != InterNodeNetwork::unknown;
    // A source that names the inter-node network (e.g. AWS EFA) offers clusters; when it does not
    // say how many nodes, up to --max-nodes are assumed and a warning says so.
    const bool max_nodes_assumed = network_known && !offer.max_nodes;
    if (network_known && offer.max_nodes.value_or(request.max_nodes) > 1) any_multi_node = true;
    int node_limit = 1;
    if (training && network_known) node_limit = std::min(request.max_nodes, offer.max_nodes.value_or(request.max_nodes));
    double inter_bits = 0;
    bool inter_assumed = false;
    if (network_known) {
      inter_bits = offer.inter_node_bits_per_s.value_or(0);
      if (inter_bits <= 0) {
        inter_bits = assumed_inter_node_bits_per_s(offer.inter_node_network);
        inter_assumed = true;
      }
    }

    std::optional<Plan> best_plan;
    for (int nodes = 1; nodes <= node_limit; nodes *= 2) {
      ClusterKey key;
      key.gpu = spec;
      key.gpus_per_node = offer.gpu_count;
      key.nodes = nodes;
      key.link = offer.intra_node_link;
      key.intra_bytes_per_s = offer.intra_node_link_bytes_per_s ? *offer.intra_node_link_bytes_per_s / 2.0 : 0;
      key.inter_bytes_per_s = nodes > 1 ? inter_bits / 8.0 : 0;
      key.capacity_bytes = capacity;
      auto it = cache.find(key);
      if (it == cache.end()) {
        SearchOutcome o;
        if (training) {
          o = search_training(request, arch, key, global_batch, tokens, assumptions, result.layouts_evaluated);
        } else if (images) {
          o = search_images(request, arch, key, assumptions, result.layouts_evaluated);
        } else {
          o = search_serving(request, arch, key, assumptions, result.layouts_evaluated);
        }
        it = cache.emplace(key, o).first;
      }
      const SearchOutcome& o = it->second;
      smallest_need = std::min(smallest_need, o.smallest_per_gpu_bytes);
      if (!o.fits) continue;

      Plan p;
      p.offer_id = offer.id;
      p.provider = offer.provider;
      p.instance_type = offer.instance_type;
      p.region = offer.region;
      p.gpu_name = spec->name;
      p.gpus_per_instance = offer.gpu_count;
      p.intra_node_link = offer.intra_node_link;
      p.inter_node_network = offer.inter_node_network;
      p.cluster = cluster_for(key);
      p.layout = o.layout;
      p.recompute = o.recompute;
      p.per_gpu_memory_bytes = o.per_gpu_bytes;
      p.gpu_memory_capacity_bytes = capacity;
      p.margin = request.margin;
      p.checkpoint_bytes = ckpt.checkpoint_bytes;
      p.egress_bytes = request.egress_gb ? *request.egress_gb * kBytesPerGb : ckpt.final_weights_bytes;
      p.storage_bytes = data_bytes + ckpt.checkpoint_bytes;
      if (training) {
        p.instances = nodes;
        p.global_batch_seqs = global_batch;
        p.training = o.step;
        p.tokens_per_s = o.step.tokens_per_s;
        p.steps = std::ceil(tokens / (static_cast<double>(global_batch) * static_cast<double>(request.seq_len)));
        p.work_seconds = o.work_seconds;
      } else if (images) {
        p.instances = 1;
        p.replicas = o.replicas_per_instance;
        p.work_seconds = request.images / o.images_per_hour_per_instance * 3600.0;
        p.requests_per_s = o.images_per_hour_per_instance / 3600.0;
        p.storage_bytes = 0;
      } else {
        const ServingEstimate& e = o.serving;
        std::int64_t replicas = 1;
        if (request.workload == PlanWorkload::serving) {
          replicas = replicas_needed(e, request.requests_per_s.value_or(0), request.concurrency.value_or(0));
        } else {
          replicas = o.replicas_per_instance;  // batch job: one full instance
        }
        if (replicas < 1) continue;
        const std::int64_t instances = (replicas + o.replicas_per_instance - 1) / o.replicas_per_instance;
        if (instances > request.max_nodes) continue;
        p.instances = static_cast<int>(instances);
        p.replicas = replicas;
        p.serving = e;
        p.kv_capacity_bytes = o.kv_capacity_bytes;
        p.tokens_per_s = e.decode_tokens_per_s * static_cast<double>(replicas);
        p.requests_per_s = e.requests_per_s_per_replica * static_cast<double>(replicas);
        p.work_seconds = request.workload == PlanWorkload::serving ? request.hours * 3600.0
                                                                   : *request.requests / p.requests_per_s;
        p.storage_bytes = static_cast<double>(arch.total_params()) * weight_quant_bits(request.quant) / 8.0;
      }

      // Price every kind the offer lists; choose by the request's sort key.
      const BillingTerms terms = billing_of ? billing_of(offer) : offer.billing_override;
      p.billing = resolve_billing(terms, request.preemptions_per_day);
      CostInputs job;
      job.work_seconds = p.work_seconds;
      job.instances = p.instances;
      job.storage_bytes = p.storage_bytes;
      job.egress_bytes = p.egress_bytes;
      job.checkpoint_seconds = training ? ckpt.checkpoint_bytes / static_cast<double>(p.instances) /
                                              request.checkpoint_write_bytes_per_s
                                        : 0;
      job.restart_seconds = request.restart_seconds;
      std::vector<std::pair<CostBreakdown, const PriceObservation*>> options;
      for (PriceKind kind : {PriceKind::on_demand, PriceKind::spot, PriceKind::reserved_1y, PriceKind::reserved_3y}) {
        if (kind == PriceKind::spot && (!request.allow_spot || !training)) continue;
        const PriceObservation* obs = offer.latest_price(kind);
        if (!obs || obs->usd_per_hour <= 0) continue;
        auto c = price_job(job, kind, obs->usd_per_hour, p.billing);
        if (c) {
          options.emplace_back(*c, obs);
        } else if (kind == PriceKind::spot && !p.billing.preemptions_per_day) {
          spot_rate_unknown.insert(offer.id);
        }
      }
      if (options.empty()) continue;
      auto better = [&](const std::pair<CostBreakdown, const PriceObservation*>& a,
                        const std::pair<CostBreakdown, const PriceObservation*>& b) {
        if (request.sort == PlanSort::time && a.first.run_seconds != b.first.run_seconds) {
          return a.first.run_seconds < b.first.run_seconds;
        }
        return a.first.total_usd() < b.first.total_usd();
      };
      std::sort(options.begin(), options.end(), better);
      p.cost = options.front().first;
      p.price_source = options.front().second->source;
      p.usd_per_gpu_hour = p.cost.usd_per_hour / static_cast<double>(p.gpus_per_instance);
      for (std::size_t i = 1; i < options.size(); ++i) p.alternatives.push_back(options[i].first);

      // Warnings.
      auto& w = p.warnings;
      const bool pcie = offer.intra_node_link == IntraNodeLink::pcie ||
                        (offer.intra_node_link == IntraNodeLink::unknown && !spec->has_gpu_link());
      if (pcie && offer.gpu_count > 1 && (p.layout.tp > 1 || (training && p.layout.dp * p.layout.pp >= 4))) {
        add_warning(w, "pcie_multi_gpu",
                    fmt::format("{} GPUs talk over PCIe only: TP {} / DP {} traffic is slow there (time estimated "
                                "at PCIe speed)",
                                offer.gpu_count, p.layout.tp, p.layout.dp));
      }
      if (offer.intra_node_link == IntraNodeLink::unknown && offer.gpu_count > 1) {
        add_warning(w, "link_assumed",
                    fmt::format("intra-node link not listed: {} assumed from the GPU datasheet",
                                spec->has_gpu_link() ? "NVLink" : "PCIe"));
      }
      if (p.instances > 1 && max_nodes_assumed) {
        add_warning(w, "max_nodes_assumed",
                    fmt::format("the source does not say how many {} instances can be rented together: {} assumed "
                                "available (--max-nodes caps it)",
                                offer.instance_type, p.instances));
      }
      if (p.instances > 1 && training && inter_assumed) {
        add_warning(w, "multi_node_network",
                    fmt::format("{} network speed not listed: {:.0f} Gb/s per node assumed",
                                inter_node_network_name(offer.inter_node_network), inter_bits / 1e9));
      }
      if (memory_mismatch) {
        add_warning(w, "memory_mismatch",
                    fmt::format("the offer lists {:.1f} GB per GPU but the {} datasheet says {:.1f} GB: datasheet used",
                                *offer.gpu_memory_bytes / 1e9, spec->name, spec->memory_bytes / 1e9));
      }
      // Flags that question the price or the GPU memory (not mere unit corrections or ranges).
      for (const QualityFlag& f : offer.flags) {
        if (!f.excludes && (f.rule == import_rule::kBelowMarketIndex || f.rule == import_rule::kGpuMemoryMismatch))
          add_warning(w, "offer_flagged", fmt::format("data-quality flag {}: {}", f.rule, f.detail));
      }
      if (!offer.confirmed_available_at) {
        add_warning(w, "not_confirmed_available", "listed price, availability never confirmed");
      }
      if (!p.price_source.observed_at) {
        add_warning(w, "price_date_unknown", "the source gives no date for this price");
      } else if (!request.today.empty()) {
        auto stale = is_stale(offer, p.cost.price_kind, request.today, request.stale_after_days);
        if (stale && *stale) {
          add_warning(w, "stale_price",
                      fmt::format("price observed {} is older than {:.0f} days", *p.price_source.observed_at,
                                  request.stale_after_days));
        }
      }
      const double side = p.cost.storage_usd.value_or(0) + p.cost.egress_usd.value_or(0);
      if (p.total_usd() > 0 && side / p.total_usd() > 0.2) {
        add_warning(w, "egress_storage_share",
                    fmt::format("storage and egress are {:.0f}% of the total", 100.0 * side / p.total_usd()));
      }
      if (training && (request.precision == TrainPrecision::bf16_mixed || request.precision == TrainPrecision::bf16_pure) &&
          !spec->supports(Dtype::bf16)) {
        add_warning(w, "fp16_without_bf16",
                    fmt::format("{} has no BF16: training falls back to FP16 with loss scaling", spec->name));
      }
      if (training && request.precision == TrainPrecision::fp16_mixed && spec->supports(Dtype::bf16)) {
        add_warning(w, "fp16_without_bf16", "FP16 chosen although the GPU supports BF16 (no loss scaling needed)");
      }
      if (!training && !images && !spec->is_hbm()) {
        add_warning(w, "gddr_serving",
                    fmt::format("{} has {} memory ({:.0f} GB/s): decoding is bandwidth-bound", spec->name,
                                spec->memory_type, spec->memory_bandwidth_bytes_per_s / 1e9));
      }
      if (p.cost.price_kind == PriceKind::spot) {
        for (const auto& alt : p.alternatives) {
          if (alt.price_kind == PriceKind::on_demand && alt.total_usd() < p.total_usd()) {
            add_warning(w, "spot_not_cheaper", "on-demand is cheaper after expected preemption losses");
          }
        }
      } else {
        for (const auto& alt : p.alternatives) {
          if (alt.price_kind == PriceKind::spot && p.cost.price_kind == PriceKind::on_demand &&
              alt.usd_per_hour < p.cost.usd_per_hour && request.sort == PlanSort::cost) {
            add_warning(w, "spot_not_cheaper",
                        fmt::format("spot is cheaper per hour (${:.2f} vs ${:.2f}) but on-demand is cheaper after "
                                    "expected preemption losses",
                                    alt.usd_per_hour, p.cost.usd_per_hour));
          }
        }
      }
      if (p.cost.price_kind == PriceKind::reserved_1y || p.cost.price_kind == PriceKind::reserved_3y) {
        add_warning(w, "reserved_commitment",
                    fmt::format("{} price: the whole term is billed ({:.0f} days)",
                                price_kind_name(p.cost.price_kind), p.cost.billed_seconds / kSecondsPerDay));
      }
      if (!p.billing.assumptions.empty()) {
        std::string all;
        for (const auto& a : p.billing.assumptions) all += (all.empty() ? "" : "; ") + a;
        add_warning(w, "billing_assumption", all);
      }

      bool take = !best_plan;
      if (best_plan) {
        if (request.sort == PlanSort::time) {
          take = p.time_seconds() < best_plan->time_seconds() ||
                 (p.time_seconds() == best_plan->time_seconds() && p.total_usd() < best_plan->total_usd());
        } else {
          take = p.total_usd() < best_plan->total_usd() ||
                 (p.total_usd() == best_plan->total_usd() && p.time_seconds() < best_plan->time_seconds());
        }
      }
      if (images) {
        p.images_per_hour = p.requests_per_s * 3600.0;
        p.usd_per_1000_images = p.total_usd() / request.images * 1000.0;
      }
      if (take) best_plan = std::move(p);
    }
    if (best_plan) result.plans.push_back(std::move(*best_plan));
  }

  // Collapse zones: the same instance type in one region at the same price gives the same plan
  // (AWS and primeintellect list each availability zone as its own offer).
  {
    std::map<std::tuple<std::string, std::string, std::string, std::string, double, double>, std::size_t> seen;
    std::vector<Plan> kept;
    kept.reserve(result.plans.size());
    for (Plan& p : result.plans) {
      auto key = std::make_tuple(p.provider, p.instance_type, p.region, std::string(price_kind_name(p.cost.price_kind)),
                                 p.cost.usd_per_hour, p.total_usd());
      auto [it, inserted] = seen.emplace(key, kept.size());
      if (inserted) {
        kept.push_back(std::move(p));
      } else {
        kept[it->second].same_plan_offer_ids.push_back(p.offer_id);
      }
    }
    result.plans = std::move(kept);
  }

  // Pareto front over all plans, then sort, then the cheapest-per-GPU-hour warning, then limit.
  std::vector<CostTimePoint> pts;
  pts.reserve(result.plans.size());
  for (const Plan& p : result.plans) pts.push_back({p.total_usd(), p.time_seconds()});
  for (std::size_t i : pareto_front_indices(pts)) result.plans[i].on_pareto_front = true;
  std::stable_sort(result.plans.begin(), result.plans.end(), [&](const Plan& a, const Plan& b) {
    if (request.sort == PlanSort::time) {
      if (a.time_seconds() != b.time_seconds()) return a.time_seconds() < b.time_seconds();
      return a.total_usd() < b.total_usd();
    }
    if (a.total_usd() != b.total_usd()) return a.total_usd() < b.total_usd();
    return a.time_seconds() < b.time_seconds();
  });
  result.plans_total = result.plans.size();
  if (!result.plans.empty()) {
    const Plan* cheapest_job = &result.plans.front();
    const Plan* cheapest_rate = cheapest_job;
    for (const Plan& p : result.plans) {
      if (p.total_usd() < cheapest_job->total_usd()) cheapest_job = &p;
      if (p.usd_per_gpu_hour < cheapest_rate->usd_per_gpu_hour) cheapest_rate = &p;
    }
    if (cheapest_rate != cheapest_job && cheapest_rate->usd_per_gpu_hour < cheapest_job->usd_per_gpu_hour) {
      add_warning(result.warnings, "cheapest_gpu_hour_not_cheapest_job",
                  fmt::format("the cheapest GPU-hour ({} {} at ${:.2f}/GPU-h) is not the cheapest job: it costs "
                              "${:.2f} against ${:.2f} on {} {}",
                              cheapest_rate->provider, cheapest_rate->instance_type, cheapest_rate->usd_per_gpu_hour,
                              cheapest_rate->total_usd(), cheapest_job->total_usd(), cheapest_job->provider,
                              cheapest_job->instance_type));
    }
  }
  if (!spot_rate_unknown.empty()) {
    add_warning(result.warnings, "spot_rate_unknown",
                fmt::format("{} offers list a spot price but their provider's preemption rate is unknown: spot was not "
                            "planned for them (give --preemptions-per-day to plan it)",
                            spot_rate_unknown.size()));
  }
  if (!gpus_without_perf_figures.empty()) {
    std::string names;
    for (const std::string& n : gpus_without_perf_figures) names += (names.empty() ? "" : ", ") + n;
    add_warning(result.warnings, "gpu_figures_unknown",
                fmt::format("offers with these GPUs were skipped because no source gives their peak FLOP/s or memory "
                            "bandwidth (data/gpus.csv), so their time cannot be estimated: {}",
                            names));
  }
  if (request.pareto_only) {
    std::erase_if(result.plans, [](const Plan& p) { return !p.on_pareto_front; });
  }
  if (result.plans.size() > request.limit) result.plans.resize(request.limit);

  if (result.plans_total == 0) {
    NoPlanReason np;
    np.largest_gpu_bytes = largest_gpu_bytes;
    np.smallest_per_gpu_bytes = std::isfinite(smallest_need) ? smallest_need : 0;
    np.any_multi_node_offer = any_multi_node;
    if (result.offers_considered == 0) {
      np.reason = "no offer matches: every offer was filtered out, excluded by a quality flag, unresolved or unpriced";
      np.suggestions.push_back("widen the FILTER or import more offers (gpuplan import FILE)");
    } else if (np.smallest_per_gpu_bytes > np.largest_gpu_bytes * (1.0 - request.margin)) {
      np.reason = fmt::format(
          "no layout fits: the smallest per-GPU requirement found is {} but the largest GPU offered has {} ({} usable "
          "with the {:.0f}% margin){}",
          short_gb(np.smallest_per_gpu_bytes), short_gb(np.largest_gpu_bytes),
          short_gb(np.largest_gpu_bytes * (1.0 - request.margin)), request.margin * 100.0,
          any_multi_node ? "" : ", and no offer has a known inter-node network for multi-node training");
      if (training) {
        if (request.task == Task::full) {
          np.suggestions.push_back("fine-tune with LoRA (--task lora) or QLoRA (--task qlora)");
        } else if (request.task == Task::lora) {
          np.suggestions.push_back("QLoRA (--task qlora): the frozen base in 4 bits");
        }
        np.suggestions.push_back(any_multi_node ? "more nodes (--max-nodes) so that ZeRO-3 shards further"
                                                : "ZeRO-3 over more GPUs: needs an offer with a known inter-node network "
                                                  "(import one, or set it in a user quote)");
        np.suggestions.push_back("a shorter sequence (--seq) or an 8-bit optimizer (--optimizer adamw_8bit)");
      } else if (!images) {
        np.suggestions.push_back("quantise the weights (--quant int4 or --quant fp8)");
        np.suggestions.push_back("a shorter context (--prompt-tokens, --output-tokens) or an 8-bit KV cache (--kv-dtype fp8)");
      }
    } else {
      np.reason = "layouts fit but none could be priced or met the load within --max-nodes instances";
      np.suggestions.push_back("raise --max-nodes, allow spot, or lower the load");
    }
    result.no_plan = np;
  }
  return result;
}

}  // namespace gpuplan
