// The training-stack and recipe flags of `gpuplan estimate` and `gpuplan plan` (--stack,
// --expert-tp, --ep-overlap, --tp-comm-overlap, --moe-imbalance, --pp-layers, --grads-16bit,
// --ignore-memory, the recompute modules and virtual stages a Megatron search tries):
// what each changes in the JSON, and their bad inputs as one-line errors with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

class RecipeFlagsE2E : public BinaryE2E<RecipeFlagsE2E> {
 public:
  static constexpr const char* kName = "recipe-flags";
};

// Qwen3-30B-A3B on 8 × B200, EP 8: the Megatron-Bridge 25.11 row (mb1, fp8).
const std::string kMoe =
    "estimate --model qwen3-30b-a3b --task pretrain --gpu 'NVIDIA B200 (HGX)' --gpus 8 --tp 1 --pp 1 --dp 8 --ep 8 "
    "--micro-batch 1 --global-batch 512 --seq 4096 --precision fp8_mixed --recompute none --tokens 2e9";
// Llama 3.1 8B on 8 × H100, TP 2 (kDensePp2: TP 2 × PP 2 × DP 2).
const std::string kDense =
    "estimate --model llama-3.1-8b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --tp 2 --pp 1 --dp 4 "
    "--micro-batch 1 --global-batch 64 --seq 4096 --precision bf16_mixed --recompute full --tokens 1e9";
const std::string kDensePp2 =
    "estimate --model llama-3.1-8b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --tp 2 --pp 2 --dp 2 "
    "--micro-batch 1 --global-batch 64 --seq 4096 --precision bf16_mixed --recompute full --tokens 1e9";

double step_term(const nlohmann::json& j, const char* term) { return j["estimate"]["step"][term].get<double>(); }

TEST_F(RecipeFlagsE2E, StackSetsTheZeroStageSearchedAndTheKernelEfficiency) {
  const auto hf = run_json(kDense, 0);
  const auto megatron = run_json(kDense + " --stack megatron", 0);
  const auto fsdp = run_json(kDense + " --stack fsdp", 0);
  // Without --stack the search weighs ZeRO 2 and 3; Megatron runs its distributed optimizer
  // (ZeRO-1), FSDP shards everything (ZeRO-3).
  EXPECT_EQ(megatron["estimate"]["layout"]["zero_stage"], 1);
  EXPECT_EQ(fsdp["estimate"]["layout"]["zero_stage"], 3);
  // Fused kernels: the same FLOPs in less compute time than the eager default (perf.hpp
  // eager_efficiency_factor 0.89: eager compute = fused compute / 0.89), and under Megatron's fused
  // cross-entropy the LM head runs without the 1/(1 + 1500/h) width factor. By hand for Llama 3.1
  // 8B: head V·h = 128256 × 4096 = 0.5253 B of 7.505 B matmul parameters per token (6.980 B in the
  // layers) = 7.00%; attention at s 4096: 4 × 32 layers × 4096 × 2048.5 keys = 1.074 GFLOP against
  // 2 × 7.505 = 15.01 GFLOP forward (full recompute repeats both alike), so the head is
  // 7.00% × 15.01 / 16.08 = 6.53% of the FLOPs, and it runs 1 + 1500/4096 = 1.366× faster:
  // ratio = 0.89 × (1 − 0.0653 × (1 − 1/1.366)) = 0.8744.
  const double ratio = step_term(megatron, "compute_seconds") / step_term(hf, "compute_seconds");
  const double head_share = 0.5253 / 7.505 * 15.01 / (15.01 + 1.074);
  EXPECT_NEAR(ratio, 0.89 * (1 - head_share * (1 - 1 / (1 + 1500.0 / 4096))), 0.002) << megatron.dump().substr(0, 400);
  // --zero wins over the stack.
  EXPECT_EQ(run_json(kDense + " --stack megatron --zero 2", 0)["estimate"]["layout"]["zero_stage"], 2);
}

