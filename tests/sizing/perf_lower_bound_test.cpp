// training_step_seconds_lower_bound (perf.hpp): the planner skips a layout's full estimate when
// this bound already shows it cannot beat the best layout so far, so the bound must never exceed
// estimate_training_step(...).step_seconds. Checked over a grid of presets (dense, GQA, MoE with
// expert parallelism, DeepSeek-V3 with MLA and MTP), tasks, precisions (FP8 included),
// recompute modes, TP/PP/DP/EP degrees (uneven pipeline splits, interleaved stages), micro-batches,
// ZeRO stages and clusters (one node, several nodes, PCIe), against the full estimate itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "model/presets.hpp"
#include "sizing/layout_check.hpp"
#include "sizing/perf.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

/// Every field of two estimates, bit for bit (EXPECT_EQ on doubles: exact).
void expect_same_estimate(const TrainingStepEstimate& x, const TrainingStepEstimate& y) {
  EXPECT_EQ(x.step_seconds, y.step_seconds);
  EXPECT_EQ(x.compute_seconds, y.compute_seconds);
  EXPECT_EQ(x.dp_allreduce_seconds, y.dp_allreduce_seconds);
  EXPECT_EQ(x.zero_allgather_seconds, y.zero_allgather_seconds);
  EXPECT_EQ(x.tp_allreduce_seconds, y.tp_allreduce_seconds);
  EXPECT_EQ(x.ep_alltoall_seconds, y.ep_alltoall_seconds);
  EXPECT_EQ(x.pp_p2p_seconds, y.pp_p2p_seconds);
  EXPECT_EQ(x.optimizer_seconds, y.optimizer_seconds);
  EXPECT_EQ(x.overhead_seconds, y.overhead_seconds);
  EXPECT_EQ(x.pp_bubble_seconds, y.pp_bubble_seconds);
  EXPECT_EQ(x.exposed_comm_seconds, y.exposed_comm_seconds);
  EXPECT_EQ(x.kernel_efficiency, y.kernel_efficiency);
  EXPECT_EQ(x.peak_flops_per_s, y.peak_flops_per_s);
  EXPECT_EQ(x.mfu, y.mfu);
  EXPECT_EQ(x.hfu, y.hfu);
  EXPECT_EQ(x.tokens_per_s, y.tokens_per_s);
  EXPECT_EQ(x.model_flop_per_step, y.model_flop_per_step);
  EXPECT_EQ(x.hardware_flop_per_step, y.hardware_flop_per_step);
  EXPECT_EQ(x.micro_batches_per_step, y.micro_batches_per_step);
  EXPECT_EQ(x.pp_stage_imbalance, y.pp_stage_imbalance);
  EXPECT_EQ(x.pp_busiest_stage, y.pp_busiest_stage);
}

struct Counted {
  std::size_t layouts = 0;
  std::size_t within_half = 0;  ///< bound ≥ half the step (how much it can prune)
};

