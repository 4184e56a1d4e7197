// Planner speed (issue 4): layouts evaluated per second and whole-plan latency on the full
// bundled catalog for a 70B LoRA fine-tune and a 405B pretrain. The bundled catalog is imported
// once (in memory, no database) outside the timed loop; the timed part is plan() alone.
//
// The 405B pretrain also runs on a copy of the catalog where every 8-GPU H100/H200 offer is
// given a known InfiniBand network (max 64 nodes), because the bundled feeds list no inter-node
// network and a 405B pretrain then has no plan (the search stops at single nodes).
#include <benchmark/benchmark.h>

#include "catalog/importers.hpp"
#include "catalog/providers.hpp"
#include "model/model_source.hpp"
#include "planner/planner.hpp"

namespace {

using namespace gpuplan;

const std::vector<Offer>& catalog() {
  static const std::vector<Offer> offers = bundled_catalog().offers;
  return offers;
}

const std::vector<Offer>& catalog_with_networks() {
  static const std::vector<Offer> offers = [] {
    std::vector<Offer> out = catalog();
    for (Offer& o : out) {
      if (o.gpu_count == 8 && o.gpu_name && (o.gpu_name->find("H100 SXM") != std::string::npos ||
                                            o.gpu_name->find("H200") != std::string::npos)) {
        o.inter_node_network = InterNodeNetwork::infiniband;
        o.inter_node_bits_per_s = 3200e9;
        o.max_nodes = 64;
      }
    }
    return out;
  }();
  return offers;
}

BillingTerms billing_of(const Offer& o) { return effective_billing(o, find_provider(bundled_providers(), o.provider)); }

PlanRequest request(const std::string& preset, Task task, double tokens) {
  PlanRequest r;
  r.model.preset = preset;
  r.task = task;
  r.tokens = tokens;
  r.seq_len = task == Task::pretrain ? 8192 : 4096;
  r.today = "2026-11-30";
  return r;
}

void run_plan(benchmark::State& state, const PlanRequest& r, const std::vector<Offer>& offers) {
  ModelSource s;
  s.preset = r.model.preset;
  const ModelArch arch = resolve_model(s);
  std::size_t layouts = 0, plans = 0;
  for (auto _ : state) {
    PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &billing_of);
    layouts += res.layouts_evaluated;
    plans = res.plans_total;
    benchmark::DoNotOptimize(res);
  }
  state.counters["layouts_per_s"] = benchmark::Counter(static_cast<double>(layouts), benchmark::Counter::kIsRate);
  state.counters["layouts_per_plan"] =
      benchmark::Counter(static_cast<double>(layouts), benchmark::Counter::kAvgIterations);
  state.counters["plans"] = static_cast<double>(plans);
  state.counters["offers"] = static_cast<double>(offers.size());
}

void BM_Plan_70B_LoRA(benchmark::State& state) {
  run_plan(state, request("llama-3.1-70b", Task::lora, 5e8), catalog());
}
BENCHMARK(BM_Plan_70B_LoRA)->Unit(benchmark::kMillisecond);

void BM_Plan_70B_FullFineTune(benchmark::State& state) {
  run_plan(state, request("llama-3.1-70b", Task::full, 1e9), catalog());
}
BENCHMARK(BM_Plan_70B_FullFineTune)->Unit(benchmark::kMillisecond);

void BM_Plan_405B_Pretrain(benchmark::State& state) {
  run_plan(state, request("llama-3.1-405b", Task::pretrain, 2e12), catalog());
}
BENCHMARK(BM_Plan_405B_Pretrain)->Unit(benchmark::kMillisecond);

void BM_Plan_405B_Pretrain_MultiNode(benchmark::State& state) {
  run_plan(state, request("llama-3.1-405b", Task::pretrain, 2e12), catalog_with_networks());
}
BENCHMARK(BM_Plan_405B_Pretrain_MultiNode)->Unit(benchmark::kMillisecond);

/// Issue 7: a 530B dense model (Megatron-Turing NLG shape: 105 layers, hidden 20480, 128 heads,
/// FFN 81920; Smith et al. 2022 arXiv:2201.11990 Table 1) on a quoted cluster of exactly
/// 641 nodes × 8 A100 80GB (InfiniBand 8 × 200 Gb/s per node, as Selene), batch ≤ 2520.
/// The offer is an illustrative quote (the price only scales the cost, not the search).
void BM_Plan_530B_On_641x8_A100(benchmark::State& state) {
  Offer o;
  o.id = "quote/a100-80gb-8x/cluster";
  o.provider = "quote";
  o.instance_type = "a100-80gb-8x";
  o.gpu_name_raw = "A100 SXM 80GB";
  o.gpu_name = "NVIDIA A100 SXM 80GB";
  o.gpu_count = 8;
  o.gpu_memory_bytes = 80e9;
  o.intra_node_link = IntraNodeLink::nvlink;
  o.inter_node_network = InterNodeNetwork::infiniband;
  o.inter_node_bits_per_s = 1600e9;
  o.max_nodes = 641;
  PriceObservation p;
  p.offer_id = o.id;
  p.kind = PriceKind::on_demand;
  p.usd_per_hour = 8 * 1.0;  // illustrative: $1/GPU-hour
  p.source = SourceRef{"bench", "bench_planner.cpp", std::string("2026-11-30")};
  o.prices.push_back(p);
  const std::vector<Offer> offers{o};
  ModelSource s;
  s.params = 530e9;
  s.layers = 105;
  s.hidden = 20480;
  s.heads = 128;
  s.intermediate = 81920;
  s.plain_mlp = true;  // GPT-style 2-matrix GELU MLP (4h)
  const ModelArch arch = resolve_model(s);
  PlanRequest r;
  r.model = s;
  r.task = Task::pretrain;
  r.tokens = 270e9;  // MT-NLG trained on 270B tokens
  r.seq_len = 2048;
  r.global_batch_seqs = 2520;
  r.gpus_total = 5128;
  r.today = "2026-11-30";
  std::size_t layouts = 0, plans = 0;
  for (auto _ : state) {
    PlanResult res = plan(r, arch, offers, GpuCatalog::bundled(), &billing_of);
    layouts += res.layouts_evaluated;
    plans = res.plans_total;
    benchmark::DoNotOptimize(res);
  }
  state.counters["layouts_per_s"] = benchmark::Counter(static_cast<double>(layouts), benchmark::Counter::kIsRate);
  state.counters["plans"] = static_cast<double>(plans);
}
BENCHMARK(BM_Plan_530B_On_641x8_A100)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