TEST_F(RecipeFlagsE2E, Grads16BitHalvesMegatronsGradientBufferAndItsReduce) {
  const auto fp32_grads = run_json(kDense + " --stack megatron", 0);
  const auto bf16_grads = run_json(kDense + " --stack megatron --grads-16bit", 0);
  // Megatron's main_grad buffer holds every local parameter's gradient: 4 B by default, 2 B with
  // grad_reduce_in_fp32=False. Llama 3.1 8B has 8.03e9 parameters (model card), TP 2 holds half
  // of them (the norms, 0.27 M, are replicated): 2 B × 8.03e9 / 2 = 8.03 GB less.
  const double saved = fp32_grads["estimate"]["per_gpu_memory_bytes"].get<double>() -
                       bf16_grads["estimate"]["per_gpu_memory_bytes"].get<double>();
  EXPECT_NEAR(saved, 2.0 * 8.03e9 / 2, 0.01e9);
  // The DP all-reduce moves the buffer's bytes: half as many in bf16.
  EXPECT_NEAR(step_term(fp32_grads, "dp_allreduce_seconds") / step_term(bf16_grads, "dp_allreduce_seconds"), 2.0, 1e-9);
}

TEST_F(RecipeFlagsE2E, DataParallelStacksSearchNoTensorOrPipelineParallelism) {
  // Llama 3.1 70B full fine-tune on 8 H100 without pins: with --stack hf or deepspeed every
  // layout searched is TP 1, PP 1 (ZeRO over 8 ranks); megatron may use TP and PP.
  const std::string base =
      "estimate --model llama-3.1-70b --task full --gpu 'NVIDIA H100 SXM' --gpus 8 --seq 4096 --tokens 1e8 --ignore-memory";
  for (const char* stack : {"hf", "deepspeed"}) {
    const auto j = run_json(base + " --stack " + stack, 0);
    EXPECT_EQ(j["estimate"]["layout"]["tp"], 1) << stack;
    EXPECT_EQ(j["estimate"]["layout"]["pp"], 1) << stack;
    EXPECT_EQ(j["estimate"]["layout"]["dp"], 8) << stack;
  }
}

TEST_F(RecipeFlagsE2E, NoPlanWithAStackThatShardsNothingSuggestsOneThatDoes) {
  // 70B full fine-tune under the plain HF Trainer (DDP: every GPU holds the weights, gradients
  // and AdamW state, 16 B × 70.6e9 ≈ 1.1 TB) fits no GPU: more nodes would not help, a sharding
  // stack would.
  const auto j = run_json("plan --model llama-3.1-70b --task full --tokens 1e9 --stack hf", 1);
  const auto& codes = j["no_plan"]["suggestion_codes"];
  auto has = [&](const std::string& c) { return std::find(codes.begin(), codes.end(), c) != codes.end(); };
  EXPECT_TRUE(has("stack_with_sharding")) << codes.dump();
  EXPECT_FALSE(has("more_nodes_zero3") || has("zero3_needs_network")) << codes.dump();
  EXPECT_GT(j["no_plan"]["smallest_per_gpu_bytes"].get<double>(), 16 * 70.6e9) << j["no_plan"].dump();
}

TEST_F(RecipeFlagsE2E, MoeImbalanceStretchesEachAllToAll) {
  const auto balanced = run_json(kMoe + " --moe-imbalance 1", 0);
  const auto skewed = run_json(kMoe + " --moe-imbalance 1.5", 0);
  // ep_alltoall = micro-batches × MoE layers × 4 × bytes / link × imbalance: linear in it.
  EXPECT_NEAR(step_term(skewed, "ep_alltoall_seconds") / step_term(balanced, "ep_alltoall_seconds"), 1.5, 1e-9);
  // The default is PerfAssumptions::moe_load_imbalance = 1.2.
  EXPECT_NEAR(step_term(run_json(kMoe, 0), "ep_alltoall_seconds") / step_term(balanced, "ep_alltoall_seconds"), 1.2, 1e-9);
}

