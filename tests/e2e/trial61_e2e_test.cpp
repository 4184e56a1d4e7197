// End-to-end, stop 51 (trials 61 and 62 of a new user): the bundled hybrid (Nemotron-H, Mamba-2 + attention + MLP blocks) through `gpuplan size`,
// and the trial60 defects: --link nvlink on a card without a GPU link (#5), graph modes timed on NVIDIA only (#7),
// no HybridEP hint where HybridEP cannot run (#8), the collectives' link share in the explain lines (#4).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

using nlohmann::json;

class Trial61E2E : public BinaryE2E<Trial61E2E> {
 public:
  static constexpr const char* kName = "trial61";
};

double term_bytes(const json& size, const std::string& name) {
  for (const json& t : size["per_gpu"]["terms"])
    if (t["name"] == name) return t["bytes"].get<double>();
  ADD_FAILURE() << "no term " << name;
  return -1;
}

// Nemotron-H-56B serving, context 8192 × 8 sequences, bf16 (hand calculation from its config.json):
//   SSM state of the 54 Mamba-2 blocks (HF Mamba2 cache: conv_states [conv_dim, d_conv], ssm_states [heads, head_dim,
//   d_state]): conv_dim 16384 + 2 · 8 groups · 256 = 20480; 2 B × (20480 × 4 + 16384 × 256) × 8 × 54 = 3,694,657,536;
//   KV cache of the 10 attention blocks: 2 × 8 KV heads × 128 × 2 B × 8192 tokens × 8 × 10 = 2,684,354,560;
//   the 54 MLP-only blocks hold neither → 6,379,012,096 bytes.
// Weights: 2 B × 56,324,350,464 parameters at TP 1; at TP 2 every matrix (the Mamba mixers too) is halved and the
// 1,859,584 norm weights are not: 2 B × (56,324,350,464 − 1,859,584) / 2 + 2 B × 1,859,584 = 56,326,210,048.
TEST_F(Trial61E2E, HybridServingHoldsSsmStateAndTheAttentionBlocksKvCache) {
  const std::string base = "size --model nemotron-h-56b --task serve --context 8192 --concurrency 8";
  const json tp1 = run_json(base, 0);
  EXPECT_DOUBLE_EQ(term_bytes(tp1, "kv_cache"), 2.0 * (20480 * 4 + 16384 * 256) * 8 * 54 + 2.0 * 8 * 128 * 2 * 8192 * 8 * 10);
  EXPECT_DOUBLE_EQ(term_bytes(tp1, "kv_cache"), 6'379'012'096.0);
  EXPECT_DOUBLE_EQ(term_bytes(tp1, "weights"), 2.0 * 56'324'350'464);
  const json tp2 = run_json(base + " --tp 2", 0);
  EXPECT_DOUBLE_EQ(term_bytes(tp2, "weights"), 2.0 * (56'324'350'464.0 - 1'859'584) / 2 + 2.0 * 1'859'584);
}

// Nemotron-H serving plans (trial61 #1: the per-sequence state was 0 B, so a replica ran one sequence): a sequence of
// 6000 + 1000 tokens holds the KV of the 10 attention blocks, 4096 B × 7000 × 10 = 286,720,000, and the state of the 54
// Mamba-2 blocks, 2 B × 4,276,224 × 54 = 461,832,192 → 748,552,192 bytes.
TEST_F(Trial61E2E, HybridServingPlansHoldEachSequencesState) {
  const RunResult r = run("plan --model nemotron-h-56b --task serve --concurrency 32 --prompt-tokens 6000 --output-tokens "
                          "1000 --hours 10 --today 2026-12-01 --explain 1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("7.486e+08 B per sequence at 7000 tokens"), std::string::npos) << r.out.substr(0, 4000);
  EXPECT_NE(r.out.find("batch = min(concurrency 32, that) = 32"), std::string::npos) << r.out.substr(0, 4000);
}

// Nemotron-H: LoRA targets exist in the blocks that hold them (trial61 #2: 118 blocks were counted). Rank 16:
//   q,k,v on the 10 attention blocks: 10 × 16 × ((8192 + 8192) + 2 × (8192 + 1024)) = 5,570,560;
//   up,down on the 54 MLP blocks: 54 × 16 × 2 × (8192 + 32768) = 70,778,880.
// And its TP all-reduces: one per block (each holds one mixer), 2 per block with the backward, where a transformer
// layer has 4 (trial61 #3).
TEST_F(Trial61E2E, HybridLoraTargetsAndTpAllReducesFollowItsBlocks) {
  const auto adapters = [](const std::string& targets) {
    const RunResult r = run("size --model nemotron-h-56b --task lora --lora-rank 16 --lora-targets " + targets + " --explain");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto at = r.out.find("lora_adapters:");
    return at == std::string::npos ? std::string() : r.out.substr(at, 80);
  };
  EXPECT_NE(adapters("q,k,v").find("5.571e+06 adapter params"), std::string::npos) << adapters("q,k,v");
  EXPECT_NE(adapters("up,down").find("7.078e+07 adapter params"), std::string::npos) << adapters("up,down");
  const RunResult tp = run("estimate --model nemotron-h-56b --task pretrain --gpu H100 --gpus 64 --tp 8 --pp 4 --seq 8192 "
                           "--stack megatron --inter-node-gbit-per-s 3200 --tokens 1e10 --ignore-memory --explain");
  EXPECT_EQ(tp.exit_code, 0) << tp.out;
  // ceil(118 / 4) = 30 blocks on a stage × 2 all-reduces (forward + backward of its one mixer).
  EXPECT_NE(tp.out.find("× 60 all-reduces (30 layers × 2)"), std::string::npos) << tp.out.substr(0, 3000);
}

// Encoders and encoder-decoders are sized whole on one GPU: TP/PP above 1 and LoRA on them are refused (trial61 #5, #6);
// BERT's 512 learned positions warn past them (#7); T5 serving says its KV caches are not counted (#8).
TEST_F(Trial61E2E, EncoderFamiliesSayWhatIsNotModelled) {
  const RunResult tp = run("size --model t5-large --task full --tp 2 --pp 2");
  EXPECT_EQ(tp.exit_code, 2) << tp.out;
  EXPECT_NE(tp.out.find("whole on one GPU"), std::string::npos) << tp.out;
  const RunResult lora = run("size --model bert-base-uncased --task lora");
  EXPECT_EQ(lora.exit_code, 2) << lora.out;
  EXPECT_NE(lora.out.find("--task"), std::string::npos) << lora.out;
  const RunResult seq = run("size --model bert-base-uncased --task full --seq 8192");
  EXPECT_EQ(seq.exit_code, 0) << seq.out;
  EXPECT_NE(seq.out.find("512 learned positions"), std::string::npos) << seq.out;
  const RunResult serve = run("size --model t5-large --task serve");
  EXPECT_EQ(serve.exit_code, 0) << serve.out;
  EXPECT_NE(serve.out.find("KV caches are not counted"), std::string::npos) << serve.out;
  EXPECT_EQ(serve.out.find("tp 2"), std::string::npos) << serve.out;  // one GPU per replica in the fit table
  EXPECT_NE(serve.out.find("each replica is one GPU holding the whole model"), std::string::npos) << serve.out;
}

// Gemma 3n (E4B shape, Gemma3nTextConfig's defaults written out) given with --config: of its 35 layers the last 15 read
// an earlier layer's KV cache, so 20 hold one, 4 full-attention and 16 sliding (window 512). Context 8192 × 4:
// 2 × 2 KV heads × 256 × 2 B = 2048 B per token per layer × 4 × (4 × 8192 + 16 × 512) = 335,544,320 bytes.
TEST_F(Trial61E2E, Gemma3nSharedKvLayersHoldNoCache) {
  const std::filesystem::path cfg = dir_ / "gemma3n-e4b.json";
  std::ofstream(cfg) << R"({"model_type": "gemma3n_text", "vocab_size": 262400, "hidden_size": 2048,
      "intermediate_size": 16384, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 2,
      "head_dim": 256, "sliding_window": 512, "num_kv_shared_layers": 15})";
  const json j = run_json("size --config '" + cfg.string() + "' --task serve --context 8192 --concurrency 4", 0);
  EXPECT_DOUBLE_EQ(term_bytes(j, "kv_cache"), 2048.0 * 4 * (4 * 8192 + 16 * 512));
}

// trial60 #5: the L40S has no GPU link (datasheet: "none (PCIe only)"); --link nvlink was timed as NVLink.
TEST_F(Trial61E2E, NvlinkOnACardWithoutAGpuLinkIsRefused) {
  const RunResult r = run("estimate --model llama-3.1-8b --task full --gpu L40S --gpus 4 --link nvlink --tokens 1e8");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--link"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no GPU link"), std::string::npos) << r.out;
  const RunResult h100 = run("estimate --model llama-3.1-8b --task full --gpu H100 --gpus 8 --link nvlink --tokens 1e8");
  EXPECT_EQ(h100.exit_code, 0) << h100.out;
  // The H100 PCIe's NVLink bridge joins 2 cards (nvlink_domain_gpus 2): 4 per node do not share it (trial61 #9).
  const RunResult bridge = run("estimate --model llama-3.1-8b --task lora --gpu 'H100 PCIe' --gpus 4 --tp 4 --link nvlink "
                               "--tokens 1e8");
  EXPECT_EQ(bridge.exit_code, 2) << bridge.out;
  EXPECT_NE(bridge.out.find("joins 2 GPUs"), std::string::npos) << bridge.out;
  const RunResult pair = run("estimate --model llama-3.1-8b --task lora --gpu 'H100 PCIe' --gpus 2 --tp 2 --link nvlink "
                             "--tokens 1e8");
  EXPECT_EQ(pair.exit_code, 0) << pair.out;
}

// trial60 #7: a graph mode is Megatron-Core's CUDA graphs, timed from NVIDIA runs; on an MI300X every mode runs eager
// (full_iteration was applied there while transformer_engine was not). On the H100 full_iteration drops the MoE
// layers' fixed host time, so the step is shorter than eager.
TEST_F(Trial61E2E, GraphModesAreTimedOnNvidiaOnly) {
  const auto step = [](const std::string& gpu, const std::string& mode) {
    const json j = run_json("estimate --model qwen3-30b-a3b --task full --gpu " + gpu +
                                " --gpus 8 --stack megatron --ep 8 --tp 1 --pp 1 --tokens 1e9 --ignore-memory --cuda-graph " + mode,
                            0);
    return j["estimate"]["step"]["step_seconds"].get<double>();
  };
  EXPECT_DOUBLE_EQ(step("MI300X", "full_iteration"), step("MI300X", "none"));
  EXPECT_DOUBLE_EQ(step("MI300X", "transformer_engine"), step("MI300X", "none"));
  EXPECT_LT(step("H100", "full_iteration"), step("H100", "none"));
  const RunResult ex = run("estimate --model qwen3-30b-a3b --task full --gpu MI300X --gpus 8 --stack megatron --ep 8 "
                           "--tp 1 --pp 1 --tokens 1e9 --cuda-graph full_iteration --explain");
  EXPECT_NE(ex.out.find("full-iteration CUDA graph asked: eager on a non-NVIDIA GPU"), std::string::npos) << ex.out;
}

// trial60 #8: the EP plans on MI300X no longer suggest --moe-dispatcher hybridep (it does not run there); on H100 the
// hint stays.
TEST_F(Trial61E2E, NoHybridEpHintWhereItCannotRun) {
  const auto codes = [](const json& plan) {
    std::vector<std::string> out;
    for (const json& w : plan["warnings"]) out.push_back(w["code"]);
    return out;
  };
  for (const std::string gpu : {"MI300X", "H100"}) {
    const json j = run_json("plan --model qwen3-30b-a3b --task full --stack megatron --tokens 1e9 --ep 8 --today 2026-12-01 "
                            "'gpu=" + gpu + " gpus>=8'",
                            0);
    ASSERT_FALSE(j["plans"].empty()) << gpu;
    const auto c = codes(j["plans"][0]);
    const bool hint = std::find(c.begin(), c.end(), "moe_dispatcher_assumed") != c.end();
    EXPECT_EQ(hint, gpu == "H100") << gpu << ": " << j["plans"][0]["warnings"].dump();
  }
}

// trial60 #4: on 4 L40S (PCIe) the TP and DP lines print the share of the link they run at (NCCL's measured 0.56 for
// up to 4 PCIe GPUs) and cite it, so the time can be re-derived from the line.
TEST_F(Trial61E2E, CollectiveLinesNameTheLinkShare) {
  const RunResult tp = run("estimate --model llama-3.1-8b --task full --gpu L40S --gpus 4 --tp 4 --pp 1 --tokens 1e8 "
                           "--micro-batch 1 --seq 2048 --ignore-memory --explain");
  EXPECT_EQ(tp.exit_code, 0) << tp.out;
  EXPECT_NE(tp.out.find("56% of the link: PCIe"), std::string::npos) << tp.out;
  EXPECT_NE(tp.out.find("NVIDIA/nccl issue #1639"), std::string::npos) << tp.out;
  const RunResult dp = run("estimate --model llama-3.2-1b --task full --gpu L40S --gpus 4 --tp 1 --pp 1 --tokens 1e8 "
                           "--micro-batch 1 --seq 2048 --ignore-memory --explain");
  EXPECT_EQ(dp.exit_code, 0) << dp.out;
  const auto line = dp.out.find("ring all-reduce of");
  ASSERT_NE(line, std::string::npos) << dp.out;
  EXPECT_NE(dp.out.substr(line, 400).find("56% of the link: PCIe"), std::string::npos) << dp.out.substr(line, 400);
}

// trial62 #1: a decode step reads the tables it multiplies, not the embedding rows it gathers. Gemma 3n E4B (tied head):
// 6,866,696,688 parameters less the per-layer embedding table 262144 × 35 × 256 = 2,348,810,240 (looked up) →
// 4,517,886,448 × 2 B = 9.036e9 bytes per step (the token table stays: it is read whole as the LM head).
TEST_F(Trial61E2E, Gemma3nDecodeReadsNoPerLayerEmbeddingTable) {
  const std::filesystem::path cfg = dir_ / "gemma3n-e4b-decode.json";
  std::ofstream(cfg) << R"({"model_type": "gemma3n_text", "vocab_size": 262400, "hidden_size": 2048,
      "intermediate_size": 16384, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 2,
      "head_dim": 256, "sliding_window": 512, "num_kv_shared_layers": 15})";
  const RunResult r = run("plan --config '" + cfg.string() + "' --task serve --concurrency 32 --today 2026-12-01 "
                          "--explain 1 'gpu~L40S'");
  EXPECT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("weights 9.036e+09 B"), std::string::npos) << r.out.substr(0, 4000);
}

