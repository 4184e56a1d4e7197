// Bundled presets: every data/models folder is a preset, loads, and carries its provenance; the
// architecture fields the sizing layer relies on are read as the configs state them.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "model/param_count.hpp"
#include "model/presets.hpp"
#include "test_util.hpp"
#include "util/embedded.hpp"

namespace gpuplan {
namespace {

using testing::expect_error;
using testing::source_path;

TEST(Presets, EveryModelFolderIsAPresetAndLoads) {
  std::set<std::string> folders;
  for (const auto& e : std::filesystem::directory_iterator(source_path("data/models"))) {
    if (e.is_directory()) folders.insert(e.path().filename().string());
  }
  std::set<std::string> names;
  for (const auto& p : list_presets()) {
    SCOPED_TRACE(p.short_name);
    EXPECT_TRUE(folders.count(p.folder)) << p.folder;
    EXPECT_TRUE(names.insert(p.short_name).second) << "duplicate short name";
    for (char c : p.short_name) EXPECT_FALSE(std::isupper(static_cast<unsigned char>(c)));
    EXPECT_FALSE(p.provenance_class.empty()) << "no row in data/models/PROVENANCE.md";
    const ModelArch a = load_preset(p.short_name);
    EXPECT_EQ(a.name, p.short_name);
    EXPECT_NE(a.source.find(p.hf_id), std::string::npos);
    // Where the config comes from as addresses, read from PROVENANCE.md's row, not a repository
    // path (trial of issue 10, D2).
    EXPECT_EQ(p.hf_url.rfind("https://huggingface.co/", 0), 0u) << p.hf_url;
    EXPECT_EQ(p.config_copied_from.rfind("https://", 0), 0u) << p.config_copied_from;
    EXPECT_NE(a.source.find(p.hf_url), std::string::npos) << a.source;
    EXPECT_NE(a.source.find(p.config_copied_from), std::string::npos) << a.source;
    EXPECT_EQ(a.source.find("data/"), std::string::npos) << a.source;
    EXPECT_GT(a.total_params(), 0);
  }
  EXPECT_EQ(list_presets().size(), folders.size());
}

TEST(Presets, NamesFromTheBrief) {
  for (const char* n : {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3",
                        "gpt-oss-20b", "sdxl-unet", "flux.1-schnell"}) {
    EXPECT_NE(find_preset(n), nullptr) << n;
  }
  // HF id, folder and aliases resolve too, case-insensitively.
  EXPECT_EQ(find_preset("meta-llama/Llama-3.1-8B")->short_name, "llama-3.1-8b");
  EXPECT_EQ(find_preset("mistralai__Mixtral-8x7B-v0.1")->short_name, "mixtral-8x7b");
  EXPECT_EQ(find_preset("Llama-2-7B-HF")->short_name, "llama-2-7b");
}

TEST(Presets, UnknownNameListsNearNames) {
  const Error e = expect_error([] { load_preset("llama-3.1-8"); });
  EXPECT_EQ(e.kind(), ErrorKind::not_found);
  EXPECT_EQ(e.where(), "--model");
  EXPECT_NE(e.expected().find("llama-3.1-8b"), std::string::npos) << e.what();
}

TEST(Presets, ProvenanceClassesFromProvenanceMd) {
  EXPECT_EQ(find_preset("llama-3.1-8b")->provenance_class, "A");        // aiconfigurator exact file
  EXPECT_EQ(find_preset("falcon-7b")->provenance_class, "B+C");         // rebuilt from an HF page, fine-tune
  EXPECT_EQ(find_preset("phi-3-mini-4k-instruct")->provenance_class, "B");
}

// Attention layouts as the configs state them.
TEST(Architecture, AttentionKinds) {
  EXPECT_EQ(load_preset("llama-2-7b").attention, AttentionKind::mha);      // 32 heads, 32 KV heads
  EXPECT_EQ(load_preset("llama-3.1-8b").attention, AttentionKind::gqa);    // 32 heads, 8 KV heads
  EXPECT_EQ(load_preset("falcon-7b").attention, AttentionKind::mqa);       // multi_query: true
  EXPECT_EQ(load_preset("deepseek-v3").attention, AttentionKind::mla);
  EXPECT_EQ(load_preset("mamba-2.8b").attention, AttentionKind::none);
  EXPECT_EQ(attention_kind_name(AttentionKind::gqa), "GQA");
}

TEST(Architecture, HeadDimFromConfigOrHiddenOverHeads) {
  EXPECT_EQ(load_preset("gemma-2-9b").head_dim, 256);  // head_dim 256 given; 3584/16 would be 224
  EXPECT_EQ(load_preset("qwen3-0.6b").head_dim, 128);  // head_dim 128 given; 1024/16 would be 64
  EXPECT_EQ(load_preset("llama-3.1-70b").head_dim, 128);  // 8192 / 64
  EXPECT_EQ(load_preset("falcon-7b").head_dim, 64);        // 4544 / 71
  EXPECT_EQ(load_preset("falcon-7b").num_kv_heads, 1);
}

TEST(Architecture, SlidingWindows) {
  const ModelArch mistral = load_preset("mistral-7b-v0.1");  // sliding_window 4096 on every layer
  EXPECT_EQ(mistral.sliding_window, 4096);
  EXPECT_EQ(mistral.num_sliding_window_layers(), 32);
  const ModelArch gemma = load_preset("gemma-2-9b");  // even layers local (4096), odd layers global
  EXPECT_EQ(gemma.sliding_window, 4096);
  ASSERT_EQ(gemma.layer_uses_sliding_window.size(), 42u);
  EXPECT_TRUE(gemma.layer_uses_sliding_window[0]);
  EXPECT_FALSE(gemma.layer_uses_sliding_window[1]);
  EXPECT_EQ(gemma.num_sliding_window_layers(), 21);
  const ModelArch oss = load_preset("gpt-oss-20b");  // layer_types: sliding 128 / full, alternating
  EXPECT_EQ(oss.sliding_window, 128);
  EXPECT_EQ(oss.num_sliding_window_layers(), 12);
  // Qwen2.5 states sliding_window but use_sliding_window false: no sliding window.
  EXPECT_FALSE(load_preset("qwen2.5-7b-instruct").sliding_window);
  EXPECT_FALSE(load_preset("llama-3.1-8b").sliding_window);
  EXPECT_FALSE(load_preset("mistral-7b-instruct-v0.3").sliding_window);  // v0.3: sliding_window null
}

TEST(Architecture, MoeAndMlaSpecs) {
  const ModelArch ds = load_preset("deepseek-v3");
  ASSERT_TRUE(ds.moe && ds.mla);
  EXPECT_EQ(ds.moe->num_routed_experts, 256);
  EXPECT_EQ(ds.moe->experts_per_token, 8);
  EXPECT_EQ(ds.moe->num_shared_experts, 1);
  EXPECT_EQ(ds.moe->first_dense_layers, 3);
  EXPECT_EQ(ds.moe->num_moe_layers, 58);  // 61 layers − 3 dense
  EXPECT_EQ(ds.mla->kv_lora_rank, 512);
  EXPECT_EQ(ds.mla->qk_rope_head_dim, 64);
  EXPECT_EQ(ds.mla->q_lora_rank, 1536);
  const ModelArch scout = load_preset("llama-4-scout-17b-16e-instruct");
  ASSERT_TRUE(scout.moe);
  EXPECT_EQ(scout.moe->num_moe_layers, 48);  // interleave_moe_layer_step 1
  EXPECT_EQ(scout.moe->num_shared_experts, 1);
  EXPECT_EQ(scout.torch_dtype, "bfloat16");  // nested text_config
  const ModelArch qwen = load_preset("qwen3-30b-a3b");
  EXPECT_EQ(qwen.moe->num_moe_layers, 48);
  EXPECT_EQ(qwen.moe->expert_intermediate_size, 768);
}

TEST(Architecture, ContextAndDtype) {
  EXPECT_EQ(load_preset("gpt2").max_position_embeddings, 1024);  // n_positions
  EXPECT_EQ(load_preset("llama-3.1-8b").max_position_embeddings, 131072);
  EXPECT_EQ(load_preset("llama-3.1-8b").torch_dtype, "bfloat16");
  EXPECT_EQ(load_preset("falcon-7b").max_position_embeddings, 2048);  // FalconConfig default (absent in config)
  EXPECT_EQ(load_preset("bloom").position_encoding, PositionEncoding::alibi);
  EXPECT_EQ(load_preset("bloom").max_position_embeddings, 0);  // not stated: unknown
}

// Diffusion: published 2.6B (SDXL UNet, Podell et al. 2023 §2.1: "2.6B parameters in the UNet") and 12B
// (FLUX.1 model card) within 2%; shape fields a FLOPs estimate needs are kept.
TEST(Architecture, DiffusionCountsAndShapes) {
  const ModelArch unet = load_preset("sdxl-unet");
  EXPECT_EQ(unet.family, ModelFamily::diffusion_unet);
  EXPECT_NEAR(static_cast<double>(unet.total_params()), 2.6e9, 0.02 * 2.6e9);
  ASSERT_TRUE(unet.diffusion);
  EXPECT_EQ(unet.diffusion->block_out_channels, (std::vector<std::int64_t>{320, 640, 1280}));
  EXPECT_EQ(unet.diffusion->transformer_layers_per_block, (std::vector<std::int64_t>{1, 2, 10}));
  EXPECT_EQ(unet.diffusion->cross_attention_dim, 2048);
  const ModelArch flux = load_preset("flux.1-schnell");
  EXPECT_EQ(flux.family, ModelFamily::diffusion_transformer);
  EXPECT_NEAR(static_cast<double>(flux.total_params()), 12e9, 0.02 * 12e9);
  ASSERT_TRUE(flux.diffusion);
  EXPECT_EQ(flux.diffusion->num_double_stream_layers, 19);
  EXPECT_EQ(flux.diffusion->num_single_stream_layers, 38);
  EXPECT_EQ(flux.diffusion->inner_dim, 3072);
  EXPECT_EQ(flux.diffusion->joint_attention_dim, 4096);
}

// FLUX.1-dev differs from schnell only by the guidance embedder (guidance_embeds: true), a
// TimestepEmbedding 256→3072→3072: 256·3072 + 3072 + 3072·3072 + 3072 = 10,229,760 parameters.
TEST(Architecture, FluxGuidanceEmbedderHandCount) {
  const ModelArch schnell = load_preset("flux.1-schnell");
  nlohmann::json c = nlohmann::json::parse(std::string(*embedded_file("models/black-forest-labs__FLUX.1-schnell__transformer/config.json")));
  c["guidance_embeds"] = true;
  const ModelArch dev = parse_hf_config(c, "flux-dev.json");
  EXPECT_EQ(dev.total_params() - schnell.total_params(), 10'229'760);
}

}  // namespace
}  // namespace gpuplan