TEST_F(RecipeFlagsE2E, EpOverlapHidesTheAllToAllBehindCompute) {
  const auto plain = run_json(kMoe + " --moe-imbalance 1", 0);
  const auto overlapped = run_json(kMoe + " --moe-imbalance 1 --ep-overlap", 0);
  // All-to-all (~2 s) below the compute (~25 s): fully hidden.
  EXPECT_GT(step_term(plain, "ep_alltoall_seconds"), 1.0);
  EXPECT_EQ(step_term(overlapped, "ep_alltoall_seconds"), 0.0);
  EXPECT_LT(step_term(overlapped, "step_seconds"), step_term(plain, "step_seconds"));
}

// The layout abbreviations are explained where they are shown (trial43: "VP" had no legend), and
// only those that appear: the estimate's second line, the plan footer.
TEST_F(RecipeFlagsE2E, TheLayoutAbbreviationsAreExplainedWhereTheyAppear) {
  const RunResult moe = run(kMoe + " --stack megatron");
  ASSERT_EQ(moe.exit_code, 0) << moe.out;
  const std::string flat = [&] {
    std::string s = moe.out;
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (!(s[i] == ' ' && i + 1 < s.size() && s[i + 1] == ' ')) out += s[i];  // re-join wrapped lines
    return out;
  }();
  EXPECT_NE(flat.find("Layout: TP tensor, PP pipeline, DP data, EP expert parallel degrees; Z ZeRO stage; mb "
                      "micro-batch."),
            std::string::npos)
      << moe.out;
  const RunResult dense = run(kDensePp2 + " --stack megatron --virtual-stages 2");
  ASSERT_EQ(dense.exit_code, 0) << dense.out;
  EXPECT_NE(dense.out.find("VP virtual stages per pipeline rank (interleaved 1F1B)"), std::string::npos) << dense.out;
  EXPECT_NE(dense.out.find("rc: activation recompute (full or selective)"), std::string::npos) << dense.out;
  EXPECT_EQ(dense.out.find("EP expert"), std::string::npos) << dense.out;
  const RunResult plan = run("plan --today 2026-12-06 --model llama-3.1-8b --task lora --tokens 1e8");
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  EXPECT_NE(plan.out.find("Layout: TP tensor, PP pipeline"), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("VP virtual stages"), std::string::npos) << plan.out;
}

// Under --stack megatron with TP > 1 the search also tries expert TP 1 with EP > 1 (the experts
// whole on each GPU, the EP group spanning the TP ranks: NVIDIA's Qwen3-235B H100 recipe runs TP 2,
// ETP 1, EP 32), and takes it only when it finishes more than the 2% time tie sooner than the best
// layout without it (a plainer layout within the model's error is what practitioners run).
TEST_F(RecipeFlagsE2E, MegatronSearchTriesExpertTpOneWhereItClearlyPays) {
  const auto work = [](const nlohmann::json& j) { return j["estimate"]["work_seconds"].get<double>(); };
  const std::string dsv3 = "estimate --model deepseek-v3 --task pretrain --gpu H100 --gpus 512 --gpus-per-node 8 "
                           "--inter-node-gbit-per-s 3200 --tokens 1e10 --stack megatron --seq 4096 --global-batch 8192 "
                           "--precision fp8 --grads-16bit";
  const auto searched = run_json(dsv3, 0);
  const nlohmann::json& l = searched["estimate"]["layout"];
  ASSERT_GT(l["tp"].get<int>(), 1) << l.dump();
  EXPECT_EQ(l.value("expert_tp", 0), 1) << l.dump();
  EXPECT_GT(l["ep"].get<int>(), 1) << l.dump();
  // The same search with the experts split like the rest (--expert-tp = TP at every TP: pinned per TP).
  double plain = 1e300;
  for (int tp : {1, 2, 4, 8}) {
    const RunResult r = run(dsv3 + " --tp " + std::to_string(tp) + " --expert-tp " + std::to_string(tp) + " --json");
    if (r.exit_code == 0) plain = std::min(plain, work(nlohmann::json::parse(r.out)));
  }
  EXPECT_LT(work(searched) * 1.02, plain);
  // gpt-oss-120b on 64 H100s: ETP 1 at TP 2 is within the tie, so the plain TP 1 layout stays.
  const std::string gptoss = "estimate --model gpt-oss-120b --task pretrain --gpu H100 --gpus 64 --gpus-per-node 8 "
                             "--inter-node-gbit-per-s 3200 --tokens 2e10 --stack megatron --seq 4096 --global-batch 1280 "
                             "--grads-16bit";
  const auto chosen = run_json(gptoss, 0);
  EXPECT_EQ(chosen["estimate"]["layout"].value("expert_tp", 0), 0) << chosen["estimate"]["layout"].dump();
  const auto etp1 = run_json(gptoss + " --tp 2 --expert-tp 1", 0);
  EXPECT_LT(work(etp1), work(chosen)) << "ETP 1 is faster by the model, but by less than the tie";
  EXPECT_GT(work(etp1) * 1.02, work(chosen));
}