// trial62 #2, #3, #7: what cannot be answered is refused with exit 2 — an encoder's training limits on a GPU (no
// activation model), LoRA targets that name no matrix of the model (relu² MLP: no gate), a GPU without FLOP/s figures.
TEST_F(Trial61E2E, UnanswerableRequestsAreRefused) {
  const RunResult bert = run("size --model bert-base-uncased --task full --gpu 'H100 SXM'");
  EXPECT_EQ(bert.exit_code, 2) << bert.out;
  const RunResult gate = run("size --model nemotron-h-56b --task lora --lora-targets gate");
  EXPECT_EQ(gate.exit_code, 2) << gate.out;
  EXPECT_NE(gate.out.find("--lora-targets"), std::string::npos) << gate.out;
  EXPECT_NE(gate.out.find("q, k, v, o, up, down"), std::string::npos) << gate.out;
  const RunResult flops = run("estimate --model llama-3.2-1b-instruct --task full --tokens 1e7 --gpu MI350X --gpus 1");
  EXPECT_EQ(flops.exit_code, 2) << flops.out;
  EXPECT_NE(flops.out.find("no FLOP/s figure"), std::string::npos) << flops.out;
}

// trial62 #4: under ZeRO-3 the DP line says where the gradients go and the gather line shows its two phases. Llama 3.1
// 8B, 16 H100 in 2 nodes, tp 2 → dp 8, 4 per node: 16 micro-batches × 1.5 × max(intra 2·3/4 × 8.03e9 B / 3.6e11 B/s,
// inter 2·1/2 × 8.03e9/4 B / 5e9 B/s = 0.4015 s) = 9.636 s.
TEST_F(Trial61E2E, ZeroThreeLinesReproduce) {
  const RunResult r = run("estimate --model llama-3.1-8b --task full --gpu H100 --gpus 16 --tp 2 --pp 1 --zero 3 "
                          "--inter-node-gbit-per-s 400 --tokens 1e9 --explain");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ZeRO-3: the gradients are reduce-scattered within the ZeRO-3 gather term"), std::string::npos);
  EXPECT_NE(r.out.find("16 micro-batches × 1.5 (gathers forward + backward + gradient reduce-scatter) × (all-reduce of "
                       "8.03e+09 B dense parameters per GPU over dp 8"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("= 9.636 s"), std::string::npos) << r.out;
}

// trial62 #9: estimate and plan say what size says about a hybrid's activations.
TEST_F(Trial61E2E, HybridActivationsWarnedOnEstimate) {
  const json j = run_json("estimate --model nemotron-h-56b --task full --gpu H200 --gpus 8 --tokens 1e9 --ignore-memory", 0);
  bool warned = false;
  for (const json& w : j["estimate"]["warnings"]) warned |= w["code"] == "hybrid_activations_approximate";
  EXPECT_TRUE(warned) << j["estimate"]["warnings"].dump();
}

}  // namespace
}  // namespace gpuplan::e2e
