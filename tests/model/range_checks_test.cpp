// Issue 11: config values outside physical ranges are refused with the field named, before any
// parameter is counted (the counts overflowed int64 or came out absurd); strict JSON.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <string>

#include "model/hf_config.hpp"
#include "test_util.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;
using testing::expect_error;
using testing::TempDir;

json tiny_llama() {
  return json{{"model_type", "llama"}, {"hidden_size", 8}, {"num_hidden_layers", 2}, {"num_attention_heads", 2},
              {"intermediate_size", 16}, {"vocab_size", 10}};
}

json mixtral() {  // data/models/mistralai__Mixtral-8x7B-v0.1/config.json, the fields that matter
  return json{{"model_type", "mixtral"},        {"hidden_size", 4096},       {"intermediate_size", 14336},
              {"max_position_embeddings", 32768}, {"num_attention_heads", 32}, {"num_experts_per_tok", 2},
              {"num_hidden_layers", 32},        {"num_key_value_heads", 8},  {"num_local_experts", 8},
              {"vocab_size", 32000}};
}

std::string error_where(const json& config) {
  const Error e = expect_error([&] { parse_hf_config_text(config.dump(), "config.json"); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
  return e.where();
}

TEST(ConfigRanges, IntermediateSizeTwoToThe53PlusOneIsRefused) {
  // The issue: printed 2.39B parameters next to petabytes of activations.
  json c = tiny_llama();
  c["intermediate_size"] = 9007199254740993LL;  // 2^53 + 1
  EXPECT_EQ(error_where(c), "config.json: intermediate_size");
}

TEST(ConfigRanges, TrillionLayersIsRefused) {
  // The issue: num_hidden_layers 1e12 wrapped the count. Written as the float 1e12.
  const std::string text = R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 1e12,
    "num_attention_heads": 2, "intermediate_size": 16, "vocab_size": 10})";
  const Error e = expect_error([&] { parse_hf_config_text(text, "config.json"); });
  EXPECT_EQ(e.where(), "config.json: num_hidden_layers") << e.what();
}

TEST(ConfigRanges, MoreActiveExpertsThanExpertsIsRefused) {
  json c = mixtral();
  c["num_experts_per_tok"] = 9;  // 8 experts
  EXPECT_EQ(error_where(c), "config.json: num_experts_per_tok");
  c["num_experts_per_tok"] = 8;  // all experts active: allowed
  EXPECT_NO_THROW(parse_hf_config_text(c.dump(), "config.json"));
}

TEST(ConfigRanges, EachFieldWithinItsRangeButAnAbsurdTotalIsRefused) {
  json c = tiny_llama();
  c["num_hidden_layers"] = 10000;
  c["hidden_size"] = 1000000;
  c["num_attention_heads"] = 1000;
  c["intermediate_size"] = 10000000;
  const Error e = expect_error([&] { parse_hf_config_text(c.dump(), "config.json"); });
  EXPECT_NE(std::string(e.what()).find("parameters"), std::string::npos) << e.what();
}

TEST(ConfigRanges, OtherFieldsAreNamed) {
  json c = tiny_llama();
  c["vocab_size"] = 1000000000000LL;
  EXPECT_EQ(error_where(c), "config.json: vocab_size");
  c = tiny_llama();
  c["num_attention_heads"] = 2;
  c["num_key_value_heads"] = 4;  // more KV heads than heads (the family reader's own check)
  EXPECT_EQ(error_where(c), "config.json: num_key_value_heads");
  c = tiny_llama();
  c["max_position_embeddings"] = 100000000000LL;
  EXPECT_EQ(error_where(c), "config.json: max_position_embeddings");
}

// Every physical-range field, as the file writes it, flat (Mixtral) and nested (Llama 4's
// text_config): the error's where is exactly "PATH: FIELD", the message quotes the value and the
// expected text gives the range. Bounds from hf_config.cpp kKeyRanges; the relational bounds are
// the config's own counts (8 experts, 32 heads).
struct RangeCase {
  const char* field;      ///< the quantity (the task's list)
  const char* key;        ///< its key in a Mixtral / Llama 4 text config
  std::int64_t too_big;   ///< just above the bound
  const char* expected;   ///< the range stated
};
const RangeCase kRangeCases[] = {
    {"layers", "num_hidden_layers", 10001, "an integer from 1 to 10000"},
    {"hidden", "hidden_size", 1000001, "an integer from 1 to 1000000"},
    {"heads", "num_attention_heads", 100001, "an integer from 1 to 100000"},
    {"kv heads", "num_key_value_heads", 100001, "an integer from 1 to 100000"},
    {"experts", "num_local_experts", 100001, "an integer from 1 to 100000"},
    {"experts per token", "num_experts_per_tok", 100001, "an integer from 1 to 100000"},
    {"vocabulary", "vocab_size", 100000001, "an integer from 1 to 100000000"},
    {"positions", "max_position_embeddings", 1000000001, "an integer from 0 to 1000000000"},
    {"intermediate", "intermediate_size", 10000001, "an integer from 0 to 10000000"},
};

