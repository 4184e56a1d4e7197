// resolve_model: presets, config files, the synthetic --params rule, safetensors headers and indexes.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "model/model_source.hpp"
#include "model/safetensors.hpp"
#include "test_util.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;
using testing::expect_error;
using testing::source_path;
using testing::TempDir;

// --params 7e9 with the documented rule (model_source.hpp), computed by hand:
//   12·128²·x³ + 2·32000·128·x = 7e9: x = 32 gives 6,442,450,944 + 262,144,000 = 6,704,594,944 <= 7e9,
//   x = 33 gives 7,065,... > 7e9  → L = 32, h = 128·32 = 4096, heads 4096/128 = 32, kv 32.
//   Without the MLP: attention 32·4·4096² = 2,147,483,648; norms 32·2·4096 + 4096 = 266,240;
//   embeddings + head 2·32000·4096 = 262,144,000 → 2,409,893,888. Each 256 of I adds 3·4096·32·256 = 100,663,296:
//   (7e9 − 2,409,893,888) / 100,663,296 = 45.6 → I = 45·256 = 11,520, MLP 4,529,848,320,
//   shape total 6,939,742,208, other = 7e9 − 6,939,742,208 = 60,257,792.
TEST(SyntheticParams, SevenBillionFollowsTheRule) {
  ModelSource s;
  s.params = 7e9;
  const ModelArch a = resolve_model(s);
  EXPECT_EQ(a.num_layers, 32);
  EXPECT_EQ(a.hidden_size, 4096);
  EXPECT_EQ(a.num_attention_heads, 32);
  EXPECT_EQ(a.num_kv_heads, 32);
  EXPECT_EQ(a.head_dim, 128);
  EXPECT_EQ(a.vocab_size, 32000);
  EXPECT_EQ(a.intermediate_size, 11520);
  EXPECT_EQ(a.params.mlp, 4'529'848'320);
  EXPECT_EQ(a.params.other, 60'257'792);
  EXPECT_EQ(a.total_params(), 7'000'000'000);
  EXPECT_EQ(a.family, ModelFamily::decoder);
  EXPECT_EQ(a.source, "--params");
}

TEST(SyntheticParams, TotalIsExactForManySizes) {
  for (double n : {125e6, 1.3e9, 13e9, 70e9, 405e9, 1e12, 1e14}) {
    ModelSource s;
    s.params = n;
    const ModelArch a = resolve_model(s);
    EXPECT_EQ(a.total_params(), static_cast<std::int64_t>(n)) << n;
    EXPECT_GE(a.params.other, 0) << n;
    EXPECT_EQ(a.hidden_size, 128 * a.num_layers) << n;
  }
}

// Overrides fix the shape: Llama-2-7B's shape (L 32, h 4096, I 11008, V 32000) has 6,738,415,616 parameters
// (csv, exact from the checkpoint index); asking for exactly that leaves nothing in other.
TEST(SyntheticParams, OverridesReproduceLlama2_7B) {
  ModelSource s;
  s.params = 6738415616.0;
  s.layers = 32;
  s.hidden = 4096;
  s.intermediate = 11008;
  const ModelArch a = resolve_model(s);
  EXPECT_EQ(a.params.other, 0);
  EXPECT_EQ(a.total_params(), 6'738'415'616);
}

// GQA override: 8 KV heads of 128 shrink k and v from 2·4096² to 2·4096·1024 per layer.
TEST(SyntheticParams, KvHeadsOverride) {
  ModelSource s;
  s.params = 7e9;
  s.kv_heads = 8;
  const ModelArch a = resolve_model(s);
  EXPECT_EQ(a.num_kv_heads, 8);
  EXPECT_EQ(a.attention, AttentionKind::gqa);
  EXPECT_EQ(a.params.attention, 32LL * (2 * 4096 * 4096 + 2 * 4096 * 1024));
  EXPECT_EQ(a.total_params(), 7'000'000'000);
}

TEST(ResolveModel, PresetAndConfigAgree) {
  ModelSource p;
  p.preset = "llama-3.1-8b";
  ModelSource c;
  c.config_path = source_path("data/models/meta-llama__Llama-3.1-8B/config.json");
  EXPECT_EQ(resolve_model(p).total_params(), 8'030'261'248);  // csv config_computed
  EXPECT_EQ(resolve_model(c).total_params(), 8'030'261'248);
}

/// Builds a .safetensors file: 8-byte little-endian header length, JSON header, zero-filled data.
std::string make_safetensors(const json& header, std::size_t data_bytes) {
  const std::string h = header.dump();
  std::string out(8, '\0');
  std::uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + h + std::string(data_bytes, '\0');
}

// Header written here: a F32 [2, 3] (6 elements, 24 bytes), b BF16 [4] (4, 8 bytes), c I64 scalar [] (1, 8 bytes)
// → 6 + 4 + 1 = 11 parameters, 24 + 8 + 8 = 40 bytes.
TEST(Safetensors, HeaderCountsWithoutReadingWeights) {
  TempDir dir("st_header");
  const json header = {{"__metadata__", {{"format", "pt"}}},
                       {"a", {{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {0, 24}}}},
                       {"b", {{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {24, 32}}}},
                       {"c", {{"dtype", "I64"}, {"shape", json::array()}, {"data_offsets", {32, 40}}}}};
  const std::string path = dir.write("model.safetensors", make_safetensors(header, 40));
  const SafetensorsSummary s = read_safetensors_header(path);
  EXPECT_EQ(s.tensors.size(), 3u);
  EXPECT_EQ(s.num_params, 11);
  EXPECT_EQ(s.weights_bytes, 40);
  EXPECT_EQ(s.params_by_dtype.at("F32"), 6);
  EXPECT_EQ(s.params_by_dtype.at("BF16"), 4);
  EXPECT_EQ(s.header_bytes, static_cast<std::int64_t>(header.dump().size()));
}

TEST(Safetensors, BadHeaders) {
  TempDir dir("st_bad");
  // Declared data size disagrees with shape × dtype: F16 [3] needs 6 bytes, not 8.
  json bad = {{"w", {{"dtype", "F16"}, {"shape", {3}}, {"data_offsets", {0, 8}}}}};
  std::string p = dir.write("a.safetensors", make_safetensors(bad, 8));
  Error e = expect_error([&] { read_safetensors_header(p); });
  EXPECT_EQ(e.where(), p + ": w.data_offsets");
  bad = {{"w", {{"dtype", "F12"}, {"shape", {3}}, {"data_offsets", {0, 6}}}}};
  p = dir.write("b.safetensors", make_safetensors(bad, 6));
  EXPECT_EQ(expect_error([&] { read_safetensors_header(p); }).where(), p + ": w.dtype");
  // Header length larger than the file.
  std::string truncated = make_safetensors(json{{"w", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {0, 4}}}}}, 0);
  truncated.resize(truncated.size() - 5);
  p = dir.write("c.safetensors", truncated);
  EXPECT_EQ(expect_error([&] { read_safetensors_header(p); }).kind(), ErrorKind::invalid_input);
  p = dir.write("d.safetensors", "abc");
  EXPECT_EQ(expect_error([&] { read_safetensors_header(p); }).where(), p);
}

// With a config.json beside the file, the shape comes from the config (the tiny llama of hand_calc_test:
// 1352 parameters) and the file's exact count wins: 1352 + 8 extra parameters → other = 8, total 1360.
TEST(Safetensors, ResolveWithConfigBeside) {
  TempDir dir("st_config");
  dir.write("config.json", R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
      "num_key_value_heads": 1, "intermediate_size": 16, "vocab_size": 10})");
  const json header = {{"all", {{"dtype", "BF16"}, {"shape", {1360}}, {"data_offsets", {0, 2720}}}}};
  const std::string path = dir.write("model.safetensors", make_safetensors(header, 2720));
  ModelSource s;
  s.safetensors_path = path;
  const ModelArch a = resolve_model(s);
  EXPECT_EQ(a.total_params(), 1360);
  EXPECT_EQ(a.params.other, 8);
  EXPECT_EQ(a.checkpoint_bytes, 2720);
  // A folder works too.
  s.safetensors_path = dir.path.string();
  EXPECT_EQ(resolve_model(s).total_params(), 1360);
}

// Without a config, the shape is read from tensor names: embed_tokens [V=32000, h=256], layers.0/1 → L = 2,
// up_proj [I=512, h]; count the llama shape by hand: attention 2·4·256² = 524,288, MLP 2·3·256·512 = 786,432,
// norms 2·2·256 + 256 = 1,280, embeddings + head 2·32000·256 = 16,384,000 → 17,696,000. The file holds
// embed 8,192,000 + up_proj 2·131,072 + filler so its total is 17,700,000: other = 4,000.
TEST(Safetensors, ResolveWithoutConfigInfersShape) {
  TempDir dir("st_infer");
  const std::int64_t embed = 32000LL * 256, up = 512LL * 256;
  const std::int64_t filler = 17'700'000 - embed - 2 * up;
  std::int64_t off = 0;
  auto entry = [&](std::vector<std::int64_t> shape, std::int64_t n) {
    json e = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {off, off + 2 * n}}};
    off += 2 * n;
    return e;
  };
  json header;
  header["model.embed_tokens.weight"] = entry({32000, 256}, embed);
  header["model.layers.0.mlp.up_proj.weight"] = entry({512, 256}, up);
  header["model.layers.1.mlp.up_proj.weight"] = entry({512, 256}, up);
  header["model.layers.1.rest"] = entry({filler}, filler);
  const std::string path = dir.write("model.safetensors", make_safetensors(header, static_cast<std::size_t>(off)));
  ModelSource s;
  s.safetensors_path = path;
  const ModelArch a = resolve_model(s);
  EXPECT_EQ(a.num_layers, 2);
  EXPECT_EQ(a.hidden_size, 256);
  EXPECT_EQ(a.vocab_size, 32000);
  EXPECT_EQ(a.intermediate_size, 512);
  EXPECT_EQ(a.total_params(), 17'700'000);
  EXPECT_EQ(a.params.other, 4'000);
}

// The Llama-2-7B folder holds pytorch_model.bin.index.json: total_size 26,953,670,656 bytes (FP32) with 32
// rotary inv_freq buffers; the config count 6,738,415,616 = 26,953,670,656/4 − 32·64, so no mismatch note.
TEST(WeightIndex, Llama2IndexBytesAndBuffers) {
  const std::string path = source_path("data/models/meta-llama__Llama-2-7b-hf/pytorch_model.bin.index.json");
  const WeightIndex idx = read_weight_index(path);
  EXPECT_EQ(idx.total_size_bytes, 26'953'670'656);
  EXPECT_EQ(idx.num_inv_freq_buffers, 32);
  EXPECT_EQ(idx.shard_files.size(), 3u);
  ModelSource s;
  s.safetensors_path = path;
  const ModelArch a = resolve_model(s);
  EXPECT_EQ(a.checkpoint_bytes, 26'953'670'656);
  EXPECT_EQ(a.total_params(), 6'738'415'616);
  for (const auto& n : a.notes) EXPECT_EQ(n.find("implies"), std::string::npos) << n;
}

TEST(WeightIndex, IndexWithoutConfigAndBadIndex) {
  TempDir dir("index");
  const std::string path = dir.write("model.safetensors.index.json", R"({"metadata": {"total_size": 16}, "weight_map": {"w": "a.safetensors"}})");
  ModelSource s;
  s.safetensors_path = path;
  EXPECT_EQ(expect_error([&] { resolve_model(s); }).where(), path);
  const std::string bad = dir.write("bad.index.json", R"({"metadata": {}, "weight_map": {}})");
  EXPECT_EQ(expect_error([&] { read_weight_index(bad); }).where(), bad + ": metadata.total_size");
  // A tensor name holds dots: quoted in brackets, so the path reads back to one key.
  const std::string shard = dir.write(
      "shard.index.json", R"({"metadata": {"total_size": 16}, "weight_map": {"model.norm.weight": 3}})");
  EXPECT_EQ(expect_error([&] { read_weight_index(shard); }).where(), shard + R"(: weight_map["model.norm.weight"])");
  // Strict JSON, as config.json: a tensor listed twice is a duplicate key, named the same way.
  const std::string dup = dir.write("dup.index.json",
                                    R"({"metadata": {"total_size": 16}, "weight_map": {"w.a": "1.safetensors", "w.a": "2.safetensors"}})");
  EXPECT_EQ(expect_error([&] { read_weight_index(dup); }).where(), dup + R"(: weight_map["w.a"])");
}

// Found by fuzz_safetensors (10 M run, 2026-12-01; input in fuzz/regressions/fuzz_safetensors/):
// a float total_size of 1.0883e100 was converted to int64 (undefined behaviour, UBSan report).
// Every float at or beyond 2^63 bytes is now out of range, named by its field.
TEST(WeightIndex, FloatTotalSizeBeyondInt64IsAnErrorNotUndefinedBehaviour) {
  for (const char* total : {"1.0883333e100", "9.3e18", "-1e300", "9223372036854775808.0"}) {
    const std::string text = std::string(R"({"metadata": {"total_size": )") + total + R"(}, "weight_map": {"w": "a.safetensors"}})";
    EXPECT_EQ(expect_error([&] { parse_weight_index(text, "i.json"); }).where(), "i.json: metadata.total_size") << total;
  }
  // 1.6e10 written as a float is still 16,000,000,000 bytes.
  const WeightIndex w = parse_weight_index(R"({"metadata": {"total_size": 1.6e10}, "weight_map": {"w": "a.safetensors"}})", "i.json");
  EXPECT_EQ(w.total_size_bytes, 16'000'000'000);
}

}  // namespace
}  // namespace gpuplan