TEST_F(RecipeFlagsE2E, TpCommOverlapLowersTheExposedTpTime) {
  const auto plain = run_json(kDense + " --stack megatron", 0);
  const auto overlapped = run_json(kDense + " --stack megatron --tp-comm-overlap", 0);
  EXPECT_GT(step_term(plain, "tp_allreduce_seconds"), 0.0);
  EXPECT_LT(step_term(overlapped, "tp_allreduce_seconds"), step_term(plain, "tp_allreduce_seconds"));
}

TEST_F(RecipeFlagsE2E, ExpertTpBelowTpLetsEpSpanTheTpRanks) {
  // Qwen3-235B-A22B on 256 H100 at tp 2, pp 8, dp 16: ep 32 > dp needs expert TP 1 (the
  // Megatron-Bridge recipe's expert_tensor_parallel_size=1).
  const std::string base =
      "estimate --model qwen3-235b-a22b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 256 --inter-node-gbit-per-s 3200 "
      "--tp 2 --pp 8 --dp 16 --ep 32 --micro-batch 1 --virtual-stages 4 --global-batch 2048 --seq 4096 "
      "--precision fp8_mixed --recompute none --stack megatron --tokens 1e10 --ignore-memory";
  const RunResult without = run(base);
  EXPECT_EQ(without.exit_code, 2) << without.out;
  EXPECT_NE(without.out.find("ep 32 does not divide dp 16"), std::string::npos) << without.out;
  // The refusal names the way out: ep 32 divides tp 2 × dp 16 = 32 with expert TP 1.
  EXPECT_NE(without.out.find("--expert-tp 1"), std::string::npos) << without.out;
  EXPECT_NE(without.out.find("ep 32 divides tp 2 × dp 16"), std::string::npos) << without.out;
  // Unpinned DP (the search sizes each PP): the no-fit reason carries the same hint.
  const std::string unpinned_dp =
      "estimate --model qwen3-30b-a3b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --tp 2 --pp 1 --tokens 1e9";
  const RunResult no_fit = run(unpinned_dp + " --ep 8");
  EXPECT_EQ(no_fit.exit_code, 1) << no_fit.out;
  EXPECT_NE(no_fit.out.find("ep 8 does not divide dp 4 (with expert TP 1, --expert-tp 1"), std::string::npos)
      << no_fit.out;
  // Where expert TP 1 would not help either (ep 16 > tp 2 × dp 4), no hint.
  const RunResult no_hint = run(unpinned_dp + " --ep 16");
  EXPECT_EQ(no_hint.exit_code, 1) << no_hint.out;
  EXPECT_NE(no_hint.out.find("ep 16 does not divide dp 4"), std::string::npos) << no_hint.out;
  EXPECT_EQ(no_hint.out.find("--expert-tp"), std::string::npos) << no_hint.out;
  const auto with = run_json(base + " --expert-tp 1", 0);
  EXPECT_EQ(with["estimate"]["layout"]["ep"], 32);
  EXPECT_EQ(with["estimate"]["layout"]["expert_tp"], 1);
}

