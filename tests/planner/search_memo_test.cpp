// SearchMemo (planner.hpp): plans answered through the memo — built by one request, reused by the
// next with other token counts — must be the plans a fresh search gives, to the last bit: the
// same rows, layouts, step times, costs, counts, warnings and no-plan reasons. The reference is
// plan() without a memo (the pruned search); token counts as small as 1e5 make the rounding up of
// optimizer steps decide between layouts.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <string>
#include <vector>

#include "model/model_source.hpp"
#include "planner/planner.hpp"
#include "test_offers.hpp"

namespace gpuplan {
namespace {

using test::per_second;

Offer offer(const std::string& id, const std::string& gpu, int gpus, double usd_per_hour, bool cluster) {
  Offer o = test::priced_offer(id, gpu, gpus, usd_per_hour, gpus > 1 ? IntraNodeLink::nvlink : IntraNodeLink::unknown,
                               "search_memo_test.cpp");
  if (cluster) {
    o.inter_node_network = InterNodeNetwork::infiniband;
    o.inter_node_bits_per_s = 3200e9;
    o.max_nodes = 16;
  }
  return o;
}

std::vector<Offer> offers() {
  return {offer("a/h100x8", "NVIDIA H100 SXM", 8, 24.0, true),   offer("b/a100-40x8", "NVIDIA A100 SXM 40GB", 8, 12.0, true),
          offer("c/h200x8", "NVIDIA H200 SXM", 8, 30.0, true),   offer("d/l4x1", "NVIDIA L4", 1, 0.8, false),
          offer("e/a100-80x4", "NVIDIA A100 SXM 80GB", 4, 7.0, false), offer("f/4090x2", "NVIDIA GeForce RTX 4090", 2, 0.9, false)};
}

/// Everything a plan answer carries that the search decides, as text (doubles to 17 digits).
std::string answer(const PlanResult& r) {
  std::string s = fmt::format("evaluated {} considered {} skipped {}\n", r.layouts_evaluated, r.offers_considered, r.offers_skipped);
  for (const Plan& p : r.plans) {
    s += fmt::format("{} x{} tp{} pp{} dp{} ep{} z{} mb{} vs{} rc{} modules {} bytes {:.17g} work {:.17g} steps {:.17g} time {:.17g} "
                     "usd {:.17g} tok/s {:.17g} batch {}\n",
                     p.offer_id, p.instances, p.layout.tp, p.layout.pp, p.layout.dp, p.layout.ep, p.layout.zero_stage,
                     p.layout.micro_batch, p.layout.virtual_stages, static_cast<int>(p.recompute), p.recompute_modules,
                     p.per_gpu_memory_bytes,
                     p.work_seconds, p.steps, p.time_seconds(), p.total_usd(), p.tokens_per_s, p.global_batch_seqs);
    for (const PlanWarning& w : p.warnings) s += "  " + w.message + "\n";
  }
  for (const PlanWarning& w : r.warnings) s += "warning " + w.message + "\n";
  if (r.no_plan) {
    s += fmt::format("no plan [{}] {} smallest {:.17g}\n", r.no_plan->code, r.no_plan->reason, r.no_plan->smallest_per_gpu_bytes);
    for (const std::string& x : r.no_plan->suggestions) s += "  " + x + "\n";
  }
  return s;
}

TEST(SearchMemo, PlansThroughTheMemoAreThePlansOfAFreshSearch) {
  SearchMemo memo;
  const std::vector<Offer> catalog = offers();
  std::size_t compared = 0, with_plans = 0, with_recipe_modules = 0, interleaved = 0, expert_tp_below_tp = 0;
  for (const char* preset : {"llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b"}) {
    ModelSource s;
    s.preset = preset;
    const ModelArch arch = resolve_model(s);
    // --stack megatron: the search also tries the recipe's recompute modules on the MoE models and
    // interleaved pipeline stages.
    for (Task task : {Task::full, Task::lora, Task::qlora, Task::pretrain})
    for (const bool megatron : {false, true}) {
      if (megatron && task == Task::qlora) continue;
      // The physics key: what the search reads besides tokens and the cluster (here: model, task, stack).
      const std::string key = fmt::format("{}|{}|{}", preset, task_name(task), megatron);
      // Small counts first: the memo is built by a request whose steps round up hard.
      for (double tokens : {1e5, 3.3e6, 1.234567e8, 2e9, 7.77e10}) {
        PlanRequest r;
        r.model = s;
        r.task = task;
        r.tokens = tokens;
        r.today = "2026-11-30";
        r.max_nodes = 16;
        r.limit = 1000;
        r.include_flagged = true;
        if (megatron) r.stack = TrainingStack::megatron;
        const PlanResult fresh = plan(r, arch, catalog, GpuCatalog::bundled(), &per_second);
        const PlanResult memoized = plan(r, arch, catalog, GpuCatalog::bundled(), &per_second, {}, &memo, key);
        EXPECT_EQ(answer(memoized), answer(fresh)) << preset << " " << task_name(task) << " tokens " << tokens;
        ++compared;
        with_plans += !fresh.plans.empty();
        for (const Plan& p : fresh.plans) {
          with_recipe_modules += p.recompute_modules != 0;
          interleaved += p.layout.virtual_stages > 1;
          expert_tp_below_tp += p.layout.expert_tp > 0 && p.layout.expert_tp < p.layout.tp;
        }
      }
    }
  }
  EXPECT_EQ(compared, 140u);
  EXPECT_GT(with_recipe_modules, 0u);
  EXPECT_GT(interleaved, 0u);
  EXPECT_GT(expert_tp_below_tp, 0u) << "the searched expert TP 1 (with its tie tolerance) is compared too";
  EXPECT_GT(with_plans, 40u);  // most requests plan; the others compare their no-plan reasons
  EXPECT_GT(memo.hits(), 0u);
}

TEST(SearchMemo, NoPlanReasonsAreTheFreshSearchsOnAMemoHit) {
  // Nothing fits (70B full fine-tune on one L4, a 2-GPU 4090 and a 4 x A100 80GB without a network:
  // the reason quotes the smallest layout tried), and a global batch of 1 sequence on 8-GPU nodes
  // (every layout with DP > 1 is skipped: batch_below_dp when nothing else runs).
  SearchMemo memo;
  std::vector<Offer> small;
  for (const Offer& o : offers())
    if (o.gpu_count <= 4) small.push_back(o);
  ModelSource s;
  s.preset = "llama-3.1-70b";
  const ModelArch arch = resolve_model(s);
  for (int round = 0; round < 2; ++round) {  // round 1 is answered from the memo
    for (double tokens : {1e6, 5e8}) {
      PlanRequest r;
      r.model = s;
      r.task = Task::full;
      r.tokens = tokens;
      r.today = "2026-11-30";
      r.limit = 100;
      const PlanResult fresh = plan(r, arch, small, GpuCatalog::bundled(), &per_second);
      ASSERT_TRUE(fresh.no_plan);
      EXPECT_EQ(answer(plan(r, arch, small, GpuCatalog::bundled(), &per_second, {}, &memo, "70b-full")), answer(fresh));
      r.global_batch_seqs = 1;
      r.task = Task::lora;
      const PlanResult fresh1 = plan(r, arch, offers(), GpuCatalog::bundled(), &per_second);
      EXPECT_EQ(answer(plan(r, arch, offers(), GpuCatalog::bundled(), &per_second, {}, &memo, "70b-lora-batch1")),
                answer(fresh1));
    }
  }
  EXPECT_GT(memo.hits(), 0u);
}

TEST(SearchMemo, ReportsOfASearchThatSizedNothingAreReplayed) {
  // No layout is ever sized: the reason then quotes the first layout problem (3 virtual stages
  // pinned, which split no PP degree's stages) or the smallest DP above the batch (DP pinned to 8, a batch of 1). On a
  // memo hit nothing is searched, so the memo must hand these back.
  SearchMemo memo;
  for (int round = 0; round < 2; ++round) {
    for (double tokens : {1e6, 5e8}) {
      ModelSource mixtral;
      mixtral.preset = "mixtral-8x7b";
      PlanRequest r;
      r.model = mixtral;
      r.task = Task::full;
      r.tokens = tokens;
      r.today = "2026-11-30";
      r.pins.virtual_stages = 3;  // splits none of Mixtral's 32 (+ 1, + 2) layers per stage on 8 GPUs
      const ModelArch moe = resolve_model(mixtral);
      const PlanResult fresh = plan(r, moe, offers(), GpuCatalog::bundled(), &per_second);
      ASSERT_TRUE(fresh.no_plan);
      EXPECT_EQ(fresh.no_plan->code, "no_layout_sized") << fresh.no_plan->reason;
      EXPECT_EQ(answer(plan(r, moe, offers(), GpuCatalog::bundled(), &per_second, {}, &memo, "mixtral-vs3")), answer(fresh));

      ModelSource small;
      small.preset = "llama-3.1-8b";
      PlanRequest b;
      b.model = small;
      b.task = Task::lora;
      b.tokens = tokens;
      b.today = "2026-11-30";
      b.global_batch_seqs = 1;
      b.pins.dp = 8;
      const ModelArch dense = resolve_model(small);
      const PlanResult fresh_b = plan(b, dense, offers(), GpuCatalog::bundled(), &per_second);
      ASSERT_TRUE(fresh_b.no_plan);
      EXPECT_EQ(fresh_b.no_plan->code, "batch_below_dp") << fresh_b.no_plan->reason;
      EXPECT_EQ(answer(plan(b, dense, offers(), GpuCatalog::bundled(), &per_second, {}, &memo, "8b-dp8-batch1")),
                answer(fresh_b));
    }
  }
  EXPECT_GT(memo.hits(), 0u);
}

TEST(SearchMemo, IsBoundedAndStartsOverWhenFull) {
  SearchMemo memo(3);
  ModelSource s;
  s.preset = "llama-3.1-8b";
  const ModelArch arch = resolve_model(s);
  PlanRequest r;
  r.model = s;
  r.task = Task::lora;
  r.tokens = 1e8;
  r.today = "2026-11-30";
  const PlanResult fresh = plan(r, arch, offers(), GpuCatalog::bundled(), &per_second);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(answer(plan(r, arch, offers(), GpuCatalog::bundled(), &per_second, {}, &memo, "k")), answer(fresh));
    EXPECT_LE(memo.size(), 3u);
  }
}

}  // namespace
}  // namespace gpuplan
