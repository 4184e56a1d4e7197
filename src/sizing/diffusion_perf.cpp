#include "sizing/diffusion_perf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {
namespace {

/// FLOP split of one denoiser evaluation.
struct EvalFlop {
  double matmul = 0;
  double attention = 0;
};

double conv3x3(double cin, double cout, double pixels) { return 2.0 * 9.0 * cin * cout * pixels; }
double conv1x1(double cin, double cout, double pixels) { return 2.0 * cin * cout * pixels; }

/// diffusers ResnetBlock2D at `pixels` positions: two 3×3 convs (+ 1×1 shortcut when in != out).
double resnet_flop(double cin, double cout, double pixels) {
  double f = conv3x3(cin, cout, pixels) + conv3x3(cout, cout, pixels);
  if (cin != cout) f += conv1x1(cin, cout, pixels);
  return f;
}

/// diffusers Transformer2DModel with `layers` BasicTransformerBlocks at `pixels` tokens of width C,
/// cross-attending to `text` tokens of width X.
EvalFlop transformer2d_flop(double c, double layers, double pixels, double text, double x) {
  EvalFlop f;
  f.matmul += 2.0 * 2.0 * c * c * pixels;  // proj_in + proj_out
  const double self_proj = 2.0 * 4.0 * c * c * pixels;                      // q, k, v, out
  const double cross_proj = 2.0 * 2.0 * c * c * pixels + 2.0 * 2.0 * x * c * text;  // q, out; k, v of the text
  const double ff = 2.0 * (c * 8.0 * c + 4.0 * c * c) * pixels;              // GEGLU C→8C (split), 4C→C
  f.matmul += layers * (self_proj + cross_proj + ff);
  f.attention += layers * (4.0 * pixels * pixels * c + 4.0 * pixels * text * c);
  return f;
}

EvalFlop unet_flop(const DiffusionSpec& d, double latent_pixels, double text) {
  EvalFlop f;
  const auto& ch = d.block_out_channels;
  const std::size_t levels = ch.size();
  const double x = static_cast<double>(d.cross_attention_dim);
  auto pixels_at = [&](std::size_t level) { return latent_pixels / std::pow(4.0, static_cast<double>(level)); };
  auto add = [&](const EvalFlop& e) {
    f.matmul += e.matmul;
    f.attention += e.attention;
  };
  const double lpb = static_cast<double>(d.layers_per_block);
  f.matmul += conv3x3(static_cast<double>(d.in_channels), static_cast<double>(ch[0]), latent_pixels);  // conv_in
  // Down path.
  double out = static_cast<double>(ch[0]);
  for (std::size_t i = 0; i < levels; ++i) {
    const double in = out;
    out = static_cast<double>(ch[i]);
    const double p = pixels_at(i);
    const bool cross = d.down_block_types[i].find("CrossAttn") != std::string::npos;
    for (std::int64_t j = 0; j < d.layers_per_block; ++j) {
      f.matmul += resnet_flop(j == 0 ? in : out, out, p);
      if (cross) add(transformer2d_flop(out, static_cast<double>(d.transformer_layers_per_block[i]), p, text, x));
    }
    if (i + 1 < levels) f.matmul += conv3x3(out, out, p / 4.0);  // Downsample2D: stride-2 conv
  }
  // Mid block: 2 ResNets + 1 Transformer2D at the coarsest level.
  const double cmax = static_cast<double>(ch.back());
  const double pmin = pixels_at(levels - 1);
  f.matmul += 2.0 * resnet_flop(cmax, cmax, pmin);
  add(transformer2d_flop(cmax, static_cast<double>(d.transformer_layers_per_block.back()), pmin, text, x));
  // Up path: layers_per_block + 1 ResNets per level on concatenated skips, Upsample2D conv at 4× pixels.
  double prev = cmax;
  for (std::size_t i = 0; i < levels; ++i) {
    const std::size_t level = levels - 1 - i;
    const double o = static_cast<double>(ch[level]);
    const double skip_in = static_cast<double>(ch[level == 0 ? 0 : level - 1]);
    const double p = pixels_at(level);
    const bool cross = d.up_block_types[i].find("CrossAttn") != std::string::npos;
    const double layers = static_cast<double>(d.transformer_layers_per_block[level]);
    for (std::int64_t j = 0; j <= d.layers_per_block; ++j) {
      const double skip = (static_cast<double>(j) == lpb) ? skip_in : o;
      const double res_in = (j == 0) ? prev : o;
      f.matmul += resnet_flop(res_in + skip, o, p);
      if (cross) add(transformer2d_flop(o, layers, p, text, x));
    }
    if (i + 1 < levels) f.matmul += conv3x3(o, o, p * 4.0);  // Upsample2D: nearest ×2 then 3×3 conv
    prev = o;
  }
  f.matmul += conv3x3(static_cast<double>(ch[0]), static_cast<double>(d.out_channels), latent_pixels);  // conv_out
  return f;
}

/// FLUX: each token passes one stream's weights per double-stream block (image tokens the image
/// stream, text tokens the text stream: 4D² attention + 8D² MLP) and the shared single-stream
/// weights (3D² q/k/v + 4D² proj_mlp + 5D² proj_out); per-sample modulation linears are
/// negligible. Joint attention over all tokens in every block.
EvalFlop flux_flop(const DiffusionSpec& d, double image_tokens, double text_tokens) {
  EvalFlop f;
  const double dim = static_cast<double>(d.inner_dim);
  const double tokens = image_tokens + text_tokens;
  const double blocks = static_cast<double>(d.num_double_stream_layers + d.num_single_stream_layers);
  f.matmul += 2.0 * 12.0 * dim * dim * tokens * blocks;
  f.matmul += 2.0 * static_cast<double>(d.in_channels) * dim * image_tokens;          // x_embedder
  f.matmul += 2.0 * static_cast<double>(d.joint_attention_dim) * dim * text_tokens;  // context_embedder
  f.matmul += 2.0 * dim * static_cast<double>(d.out_channels) * image_tokens;        // proj_out
  f.attention += 4.0 * tokens * tokens * dim * blocks;
  return f;
}

struct Work {
  DiffusionEstimate e;
  double peak = 0;
  double text_tokens = 0;
  double latent_pixels = 0;
  double efficiency = 0;
};

Work compute_work(const ModelArch& arch, const DiffusionRequest& r, const GpuSpec& gpu, const PerfAssumptions& a) {
  if (!arch.diffusion)
    throw_invalid_coded("--model", "not_diffusion_model", {{"model", arch.name}}, fmt::format("'{}' is not a diffusion model", arch.name),
                        "an SDXL-style UNet or FLUX-style transformer");
  if (r.width_px < 16 || r.height_px < 16 || r.width_px % 16 != 0 || r.height_px % 16 != 0)
    throw_invalid_coded(r.width_px < 16 || r.width_px % 16 != 0 ? "--width" : "--height", "image_side_not_multiple_of_16",
                        {{"width", fmt::format("{}", r.width_px)}, {"height", fmt::format("{}", r.height_px)}},
                        fmt::format("{}x{}", r.width_px, r.height_px), "width and height positive multiples of 16 pixels");
  if (r.steps < 1) throw_invalid_coded("--steps", "not_positive", {{"value", fmt::format("{}", r.steps)}}, fmt::format("{} is not a positive integer", r.steps), "an integer >= 1");
  if (r.gpus < 1) throw_invalid_coded("--gpus", "not_positive", {{"value", fmt::format("{}", r.gpus)}}, fmt::format("{} is not a positive integer", r.gpus), "an integer >= 1");
  const DiffusionSpec& d = *arch.diffusion;
  Work w;
  DiffusionEstimate& e = w.e;
  const double lh = static_cast<double>(r.height_px / 8), lw = static_cast<double>(r.width_px / 8);
  w.latent_pixels = lh * lw;
  EvalFlop f;
  if (arch.family == ModelFamily::diffusion_transformer) {
    w.text_tokens = static_cast<double>(r.text_tokens > 0 ? r.text_tokens : 512);
    const double image_tokens = (lh / 2.0) * (lw / 2.0);
    e.latent_tokens = static_cast<std::int64_t>(image_tokens);
    f = flux_flop(d, image_tokens, w.text_tokens);
  } else {
    if (d.block_out_channels.empty() || d.down_block_types.size() != d.block_out_channels.size() ||
        d.up_block_types.size() != d.block_out_channels.size() ||
        d.transformer_layers_per_block.size() != d.block_out_channels.size())
      throw_invalid("--model", "UNet block lists missing or of different lengths", "a diffusers UNet2DConditionModel config");
    w.text_tokens = static_cast<double>(r.text_tokens > 0 ? r.text_tokens : 77);
    e.latent_tokens = static_cast<std::int64_t>(w.latent_pixels);
    f = unet_flop(d, w.latent_pixels, w.text_tokens);
  }
  e.matmul_flop_per_evaluation = f.matmul;
  e.attention_flop_per_evaluation = f.attention;
  e.flop_per_evaluation = f.matmul + f.attention;
  e.evaluations_per_image = r.steps * (r.classifier_free_guidance ? 2 : 1);
  e.flop_per_image = e.flop_per_evaluation * static_cast<double>(e.evaluations_per_image);
  for (Dtype dt : {Dtype::bf16, Dtype::fp16, Dtype::tf32, Dtype::fp32}) {
    if (auto p = gpu.dense_flops(dt); p && *p > 0) {
      w.peak = *p;
      break;
    }
  }
  w.efficiency = arch.family == ModelFamily::diffusion_transformer ? a.diffusion_transformer_efficiency
                                                                   : a.diffusion_unet_efficiency;
  e.seconds_per_image = w.peak > 0 ? e.flop_per_image / (w.peak * w.efficiency) : 0.0;
  e.images_per_hour = e.seconds_per_image > 0 ? 3600.0 / e.seconds_per_image * r.gpus : 0.0;
  return w;
}

}  // namespace