TEST_F(RecipeFlagsE2E, PpLayersSetTheBusiestStage) {
  // Llama 3.1 8B (32 layers) at pp 4: 8 layers per rank by default, the last rank also holds the
  // output layer and the loss (V·h = 128256 × 4096 = 0.53 B parameters ≈ 2.4 decoder layers of
  // 0.22 B, timed under Megatron's fused loss without the 1/(1 + 1500/4096) width factor: ≈ 1.8
  // layer-equivalents), so it is the busiest at ≈ 9.8. 9,8,8,7 lightens it to ≈ 8.8 and the first
  // rank's 9 set the pace (less compute); 12,8,8,4 makes the first rank's 12 the busiest (more).
  const std::string base =
      "estimate --model llama-3.1-8b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --tp 1 --pp 4 --dp 2 "
      "--micro-batch 1 --global-batch 64 --seq 4096 --precision bf16_mixed --recompute full --stack megatron --tokens 1e9";
  const auto even = run_json(base, 0);
  const auto lighter_last = run_json(base + " --pp-layers 9,8,8,7", 0);
  const auto heavier_first = run_json(base + " --pp-layers 12,8,8,4", 0);
  EXPECT_LT(step_term(lighter_last, "compute_seconds"), step_term(even, "compute_seconds"));
  EXPECT_GT(step_term(heavier_first, "compute_seconds"), step_term(even, "compute_seconds"));
  // Memory is sized on the rank the layers make the largest (no recomputation, so activations
  // weigh): the even split spelt out is the default to the byte; 12 layers on the first rank
  // (which holds 4 micro-batches under 1F1B) need more than its default 8; 4,12,8,8 puts 12
  // layers × 3 micro-batches on the second rank (36 layer-batches, against the even split's
  // first rank's 32): that rank is sized, above the even split.
  const std::string kept = base.substr(0, base.find(" --recompute full")) + " --recompute none --stack megatron --tokens 1e9";
  auto memory = [&](const std::string& extra) {
    return run_json(kept + extra, 0)["estimate"]["per_gpu_memory_bytes"].get<double>();
  };
  const double even_bytes = memory("");
  EXPECT_EQ(memory(" --pp-layers 8,8,8,8"), even_bytes);
  EXPECT_GT(memory(" --pp-layers 12,8,8,4"), even_bytes);
  EXPECT_GT(memory(" --pp-layers 4,12,8,8"), even_bytes);
}

TEST_F(RecipeFlagsE2E, IgnoreMemoryTimesALayoutThatDoesNotFitAndSaysSo) {
  // Llama 3.1 70B on one 80 GB GPU does not fit (weights alone are 141 GB).
  const std::string base =
      "estimate --model llama-3.1-70b --task full --gpu 'NVIDIA H100 SXM' --gpus 1 --micro-batch 1 --global-batch 8 "
      "--seq 2048 --tokens 1e6";
  const RunResult refused = run(base);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  const auto timed = run_json(base + " --ignore-memory", 0);
  const auto& e = timed["estimate"];
  EXPECT_GT(e["per_gpu_memory_bytes"].get<double>(), e["gpu_memory_capacity_bytes"].get<double>());
  // Recomputation is not pinned: the layout timed is the one closest to fitting (full
  // recomputation keeps only the layer inputs), not the fastest on an unbounded GPU (none).
  EXPECT_EQ(e["layout"]["recompute"], "full") << e["layout"].dump();
  bool warned = false;
  for (const auto& w : e["warnings"]) warned = warned || w["code"] == "memory_over_capacity";
  EXPECT_TRUE(warned) << e["warnings"].dump();
}

