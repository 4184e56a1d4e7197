// The lean total-only training memory (memory_total.hpp) against the explaining path
// (training_memory(...).total_bytes()): the same double, bit for bit, over every bundled model
// and many requests × layouts. The expected value is the explaining path's own total (its
// terms are checked against hand calculations and papers in the other memory tests); this test
// only pins that the search's fast path cannot drift from it.
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/presets.hpp"
#include "sizing/layout_check.hpp"
#include "sizing/memory.hpp"
#include "sizing/memory_total.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

/// Deterministic picks (raw mt19937 words: the same sequence on every standard library).
struct Pick {
  std::mt19937 g{20261201u};
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(g() % n); }
  template <typename T>
  const T& of(const std::vector<T>& v) { return v[below(static_cast<std::uint32_t>(v.size()))]; }
  bool chance(std::uint32_t percent) { return below(100) < percent; }
};

TrainingMemoryRequest random_request(Pick& pick) {
  TrainingMemoryRequest r;
  r.task = pick.of(std::vector<Task>{Task::pretrain, Task::full, Task::lora, Task::qlora});
  r.precision = pick.of(std::vector<TrainPrecision>{TrainPrecision::bf16_mixed, TrainPrecision::bf16_mixed,
                                                    TrainPrecision::bf16_pure, TrainPrecision::fp16_mixed,
                                                    TrainPrecision::fp8_mixed, TrainPrecision::fp32, TrainPrecision::tf32});
  r.optimizer = pick.of(std::vector<Optimizer>{Optimizer::adamw, Optimizer::adamw, Optimizer::adamw_8bit,
                                               Optimizer::sgd_momentum, Optimizer::adafactor, Optimizer::lion});
  r.seq_len = pick.of(std::vector<std::int64_t>{512, 2048, 4096, 8192, 3000});
  r.flash_attention = !pick.chance(15);
  r.dropout = pick.chance(15);
  r.activation_profile = pick.chance(30)   ? ActivationProfile::megatron
                         : pick.chance(30) ? ActivationProfile::pytorch_compiled
                                           : ActivationProfile::pytorch_eager;
  r.gradients_persist = !pick.chance(20);
  r.optimizer_foreach = pick.chance(30);
  r.optimizer_in_backward = pick.chance(10);
  r.fp32_grad_accumulation = pick.chance(20);
  r.chunked_cross_entropy = pick.chance(25);
  r.offload_activations = pick.chance(15);
  r.fp32_grad_partition = pick.chance(20);
  r.cross_entropy_chunk_tokens = pick.of(std::vector<std::int64_t>{256, 1024, 100000});
  r.lora_rank = pick.of(std::vector<int>{8, 16, 64});
  r.lora_targets = pick.of(std::vector<std::vector<std::string>>{
      {"q", "k", "v", "o", "gate", "up", "down"}, {"all-linear"}, {"q", "v"}, {"down"}, {"o", "gate"}, {"all_linear", "q"}});
  r.qlora_double_quant = !pick.chance(20);
  r.fragmentation_fraction = pick.of(std::vector<double>{0.2, 0.0, 0.35});
  r.kv_expanded_for_attention = pick.chance(30);
  r.logits_kept_through_backward = pick.chance(30);
  r.logits_upcast_in_loss = pick.chance(30);
  r.eager_head_and_loss = pick.chance(25);
  r.loss_parallel = pick.chance(50);
  return r;
}

