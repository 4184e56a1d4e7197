// End-to-end: `gpuplan models` / `gpuplan gpus` through the built binary (GPUPLAN_BINARY), for the families, the
// layer geometry and the GPU columns added on 2026-12-01. Expected numbers are hand calculations written here or
// cited figures (data/gpus.SOURCES.md).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RunResult {
  int exit_code = -1;
  std::string out;
};

RunResult run(const std::string& args) {
  const std::string cmd = "'" + std::string(GPUPLAN_BINARY) + "' " + args + " 2>&1";
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

json run_json(const std::string& args) {
  RunResult r = run(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
  return j;
}

// Olmo-3.1-32B (bundled config): h 5120, 64 layers, 40 heads / 8 KV (d 128), I 27648, V 100278, untied.
// Per layer: q 5120² + k,v 2·5120·1024 + o 5120² = 62,914,560; q_norm 5120 + k_norm 1024; SwiGLU 3·5120·27648 =
// 424,673,280; 2 RMSNorms 10,240 → 487,604,224; × 64 = 31,206,670,336; + embed/head 2·100278·5120 = 1,026,846,720
// + final norm 5120 = 32,233,522,176. KV cache per token per layer: 2·8·128 = 2048 elements.
TEST(ModelsE2E, Olmo3PresetGeometry) {
  const json j = run_json("models olmo-3.1-32b-instruct");
  EXPECT_EQ(j["model_type"], "olmo3");
  EXPECT_EQ(j["total_params"], 32'233'522'176LL);
  EXPECT_EQ(j["geometry"]["kv_cache_width"], 2048);
  EXPECT_EQ(j["geometry"]["activation"], "swiglu");
  EXPECT_EQ(j["geometry"]["norm"], "rms_norm");
  EXPECT_EQ(j["sliding_window_layers"], 48);  // 3 of every 4 layers
}

// The preset list shows the added presets.
TEST(ModelsE2E, ListShowsNewPresets) {
  const RunResult r = run("models");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("phi-1"), std::string::npos);
  EXPECT_NE(r.out.find("olmo-3.1-32b-instruct"), std::string::npos);
  // The real configs bundled on 2026-12-07 (data/models/PROVENANCE.md), one per family added by issue 8.
  for (const char* name : {"phi-2", "smollm3-3b", "pythia-410m", "bert-base-uncased", "t5-large", "nemotron-h-56b"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

// A T5 config given with --config: encoder-decoder family, 1 + 1 blocks, hand total 1432 (new_families_test.cpp).
TEST(ModelsE2E, T5ConfigThroughTheCli) {
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-e2e-models-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path cfg = dir / "config.json";
  std::ofstream(cfg) << R"({"model_type": "t5", "d_model": 8, "d_kv": 4, "num_heads": 2, "d_ff": 16, "num_layers": 1,
      "num_decoder_layers": 1, "vocab_size": 10, "relative_attention_num_buckets": 4, "feed_forward_proj": "relu"})";
  const json j = run_json("models --config '" + cfg.string() + "'");
  EXPECT_EQ(j["family"], "encoder_decoder");
  EXPECT_EQ(j["total_params"], 1432);
  EXPECT_EQ(j["geometry"]["kv_cache_layers"], 1);
  fs::remove_all(dir);
}

// --params with --mlp plain: MLP = 32 · 2 · 4096 · 16384 (hand count in geometry_test.cpp); bad kind → exit 2.
TEST(ModelsE2E, PlainMlpFlag) {
  const json j = run_json("models --params 7e9 --layers 32 --hidden 4096 --intermediate 16384 --mlp plain");
  EXPECT_EQ(j["params"]["mlp"], 32LL * 2 * 4096 * 16384);
  EXPECT_EQ(j["total_params"], 7'000'000'000LL);
  const RunResult bad = run("models --params 7e9 --mlp fancy");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--mlp"), std::string::npos) << bad.out;
}

// gpus: H100 SXM reports 81559 MiB (MODAL-2797), RTX 3090 bridges 2 GPUs, H20 and DGX Spark rows exist.
TEST(GpusE2E, UsableMemoryAndLinkDomain) {
  const json h100 = run_json("gpus H100");
  EXPECT_DOUBLE_EQ(h100["usable_memory_bytes"].get<double>(), 81559.0 * 1048576.0);
  EXPECT_EQ(h100["nvlink_domain_gpus"], 8);
  const json r3090 = run_json("gpus 'RTX 3090'");
  EXPECT_EQ(r3090["nvlink_domain_gpus"], 2);
  const json h20 = run_json("gpus H20");
  EXPECT_EQ(h20["name"], "NVIDIA H20");
  EXPECT_DOUBLE_EQ(h20["memory_bytes"].get<double>(), 96e9);
  const json spark = run_json("gpus 'DGX Spark'");
  EXPECT_EQ(spark["unified_memory"], true);
}

}  // namespace
