#pragma once
/// Sizing layer: image generation time for latent diffusion models (SDXL UNet, FLUX
/// transformer) from their architecture (ModelArch::diffusion), compute-bound.
///
/// Units: FLOP, seconds, pixels. Pure functions.
///
/// FLOPs per denoiser evaluation (one network forward at one denoising step):
///   latent = (H/8) × (W/8) (VAE downsampling factor 8: Rombach et al. 2022, arXiv:2112.10752;
///     SDXL Podell et al. 2023 arXiv:2307.01952; FLUX uses the same ×8 VAE).
///   FLUX (MMDiT, Esser et al. 2024 arXiv:2403.03206): image tokens = (H/16)·(W/16) after 2×2
///     patchify of the latent; text tokens = 512 (T5, FLUX-dev max_sequence_length). In a
///     double-stream block each token passes ONE stream's weights (image or text: 4D² attention
///     projections + 8D² MLP); in a single-stream block the shared 3D² q/k/v + 4D² proj_mlp + 5D²
///     proj_out: 2·12·D² FLOP per token per block (so ≈ 2·6.5e9 per token for FLUX.1, not 2·12e9:
///     the per-sample AdaLN modulation linears, ~3e9 parameters, run once per image, not per
///     token), + embedders/proj_out, + joint attention 4·T²·D per block (Q·Kᵀ, A·V; bidirectional).
///   SDXL UNet: per resolution level ℓ (latent side / 2^ℓ, channels c_ℓ): ResNet blocks
///     (two 3×3 convs: 2·9·c_in·c_out FLOP per pixel each), transformer blocks (self-attention
///     projections 4·c², attention 4·P·c per pixel [P = pixels at the level], cross-attention
///     to 77 text tokens, GEGLU feed-forward 2·c·8c + 2·4c·c), up path with 3 ResNet blocks per
///     level on concatenated skips; down/up-sampling convs. Simplifications (documented in
///     docs/performance-model.md): group norms, time embedding and the tiny conv_in/conv_out
///     are counted only as convs or neglected (< 1%).
///   The UNet's FLOPs are not 2·N·pixels (each level runs at its own resolution), hence the
///     per-level sum.
/// Seconds per image = evaluations × FLOPs / (dense 16-bit peak × efficiency), efficiency =
/// PerfAssumptions::diffusion_transformer_efficiency (measured, FLUX) or diffusion_unet_efficiency
/// (assumed, SDXL); images per hour scale with `gpus`;
/// evaluations = steps × (2 with classifier-free guidance, SDXL default; 1 for guidance-
/// distilled FLUX-dev). The VAE decode and text encoders are not counted (one pass per image,
/// small against 20–50 denoising steps: stated in the explanation).
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_arch.hpp"
#include "sizing/perf.hpp"

namespace gpuplan {

struct DiffusionRequest {
  std::int64_t width_px = 1024;   ///< image width, pixels, multiple of 16, >= 16
  std::int64_t height_px = 1024;  ///< image height, pixels, multiple of 16, >= 16
  std::int64_t steps = 30;        ///< denoising steps, >= 1
  bool classifier_free_guidance = true;  ///< two denoiser evaluations per step (SDXL); false for FLUX-dev
  std::int64_t text_tokens = 0;   ///< 0 = model default (SDXL 77, FLUX 512)
  int gpus = 1;                   ///< data-parallel GPUs generating images independently
};

struct DiffusionEstimate {
  double flop_per_evaluation = 0;  ///< one denoiser forward at this resolution
  double matmul_flop_per_evaluation = 0;     ///< weights part (convs, projections, MLPs)
  double attention_flop_per_evaluation = 0;  ///< Q·Kᵀ and A·V part
  std::int64_t evaluations_per_image = 0;    ///< steps × (2 with CFG, else 1)
  double flop_per_image = 0;
  double seconds_per_image = 0;  ///< on one GPU
  double images_per_hour = 0;    ///< all `gpus` together
  std::int64_t latent_tokens = 0;  ///< FLUX: (H/16)(W/16); UNet: (H/8)(W/8) latent pixels
};

/// FLOPs of one denoiser evaluation (see header). Throws Error{invalid_input} when arch has no
/// `diffusion` spec or the resolution is not a positive multiple of 16.
DiffusionEstimate estimate_diffusion(const ModelArch& arch, const DiffusionRequest& request, const GpuSpec& gpu,
                                     const PerfAssumptions& assumptions);

/// Explanation lines (same numbers as estimate_diffusion).
std::vector<ExplainLine> explain_diffusion(const ModelArch& arch, const DiffusionRequest& request,
                                           const GpuSpec& gpu, const PerfAssumptions& assumptions);

}  // namespace gpuplan