TEST_F(RecipeFlagsE2E, TheEstimateSaysWhichStackAndRecipeItTimed) {
  const std::string args = kMoe + " --stack megatron --ep-overlap --moe-imbalance 1 --grads-16bit";
  const auto j = run_json(args, 0);
  const auto& s = j["training_settings"];
  EXPECT_EQ(s["stack"], "megatron");
  EXPECT_EQ(s["ep_overlap"], true);
  EXPECT_EQ(s["tp_comm_overlap"], false);
  EXPECT_EQ(s["moe_imbalance"], 1.0);
  EXPECT_EQ(s["grads_16bit"], true);
  EXPECT_TRUE(s["pp_layers"].is_null());
  // Nothing set: the defaults, as nulls and falses.
  const auto plain = run_json(kMoe, 0)["training_settings"];
  EXPECT_TRUE(plain["stack"].is_null() && plain["moe_imbalance"].is_null()) << plain.dump();
  // The text names them under the layout line, and the layout line names the expert TP.
  const RunResult text = run(args);
  EXPECT_NE(text.out.find("stack megatron, EP all-to-all overlapped, MoE imbalance 1, 16-bit gradients"), std::string::npos)
      << text.out;
  const RunResult etp = run(
      "estimate --model qwen3-30b-a3b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --tp 2 --pp 1 --dp 4 --ep 8 "
      "--expert-tp 1 --micro-batch 1 --global-batch 512 --seq 4096 --recompute full --tokens 2e9 --ignore-memory");
  EXPECT_NE(etp.out.find("TP2 PP1 DP4 EP8 ETP1 "), std::string::npos) << etp.out;
  // A layout that does not fit points at --ignore-memory (exit 1).
  const RunResult no_fit = run("estimate --model llama-3.1-70b --task full --gpu 'NVIDIA H100 SXM' --gpus 1 --tokens 1e6");
  EXPECT_EQ(no_fit.exit_code, 1);
  EXPECT_NE(no_fit.out.find("add --ignore-memory"), std::string::npos) << no_fit.out;
}

// --stack megatron with an MoE model and no recompute given: the search also tries Megatron-Core's
// selective recompute of the modules NVIDIA's gpt-oss recipes set (layernorm, moe_act;
// memory.hpp recipe_recompute_modules). gpt-oss-120b on 64 H100s: with them PP 2 fits, which none
// of the three plain modes lets fit, and the run is shorter than the best of those three.
TEST_F(RecipeFlagsE2E, MegatronMoeSearchTriesTheRecipesRecomputeModules) {
  const std::string gpt_oss =
      "estimate --model gpt-oss-120b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 64 --gpus-per-node 8 "
      "--inter-node-gbit-per-s 3200 --seq 4096 --global-batch 1280 --tokens 2e10 --stack megatron --grads-16bit";
  const auto searched = run_json(gpt_oss, 0)["estimate"];
  EXPECT_EQ(searched["layout"]["recompute"], "selective") << searched["layout"];
  EXPECT_EQ(searched["layout"]["recompute_modules"], "layernorm,moe_act") << searched["layout"];
  double best_plain = 1e300;
  for (const char* mode : {"none", "selective", "full"}) {
    const auto e = run_json(gpt_oss + " --recompute " + mode, 0)["estimate"];
    EXPECT_TRUE(e["layout"]["recompute_modules"].is_null()) << mode << ": " << e["layout"];
    best_plain = std::min(best_plain, e["work_seconds"].get<double>());
  }
  EXPECT_LT(searched["work_seconds"].get<double>(), best_plain);
  // The searched layout without recompute does not fit (exit 1, no fit).
  const std::string searched_layout = " --tp 1 --pp " + searched["layout"]["pp"].dump() + " --ep " +
                                      searched["layout"]["ep"].dump() + " --micro-batch " +
                                      searched["layout"]["micro_batch"].dump();
  EXPECT_EQ(run(gpt_oss + searched_layout + " --recompute none").exit_code, 1);
  // The same modules given by hand: the same layout and run, to the last digit.
  const auto pinned = run_json(gpt_oss + " --recompute-modules layernorm,moe_act", 0)["estimate"];
  EXPECT_EQ(pinned["layout"], searched["layout"]);
  EXPECT_EQ(pinned["work_seconds"], searched["work_seconds"]);
  EXPECT_EQ(pinned["per_gpu_memory_bytes"], searched["per_gpu_memory_bytes"]);
  // The layout line names the modules, not "selective".
  const RunResult text = run(gpt_oss);
  EXPECT_NE(text.out.find(" rc:layernorm,moe_act, global batch"), std::string::npos) << text.out.substr(0, 400);
  // ... and one line says the search chose them (trial42 D2), not when the user gave them.
  EXPECT_NE(text.out.find("\nrc:layernorm,moe_act = chosen by the search: Megatron-Core selective recompute"),
            std::string::npos)
      << text.out.substr(0, 600);
  EXPECT_EQ(run(gpt_oss + " --recompute-modules layernorm,moe_act").out.find("chosen by the search"), std::string::npos);
  // Not searched: a dense model (the Llama recipes recompute no modules), another stack.
  EXPECT_TRUE(run_json("estimate --model llama-3.1-8b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --seq 4096 "
                       "--global-batch 64 --tokens 1e9 --stack megatron",
                       0)["estimate"]["layout"]["recompute_modules"]
                  .is_null());
  const auto fsdp = run_json("estimate --model qwen3-30b-a3b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 32 "
                             "--gpus-per-node 8 --inter-node-gbit-per-s 3200 --seq 4096 --global-batch 64 --tokens 1e9 "
                             "--stack fsdp",
                             0)["estimate"];
  EXPECT_EQ(fsdp["layout"]["recompute"], "full");  // what the plain modes give there
  EXPECT_TRUE(fsdp["layout"]["recompute_modules"].is_null());
}