ParallelLayout random_layout(Pick& pick, const ModelArch& arch) {
  ParallelLayout l;
  l.tp = pick.of(std::vector<int>{1, 1, 2, 4, 8, 16});
  l.pp = pick.of(std::vector<int>{1, 1, 2, 3, 4, 5, 8, 16, 64});
  l.dp = pick.of(std::vector<int>{1, 2, 4, 8, 16, 64, 6});
  l.ep = 1;
  if (arch.moe && pick.chance(60)) l.ep = pick.of(std::vector<int>{2, 4, 8, 16, 64, 3});
  l.zero_stage = static_cast<int>(pick.below(4));
  l.sequence_parallel = l.tp > 1 && pick.chance(70);
  l.micro_batch = pick.of(std::vector<int>{1, 2, 4, 16});
  l.in_flight_micro_batches = pick.chance(20) ? pick.of(std::vector<int>{1, 3, 12}) : 0;
  l.virtual_stages = l.pp > 1 && pick.chance(30) ? pick.of(std::vector<int>{2, 4}) : 1;
  l.offload_optimizer = pick.chance(15);
  l.offload_params = l.zero_stage == 3 && pick.chance(30);
  return l;
}

TEST(TrainingMemoryTotal, EqualsTheExplainingPathsTotalExactly) {
  Pick pick;
  std::size_t compared = 0, lora = 0, qlora = 0, expert_parallel = 0, uneven_pp = 0, last_stage_heavier = 0;
  std::size_t offload = 0, full_recompute = 0, non_decoder = 0, moe = 0, mla = 0, step_peak = 0;
  std::size_t stage_layers_given = 0, middle_stage_worst = 0, recompute_modules = 0;
  for (const PresetInfo& preset : list_presets()) {
    const ModelArch arch = load_preset(preset.short_name);
    for (int req_i = 0; req_i < 40; ++req_i) {
      TrainingMemoryRequest base = random_request(pick);
      // Megatron-Core recompute_modules (any subset; they apply under selective recompute).
      if (pick.chance(30)) base.recompute_modules = pick.below(32);
      std::optional<TrainingMemoryTotal> lean;
      try {
        lean.emplace(arch, base);
      } catch (const Error&) {
        // A request the model cannot take (QLoRA in fp32, ...): the explaining path throws too.
        EXPECT_THROW((void)training_memory(arch, base), Error) << preset.short_name;
        continue;
      }
      for (int lay_i = 0; lay_i < 12; ++lay_i) {
        TrainingMemoryRequest r = base;
        r.layout = random_layout(pick, arch);
        r.recompute = pick.of(std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full, Recompute::op_selective});
        if (training_layout_problem(arch, r.layout)) continue;
        // --pp-layers: a random split of the decoder layers (≥ 1 each) over the pp ranks.
        if (r.layout.pp > 1 && arch.family == ModelFamily::decoder && arch.num_layers >= r.layout.pp && pick.chance(40)) {
          std::vector<int> layers(static_cast<std::size_t>(r.layout.pp), 1);
          for (int left = static_cast<int>(arch.num_layers) - r.layout.pp; left > 0; --left)
            ++layers[pick.below(static_cast<std::uint32_t>(r.layout.pp))];
          r.pipeline_stage_layers = layers;
        }
        const MemoryBreakdown m = training_memory(arch, r);
        const double expected = m.total_bytes();
        // The stage layers are the request's (kept at construction, like every field but the layout).
        const double got = r.pipeline_stage_layers.empty() ? lean->total_bytes(r.layout, r.recompute)
                                                           : TrainingMemoryTotal(arch, r).total_bytes(r.layout, r.recompute);
        ASSERT_EQ(got, expected) << preset.short_name << " task " << task_name(r.task) << " precision "
                                 << train_precision_name(r.precision) << " optimizer " << optimizer_name(r.optimizer)
                                 << " tp " << r.layout.tp << " pp " << r.layout.pp << " dp " << r.layout.dp << " ep "
                                 << r.layout.ep << " zero " << r.layout.zero_stage << " mb " << r.layout.micro_batch
                                 << " recompute " << recompute_name(r.recompute) << " worst " << m.stage
                                 << " --pp-layers " << fmt::format("{}", fmt::join(r.pipeline_stage_layers, ","));
        ++compared;
        lora += r.task == Task::lora;
        qlora += r.task == Task::qlora;
        expert_parallel += r.layout.ep > 1;
        uneven_pp += r.layout.pp > 1 && arch.num_layers % r.layout.pp != 0;
        last_stage_heavier += m.stage.find("(last)") != std::string::npos;
        offload += r.layout.offload_optimizer || r.layout.offload_params || r.offload_activations;
        full_recompute += r.recompute == Recompute::full;
        recompute_modules += r.recompute == Recompute::selective && r.recompute_modules != 0;
        non_decoder += arch.family != ModelFamily::decoder;
        moe += arch.moe.has_value();
        mla += arch.mla.has_value();
        step_peak += m.phase == "optimizer step";
        stage_layers_given += !r.pipeline_stage_layers.empty();
        middle_stage_worst += r.layout.pp > 2 && m.stage.find("(first)") == std::string::npos &&
                              m.stage.find("(last)") == std::string::npos;
      }
    }
  }
  // The cases above reach every branch the search uses (and the ones it does not).
  EXPECT_GT(compared, 5000u);
  EXPECT_GT(lora, 500u);
  EXPECT_GT(qlora, 300u);
  EXPECT_GT(expert_parallel, 100u);
  EXPECT_GT(uneven_pp, 100u);
  EXPECT_GT(last_stage_heavier, 50u);
  EXPECT_GT(offload, 500u);
  EXPECT_GT(full_recompute, 1000u);
  EXPECT_GT(recompute_modules, 300u);
  EXPECT_GT(non_decoder, 10u);
  EXPECT_GT(moe, 300u);
  EXPECT_GT(mla, 50u);
  EXPECT_GT(step_peak, 50u);
  EXPECT_GT(stage_layers_given, 500u);
  EXPECT_GT(middle_stage_worst, 20u);
}