json llama4_text() {  // data/models/meta-llama__Llama-4-Scout-17B-16E-Instruct/config.json text_config, the fields that matter
  return json{{"hidden_size", 5120},         {"intermediate_size", 8192},   {"intermediate_size_mlp", 16384},
              {"max_position_embeddings", 10485760}, {"num_attention_heads", 40}, {"num_experts_per_tok", 1},
              {"num_hidden_layers", 48},     {"num_key_value_heads", 8},    {"num_local_experts", 16},
              {"vocab_size", 202048},        {"head_dim", 128}};
}

TEST(ConfigRanges, EachRangeFieldIsNamedWithItsFileAndRange) {
  TempDir dir("ranges");
  for (const bool nested : {false, true}) {
    for (const auto& rc : kRangeCases) {
      json c = nested ? json{{"model_type", "llama4"}, {"text_config", llama4_text()}} : mixtral();
      json& fields = nested ? c["text_config"] : c;
      fields[rc.key] = rc.too_big;
      const std::string path = dir.write("config.json", c.dump(1));
      const Error e = expect_error([&] { load_hf_config_file(path); });
      const std::string field = nested ? std::string("text_config.") + rc.key : std::string(rc.key);
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << rc.field;
      EXPECT_EQ(e.where(), path + ": " + field) << rc.field << ": " << e.what();
      EXPECT_EQ(e.message(), std::to_string(rc.too_big) + " is outside the physical range") << rc.field;
      EXPECT_EQ(e.expected(), rc.expected) << rc.field;
      fields[rc.key] = -1;  // and below: the same field, the same range
      dir.write("config.json", c.dump(1));
      const Error low = expect_error([&] { load_hf_config_file(path); });
      EXPECT_EQ(low.where(), path + ": " + field) << rc.field << ": " << low.what();
      EXPECT_EQ(low.expected(), rc.expected) << rc.field;
    }
  }
}

TEST(ConfigRanges, RelationsNameTheFieldAndItsBound) {
  // Within each field's own range, above the config's count: 9 of 8 experts, 33 of 32 KV heads
  // (Mixtral); nested in Llama 4's text_config: 17 of 16 experts.
  json c = mixtral();
  c["num_experts_per_tok"] = 9;
  Error e = expect_error([&] { parse_hf_config_text(c.dump(), "/m/config.json"); });
  EXPECT_EQ(e.where(), "/m/config.json: num_experts_per_tok") << e.what();
  EXPECT_EQ(e.expected(), "an integer from 1 to 8 (num_local_experts)");
  json l = {{"model_type", "llama4"}, {"text_config", llama4_text()}};
  l["text_config"]["num_experts_per_tok"] = 17;
  e = expect_error([&] { parse_hf_config_text(l.dump(), "/m/config.json"); });
  EXPECT_EQ(e.where(), "/m/config.json: text_config.num_experts_per_tok") << e.what();
  EXPECT_EQ(e.expected(), "an integer from 1 to 16 (text_config.num_local_experts)");
  // Falcon's new architecture writes KV heads as num_kv_heads: more than the heads is named so.
  const json falcon = {{"model_type", "falcon"}, {"hidden_size", 64}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                       {"vocab_size", 10}, {"new_decoder_architecture", true}, {"num_kv_heads", 8}};
  e = expect_error([&] { parse_hf_config_text(falcon.dump(), "/f/config.json"); });
  EXPECT_EQ(e.where(), "/f/config.json: num_kv_heads") << e.what();
}

TEST(ConfigRanges, AliasKeysAreNamedAsWritten) {
  // GPT-2 writes n_layer / n_embd / n_positions: the error names those, not Llama's names.
  const json gpt2 = {{"model_type", "gpt2"}, {"n_embd", 8}, {"n_layer", 1000000}, {"n_head", 2},
                     {"vocab_size", 10}, {"n_positions", 16}};
  const Error e = expect_error([&] { parse_hf_config_text(gpt2.dump(), "/g/config.json"); });
  EXPECT_EQ(e.where(), "/g/config.json: n_layer") << e.what();
  EXPECT_EQ(e.expected(), "an integer from 1 to 10000");
}

TEST(ConfigRanges, DuplicateKeyInTextConfigIsNamedDotted) {
  const Error dup = expect_error([] {
    parse_hf_config_text(R"({"model_type": "llama4", "text_config": {"hidden_size": 8, "hidden_size": 16}})", "config.json");
  });
  EXPECT_EQ(dup.where(), "config.json: text_config.hidden_size") << dup.what();
}