// --stack megatron searches virtual pipeline stages (the interleaved 1F1B schedule) where
// Megatron-LM accepts them: Llama 3.1 70B (80 layers) at PP 8 holds 10 layers per rank, so v is
// 2, 5 or 10; the micro-batches must be a multiple of pp. The bubble is (p − 1)/(v·m) of the
// compute (Narayanan et al. 2021 §2.2.2) and each micro-batch crosses v× the boundaries.
TEST_F(RecipeFlagsE2E, MegatronSearchInterleavesPipelineStagesWhereMegatronAcceptsThem) {
  const std::string llama =
      "estimate --model llama-3.1-70b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 64 --gpus-per-node 8 "
      "--inter-node-gbit-per-s 3200 --seq 8192 --tokens 1e10 --tp 4 --pp 8 --micro-batch 1 --recompute full";
  const std::string megatron = llama + " --stack megatron --grads-16bit";
  const auto searched = run_json(megatron + " --global-batch 128", 0)["estimate"];
  const auto one = run_json(megatron + " --global-batch 128 --virtual-stages 1", 0)["estimate"];
  const int v = searched["layout"]["virtual_stages"];
  EXPECT_TRUE(v == 2 || v == 5 || v == 10) << searched["layout"];
  // DP 2, 128 sequences: m = 64 micro-batches; the bubble of v chunks is 1/v of one chunk's.
  EXPECT_NEAR(searched["step"]["pp_bubble_seconds"].get<double>() * v, one["step"]["pp_bubble_seconds"].get<double>(),
              1e-9 * one["step"]["pp_bubble_seconds"].get<double>());
  EXPECT_NEAR(searched["step"]["pp_p2p_seconds"].get<double>(), v * one["step"]["pp_p2p_seconds"].get<double>(),
              1e-9 * searched["step"]["pp_p2p_seconds"].get<double>());
  EXPECT_LT(searched["step"]["step_seconds"].get<double>(), one["step"]["step_seconds"].get<double>());
  // 36 sequences: m = 18, not a multiple of pp 8 (Megatron-LM schedules.py refuses it): no interleaving.
  EXPECT_EQ(run_json(megatron + " --global-batch 36", 0)["estimate"]["layout"]["virtual_stages"], 1);
  // --pp-layers: every rank's layers split into v chunks, so v divides each (12, 10, 8: v = 2 only;
  // 11 and 9: none).
  const std::string layers = megatron + " --global-batch 128 --pp-layers ";
  const int v_even = run_json(layers + "12,10,10,10,10,10,10,8", 0)["estimate"]["layout"]["virtual_stages"];
  EXPECT_TRUE(v_even == 1 || v_even == 2) << v_even;
  EXPECT_EQ(run_json(layers + "11,10,10,10,10,10,10,9", 0)["estimate"]["layout"]["virtual_stages"], 1);
  // Without --stack megatron the stages are not interleaved unless --virtual-stages says so.
  EXPECT_EQ(run_json(llama + " --global-batch 128", 0)["estimate"]["layout"]["virtual_stages"], 1);
}

