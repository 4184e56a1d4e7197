// Diffusion denoiser FLOPs and image time (diffusion_perf.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "model/presets.hpp"
#include "sizing/diffusion_perf.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

GpuSpec h100_like() {
  GpuSpec g;  // NVIDIA H100 SXM datasheet: 989.4 TFLOPS dense BF16
  g.name = "H100 SXM";
  g.vendor = "NVIDIA";
  g.architecture = "Hopper";
  g.memory_bandwidth_bytes_per_s = 3.35e12;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::bf16)] = 989.4e12;
  return g;
}

TEST(PerfDiffusion, FluxPerTokenWeightsAreOneStreamPerDoubleBlock) {
  const ModelArch flux = load_preset("flux.1-schnell");
  DiffusionRequest r;
  r.width_px = 1024;
  r.height_px = 1024;
  r.steps = 4;
  r.classifier_free_guidance = false;
  const DiffusionEstimate e = estimate_diffusion(flux, r, h100_like(), PerfAssumptions{});
  // Image tokens: (1024/16)² = 4096 (latent 128×128, 2×2 patches); text tokens 512; T = 4608.
  EXPECT_EQ(e.latent_tokens, 4096);
  const double d = 3072, t = 4608, blocks = 19 + 38;
  // Hand: per token per block 12·D² weights (see header) → 2·12·D²·T·57;
  // x_embedder 64→D on image tokens, context_embedder 4096→D on text tokens, proj_out D→64.
  const double matmul = 2 * 12 * d * d * t * blocks + 2 * 64 * d * 4096 + 2 * 4096 * d * 512 + 2 * d * 64 * 4096;
  EXPECT_NEAR(e.matmul_flop_per_evaluation, matmul, 1.0);
  EXPECT_NEAR(e.attention_flop_per_evaluation, 4 * t * t * d * blocks, 1.0);
  // Cross-check with the model layer's parameter count: the per-token weights are the attention
  // and MLP parameters minus the other stream of each double block (19 × 12·D²), biases aside.
  const double per_token = static_cast<double>(flux.params.attention + flux.params.mlp) - 19 * 12 * d * d;
  EXPECT_NEAR(2 * 12 * d * d * blocks, 2 * per_token, 2 * per_token * 1e-3);
  // ≈ 7.4e13 FLOP per evaluation.
  EXPECT_NEAR(e.flop_per_evaluation, 7.4e13, 0.1e13);
  EXPECT_EQ(e.evaluations_per_image, 4);
  EXPECT_NEAR(e.seconds_per_image, 4 * e.flop_per_evaluation / (989.4e12 * PerfAssumptions{}.diffusion_transformer_efficiency), 1e-12);
  EXPECT_NEAR(e.images_per_hour, 3600 / e.seconds_per_image, 1e-9);
}

// Our H200 measurement of the FLUX.1-shaped forward (tests/data/h200-flux-blocks.PROVENANCE.md):
// FLOPs counted by torch's FlopCounterMode and the median time per forward.
TEST(PerfDiffusion, FluxMatchesH200Measurement) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/h200-flux-blocks.jsonl");
  ASSERT_TRUE(in);
  const ModelArch flux = load_preset("flux.1-schnell");
  GpuSpec h200 = h100_like();  // H200 SXM: same 989.4 TFLOPS dense BF16 as the H100 SXM
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    DiffusionRequest r;
    r.width_px = row["width_px"];
    r.height_px = row["height_px"];
    r.steps = 1;
    r.classifier_free_guidance = false;
    const DiffusionEstimate e = estimate_diffusion(flux, r, h200, PerfAssumptions{});
    const double counted = row["flop_counted"], seconds = row["seconds_median"];
    std::printf("%s: FLOP model %.4g vs counted %.4g (%+.2f%%); seconds model %.4f vs measured %.4f (%+.1f%%)\n",
                row["id"].get<std::string>().c_str(), e.flop_per_evaluation, counted,
                100 * (e.flop_per_evaluation / counted - 1), e.seconds_per_image, seconds,
                100 * (e.seconds_per_image / seconds - 1));
    // The FLOP derivation neglects only the per-sample modulation linears (< 0.1%).
    EXPECT_NEAR(e.flop_per_evaluation, counted, 0.01 * counted) << row["id"];
    EXPECT_NEAR(e.seconds_per_image, seconds, 0.25 * seconds) << row["id"];
    ++n;
  }
  EXPECT_EQ(n, 3);
}