DiffusionEstimate estimate_diffusion(const ModelArch& arch, const DiffusionRequest& request, const GpuSpec& gpu,
                                     const PerfAssumptions& assumptions) {
  return compute_work(arch, request, gpu, assumptions).e;
}

std::vector<ExplainLine> explain_diffusion(const ModelArch& arch, const DiffusionRequest& r, const GpuSpec& gpu,
                                           const PerfAssumptions& a) {
  const Work w = compute_work(arch, r, gpu, a);
  const DiffusionEstimate& e = w.e;
  const bool flux = arch.family == ModelFamily::diffusion_transformer;
  std::vector<ExplainLine> out;
  out.push_back({"flop_per_evaluation", e.flop_per_evaluation,
                 flux ? fmt::format("{} image tokens ((H/16)·(W/16)) + {:.0f} text tokens: matmuls {:.4g} + joint "
                                    "attention {:.4g} = {:.4g} FLOP",
                                    e.latent_tokens, w.text_tokens, e.matmul_flop_per_evaluation,
                                    e.attention_flop_per_evaluation, e.flop_per_evaluation)
                      : fmt::format("latent {:.0f} pixels (H/8·W/8), {:.0f} text tokens: convolutions + projections "
                                    "{:.4g} + attention {:.4g} = {:.4g} FLOP",
                                    w.latent_pixels, w.text_tokens, e.matmul_flop_per_evaluation,
                                    e.attention_flop_per_evaluation, e.flop_per_evaluation),
                 flux ? "MMDiT (Esser et al. 2024); per-stream weights per token; docs/performance-model.md"
                      : "UNet per-level conv/attention sum (Rombach et al. 2022; Podell et al. 2023); "
                        "docs/performance-model.md"});
  out.push_back({"seconds_per_image", e.seconds_per_image,
                 fmt::format("{} steps × {} evaluations × {:.4g} FLOP / ({:.4g} FLOP/s × {:.2f}) = {:.3g} s; VAE decode "
                             "and text encoders not counted",
                             r.steps, r.classifier_free_guidance ? 2 : 1, e.flop_per_evaluation, w.peak,
                             w.efficiency, e.seconds_per_image),
                 flux ? "compute-bound denoising; efficiency measured on an H200 (docs/performance-model.md)"
                      : "compute-bound denoising; UNet efficiency is an uncalibrated assumption (gpuplan performance model)"});
  out.push_back({"images_per_hour", e.images_per_hour,
                 fmt::format("3600 / {:.3g} s × {} {} = {:.4g}", e.seconds_per_image, r.gpus, r.gpus == 1 ? "GPU" : "GPUs", e.images_per_hour),
                 "independent images per GPU (data parallel)"});
  return out;
}

}  // namespace gpuplan