void check_model(const std::string& preset, Counted& counted) {
  const ModelArch arch = load_preset(preset);
  const PerfAssumptions a;
  const GpuCatalog& gpus = GpuCatalog::bundled();
  for (const char* gpu_name : {"H100 SXM", "A100 SXM 80GB", "RTX 4090"}) {
    const GpuSpec& gpu = gpus.find(gpu_name);
    for (int nodes : {1, 4}) {
      const ClusterSpec cluster = make_cluster(gpu, 8, nodes, nodes > 1 ? 50e9 : 0);
      const int n = 8 * nodes;
      for (Task task : {Task::pretrain, Task::full, Task::lora, Task::qlora}) {
        for (TrainPrecision precision : {TrainPrecision::bf16_mixed, TrainPrecision::fp8_mixed}) {
          for (Recompute rc : {Recompute::none, Recompute::full}) {
            TrainingStepRequest r;
            r.precision = precision;
            r.seq_len = 4096;
            r.global_batch_seqs = 64;
            r.task = task;
            r.recompute = rc;
            const TrainingStepModelFigures figures = training_step_model_figures(arch, r);
            for (int tp : {1, 2, 8}) {
              for (int pp : {1, 3, 4}) {
                if (n % (tp * pp) != 0) continue;
                const int dp = n / (tp * pp);
                for (int ep : {1, 2, 8}) {
                  for (int v : {1, 2}) {
                    for (int mb : {1, 4}) {
                      // TrainingStepStages (what the planner calls): prepared at the first ZeRO
                      // stage of this layout, read at both (the compute phase does not read it).
                      TrainingStepStages stages;
                      bool prepared = false;
                      for (int zero : {0, 3}) {
                        ParallelLayout& l = r.layout;
                        l.tp = tp;
                        l.pp = pp;
                        l.dp = dp;
                        l.ep = ep;
                        l.virtual_stages = v;
                        l.micro_batch = mb;
                        l.zero_stage = zero;
                        l.sequence_parallel = tp > 1;
                        if (ep > 1 && (!arch.moe || task == Task::lora || task == Task::qlora)) continue;
                        if (ep > 1 && (dp % ep != 0 || arch.moe->num_routed_experts % ep != 0)) continue;
                        if (training_layout_problem(arch, l)) continue;
                        const double bound = training_step_seconds_lower_bound(arch, r, cluster, a, figures);
                        const TrainingStepEstimate e = estimate_training_step(arch, r, cluster, a, figures);
                        ASSERT_LE(bound, e.step_seconds * (1 + 1e-12))
                            << preset << " " << gpu_name << " nodes " << nodes << " task " << static_cast<int>(task)
                            << " precision " << static_cast<int>(precision) << " rc " << static_cast<int>(rc) << " tp "
                            << tp << " pp " << pp << " dp " << dp << " ep " << ep << " v " << v << " mb " << mb
                            << " zero " << zero;
                        ASSERT_GT(bound, 0.0);
                        if (!prepared) stages.prepare(arch, r, cluster, a, figures);
                        prepared = true;
                        EXPECT_EQ(stages.lower_bound_seconds(), bound);
                        expect_same_estimate(stages.estimate(r), e);
                        ++counted.layouts;
                        counted.within_half += bound >= 0.5 * e.step_seconds;
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(TrainingStepLowerBound, NeverAboveTheStepTime) {
  Counted counted;
  for (const char* preset : {"llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3"}) {
    check_model(preset, counted);
  }
  EXPECT_GT(counted.layouts, 1000u);
  // Informative, not only valid: on most layouts the compute and bubble are most of the step.
  EXPECT_GT(counted.within_half, counted.layouts / 2);
}

TEST(TrainingStepLowerBound, StagesRejectAnotherLayoutAndAnUnpreparedCall) {
  const ModelArch arch = load_preset("llama-3.1-8b");
  TrainingStepRequest r;
  r.global_batch_seqs = 8;
  r.layout.dp = 8;
  const TrainingStepModelFigures figures = training_step_model_figures(arch, r);
  const ClusterSpec cluster = make_cluster(GpuCatalog::bundled().find("H100 SXM"), 8, 1, 0);
  const PerfAssumptions a;
  TrainingStepStages stages;
  EXPECT_THROW((void)stages.lower_bound_seconds(), Error);
  EXPECT_THROW((void)stages.estimate(r), Error);
  stages.prepare(arch, r, cluster, a, figures);
  TrainingStepRequest other = r;
  other.layout.zero_stage = 3;
  EXPECT_NO_THROW((void)stages.estimate(other));
  other.layout.micro_batch = 2;
  EXPECT_THROW((void)stages.estimate(other), Error);
  other = r;
  other.global_batch_seqs = 16;
  EXPECT_THROW((void)stages.estimate(other), Error);
  // Figures of another request are refused as by the plain calls.
  TrainingStepRequest full = r;
  full.recompute = Recompute::full;
  EXPECT_THROW(stages.prepare(arch, full, cluster, a, figures), Error);
  EXPECT_THROW((void)stages.lower_bound_seconds(), Error);  // the failed prepare leaves it unprepared
}

TEST(TrainingStepLowerBound, RejectsFiguresOfAnotherRequest) {
  const ModelArch arch = load_preset("llama-3.1-8b");
  TrainingStepRequest r;
  r.global_batch_seqs = 8;
  r.layout.dp = 8;
  const TrainingStepModelFigures figures = training_step_model_figures(arch, r);
  r.recompute = Recompute::full;
  const ClusterSpec cluster = make_cluster(GpuCatalog::bundled().find("H100 SXM"), 8, 1, 0);
  EXPECT_THROW((void)training_step_seconds_lower_bound(arch, r, cluster, PerfAssumptions{}, figures), Error);
}

}  // namespace
}  // namespace gpuplan