TEST(ConfigRanges, Llama4NoRopeLayersIsOneFlagPerLayer) {
  // Llama4TextConfig.no_rope_layers: 1 = RoPE (chunked attention), 0 = no RoPE, one per layer.
  // A one-entry list was indexed past its end for the other 47 layers (undefined behaviour) and
  // a 0 was refused as "size must be positive".
  json l = {{"model_type", "llama4"}, {"text_config", llama4_text()}};
  l["text_config"]["attention_chunk_size"] = 8192;
  l["text_config"]["no_rope_layers"] = json::array({1});
  Error e = expect_error([&] { parse_hf_config_text(l.dump(), "/m/config.json"); });
  EXPECT_EQ(e.where(), "/m/config.json: text_config.no_rope_layers") << e.what();
  EXPECT_EQ(e.message(), "1 entries for 48 layers");
  json flags = json::array();
  for (int i = 0; i < 48; ++i) flags.push_back((i + 1) % 4 != 0 ? 1 : 0);  // the default rule, written out
  l["text_config"]["no_rope_layers"] = flags;
  const ModelArch written = parse_hf_config_text(l.dump(), "/m/config.json");
  l["text_config"].erase("no_rope_layers");
  const ModelArch by_default = parse_hf_config_text(l.dump(), "/m/config.json");
  EXPECT_EQ(written.layer_uses_sliding_window, by_default.layer_uses_sliding_window);
  EXPECT_EQ(std::count(written.layer_uses_sliding_window.begin(), written.layer_uses_sliding_window.end(), true), 36);
  flags[5] = 2;
  l["text_config"]["no_rope_layers"] = flags;
  e = expect_error([&] { parse_hf_config_text(l.dump(), "/m/config.json"); });
  EXPECT_EQ(e.where(), "/m/config.json: text_config.no_rope_layers[5]") << e.what();
}

// MPT's expansion_ratio (the feed-forward width as a multiple of d_model) had no bound: 2^52
// times d_model 4096 is 2^64, which wrapped the int64 width to 0 (refused later as
// "build_layer_geometry: intermediate_size is 0", no field named), and 4e12 was refused as a
// derived "intermediate_size" the file does not have. Each is named at expansion_ratio.
TEST(ConfigRanges, MptExpansionRatioIsBoundedAndNamed) {
  // data/models-like MPT-7B fields (d_model 4096, expansion_ratio 4: Mpt7bPublishedCount).
  json c = {{"model_type", "mpt"}, {"d_model", 4096}, {"n_layers", 32}, {"n_heads", 32}, {"vocab_size", 50432},
            {"max_seq_len", 2048}, {"expansion_ratio", 4}};
  EXPECT_NO_THROW(parse_hf_config_text(c.dump(), "/m/config.json"));
  for (const std::int64_t huge : {std::int64_t{4503599627370496}, std::int64_t{4000000000000}, std::int64_t{10001}}) {
    c["expansion_ratio"] = huge;  // 2^52, 4e12, and just above the bound 1e4 (kKeyRanges, as Mamba's expand)
    const Error e = expect_error([&] { parse_hf_config_text(c.dump(), "/m/config.json"); });
    EXPECT_EQ(e.where(), "/m/config.json: expansion_ratio") << e.what();
    EXPECT_EQ(e.message(), std::to_string(huge) + " is outside the physical range");
    EXPECT_EQ(e.expected(), "an integer from 1 to 10000");
  }
  for (const std::int64_t low : {-4, 0}) {
    c["expansion_ratio"] = low;
    EXPECT_EQ(error_where(c), "config.json: expansion_ratio") << low;
  }
  // Within 1e4, but the width beyond intermediate_size's 1e7: 2442 × 4096 = 10,002,432 > 1e7;
  // the largest ratio is floor(1e7 / 4096) = 2441 (2441 × 4096 = 9,998,336).
  c["expansion_ratio"] = 2442;
  const Error wide = expect_error([&] { parse_hf_config_text(c.dump(), "/m/config.json"); });
  EXPECT_EQ(wide.where(), "/m/config.json: expansion_ratio") << wide.what();
  EXPECT_EQ(wide.message(), "2442 × d_model 4096 = 10002432 is outside the physical range of the feed-forward width");
  EXPECT_EQ(wide.expected(), "an integer from 1 to 2441 (expansion_ratio × d_model at most 10000000)");
  c["expansion_ratio"] = 2441;
  EXPECT_NO_THROW(parse_hf_config_text(c.dump(), "/m/config.json"));
}

TEST(ConfigRanges, BundledLargestModelsStayAccepted) {
  json c = mixtral();
  EXPECT_NO_THROW(parse_hf_config_text(c.dump(), "config.json"));
}

TEST(ConfigStrictJson, DuplicateKeyAndHugeNumberAreErrorsWithPlaces) {
  const Error dup = expect_error([] {
    parse_hf_config_text(R"({"model_type": "llama", "hidden_size": 8, "hidden_size": 4096})", "config.json");
  });
  EXPECT_EQ(dup.where(), "config.json: hidden_size") << dup.what();
  const Error big = expect_error([] { parse_hf_config_text("{\"hidden_size\": 1e400}", "config.json"); });
  EXPECT_EQ(big.where(), "config.json: hidden_size") << big.what();
  EXPECT_NE(std::string(big.what()).find("at line:column 1:17"), std::string::npos) << big.what();
}

}  // namespace
}  // namespace gpuplan