TEST_F(RecipeFlagsE2E, BadRecipeFlagsAreOneLineErrorsWithExit2) {
  const struct {
    std::string args, flag;
  } cases[] = {
      {kDense + " --pp-layers 16,16", "--pp-layers"},                                  // needs --pp
      {kDensePp2 + " --pp-layers 16,8,8", "--pp-layers"},                              // 3 entries for pp 2
      {kDensePp2 + " --pp-layers 16,15", "--pp-layers"},                               // 31 ≠ 32 layers
      {kDensePp2 + " --pp-layers 16,x", "--pp-layers"},                                // not a number
      {kMoe + " --tp-comm-overlap", "--tp-comm-overlap"},                             // MoE
      {kDense + " --expert-tp 2", "--expert-tp"},                                     // dense model
      {kMoe + " --expert-tp 3", "--expert-tp"},  // 3 × ep 8 does not divide tp 1 × dp 8
      {"estimate --model qwen3-30b-a3b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --ep 4 --expert-tp 4 "
       "--tokens 1e9",
       "--expert-tp"},  // 4 × 4 does not divide the 8 GPUs, whatever tp × dp the search picks
      {kMoe + " --moe-imbalance 0.5", "--moe-imbalance"},                             // below 1
      {kDense + " --stack keras", "--stack"},                                         // unknown stack
      {kDense + " --ep-overlap", "--ep-overlap"},                                     // dense model
      {kDense + " --stack hf", "--tp"},                        // the HF Trainer runs no tensor parallelism
      {"estimate --model llama-3.1-8b --task pretrain --gpu 'NVIDIA H100 SXM' --gpus 8 --tokens 1e9 --stack deepspeed "
       "--ep-overlap",
       "--ep-overlap"},  // a Megatron-Core switch
      {kDense + " --moe-imbalance 1.5", "--moe-imbalance"},                           // dense model
      {kDense + " --optimizer ''", "--optimizer"},                                    // empty choice
      {kDense + " --recompute ''", "--recompute"},                                    // empty choice
      {kDense + " --stack hf --grads-16bit", "--grads-16bit"},                       // not megatron
      {kDense + " --grads-16bit", "--grads-16bit"},                                  // no stack (hf)
      {"plan --model llama-3.1-8b --task serve --rps 1 --stack megatron", "--stack"},  // serving
  };
  for (const auto& c : cases) {
    const RunResult r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "not one line: " << r.out;
    EXPECT_NE(r.out.find("gpuplan: error: " + c.flag), std::string::npos) << c.args << "\n" << r.out;
  }
}

// trial48 #7: under --stack megatron the search timed EP layouts with the alltoall dispatcher and
// chose EP 1 on 8 × B200 for Qwen3-30B-A3B without a word, while with --moe-dispatcher hybridep an
// EP layout is faster: plan #1 with EP 1 now carries moe_dispatcher_assumed too; a pinned --ep or
// --moe-dispatcher does not.
TEST_F(RecipeFlagsE2E, AnEp1MoePlanSaysEpLayoutsWereTimedWithAlltoall) {
  const std::string base = "plan --model qwen3-30b-a3b --task pretrain --tokens 1e11 --stack megatron --gpus 8 gpu~b200 "
                           "--today 2026-11-30 --limit 1 --json";
  auto codes = [](const nlohmann::json& p) {
    std::vector<std::string> c;
    for (const auto& w : p["warnings"]) c.push_back(w["code"].get<std::string>());
    return c;
  };
  const auto plain = run_json(base, 0)["plans"][0];
  ASSERT_EQ(plain["layout"]["ep"], 1) << plain["layout"].dump();
  const auto c = codes(plain);
  EXPECT_NE(std::find(c.begin(), c.end(), "moe_dispatcher_assumed"), c.end()) << plain["warnings"].dump();
  for (const std::string pin : {" --ep 1", " --moe-dispatcher alltoall"}) {
    const auto pinned = codes(run_json(base + pin, 0)["plans"][0]);
    EXPECT_EQ(std::find(pinned.begin(), pinned.end(), "moe_dispatcher_assumed"), pinned.end()) << pin;
  }
}

}  // namespace
}  // namespace gpuplan::e2e