TEST(PerfDiffusion, TinyUnetByHand) {
  ModelArch a;
  a.name = "tiny-unet";
  a.family = ModelFamily::diffusion_unet;
  DiffusionSpec d;
  d.class_name = "UNet2DConditionModel";
  d.in_channels = 4;
  d.out_channels = 4;
  d.block_out_channels = {32};
  d.down_block_types = {"DownBlock2D"};
  d.up_block_types = {"UpBlock2D"};
  d.transformer_layers_per_block = {1};
  d.layers_per_block = 1;
  d.cross_attention_dim = 16;
  a.diffusion = d;
  DiffusionRequest r;
  r.width_px = 64;
  r.height_px = 64;
  r.steps = 1;
  r.classifier_free_guidance = false;
  const DiffusionEstimate e = estimate_diffusion(a, r, h100_like(), PerfAssumptions{});
  const double p = 8 * 8, c = 32, x = 16, t = 77;  // latent 8×8, 77 CLIP tokens
  auto conv3 = [](double ci, double co, double px) { return 2 * 9 * ci * co * px; };
  auto resnet = [&](double ci, double co) {
    return conv3(ci, co, p) + conv3(co, co, p) + (ci != co ? 2 * ci * co * p : 0.0);
  };
  // conv_in; down: 1 ResNet; mid: 2 ResNets + 1 transformer; up: 2 ResNets on [32 | 32 skip];
  // conv_out. Transformer: proj in/out 4c²p; self q,k,v,o 8c²p; cross q,o 4c²p + k,v 4xct;
  // GEGLU 24c²p; attention 4p²c + 4ptc.
  const double transformer_matmul = 4 * c * c * p + 8 * c * c * p + 4 * c * c * p + 4 * x * c * t + 24 * c * c * p;
  const double matmul = conv3(4, c, p) + resnet(c, c) + 2 * resnet(c, c) + transformer_matmul + 2 * resnet(2 * c, c) +
                        conv3(c, 4, p);
  EXPECT_NEAR(e.matmul_flop_per_evaluation, matmul, 1e-3);
  EXPECT_NEAR(e.attention_flop_per_evaluation, 4 * p * p * c + 4 * p * t * c, 1e-3);
}

TEST(PerfDiffusion, SdxlScalesWithResolutionAndGuidance) {
  const ModelArch sdxl = load_preset("sdxl-unet");
  DiffusionRequest r;
  r.steps = 30;
  r.width_px = 512;
  r.height_px = 512;
  const DiffusionEstimate small = estimate_diffusion(sdxl, r, h100_like(), PerfAssumptions{});
  r.width_px = 1024;
  r.height_px = 1024;
  const DiffusionEstimate big = estimate_diffusion(sdxl, r, h100_like(), PerfAssumptions{});
  // Convolutions and projections grow with pixels (×4), self-attention with pixels² (×16).
  EXPECT_GT(big.flop_per_evaluation, 4 * small.flop_per_evaluation);
  EXPECT_LT(big.flop_per_evaluation, 5 * small.flop_per_evaluation);
  EXPECT_EQ(big.evaluations_per_image, 60);  // classifier-free guidance: 2 per step
  r.classifier_free_guidance = false;
  EXPECT_NEAR(estimate_diffusion(sdxl, r, h100_like(), PerfAssumptions{}).seconds_per_image,
              big.seconds_per_image / 2, 1e-12);
  // Order of magnitude: a 1024² SDXL UNet evaluation is a few TFLOP (10 transformer layers at
  // 1280 channels on 32×32 plus ResNets at 128×128 × 320).
  std::printf("SDXL UNet 1024x1024: %.3g FLOP per evaluation (%.3g matmul/conv + %.3g attention), %.3g s per "
              "image at 30 steps with CFG on an H100\n",
              big.flop_per_evaluation, big.matmul_flop_per_evaluation, big.attention_flop_per_evaluation,
              big.seconds_per_image);
  EXPECT_GT(big.flop_per_evaluation, 1e12);
  EXPECT_LT(big.flop_per_evaluation, 2e13);
}

TEST(PerfDiffusion, RejectsNonDiffusionModelsAndBadResolutions) {
  const ModelArch llama = load_preset("llama-2-7b");
  DiffusionRequest r;
  EXPECT_THROW(estimate_diffusion(llama, r, h100_like(), PerfAssumptions{}), Error);
  const ModelArch sdxl = load_preset("sdxl-unet");
  r.width_px = 1000;
  EXPECT_THROW(estimate_diffusion(sdxl, r, h100_like(), PerfAssumptions{}), Error);
}

}  // namespace
}  // namespace gpuplan