// The planner's requests (plan_inputs.cpp: task, precision, optimizer, seq, rank; defaults
// otherwise) over the layouts its search enumerates, on a dense, a MoE and an MLA model.
TEST(TrainingMemoryTotal, EqualsOnThePlannersSearchGrid) {
  std::size_t compared = 0;
  for (const char* name : {"llama-3.1-70b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b"}) {
    const ModelArch arch = load_preset(name);
    for (Task task : {Task::pretrain, Task::full, Task::lora, Task::qlora}) {
      TrainingMemoryRequest base;
      base.task = task;
      base.seq_len = 4096;
      const TrainingMemoryTotal lean(arch, base);
      for (int tp = 1; tp <= 8; tp *= 2) {
        for (int pp : {1, 3, 4, 16}) {
          for (int dp : {1, 2, 8, 32}) {
            for (int ep : {1, 2, 4, 8}) {
              for (int zero : {0, 2, 3}) {
                for (int mb : {1, 4}) {
                  for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full, Recompute::op_selective}) {
                    TrainingMemoryRequest r = base;
                    r.layout.tp = tp;
                    r.layout.pp = pp;
                    r.layout.dp = dp;
                    r.layout.ep = ep;
                    r.layout.zero_stage = zero;
                    r.layout.sequence_parallel = tp > 1;
                    r.layout.micro_batch = mb;
                    r.recompute = rc;
                    if (training_layout_problem(arch, r.layout)) continue;
                    ASSERT_EQ(lean.total_bytes(r.layout, rc), training_memory(arch, r).total_bytes())
                        << name << " " << task_name(task) << " tp " << tp << " pp " << pp << " dp " << dp << " ep "
                        << ep << " zero " << zero << " mb " << mb << " " << recompute_name(rc);
                    ++compared;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 10000u);
}

TEST(TrainingMemoryTotal, RefusesWhatTrainingMemoryRefuses) {
  const ModelArch arch = load_preset("llama-3.1-8b");
  TrainingMemoryRequest r;
  r.task = Task::qlora;
  r.precision = TrainPrecision::fp32;  // QLoRA computes in 16 bits
  EXPECT_THROW(TrainingMemoryTotal(arch, r), Error);
  r = TrainingMemoryRequest{};
  r.seq_len = 0;
  EXPECT_THROW(TrainingMemoryTotal(arch, r), Error);
}

}  // namespace
}  // namespace gpuplan
