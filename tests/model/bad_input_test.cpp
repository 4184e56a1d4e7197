// Bad input: each error names the file and place (file:line:col or the dotted field path) and what was expected.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.hpp"
#include "model/model_source.hpp"
#include "test_util.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;
using testing::expect_error;
using testing::TempDir;

const char* kTiny = R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
  "intermediate_size": 16, "vocab_size": 10})";

TEST(BadConfig, MalformedJsonGivesFileLineColumn) {
  TempDir dir("malformed");
  // Line 3, column 8 is the ',' where a value should be.
  const std::string path = dir.write("config.json", "{\n  \"hidden_size\": 8,\n  \"x\": ,\n}\n");
  const Error e = expect_error([&] { load_hf_config_file(path); });
  EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
  EXPECT_EQ(e.where(), path + ":3:8") << e.what();
}

TEST(BadConfig, MissingFileIsNotFound) {
  const Error e = expect_error([] { load_hf_config_file("/nonexistent/config.json"); });
  EXPECT_EQ(e.kind(), ErrorKind::not_found);
  EXPECT_EQ(e.where(), "/nonexistent/config.json");
}

TEST(BadConfig, MissingFieldNamesTheField) {
  json c = json::parse(kTiny);
  c.erase("num_attention_heads");
  const Error e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: num_attention_heads");
  EXPECT_EQ(e.message(), "missing field");
}

TEST(BadConfig, WrongTypeNamesTheField) {
  json c = json::parse(kTiny);
  c["hidden_size"] = "eight";
  const Error e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: hidden_size");
  EXPECT_EQ(e.expected(), "an integer");
}

TEST(BadConfig, NestedFieldUsesFullPointer) {
  const json c = json::parse(R"({"model_type": "llama4", "text_config": {"num_hidden_layers": 2}})");
  const Error e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: text_config.hidden_size");
}

TEST(BadConfig, NegativeAndZeroSizes) {
  json c = json::parse(kTiny);
  c["num_hidden_layers"] = -2;
  Error e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: num_hidden_layers");
  EXPECT_EQ(e.expected(), "an integer from 1 to 10000");  // its physical range (hf_config.cpp kKeyRanges)

  c = json::parse(kTiny);
  c["vocab_size"] = 0;
  e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: vocab_size");
}

TEST(BadConfig, KvHeadsMustDivideHeads) {
  json c = json::parse(kTiny);
  c["num_key_value_heads"] = 3;
  const Error e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: num_key_value_heads");
}

TEST(BadConfig, UnknownModelTypeListsSupported) {
  json c = json::parse(kTiny);
  c["model_type"] = "rwkv";  // RWKV: no reader (recurrent, not attention)
  const Error e = expect_error([&] { parse_hf_config(c, "cfg.json"); });
  EXPECT_EQ(e.where(), "cfg.json: model_type");
  EXPECT_NE(e.message().find("rwkv"), std::string::npos);
  for (const char* t : {"llama", "qwen3_moe", "deepseek_v3", "gpt_oss", "mamba", "gpt_neox", "t5", "jamba", "FluxTransformer2DModel"}) {
    EXPECT_NE(e.expected().find(t), std::string::npos) << t;
  }
  c.erase("model_type");
  EXPECT_EQ(expect_error([&] { parse_hf_config(c, "cfg.json"); }).where(), "cfg.json: model_type");
}

TEST(BadConfig, NotAnObject) {
  EXPECT_EQ(expect_error([] { parse_hf_config(json::array(), "cfg.json"); }).kind(), ErrorKind::invalid_input);
}

TEST(BadSource, ExactlyOneSource) {
  ModelSource none;
  EXPECT_EQ(expect_error([&] { none.validate(); }).where(), "--model");
  ModelSource two;
  two.preset = "llama-3.1-8b";
  two.params = 7e9;
  const Error e = expect_error([&] { two.validate(); });
  EXPECT_NE(e.message().find("more than one"), std::string::npos);
}

TEST(BadSource, AbsurdParamCounts) {
  for (double n : {0.0, -7e9, 2e14, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    ModelSource s;
    s.params = n;
    const Error e = expect_error([&] { resolve_model(s); });
    EXPECT_EQ(e.where(), "--params") << n;
  }
}

TEST(BadSource, ShapeFlagsOnlyWithParams) {
  ModelSource s;
  s.preset = "llama-3.1-8b";
  s.layers = 16;
  EXPECT_EQ(expect_error([&] { s.validate(); }).where(), "--layers");
  ModelSource neg;
  neg.params = 7e9;
  neg.hidden = -4096;
  EXPECT_EQ(expect_error([&] { neg.validate(); }).where(), "--hidden");
}

TEST(BadSource, InconsistentShapeFlags) {
  ModelSource s;
  s.params = 7e9;
  s.hidden = 4096;
  s.heads = 30;  // 4096 % 30 != 0
  EXPECT_EQ(expect_error([&] { resolve_model(s); }).where(), "--heads");
  ModelSource small;
  small.params = 1e6;  // the default shape (V = 32000, h = 128) alone has 2·32000·128 = 8.2M parameters
  EXPECT_EQ(expect_error([&] { resolve_model(small); }).where(), "--params");
}

}  // namespace
}  // namespace gpuplan
