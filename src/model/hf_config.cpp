#include "model/hf_config.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/param_count.hpp"
#include "util/csv.hpp"
#include "util/text_check.hpp"
#include "util/error.hpp"
#include "util/text_position.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;

constexpr std::int64_t k1e4 = 10'000, k1e5 = 100'000, k1e6 = 1'000'000, k1e7 = 10'000'000, k1e8 = 100'000'000,
                       k1e9 = 1'000'000'000;

/// Physical range of an integer config.json field, by its key as HF configs write it (the aliases
/// of one quantity share a bound: GPT-2's n_layer is Llama's num_hidden_layers). Checked as the
/// field is read, before any reader multiplies it (issue 11: an intermediate_size of 2^53+1
/// printed 2.39B parameters, num_hidden_layers 1e12 wrapped the int64 count). Each bound is far
/// above every published model (largest today: ~2e12 parameters, 256k vocabulary, 16k-wide
/// layers, 384 experts) and low enough that the counting formulas in param_count.cpp stay inside
/// int64 (check_physical_ranges bounds their sum). Relations (experts per token <= experts, KV
/// heads <= heads) and derived values are checked by check_physical_ranges.
struct KeyRange {
  std::string_view key;
  std::int64_t lo;
  std::int64_t hi;
};
constexpr KeyRange kKeyRanges[] = {
    // layers
    {"num_hidden_layers", 1, k1e4}, {"n_layer", 1, k1e4}, {"n_layers", 1, k1e4}, {"num_layers", 1, k1e4},
    {"num_decoder_layers", 1, k1e4},
    // hidden size
    {"hidden_size", 1, k1e6}, {"n_embd", 1, k1e6}, {"n_embed", 1, k1e6}, {"d_model", 1, k1e6},
    // attention heads, KV heads, head width
    {"num_attention_heads", 1, k1e5}, {"n_head", 1, k1e5}, {"n_heads", 1, k1e5}, {"num_heads", 1, k1e5},
    {"num_key_value_heads", 1, k1e5}, {"num_kv_heads", 1, k1e5}, {"n_head_kv", 1, k1e5}, {"kv_n_heads", 1, k1e5},
    {"head_dim", 1, k1e5}, {"d_kv", 1, k1e5},
    // experts
    {"num_experts", 1, k1e5}, {"num_local_experts", 1, k1e5}, {"n_routed_experts", 1, k1e5},
    {"num_experts_per_tok", 1, k1e5}, {"experts_per_token", 1, k1e5}, {"n_shared_experts", 0, k1e4},
    {"first_k_dense_replace", 0, k1e4}, {"interleave_moe_layer_step", 1, k1e4}, {"moe_layer_freq", 1, k1e4},
    // vocabulary, positions, windows
    {"vocab_size", 1, k1e8},
    {"max_position_embeddings", 0, k1e9}, {"n_positions", 0, k1e9}, {"max_seq_len", 0, k1e9}, {"seq_length", 0, k1e9},
    {"sliding_window", 1, k1e9}, {"attention_chunk_size", 1, k1e9},
    // feed-forward widths
    {"intermediate_size", 0, k1e7}, {"n_inner", 0, k1e7}, {"ffn_dim", 0, k1e7}, {"ffn_hidden_size", 0, k1e7},
    {"d_ff", 0, k1e7}, {"moe_intermediate_size", 0, k1e7}, {"shared_expert_intermediate_size", 0, k1e7},
    {"intermediate_size_mlp", 0, k1e7},
    // MPT's feed-forward width as a multiple of d_model (4 in every MPT config; Mamba's expand
    // has the same bound): bounded here so that expansion_ratio × d_model cannot overflow int64
    // (a ratio of 2^52 times d_model 4096 wrapped to a width of 0); parse_mpt bounds the product.
    {"expansion_ratio", 1, k1e4},
    // multi-head latent attention (DeepSeek)
    {"q_lora_rank", 1, k1e6}, {"kv_lora_rank", 0, k1e6}, {"qk_nope_head_dim", 0, k1e5}, {"qk_rope_head_dim", 0, k1e5},
    {"v_head_dim", 0, k1e5},
    // state space (Mamba; Jamba's mamba_ names)
    {"state_size", 0, k1e5}, {"mamba_d_state", 0, k1e5}, {"conv_kernel", 0, k1e4}, {"mamba_d_conv", 0, k1e4},
    {"expand", 0, k1e4}, {"mamba_expand", 0, k1e4}, {"time_step_rank", 0, k1e6}, {"mamba_dt_rank", 0, k1e6},
};

const KeyRange* key_range(std::string_view key) {
  for (const auto& r : kKeyRanges)
    if (r.key == key) return &r;
  return nullptr;
}

std::string range_text(std::int64_t lo, std::int64_t hi) { return fmt::format("an integer from {} to {}", lo, hi); }

/// Integer keys a reader took a value from: key → its place ("text_config.num_experts_per_tok"),
/// first read wins. check_physical_ranges names a relation's or a derived value's field from it.
using FieldLog = std::map<std::string, std::string, std::less<>>;

/// Typed, strict access to one JSON object of a config, naming fields by their dotted path in
/// errors ("config.json: text_config.hidden_size", util/text_check.hpp JsonPlaceStyle::dotted).
/// A key that is present with value null counts as absent (HF configs write null for "not set").
class Fields {
 public:
  Fields(const json& obj, std::string source, std::string prefix, FieldLog* log = nullptr)
      : obj_(obj), source_(std::move(source)), prefix_(std::move(prefix)), log_(log) {}

  std::string place(std::string_view key) const { return json_place_key(prefix_, key, JsonPlaceStyle::dotted); }
  std::string where(std::string_view key) const { return fmt::format("{}: {}", source_, place(key)); }
  std::string where_index(std::string_view key, std::size_t i) const {
    return fmt::format("{}: {}", source_, json_place_index(place(key), i, JsonPlaceStyle::dotted));
  }
  const std::string& source() const { return source_; }
  const std::string& prefix() const { return prefix_; }
  /// The same object without the log (a vision tower's fields are not the text model's).
  Fields unlogged() const { return Fields(obj_, source_, prefix_, nullptr); }

  bool has(std::string_view key) const {
    auto it = obj_.find(key);
    return it != obj_.end() && !it->is_null();
  }
  /// Why a required `key` has no value: absent, or present as null (JSON null, or Python's NaN / Infinity, which
  /// python_float_constants_as_null reads as null).
  std::string missing_text(std::string_view key) const {
    return obj_.find(key) != obj_.end() ? "null, not a value (JSON null; Python's NaN and Infinity read as null)"
                                        : "missing field";
  }
  const json* get(std::string_view key) const {
    auto it = obj_.find(key);
    return (it == obj_.end() || it->is_null()) ? nullptr : &*it;
  }

  std::optional<std::int64_t> opt_int(std::string_view key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    long double value = 0;  // exact for every int64 and every double that is a whole number
    if (v->is_number_unsigned()) {
      value = static_cast<long double>(v->get<std::uint64_t>());
    } else if (v->is_number_integer()) {
      value = static_cast<long double>(v->get<std::int64_t>());
    } else if (v->is_number_float() && std::isfinite(v->get<double>()) && v->get<double>() == std::floor(v->get<double>())) {
      value = v->get<double>();  // 2048.0 is an integer written as a float; 2048.5 is not; 1e12 is (out of range)
    } else {
      throw_invalid(where(key), fmt::format("field has the wrong type ({})", v->dump()), "an integer");
    }
    if (const KeyRange* r = key_range(key)) {
      if (value < static_cast<long double>(r->lo) || value > static_cast<long double>(r->hi))
        throw_invalid(where(key), fmt::format("{} is outside the physical range", v->dump()), range_text(r->lo, r->hi));
    } else if (v->is_number_float() ? std::fabs(value) >= 9e15L : value > static_cast<long double>(INT64_MAX)) {
      throw_invalid(where(key), fmt::format("field has the wrong type ({})", v->dump()), "an integer");
    }
    if (log_) log_->emplace(std::string(key), place(key));
    return static_cast<std::int64_t>(value);
  }
  std::int64_t req_int(std::string_view key) const {
    auto v = opt_int(key);
    if (!v) throw_invalid(where(key), missing_text(key), "an integer");
    return *v;
  }
  /// Sizes: must be > 0.
  std::optional<std::int64_t> opt_pos(std::string_view key) const {
    auto v = opt_int(key);
    if (v && *v <= 0) throw_invalid(where(key), fmt::format("size must be positive, got {}", *v), "a positive integer");
    return v;
  }
  std::int64_t req_pos(std::string_view key) const {
    auto v = opt_pos(key);
    if (!v) throw_invalid(where(key), missing_text(key), "a positive integer");
    return *v;
  }
  /// Counts that may be zero (e.g. first_k_dense_replace).
  std::int64_t opt_nonneg(std::string_view key, std::int64_t dflt) const {
    auto v = opt_int(key);
    if (!v) return dflt;
    if (*v < 0) throw_invalid(where(key), fmt::format("must not be negative, got {}", *v), "an integer >= 0");
    return *v;
  }
  /// First of several alias keys that is present (GPT-2 n_embd / hidden_size ...).
  std::int64_t req_pos_any(std::initializer_list<std::string_view> keys) const {
    for (auto k : keys) {
      if (has(k)) return req_pos(k);
    }
    throw_invalid(where(*keys.begin()), "missing field", "a positive integer");
  }
  std::optional<std::int64_t> opt_pos_any(std::initializer_list<std::string_view> keys) const {
    for (auto k : keys) {
      if (has(k)) return req_pos(k);
    }
    return std::nullopt;
  }
  bool opt_bool(std::string_view key, bool dflt) const {
    const json* v = get(key);
    if (!v) return dflt;
    if (!v->is_boolean()) throw_invalid(where(key), fmt::format("field has the wrong type ({})", v->dump()), "true or false");
    return v->get<bool>();
  }
  std::string opt_string(std::string_view key, std::string dflt = {}) const {
    const json* v = get(key);
    if (!v) return dflt;
    if (!v->is_string()) throw_invalid(where(key), fmt::format("field has the wrong type ({})", v->dump()), "a string");
    return v->get<std::string>();
  }
  std::string req_string(std::string_view key) const {
    if (!has(key)) throw_invalid(where(key), missing_text(key), "a string");
    return opt_string(key);
  }
  /// A list of positive integers, or a single integer repeated `n` times (diffusers allows both).
  std::vector<std::int64_t> int_list_or_scalar(std::string_view key, std::size_t n) const {
    const json* v = get(key);
    if (!v) throw_invalid(where(key), missing_text(key), "an integer or a list of integers");
    std::vector<std::int64_t> out;
    if (v->is_number_integer()) {
      out.assign(n, v->get<std::int64_t>());
    } else if (v->is_array()) {
      for (std::size_t i = 0; i < v->size(); ++i) {
        const json& e = (*v)[i];
        if (!e.is_number_integer()) throw_invalid(where_index(key, i), "not an integer", "an integer");
        out.push_back(e.get<std::int64_t>());
      }
    } else {
      throw_invalid(where(key), fmt::format("field has the wrong type ({})", v->dump()), "an integer or a list of integers");
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] <= 0) throw_invalid(where(key), fmt::format("size must be positive, got {}", out[i]), "positive integers");
    }
    return out;
  }
  std::vector<std::string> string_list(std::string_view key) const {
    const json* v = get(key);
    if (!v) throw_invalid(where(key), missing_text(key), "a list of strings");
    if (!v->is_array()) throw_invalid(where(key), fmt::format("field has the wrong type ({})", v->dump()), "a list of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) throw_invalid(where_index(key, i), "not a string", "a string");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }
  /// Sub-object (text_config, vision_config); nullopt when absent.
  std::optional<Fields> object(std::string_view key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_object()) throw_invalid(where(key), "field has the wrong type", "a JSON object");
    return Fields(*v, source_, place(key), log_);
  }

 private:
  const json& obj_;
  std::string source_;
  std::string prefix_;
  FieldLog* log_;
};


std::string dtype_of(const Fields& f) {
  std::string d = f.opt_string("torch_dtype");
  if (d.empty()) d = f.opt_string("dtype");  // transformers >= 4.56 writes "dtype"
  return d;
}

/// Fields every llama-like decoder shares. head_dim defaults to hidden/heads (HF LlamaConfig).
void read_common_decoder(const Fields& f, ModelArch& a, bool tie_default) {
  a.hidden_size = f.req_pos("hidden_size");
  a.num_layers = f.req_pos("num_hidden_layers");
  a.num_attention_heads = f.req_pos("num_attention_heads");
  a.num_kv_heads = f.opt_pos("num_key_value_heads").value_or(a.num_attention_heads);
  if (a.num_attention_heads % a.num_kv_heads != 0) {
    throw_invalid(f.where("num_key_value_heads"),
                  fmt::format("{} KV heads do not divide {} attention heads", a.num_kv_heads, a.num_attention_heads),
                  "a divisor of num_attention_heads");
  }
  if (auto hd = f.opt_pos("head_dim")) {
    a.head_dim = *hd;
  } else {
    if (a.hidden_size % a.num_attention_heads != 0) {
      throw_invalid(f.where("num_attention_heads"), "hidden_size is not a multiple of num_attention_heads and head_dim is not given",
                    "head_dim, or heads dividing hidden_size");
    }
    a.head_dim = a.hidden_size / a.num_attention_heads;
  }
  a.vocab_size = f.req_pos("vocab_size");
  a.max_position_embeddings = f.opt_pos("max_position_embeddings").value_or(0);
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", tie_default);
  a.torch_dtype = dtype_of(f);
  a.hidden_act = f.opt_string("hidden_act");
  if (a.hidden_act.empty()) a.hidden_act = f.opt_string("hidden_activation");  // Gemma
}

void set_all_layers_sliding(ModelArch& a, std::int64_t window) {
  a.sliding_window = window;
  a.layer_uses_sliding_window.assign(static_cast<std::size_t>(a.num_layers), true);
}

/// transformers >= 4.53 writes the per-layer attention kind as layer_types
/// ("sliding_attention" / "full_attention" / "chunked_attention"); it wins over family rules.
bool read_layer_types(const Fields& f, ModelArch& a) {
  if (!f.has("layer_types")) return false;
  auto types = f.string_list("layer_types");
  if (static_cast<std::int64_t>(types.size()) != a.num_layers) {
    throw_invalid(f.where("layer_types"), fmt::format("{} entries for {} layers", types.size(), a.num_layers),
                  "one entry per layer");
  }
  std::vector<bool> sliding;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const auto& t = types[i];
    if (t == "sliding_attention" || t == "chunked_attention") {
      sliding.push_back(true);
    } else if (t == "full_attention") {
      sliding.push_back(false);
    } else {
      throw_invalid(f.where_index("layer_types", i), fmt::format("unknown layer type '{}'", t),
                    "sliding_attention, chunked_attention or full_attention");
    }
  }
  if (std::find(sliding.begin(), sliding.end(), true) == sliding.end()) return true;
  auto window = f.opt_pos("sliding_window");
  if (!window) window = f.opt_pos("attention_chunk_size");
  if (!window) throw_invalid(f.where("sliding_window"), "layer_types has sliding layers but no window size", "a positive integer");
  a.sliding_window = *window;
  a.layer_uses_sliding_window = std::move(sliding);
  return true;
}

void add_moe_layers_count(ModelArch& a) {
  // num_moe_layers is set by the family readers; dense layers use intermediate_size.
  if (a.moe && a.moe->num_moe_layers > a.num_layers) a.moe->num_moe_layers = a.num_layers;
}

/// Generic ViT vision tower (SigLIP / CLIP-like encoder): patch conv (C·p²·h + h), learned positions
/// ((image/p)²·h), per layer q/k/v/o with biases 4(h²+h), MLP h·I+I + I·h+h, two LayerNorms 4h, final
/// LayerNorm 2h; plus a projector vision_h·text_h. Approximate for towers with extra adapters (Llama 4).
std::int64_t count_vision_tower(const Fields& v, std::int64_t text_hidden) {
  const std::int64_t h = v.req_pos("hidden_size");
  const std::int64_t I = v.req_pos("intermediate_size");
  const std::int64_t L = v.req_pos("num_hidden_layers");
  const std::int64_t p = v.req_pos("patch_size");
  const std::int64_t img = v.req_pos("image_size");
  const std::int64_t c = v.opt_pos("num_channels").value_or(3);
  const std::int64_t patches = (img / p) * (img / p);
  std::int64_t n = c * p * p * h + h + patches * h;
  n += L * (4 * (h * h + h) + h * I + I + I * h + h + 4 * h);
  n += 2 * h;
  n += h * text_hidden;
  return n;
}

// ---- decoder families ---------------------------------------------------------------------------

void parse_llama(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  // LlamaAttention: q/k/v/o all take bias=config.attention_bias.
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  a.mlp_bias = f.opt_bool("mlp_bias", false);
  read_layer_types(f, a);
}

void parse_mistral(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  if (!read_layer_types(f, a)) {
    if (auto w = f.opt_pos("sliding_window")) set_all_layers_sliding(a, *w);  // Mistral v0.1: every layer
  }
}

void parse_mixtral(const Fields& f, ModelArch& a) {
  parse_mistral(f, a);
  MoeSpec m;
  m.num_routed_experts = f.req_pos("num_local_experts");
  m.experts_per_token = f.req_pos("num_experts_per_tok");
  m.expert_intermediate_size = a.intermediate_size;  // MixtralBlockSparseTop2MLP uses intermediate_size
  m.num_moe_layers = a.num_layers;
  a.moe = m;
}

void qwen_sliding(const Fields& f, ModelArch& a) {
  if (read_layer_types(f, a)) return;
  // Qwen2Attention: sliding only when use_sliding_window and layer_idx >= max_window_layers.
  if (!f.opt_bool("use_sliding_window", false)) return;
  auto w = f.opt_pos("sliding_window");
  if (!w) return;
  const std::int64_t first = f.opt_nonneg("max_window_layers", 0);
  a.sliding_window = *w;
  a.layer_uses_sliding_window.clear();
  for (std::int64_t i = 0; i < a.num_layers; ++i) a.layer_uses_sliding_window.push_back(i >= first);
}

/// Qwen2/3-MoE layer rule: layer i is MoE iff i not in mlp_only_layers and (i+1) % decoder_sparse_step == 0.
std::int64_t qwen_moe_layers(const Fields& f, std::int64_t L) {
  const std::int64_t step = f.opt_pos("decoder_sparse_step").value_or(1);
  std::vector<std::int64_t> mlp_only;
  if (const json* v = f.get("mlp_only_layers")) {
    if (!v->is_array()) throw_invalid(f.where("mlp_only_layers"), "wrong type", "a list of layer indices");
    for (const auto& e : *v) {
      if (!e.is_number_integer()) throw_invalid(f.where("mlp_only_layers"), "not an integer", "a list of layer indices");
      mlp_only.push_back(e.get<std::int64_t>());
    }
  }
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < L; ++i) {
    bool only = std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end();
    if (!only && (i + 1) % step == 0) ++n;
  }
  return n;
}

void parse_qwen2(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = true;  // Qwen2Attention: q/k/v bias=True, o_proj bias=False (hard-coded)
  a.attention_output_bias = false;
  qwen_sliding(f, a);
}

void parse_qwen2_moe(const Fields& f, ModelArch& a) {
  parse_qwen2(f, a);
  MoeSpec m;
  m.num_routed_experts = f.req_pos("num_experts");
  m.experts_per_token = f.req_pos("num_experts_per_tok");
  m.expert_intermediate_size = f.req_pos("moe_intermediate_size");
  if (auto s = f.opt_pos("shared_expert_intermediate_size")) {
    m.num_shared_experts = 1;
    m.shared_intermediate_size = *s;
  }
  m.num_moe_layers = qwen_moe_layers(f, a.num_layers);
  a.moe = m;
  a.moe->shared_expert_gate = m.num_shared_experts > 0;  // shared_expert_gate: Linear(h, 1) per MoE layer
}

void parse_qwen3(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  a.qk_norm = true;  // Qwen3Attention q_norm / k_norm: RMSNorm(head_dim)
  qwen_sliding(f, a);
}

void parse_qwen3_moe(const Fields& f, ModelArch& a) {
  parse_qwen3(f, a);
  MoeSpec m;
  m.num_routed_experts = f.req_pos("num_experts");
  m.experts_per_token = f.req_pos("num_experts_per_tok");
  m.expert_intermediate_size = f.req_pos("moe_intermediate_size");
  m.num_moe_layers = qwen_moe_layers(f, a.num_layers);
  a.moe = m;
}

/// Gemma family: tied embeddings by default; Gemma 2/3 have 4 norms per layer (pre/post attention and
/// pre/post feed-forward); Gemma 2 alternates sliding (even layers) and global; Gemma 3 uses 5 sliding : 1 global
/// (sliding_window_pattern 6) and q/k norms.
void parse_gemma(const Fields& f, ModelArch& a, int generation) {
  read_common_decoder(f, a, true);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  a.norm_kind = NormKind::gemma_rms_norm;
  if (generation >= 2) a.norms_per_layer = 4;
  if (generation >= 3) a.qk_norm = true;
  if (read_layer_types(f, a) || generation < 2) return;
  auto w = f.opt_pos("sliding_window");
  if (!w) return;
  a.sliding_window = *w;
  a.layer_uses_sliding_window.clear();
  const std::int64_t pattern = generation == 2 ? 2 : f.opt_pos("sliding_window_pattern").value_or(6);
  for (std::int64_t i = 0; i < a.num_layers; ++i) {
    a.layer_uses_sliding_window.push_back(generation == 2 ? (i % 2 == 0) : ((i + 1) % pattern != 0));
  }
}

void parse_phi3(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");  // fused gate_up_proj = 2·h·I, down_proj I·h
  if (!read_layer_types(f, a)) {
    if (auto w = f.opt_pos("sliding_window")) set_all_layers_sliding(a, *w);
  }
}

/// Falcon (modeling_falcon.py): fused query_key_value h·(H + 2K)·d; K = num_kv_heads with
/// new_decoder_architecture, 1 with multi_query, else H. dense h·h; MLP h→ffn→h (plain, GELU, ffn 4h default);
/// biases on all linears when `bias`. LayerNorms: parallel_attn without the new architecture shares one
/// (input_layernorm); the new architecture has num_ln_in_parallel_attn (default 2); sequential has 2.
void parse_falcon(const Fields& f, ModelArch& a) {
  a.hidden_size = f.req_pos_any({"hidden_size", "n_embed"});
  a.num_layers = f.req_pos_any({"num_hidden_layers", "n_layer"});
  a.num_attention_heads = f.req_pos_any({"num_attention_heads", "n_head"});
  a.vocab_size = f.req_pos("vocab_size");
  const bool new_arch = f.opt_bool("new_decoder_architecture", false);
  const bool multi_query = f.opt_bool("multi_query", true);
  const bool parallel = f.opt_bool("parallel_attn", true);
  if (new_arch) {
    a.num_kv_heads = f.req_pos_any({"num_kv_heads", "n_head_kv"});
  } else {
    a.num_kv_heads = multi_query ? 1 : a.num_attention_heads;
  }
  if (a.hidden_size % a.num_attention_heads != 0) {
    throw_invalid(f.where("num_attention_heads"), "hidden_size is not a multiple of num_attention_heads", "heads dividing hidden_size");
  }
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.intermediate_size = f.opt_pos("ffn_hidden_size").value_or(4 * a.hidden_size);
  a.gated_mlp = false;
  const bool bias = f.opt_bool("bias", false);
  a.attention_bias = a.attention_output_bias = a.mlp_bias = bias;
  a.norm_bias = true;
  a.norm_kind = NormKind::layer_norm;
  a.hidden_act = f.opt_string("activation", "gelu");
  a.parallel_attention = parallel;
  if (new_arch) {
    a.norms_per_layer = f.opt_pos("num_ln_in_parallel_attn").value_or(2);
  } else {
    a.norms_per_layer = parallel ? 1 : 2;
  }
  if (f.opt_bool("alibi", false)) a.position_encoding = PositionEncoding::alibi;
  a.max_position_embeddings = f.opt_pos("max_position_embeddings").value_or(2048);  // FalconConfig default
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
}

/// GPT-2 (modeling_gpt2.py): wte V·h, wpe n_positions·h; per layer ln_1, c_attn (Conv1D h→3h + bias),
/// c_proj (h→h + bias), ln_2, mlp c_fc (h→4h + bias), c_proj (4h→h + bias); ln_f; lm_head tied.
void parse_gpt2(const Fields& f, ModelArch& a) {
  a.hidden_size = f.req_pos_any({"n_embd", "hidden_size"});
  a.num_layers = f.req_pos_any({"n_layer", "num_hidden_layers"});
  a.num_attention_heads = f.req_pos_any({"n_head", "num_attention_heads"});
  a.num_kv_heads = a.num_attention_heads;
  if (a.hidden_size % a.num_attention_heads != 0) {
    throw_invalid(f.where("n_head"), "n_embd is not a multiple of n_head", "heads dividing n_embd");
  }
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.vocab_size = f.req_pos("vocab_size");
  a.intermediate_size = f.opt_pos("n_inner").value_or(4 * a.hidden_size);
  a.max_position_embeddings = f.req_pos_any({"n_positions", "max_position_embeddings"});
  a.learned_positions = a.max_position_embeddings;
  a.position_encoding = PositionEncoding::learned;
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = a.mlp_bias = true;
  a.norm_bias = true;
  a.norm_kind = NormKind::layer_norm;
  a.hidden_act = f.opt_string("activation_function", "gelu_new");
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
}

/// OPT (modeling_opt.py): embed_tokens V·p (p = word_embed_proj_dim), learned positions (max+2)·h
/// (OPTLearnedPositionalEmbedding offset 2), project_in/out p·h each when p != h, q/k/v/o with bias
/// (enable_bias), fc1/fc2 (ffn_dim) with bias, two LayerNorms per layer, a final LayerNorm when
/// do_layer_norm_before and not _remove_final_layer_norm; lm_head V·p tied.
void parse_opt(const Fields& f, ModelArch& a) {
  a.hidden_size = f.req_pos("hidden_size");
  a.num_layers = f.req_pos("num_hidden_layers");
  a.num_attention_heads = f.req_pos("num_attention_heads");
  a.num_kv_heads = a.num_attention_heads;
  if (a.hidden_size % a.num_attention_heads != 0) {
    throw_invalid(f.where("num_attention_heads"), "hidden_size is not a multiple of num_attention_heads", "heads dividing hidden_size");
  }
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.vocab_size = f.req_pos("vocab_size");
  a.intermediate_size = f.req_pos("ffn_dim");
  a.max_position_embeddings = f.req_pos("max_position_embeddings");
  a.learned_positions = a.max_position_embeddings + 2;
  a.position_encoding = PositionEncoding::learned;
  a.gated_mlp = false;
  const bool bias = f.opt_bool("enable_bias", true);
  a.attention_bias = a.attention_output_bias = a.mlp_bias = bias;
  a.norm_bias = f.opt_bool("layer_norm_elementwise_affine", true);
  a.norm_kind = a.norm_bias ? NormKind::layer_norm : NormKind::non_parametric;
  a.hidden_act = f.opt_string("activation_function", "relu");
  a.final_norm = f.opt_bool("do_layer_norm_before", true) && !f.opt_bool("_remove_final_layer_norm", false);
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
  const std::int64_t proj = f.opt_pos("word_embed_proj_dim").value_or(a.hidden_size);
  if (proj != a.hidden_size) {
    // Token table and head are V·p, not V·h; project_in p→h and project_out h→p (no bias).
    a.embedding_width = proj;
    LinearFamily in;
    in.name = "project_in";
    in.role = LinearRole::projection;
    in.bucket = ParamBucket::other;
    in.d_in = proj;
    in.d_out = a.hidden_size;
    LinearFamily out = in;
    out.name = "project_out";
    std::swap(out.d_in, out.d_out);
    a.extra_linears.push_back(in);
    a.extra_linears.push_back(out);
    a.notes.push_back(fmt::format("word_embed_proj_dim {} != hidden_size: project_in/out counted in other", proj));
  }
}

/// BLOOM (modeling_bloom.py): word_embeddings V·h + word_embeddings_layernorm 2h; per layer
/// input_layernorm, query_key_value h·3h + 3h, dense h·h + h, post_attention_layernorm, dense_h_to_4h h·4h + 4h,
/// dense_4h_to_h 4h·h + h; ln_f; ALiBi (no position parameters); lm_head tied.
void parse_bloom(const Fields& f, ModelArch& a) {
  a.hidden_size = f.req_pos_any({"n_embed", "hidden_size"});
  a.num_layers = f.req_pos_any({"n_layer", "num_hidden_layers"});
  a.num_attention_heads = f.req_pos_any({"n_head", "num_attention_heads"});
  a.num_kv_heads = a.num_attention_heads;
  if (a.hidden_size % a.num_attention_heads != 0) {
    throw_invalid(f.where("n_head"), "hidden size is not a multiple of the head count", "heads dividing n_embed");
  }
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.vocab_size = f.req_pos("vocab_size");
  a.intermediate_size = 4 * a.hidden_size;
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = a.mlp_bias = true;
  a.norm_bias = true;
  a.position_encoding = PositionEncoding::alibi;
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
  a.max_position_embeddings = f.opt_pos("seq_length").value_or(0);
  if (a.max_position_embeddings == 0) a.notes.push_back("ALiBi: the config states no context length (unknown)");
  a.norm_kind = NormKind::layer_norm;
  a.hidden_act = "gelu";
  a.extra_tensors.push_back({"word_embeddings_layernorm", ParamBucket::norms, 2 * a.hidden_size, 1});
}

/// DeepSeek-V2/V3: MLA attention, first_k_dense_replace dense layers (intermediate_size), then MoE layers
/// (layer i >= k and i % moe_layer_freq == 0) with n_routed_experts experts of moe_intermediate_size, one
/// shared MLP of width moe_intermediate_size·n_shared_experts, router E·h (+ E e_score_correction_bias with
/// topk_method noaux_tc). Multi-token prediction (num_nextn_predict_layers) is not in `params`: the published
/// 671B excludes it (DeepSeek-V3 README: "671B of the main model weights and 14B of the MTP module").
void parse_deepseek(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = f.opt_bool("attention_bias", false);
  MlaSpec mla;
  if (f.has("q_lora_rank")) mla.q_lora_rank = f.req_pos("q_lora_rank");
  mla.kv_lora_rank = f.req_pos("kv_lora_rank");
  mla.qk_nope_head_dim = f.req_pos("qk_nope_head_dim");
  mla.qk_rope_head_dim = f.req_pos("qk_rope_head_dim");
  mla.v_head_dim = f.req_pos("v_head_dim");
  a.mla = mla;
  a.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;  // q/k head width
  MoeSpec m;
  m.num_routed_experts = f.req_pos("n_routed_experts");
  m.experts_per_token = f.req_pos("num_experts_per_tok");
  m.expert_intermediate_size = f.req_pos("moe_intermediate_size");
  const std::int64_t shared = f.opt_nonneg("n_shared_experts", 0);
  if (shared > 0) {
    m.num_shared_experts = 1;
    m.shared_intermediate_size = m.expert_intermediate_size * shared;
  }
  m.first_dense_layers = f.opt_nonneg("first_k_dense_replace", 0);
  m.moe_layer_interval = f.opt_pos("moe_layer_freq").value_or(1);
  m.router_bias = f.opt_string("topk_method") == "noaux_tc";
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < a.num_layers; ++i) {
    if (i >= m.first_dense_layers && i % m.moe_layer_interval == 0) ++n;
  }
  m.num_moe_layers = n;
  a.moe = m;
  a.mtp_layers = f.opt_nonneg("num_nextn_predict_layers", 0);
}

/// gpt-oss (modeling_gpt_oss.py): q/k/v/o with bias, per-head attention sinks (H per layer), every layer
/// MoE: experts gate_up_proj h·2I + 2I bias, down_proj I·h + h bias; router h·E + E; layer_types for
/// sliding/full attention; untied head.
void parse_gpt_oss(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", true);
  MoeSpec m;
  m.num_routed_experts = f.req_pos("num_local_experts");
  m.experts_per_token = f.opt_pos_any({"num_experts_per_tok", "experts_per_token"}).value_or(4);
  m.expert_intermediate_size = a.intermediate_size;
  m.num_moe_layers = a.num_layers;
  m.router_bias = true;
  m.expert_bias = true;
  a.moe = m;
  a.extra_tensors.push_back({"self_attn.sinks", ParamBucket::attention, a.num_attention_heads, a.num_layers});
  if (!read_layer_types(f, a)) {
    if (auto w = f.opt_pos("sliding_window")) {
      a.sliding_window = *w;
      for (std::int64_t i = 0; i < a.num_layers; ++i) a.layer_uses_sliding_window.push_back(i % 2 == 0);
    }
  }
  if (f.has("quantization_config")) a.notes.push_back("checkpoint stores the experts in MXFP4 (quantization_config)");
}

/// Llama 4 text model (modeling_llama4.py): MoE layers from moe_layers, else every interleave_moe_layer_step-th
/// layer; experts (num_local_experts) and one shared expert of width intermediate_size; dense layers of width
/// intermediate_size_mlp; router h·E; QK norm is a parameter-free L2 norm; chunked attention
/// (attention_chunk_size) on RoPE layers (no_rope_layers[i] == 1; default all but every 4th) is recorded as
/// a sliding window.
void parse_llama4_text(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  const std::int64_t expert_width = f.req_pos("intermediate_size");
  a.intermediate_size = f.opt_pos("intermediate_size_mlp").value_or(expert_width);
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  MoeSpec m;
  m.num_routed_experts = f.req_pos("num_local_experts");
  m.experts_per_token = f.req_pos("num_experts_per_tok");
  m.expert_intermediate_size = expert_width;
  m.num_shared_experts = 1;
  m.shared_intermediate_size = expert_width;
  m.moe_layer_interval = f.opt_pos("interleave_moe_layer_step").value_or(1);
  if (f.has("moe_layers")) {
    m.num_moe_layers = static_cast<std::int64_t>(f.int_list_or_scalar("moe_layers", 1).size());
  } else {
    m.num_moe_layers = 0;
    for (std::int64_t i = m.moe_layer_interval - 1; i < a.num_layers; i += m.moe_layer_interval) ++m.num_moe_layers;
  }
  a.moe = m;
  if (!read_layer_types(f, a)) {
    if (auto chunk = f.opt_pos("attention_chunk_size")) {
      // One 0/1 flag per layer (Llama4TextConfig; empty = the default rule). Read as a size list
      // before, a 0 was refused and a list shorter than the layers was indexed past its end.
      std::vector<std::int64_t> rope_layers;
      if (const json* v = f.get("no_rope_layers")) {
        if (!v->is_array())
          throw_invalid(f.where("no_rope_layers"), fmt::format("field has the wrong type ({})", v->dump()), "a list of 0 or 1, one per layer");
        if (!v->empty() && static_cast<std::int64_t>(v->size()) != a.num_layers)
          throw_invalid(f.where("no_rope_layers"), fmt::format("{} entries for {} layers", v->size(), a.num_layers), "one entry per layer");
        for (std::size_t i = 0; i < v->size(); ++i) {
          const json& e = (*v)[i];
          if (!e.is_number_integer() || (e.get<std::int64_t>() != 0 && e.get<std::int64_t>() != 1))
            throw_invalid(f.where_index("no_rope_layers", i), fmt::format("{} is not 0 or 1", e.dump()), "0 (no RoPE) or 1 (RoPE)");
          rope_layers.push_back(e.get<std::int64_t>());
        }
      }
      a.sliding_window = *chunk;
      a.layer_uses_sliding_window.clear();
      for (std::int64_t i = 0; i < a.num_layers; ++i) {
        bool uses_rope = rope_layers.empty() ? ((i + 1) % 4 != 0) : rope_layers[static_cast<std::size_t>(i)] != 0;
        a.layer_uses_sliding_window.push_back(uses_rope);
      }
      a.notes.push_back(fmt::format("chunked attention ({} tokens) on RoPE layers recorded as a sliding window", *chunk));
    }
  }
}

/// Appends one family-specific matrix (geometry.hpp) to the arch.
void add_linear(ModelArch& a, std::string name, std::string target, LinearRole role, ParamBucket bucket, std::int64_t d_in,
                std::int64_t d_out, std::int64_t layers, bool bias) {
  LinearFamily l;
  l.name = std::move(name);
  l.lora_target = std::move(target);
  l.role = role;
  l.bucket = bucket;
  l.d_in = d_in;
  l.d_out = d_out;
  l.layers = layers;
  l.bias = bias;
  a.extra_linears.push_back(std::move(l));
}

/// Mamba-1 mixer (modeling_mamba.py MambaMixer) in `layers` blocks, counted in `other`: in_proj h·2I (+2I bias),
/// conv1d I·k (+I bias), x_proj I·(R + 2N), dt_proj R·I + I, A_log I·N, D I, out_proj I·h (+h bias).
void add_mamba1_mixer(ModelArch& a, std::int64_t layers, std::int64_t h, std::int64_t I, std::int64_t N, std::int64_t R,
                      std::int64_t conv_kernel, bool bias, bool conv_bias, const std::string& prefix) {
  const auto S = LinearRole::ssm;
  const auto O = ParamBucket::other;
  add_linear(a, prefix + "in_proj", "", S, O, h, 2 * I, layers, bias);
  add_linear(a, prefix + "x_proj", "", S, O, I, R + 2 * N, layers, false);
  add_linear(a, prefix + "dt_proj", "", S, O, R, I, layers, true);
  add_linear(a, prefix + "out_proj", "", S, O, I, h, layers, bias);
  a.extra_tensors.push_back({prefix + "conv1d", O, I * conv_kernel + (conv_bias ? I : 0), layers});
  a.extra_tensors.push_back({prefix + "A_log+D", O, I * N + I, layers});
}

/// Mamba (modeling_mamba.py MambaMixer), I = intermediate_size, N = state_size, R = time_step_rank:
/// in_proj h·2I (+2I bias), conv1d I·k (+I bias), x_proj I·(R + 2N), dt_proj R·I + I, A_log I·N, D I,
/// out_proj I·h (+h bias); one RMSNorm h per layer, norm_f h; embeddings V·h, lm_head tied.
/// Mixer parameters are counted in `other`.
void parse_mamba(const Fields& f, ModelArch& a) {
  a.family = ModelFamily::state_space;
  a.position_encoding = PositionEncoding::none;
  a.hidden_size = f.req_pos("hidden_size");
  a.num_layers = f.req_pos_any({"num_hidden_layers", "n_layer"});
  a.vocab_size = f.req_pos("vocab_size");
  SsmSpec s;
  s.state_size = f.req_pos("state_size");
  s.conv_kernel = f.req_pos("conv_kernel");
  s.expand = f.opt_pos("expand").value_or(2);
  a.intermediate_size = f.opt_pos("intermediate_size").value_or(s.expand * a.hidden_size);
  const json* r = f.get("time_step_rank");
  if (r && r->is_string() && r->get<std::string>() == "auto") {
    s.time_step_rank = (a.hidden_size + 15) / 16;  // MambaConfig: math.ceil(hidden_size / 16)
  } else {
    s.time_step_rank = f.req_pos("time_step_rank");
  }
  a.ssm = s;
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
  a.norms_per_layer = 1;
  const std::int64_t h = a.hidden_size, I = a.intermediate_size, N = s.state_size, R = s.time_step_rank;
  const bool bias = f.opt_bool("use_bias", false);
  const bool conv_bias = f.opt_bool("use_conv_bias", true);
  a.attention_layers = 0;
  a.dense_mlp_layers = 0;
  add_mamba1_mixer(a, a.num_layers, h, I, N, R, s.conv_kernel, bias, conv_bias, "mixer.");
}

// ---- families added with the layer geometry (geometry.hpp) --------------------------------------

/// head_dim = hidden / heads, or an error naming `heads_key` when it does not divide.
std::int64_t even_head_dim(const Fields& f, const ModelArch& a, std::string_view heads_key) {
  if (a.hidden_size % a.num_attention_heads != 0) {
    throw_invalid(f.where(heads_key), "hidden size is not a multiple of the head count", "heads dividing the hidden size");
  }
  return a.hidden_size / a.num_attention_heads;
}

void require_kv_divides(const Fields& f, const ModelArch& a, std::string_view key) {
  if (a.num_attention_heads % a.num_kv_heads != 0) {
    throw_invalid(f.where(key), fmt::format("{} KV heads do not divide {} attention heads", a.num_kv_heads, a.num_attention_heads),
                  "a divisor of the attention head count");
  }
}

void set_layer_norm(ModelArch& a, bool bias) {
  a.norm_bias = bias;
  a.norm_kind = bias ? NormKind::layer_norm : NormKind::layer_norm_no_bias;
}

/// GPT-NeoX / Pythia (modeling_gpt_neox.py): embed_in V·h; per layer input_layernorm and post_attention_layernorm
/// (LayerNorm 2h each), attention.query_key_value h→3h and attention.dense h→h (biases when attention_bias, default
/// true), mlp dense_h_to_4h h→I and dense_4h_to_h I→h with biases; final_layer_norm; embed_out V·h (untied by default).
/// use_parallel_residual (default true): attention and MLP read the same input.
void parse_gpt_neox(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", true);
  a.mlp_bias = true;
  set_layer_norm(a, true);
  a.parallel_attention = f.opt_bool("use_parallel_residual", true);
  if (a.hidden_act.empty()) a.hidden_act = "gelu";
}

/// Phi-1/1.5/2 (modeling_phi.py): q/k/v/dense with biases, one input_layernorm (LayerNorm 2h) per layer shared by the
/// parallel attention and MLP, fc1 h→I and fc2 I→h with biases (gelu_new), final_layernorm, lm_head V·h WITH a bias V;
/// qk_layernorm (when set) = LayerNorm(head_dim) on q and k: 4·head_dim per layer.
void parse_phi(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = a.mlp_bias = true;
  set_layer_norm(a, true);
  a.norms_per_layer = 1;
  a.parallel_attention = true;
  a.lm_head_bias = true;
  if (a.hidden_act.empty()) a.hidden_act = "gelu_new";
  if (f.opt_bool("qk_layernorm", false)) {
    a.extra_tensors.push_back({"self_attn.q_layernorm+k_layernorm", ParamBucket::norms, 4 * a.head_dim, a.num_layers});
  }
}

/// StarCoder / SantaCoder (modeling_gpt_bigcode.py): wte V·h, wpe n_positions·h; per layer ln_1, attn.c_attn h→(h + 2·d)
/// with multi_query (default true; else h→3h) + bias, attn.c_proj h→h + bias, ln_2, mlp.c_fc h→n_inner + bias, mlp.c_proj
/// n_inner→h + bias; ln_f; lm_head tied.
void parse_gpt_bigcode(const Fields& f, ModelArch& a) {
  a.hidden_size = f.req_pos_any({"n_embd", "hidden_size"});
  a.num_layers = f.req_pos_any({"n_layer", "num_hidden_layers"});
  a.num_attention_heads = f.req_pos_any({"n_head", "num_attention_heads"});
  a.head_dim = even_head_dim(f, a, "n_head");
  a.num_kv_heads = f.opt_bool("multi_query", true) ? 1 : a.num_attention_heads;
  a.vocab_size = f.req_pos("vocab_size");
  a.intermediate_size = f.opt_pos("n_inner").value_or(4 * a.hidden_size);
  a.max_position_embeddings = f.req_pos_any({"n_positions", "max_position_embeddings"});
  a.learned_positions = a.max_position_embeddings;
  a.position_encoding = PositionEncoding::learned;
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = a.mlp_bias = true;
  set_layer_norm(a, true);
  a.hidden_act = f.opt_string("activation_function", "gelu_pytorch_tanh");
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
}

/// StarCoder2 (modeling_starcoder2.py): GQA q/k/v/o and mlp c_fc h→I / c_proj I→h, all with biases when use_bias
/// (default true); LayerNorm with bias (2 per layer + final); RoPE; sliding_window on every layer; tie_word_embeddings
/// default true (PretrainedConfig).
void parse_starcoder2(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, true);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = a.mlp_bias = f.opt_bool("use_bias", true);
  set_layer_norm(a, true);
  if (a.hidden_act.empty()) a.hidden_act = "gelu_pytorch_tanh";
  if (!read_layer_types(f, a)) {
    if (auto w = f.opt_pos("sliding_window")) set_all_layers_sliding(a, *w);
  }
}

/// MPT (transformers modeling_mpt.py): wte V·d_model; per layer norm_1, attn.Wqkv h→3h, attn.out_proj h→h, norm_2,
/// ffn.up_proj h→expansion_ratio·h, ffn.down_proj back (no biases when no_bias, default true; MptBlock drops the
/// LayerNorm biases too); norm_f; ALiBi (attn_config.alibi) so no position table; lm_head tied.
void parse_mpt(const Fields& f, ModelArch& a) {
  a.hidden_size = f.req_pos_any({"d_model", "hidden_size"});
  a.num_layers = f.req_pos_any({"n_layers", "num_hidden_layers"});
  a.num_attention_heads = f.req_pos_any({"n_heads", "num_attention_heads"});
  a.head_dim = even_head_dim(f, a, "n_heads");
  a.num_kv_heads = a.num_attention_heads;
  if (auto attn = f.object("attn_config")) {
    if (auto kv = attn->opt_pos("kv_n_heads")) a.num_kv_heads = *kv;
    require_kv_divides(*attn, a, "kv_n_heads");
    a.position_encoding = attn->opt_bool("alibi", true) ? PositionEncoding::alibi : PositionEncoding::rope;
  } else {
    a.position_encoding = PositionEncoding::alibi;
  }
  if (a.position_encoding == PositionEncoding::rope) {
    throw_invalid(f.where("attn_config"), "attn_config.alibi false (learned or rotary positions) is not counted", "alibi true");
  }
  a.vocab_size = f.req_pos("vocab_size");
  // The width expansion_ratio × d_model within intermediate_size's range, the error at
  // expansion_ratio (the field the file wrote; a derived intermediate_size names no field).
  const std::int64_t ratio = f.opt_pos("expansion_ratio").value_or(4);  // [1, 1e4]: kKeyRanges
  if (ratio * a.hidden_size > k1e7)
    throw_invalid(f.where("expansion_ratio"),
                  fmt::format("{} × d_model {} = {} is outside the physical range of the feed-forward width", ratio,
                              a.hidden_size, ratio * a.hidden_size),
                  fmt::format("{} (expansion_ratio × d_model at most {})", range_text(1, k1e7 / a.hidden_size), k1e7));
  a.intermediate_size = ratio * a.hidden_size;
  a.max_position_embeddings = f.opt_pos_any({"max_seq_len", "max_position_embeddings"}).value_or(0);
  const bool bias = !f.opt_bool("no_bias", true);
  a.attention_bias = a.attention_output_bias = a.mlp_bias = bias;
  set_layer_norm(a, bias);
  a.gated_mlp = false;
  a.hidden_act = "gelu";
  a.tied_embeddings = true;
  a.torch_dtype = dtype_of(f);
}

/// OLMo (modeling_olmo.py): SwiGLU, no biases, OlmoLayerNorm without any parameters (2 per layer + final: 0 params).
/// OLMo 2 / OLMo 3 (modeling_olmo2.py / olmo3): post_attention_layernorm and post_feedforward_layernorm (RMSNorm h),
/// q_norm RMSNorm(H·d) and k_norm RMSNorm(K·d) over the full projection width, final RMSNorm; OLMo 3 adds layer_types.
void parse_olmo(const Fields& f, ModelArch& a, int generation) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  if (generation == 1) {
    a.norm_kind = NormKind::non_parametric;
  } else {
    a.qk_norm_full_width = true;
    read_layer_types(f, a);
  }
}

/// SmolLM3 (modeling_smollm3.py): the llama layer; no_rope_layers only switch RoPE off per layer (no parameters);
/// tie_word_embeddings default true.
void parse_smollm3(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, true);
  a.intermediate_size = f.req_pos("intermediate_size");
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  a.mlp_bias = f.opt_bool("mlp_bias", false);
  read_layer_types(f, a);
}

/// BERT encoder (modeling_bert.py BertModel, with its pooler; no masked-LM head): word_embeddings V·h,
/// position_embeddings P·h, token_type_embeddings T·h, embeddings LayerNorm 2h; per layer q/k/v and attention.output
/// dense h→h with biases, attention LayerNorm 2h, intermediate h→I + I, output I→h + h, output LayerNorm 2h;
/// pooler dense h→h + h. No final norm, no causal KV cache.
void parse_bert(const Fields& f, ModelArch& a) {
  a.family = ModelFamily::encoder;
  a.hidden_size = f.req_pos("hidden_size");
  a.num_layers = f.req_pos("num_hidden_layers");
  a.num_attention_heads = f.req_pos("num_attention_heads");
  a.num_kv_heads = a.num_attention_heads;
  a.head_dim = even_head_dim(f, a, "num_attention_heads");
  a.vocab_size = f.req_pos("vocab_size");
  a.intermediate_size = f.req_pos("intermediate_size");
  a.max_position_embeddings = f.req_pos("max_position_embeddings");
  a.learned_positions = a.max_position_embeddings;
  a.position_encoding = PositionEncoding::learned;
  a.gated_mlp = false;
  a.attention_bias = a.attention_output_bias = a.mlp_bias = true;
  set_layer_norm(a, true);
  a.final_norm = false;
  a.has_lm_head = false;
  a.kv_cache_layers = 0;
  a.hidden_act = f.opt_string("hidden_act", "gelu");
  a.torch_dtype = dtype_of(f);
  const std::int64_t types = f.opt_pos("type_vocab_size").value_or(2);
  a.extra_tensors.push_back({"embeddings.token_type_embeddings", ParamBucket::embeddings, types * a.hidden_size, 1});
  a.extra_tensors.push_back({"embeddings.LayerNorm", ParamBucket::norms, 2 * a.hidden_size, 1});
  add_linear(a, "pooler.dense", "", LinearRole::projection, ParamBucket::other, a.hidden_size, a.hidden_size, 1, true);
  a.notes.push_back("BertModel with its pooler; the masked-LM head (cls.predictions) is not counted");
}

/// T5 / Flan-T5 (modeling_t5.py T5ForConditionalGeneration): shared V·d_model; encoder blocks: SelfAttention q/k/v/o
/// (d_model→H·d_kv, no bias), layer_norm (T5LayerNorm: weight only), DenseReluDense wi (or wi_0 + wi_1 for
/// "gated-gelu") d_model→d_ff and wo d_ff→d_model, layer_norm; decoder blocks add EncDecAttention q/k/v/o and a third
/// layer_norm; relative_attention_bias (num_buckets·H) in the first block of each stack; final_layer_norm per stack;
/// lm_head V·d_model unless tie_word_embeddings (default true).
void parse_t5(const Fields& f, ModelArch& a) {
  a.family = ModelFamily::encoder_decoder;
  a.hidden_size = f.req_pos("d_model");
  const std::int64_t enc = f.req_pos("num_layers");
  const std::int64_t dec = f.opt_pos("num_decoder_layers").value_or(enc);
  a.num_layers = enc + dec;
  a.num_attention_heads = a.num_kv_heads = f.req_pos("num_heads");
  a.head_dim = f.req_pos("d_kv");
  a.vocab_size = f.req_pos("vocab_size");
  a.intermediate_size = f.req_pos("d_ff");
  a.position_encoding = PositionEncoding::none;
  const std::string proj = f.opt_string("feed_forward_proj", "relu");
  if (proj == "relu") {
    a.gated_mlp = false;
    a.hidden_act = "relu";
  } else if (proj == "gated-gelu") {
    a.gated_mlp = true;
    a.hidden_act = "gelu_new";
  } else {
    throw_invalid(f.where("feed_forward_proj"), fmt::format("'{}' not supported by the parameter counter", proj), "relu or gated-gelu");
  }
  a.tied_embeddings = f.opt_bool("tie_word_embeddings", true);
  a.torch_dtype = dtype_of(f);
  a.kv_cache_layers = dec;
  const std::int64_t h = a.hidden_size, inner = a.num_attention_heads * a.head_dim;
  const auto A = LinearRole::attention;
  const auto B = ParamBucket::attention;
  add_linear(a, "decoder.EncDecAttention.q", "q", A, B, h, inner, dec, false);
  add_linear(a, "decoder.EncDecAttention.k", "k", A, B, h, inner, dec, false);
  add_linear(a, "decoder.EncDecAttention.v", "v", A, B, h, inner, dec, false);
  add_linear(a, "decoder.EncDecAttention.o", "o", A, B, inner, h, dec, false);
  a.extra_tensors.push_back({"decoder.cross_attention_layer_norm", ParamBucket::norms, h, dec});
  a.extra_tensors.push_back({"decoder.final_layer_norm", ParamBucket::norms, h, 1});
  const std::int64_t buckets = f.opt_pos("relative_attention_num_buckets").value_or(32);
  a.extra_tensors.push_back({"relative_attention_bias", B, buckets * a.num_attention_heads, 2});
  a.notes.push_back(fmt::format("encoder-decoder: {} encoder + {} decoder blocks in num_layers; cross-attention KV cache not counted "
                                "in kv_cache_layers", enc, dec));
}

/// Jamba (modeling_jamba.py): block i has attention when i % attn_layer_period == attn_layer_offset, else a Mamba-1
/// mixer (in_proj/out_proj bias mamba_proj_bias, conv bias mamba_conv_bias, dt_proj bias, dt/B/C RMSNorms R + 2N);
/// MoE feed-forward (num_experts of width intermediate_size, router h·E, no bias) when
/// i % expert_layer_period == expert_layer_offset, else a dense SwiGLU MLP; input_layernorm + pre_ff_layernorm per block;
/// final_layernorm; untied head.
void parse_jamba(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  a.intermediate_size = f.req_pos("intermediate_size");
  const std::int64_t L = a.num_layers, h = a.hidden_size;
  const std::int64_t ap = f.opt_pos("attn_layer_period").value_or(8), ao = f.opt_nonneg("attn_layer_offset", 4);
  const std::int64_t ep = f.opt_pos("expert_layer_period").value_or(2), eo = f.opt_nonneg("expert_layer_offset", 1);
  std::int64_t attn = 0, moe = 0;
  for (std::int64_t i = 0; i < L; ++i) {
    attn += i % ap == ao ? 1 : 0;
    moe += i % ep == eo ? 1 : 0;
  }
  a.attention_layers = attn;
  MoeSpec m;
  m.num_routed_experts = f.opt_pos("num_experts").value_or(16);
  m.experts_per_token = f.opt_pos("num_experts_per_tok").value_or(2);
  m.expert_intermediate_size = a.intermediate_size;
  m.num_moe_layers = moe;
  if (m.experts_per_token > m.num_routed_experts) {
    throw_invalid(f.where("num_experts_per_tok"), "more experts per token than experts", "at most num_experts");
  }
  if (moe > 0) a.moe = m;
  const std::int64_t N = f.opt_pos("mamba_d_state").value_or(16);
  const std::int64_t k = f.opt_pos("mamba_d_conv").value_or(4);
  const std::int64_t I = f.opt_pos("mamba_expand").value_or(2) * h;
  const json* r = f.get("mamba_dt_rank");
  const std::int64_t R = (!r || (r->is_string() && r->get<std::string>() == "auto")) ? (h + 15) / 16 : f.req_pos("mamba_dt_rank");
  const std::int64_t ssm = L - attn;
  SsmSpec s;
  s.state_size = N;
  s.conv_kernel = k;
  s.expand = I / h;
  s.time_step_rank = R;
  a.ssm = s;
  add_mamba1_mixer(a, ssm, h, I, N, R, k, f.opt_bool("mamba_proj_bias", false), f.opt_bool("mamba_conv_bias", true), "mamba.");
  a.extra_tensors.push_back({"mamba.dt_layernorm+b_layernorm+c_layernorm", ParamBucket::norms, R + 2 * N, ssm});
  a.notes.push_back(fmt::format("hybrid: {} attention blocks and {} Mamba blocks; {} MoE feed-forwards", attn, ssm, moe));
}

/// Nemotron-H (NVIDIA, arXiv:2504.03624; modeling_nemotron_h.py NemotronHForCausalLM): block i is one mixer, by
/// hybrid_override_pattern[i]: 'M' a Mamba-2 mixer, '*' self-attention (q/k/v/o, attention_head_dim, bias
/// attention_bias), '-' an MLP (up_proj h·I and down_proj I·h, mlp_hidden_act relu², no gate, bias mlp_bias); one RMSNorm
/// h per block, norm_f, untied lm_head. Mamba-2 mixer (NemotronHMamba2Mixer; Dao & Gu 2024 arXiv:2405.21060), with
/// heads = mamba_num_heads, I = heads · mamba_head_dim, G = n_groups, N = ssm_state_size, k = conv_kernel:
/// in_proj h·(2I + 2GN + heads) (+ bias use_bias), conv1d over I + 2GN channels · k (+ bias use_conv_bias),
/// dt_bias + A_log + D 3·heads, gated RMSNorm I, out_proj I·h (+ bias use_bias). 'E' (MoE blocks of the Nemotron 3
/// MoE hybrids) is not read.
void parse_nemotron_h(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, false);
  if (auto hd = f.opt_pos("attention_head_dim")) a.head_dim = *hd;
  a.intermediate_size = f.req_pos("intermediate_size");
  const std::string pattern = f.req_string("hybrid_override_pattern");
  if (static_cast<std::int64_t>(pattern.size()) != a.num_layers)
    throw_invalid(f.where("hybrid_override_pattern"), fmt::format("{} characters for {} layers", pattern.size(), a.num_layers),
                  "one character per layer (num_hidden_layers)");
  std::int64_t mamba = 0, attn = 0, mlp = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    switch (pattern[i]) {
      case 'M': ++mamba; break;
      case '*': ++attn; break;
      case '-': ++mlp; break;
      default:
        throw_invalid(f.where("hybrid_override_pattern"),
                      fmt::format("block {} is '{}'{}", i, pattern[i], pattern[i] == 'E' ? " (an MoE block: not read)" : ""),
                      "M (Mamba-2), * (attention) or - (MLP) per layer");
    }
  }
  a.attention_layers = attn;
  a.dense_mlp_layers = mlp;
  a.norms_per_layer = 1;
  a.gated_mlp = false;
  a.hidden_act = f.opt_string("mlp_hidden_act", "relu2");
  if (a.hidden_act != "relu2")
    throw_invalid(f.where("mlp_hidden_act"), fmt::format("'{}' not supported", a.hidden_act), "relu2 (Nemotron-H's MLP)");
  a.mlp_bias = f.opt_bool("mlp_bias", false);
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  const std::int64_t h = a.hidden_size;
  const std::int64_t heads = f.req_pos("mamba_num_heads"), I = heads * f.req_pos("mamba_head_dim");
  const std::int64_t G = f.opt_pos("n_groups").value_or(1), N = f.req_pos("ssm_state_size");
  const std::int64_t k = f.opt_pos("conv_kernel").value_or(4);
  if (I % h != 0)
    throw_invalid(f.where("mamba_num_heads"), fmt::format("mamba_num_heads × mamba_head_dim = {} is not a multiple of hidden_size {}", I, h),
                  "an inner width of expand × hidden_size");
  SsmSpec s;
  s.state_size = N;
  s.conv_kernel = k;
  s.expand = I / h;
  s.time_step_rank = 0;  // Mamba-2: one scalar dt per head (dt_bias), no dt projection
  if (heads % G != 0)
    throw_invalid(f.where("n_groups"), fmt::format("{} groups do not divide {} Mamba heads", G, heads),
                  "a divisor of mamba_num_heads");
  s.conv_channels = I + 2 * G * N;
  a.ssm = s;
  const bool bias = f.opt_bool("use_bias", false), conv_bias = f.opt_bool("use_conv_bias", true);
  const std::int64_t conv_dim = I + 2 * G * N;
  const auto S = LinearRole::ssm;
  const auto O = ParamBucket::other;
  add_linear(a, "mixer.in_proj", "", S, O, h, I + conv_dim + heads, mamba, bias);
  add_linear(a, "mixer.out_proj", "", S, O, I, h, mamba, bias);
  a.extra_tensors.push_back({"mixer.conv1d", O, conv_dim * k + (conv_bias ? conv_dim : 0), mamba});
  a.extra_tensors.push_back({"mixer.dt_bias+A_log+D", O, 3 * heads, mamba});
  a.extra_tensors.push_back({"mixer.norm", ParamBucket::norms, I, mamba});
  a.notes.push_back(fmt::format("hybrid: {} Mamba-2 blocks, {} attention blocks and {} MLP blocks (hybrid_override_pattern)",
                                mamba, attn, mlp));
}

// ---- diffusion ----------------------------------------------------------------------------------

std::int64_t conv(std::int64_t in, std::int64_t out, std::int64_t k) { return in * out * k * k + out; }
std::int64_t linear(std::int64_t in, std::int64_t out, bool bias = true) { return in * out + (bias ? out : 0); }

/// diffusers ResnetBlock2D: norm1 GroupNorm(in) 2·in, conv1 3x3, time_emb_proj temb→out, norm2 2·out,
/// conv2 3x3, 1x1 conv_shortcut when in != out.
std::int64_t resnet(std::int64_t in, std::int64_t out, std::int64_t temb) {
  std::int64_t n = 2 * in + conv(in, out, 3) + linear(temb, out) + 2 * out + conv(out, out, 3);
  if (in != out) n += conv(in, out, 1);
  return n;
}

/// diffusers Transformer2DModel (continuous input): GroupNorm 2C, proj_in C·C + C (linear or 1x1 conv: same
/// count), `layers` BasicTransformerBlocks, proj_out C·C + C. BasicTransformerBlock: 3 LayerNorms 6C; self-attn
/// q/k/v C·C (no bias) + out C·C + C; cross-attn q C·C, k/v X·C (X = cross_attention_dim), out C·C + C;
/// GEGLU feed-forward C·8C + 8C, 4C·C + C.
std::int64_t transformer2d(std::int64_t C, std::int64_t layers, std::int64_t X) {
  const std::int64_t block = 6 * C + (3 * C * C + C * C + C) + (C * C + 2 * X * C + C * C + C) + (C * 8 * C + 8 * C + 4 * C * C + C);
  return 2 * C + 2 * (C * C + C) + layers * block;
}

/// diffusers UNet2DConditionModel (unet_2d_condition.py), the SD 1.x/2.x/SDXL layout.
void parse_unet(const Fields& f, ModelArch& a, ParamBreakdown& p) {
  a.family = ModelFamily::diffusion_unet;
  a.position_encoding = PositionEncoding::none;
  DiffusionSpec d;
  d.class_name = "UNet2DConditionModel";
  d.block_out_channels = f.int_list_or_scalar("block_out_channels", 1);
  const std::size_t levels = d.block_out_channels.size();
  d.down_block_types = f.string_list("down_block_types");
  d.up_block_types = f.string_list("up_block_types");
  if (d.down_block_types.size() != levels || d.up_block_types.size() != levels) {
    throw_invalid(f.where("down_block_types"), "block type lists and block_out_channels differ in length", "one entry per level");
  }
  d.layers_per_block = f.req_pos("layers_per_block");
  d.transformer_layers_per_block = f.has("transformer_layers_per_block") ? f.int_list_or_scalar("transformer_layers_per_block", levels)
                                                                          : std::vector<std::int64_t>(levels, 1);
  if (d.transformer_layers_per_block.size() != levels) {
    throw_invalid(f.where("transformer_layers_per_block"), "length differs from block_out_channels", "one entry per level");
  }
  d.cross_attention_dim = f.req_pos("cross_attention_dim");
  d.unet_attention_head_dim = f.has("num_attention_heads") ? f.int_list_or_scalar("num_attention_heads", levels)
                                                           : f.int_list_or_scalar("attention_head_dim", levels);
  d.in_channels = f.req_pos("in_channels");
  d.out_channels = f.opt_pos("out_channels").value_or(d.in_channels);
  d.sample_size = f.opt_pos("sample_size").value_or(0);
  for (auto key : {"class_embed_type", "encoder_hid_dim", "reverse_transformer_layers_per_block", "time_cond_proj_dim"}) {
    if (f.has(key)) throw_invalid(f.where(key), "UNet option not supported by the parameter counter", "null");
  }
  if (f.opt_bool("dual_cross_attention", false) || f.opt_bool("only_cross_attention", false)) {
    throw_invalid(f.where("dual_cross_attention"), "UNet option not supported by the parameter counter", "false");
  }
  const auto& ch = d.block_out_channels;
  const std::int64_t X = d.cross_attention_dim;
  const std::int64_t conv_in_k = f.opt_pos("conv_in_kernel").value_or(3);
  const std::int64_t conv_out_k = f.opt_pos("conv_out_kernel").value_or(3);
  const std::int64_t temb = f.opt_pos("time_embedding_dim").value_or(4 * ch[0]);
  std::int64_t embed = conv(d.in_channels, ch[0], conv_in_k);
  embed += linear(ch[0], temb) + linear(temb, temb);  // time_embedding (TimestepEmbedding)
  const std::string add_type = f.opt_string("addition_embed_type");
  if (add_type == "text_time") {  // SDXL: add_embedding TimestepEmbedding(projection_class_embeddings_input_dim → temb)
    const std::int64_t in = f.req_pos("projection_class_embeddings_input_dim");
    embed += linear(in, temb) + linear(temb, temb);
  } else if (!add_type.empty()) {
    throw_invalid(f.where("addition_embed_type"), fmt::format("'{}' not supported by the parameter counter", add_type), "text_time or null");
  }
  std::int64_t blocks = 0;
  std::int64_t attn = 0;
  // Down path.
  std::int64_t out = ch[0];
  for (std::size_t i = 0; i < levels; ++i) {
    const std::int64_t in = out;
    out = ch[i];
    const bool cross = d.down_block_types[i].find("CrossAttn") != std::string::npos;
    for (std::int64_t j = 0; j < d.layers_per_block; ++j) {
      blocks += resnet(j == 0 ? in : out, out, temb);
      if (cross) attn += transformer2d(out, d.transformer_layers_per_block[i], X);
    }
    if (i + 1 < levels) blocks += conv(out, out, 3);  // Downsample2D
  }
  // Mid block: 2 resnets + 1 transformer (UNetMidBlock2DCrossAttn).
  const std::string mid = f.opt_string("mid_block_type", "UNetMidBlock2DCrossAttn");
  if (mid == "UNetMidBlock2DCrossAttn") {
    blocks += 2 * resnet(ch.back(), ch.back(), temb);
    attn += transformer2d(ch.back(), d.transformer_layers_per_block.back(), X);
  } else if (!mid.empty()) {
    throw_invalid(f.where("mid_block_type"), fmt::format("'{}' not supported by the parameter counter", mid), "UNetMidBlock2DCrossAttn");
  }
  // Up path: layers_per_block + 1 resnets per level, skip connections from the down path.
  std::vector<std::int64_t> rch(ch.rbegin(), ch.rend());
  std::vector<std::int64_t> rtl(d.transformer_layers_per_block.rbegin(), d.transformer_layers_per_block.rend());
  std::int64_t prev = rch[0];
  for (std::size_t i = 0; i < levels; ++i) {
    const std::int64_t o = rch[i];
    const std::int64_t in = rch[std::min(i + 1, levels - 1)];
    const bool cross = d.up_block_types[i].find("CrossAttn") != std::string::npos;
    for (std::int64_t j = 0; j <= d.layers_per_block; ++j) {
      const std::int64_t skip = (j == d.layers_per_block) ? in : o;
      const std::int64_t res_in = (j == 0) ? prev : o;
      blocks += resnet(res_in + skip, o, temb);
      if (cross) attn += transformer2d(o, rtl[i], X);
    }
    if (i + 1 < levels) blocks += conv(o, o, 3);  // Upsample2D
    prev = o;
  }
  const std::int64_t head = 2 * ch[0] + conv(ch[0], d.out_channels, conv_out_k);  // conv_norm_out + conv_out
  p.embeddings = embed;
  p.attention = attn;
  p.other = blocks;
  p.head = head;
  a.diffusion = d;
  a.notes.push_back("UNet: time/text-time embeddings and conv_in in embeddings, Transformer2D blocks in attention, ResNet/up/down-sampling convolutions in other, conv_norm_out + conv_out in head");
}

/// diffusers FluxTransformer2DModel (transformer_flux.py), D = heads·head_dim:
///  time_text_embed: timestep 256→D→D (+ guidance 256→D→D when guidance_embeds), pooled text pooled→D→D;
///  context_embedder joint→D, x_embedder in→D;
///  double-stream block: 2 AdaLayerNormZero D→6D, q/k/v and added q/k/v D·D + D each, 4 RMSNorms head_dim,
///    to_out and to_add_out D·D + D, 2 GELU feed-forwards D→4D→D;
///  single-stream block: AdaLayerNormZeroSingle D→3D, proj_mlp D→4D, q/k/v D·D + D, 2 RMSNorms head_dim,
///    proj_out 5D→D;
///  norm_out AdaLayerNormContinuous D→2D; proj_out D→patch²·out_channels. All linears have biases.
void parse_flux(const Fields& f, ModelArch& a, ParamBreakdown& p) {
  a.family = ModelFamily::diffusion_transformer;
  a.position_encoding = PositionEncoding::rope;
  DiffusionSpec d;
  d.class_name = "FluxTransformer2DModel";
  d.num_double_stream_layers = f.req_pos("num_layers");
  d.num_single_stream_layers = f.req_pos("num_single_layers");
  d.num_attention_heads = f.req_pos("num_attention_heads");
  d.attention_head_dim = f.req_pos("attention_head_dim");
  d.inner_dim = d.num_attention_heads * d.attention_head_dim;
  d.joint_attention_dim = f.req_pos("joint_attention_dim");
  d.pooled_projection_dim = f.req_pos("pooled_projection_dim");
  d.in_channels = f.req_pos("in_channels");
  d.out_channels = f.opt_pos("out_channels").value_or(d.in_channels);
  d.guidance_embeds = f.opt_bool("guidance_embeds", false);
  const std::int64_t patch = f.opt_pos("patch_size").value_or(1);
  const std::int64_t D = d.inner_dim, hd = d.attention_head_dim;
  std::int64_t embed = linear(256, D) + linear(D, D) + linear(d.pooled_projection_dim, D) + linear(D, D);
  if (d.guidance_embeds) embed += linear(256, D) + linear(D, D);
  embed += linear(d.joint_attention_dim, D) + linear(d.in_channels, D);
  const std::int64_t double_attn = 6 * linear(D, D) + 4 * hd + 2 * linear(D, D);
  const std::int64_t double_other = 2 * linear(D, 6 * D);
  const std::int64_t double_mlp = 2 * (linear(D, 4 * D) + linear(4 * D, D));
  const std::int64_t single_attn = 3 * linear(D, D) + 2 * hd;
  const std::int64_t single_other = linear(D, 3 * D);
  const std::int64_t single_mlp = linear(D, 4 * D) + linear(5 * D, D);
  p.embeddings = embed;
  p.attention = d.num_double_stream_layers * double_attn + d.num_single_stream_layers * single_attn;
  p.mlp = d.num_double_stream_layers * double_mlp + d.num_single_stream_layers * single_mlp;
  p.norms = d.num_double_stream_layers * double_other + d.num_single_stream_layers * single_other + linear(D, 2 * D);
  p.head = linear(D, patch * patch * d.out_channels);
  a.num_layers = d.num_double_stream_layers + d.num_single_stream_layers;
  a.hidden_size = D;
  a.num_attention_heads = a.num_kv_heads = d.num_attention_heads;
  a.head_dim = hd;
  a.diffusion = d;
  a.notes.push_back("FLUX: adaptive-norm modulation linears (AdaLayerNormZero/Continuous) counted in norms; single-stream proj_out (attention+MLP output) in mlp");
  if (f.has("quantization_config")) a.notes.push_back("config carries a quantization_config; the count is of the unquantized model");
}

/// One row per config.json model_type: the reader that fills the ModelArch. Parameters outside the layer geometry
/// (vision towers) go to `outside`. Sorted by model_type; supported_model_types() lists it.
struct FamilyReader {
  const char* model_type;
  void (*read)(const Fields& root, ModelArch& a, ParamBreakdown& outside);
};

/// Multimodal wrappers (gemma3, llama4): the text model under text_config, a generic ViT count for vision_config.
void read_nested_text(const Fields& root, ModelArch& a, ParamBreakdown& outside, const char* family,
                      void (*text)(const Fields&, ModelArch&), const char* vision_note, const char* missing_note) {
  auto t = root.object("text_config");
  if (!t) throw_invalid(root.where("text_config"), "missing field", fmt::format("a JSON object ({} text config)", family));
  text(*t, a);
  if (a.torch_dtype.empty()) a.torch_dtype = dtype_of(root);
  if (auto vision = root.object("vision_config")) {
    outside.other += count_vision_tower(vision->unlogged(), a.hidden_size);
    a.notes.push_back(vision_note);
  } else if (missing_note != nullptr) {
    a.notes.push_back(missing_note);
  }
}

/// Gemma 3n text decoder (transformers modeling_gemma3n.py Gemma3nTextModel / Gemma3nForCausalLM; defaults of
/// Gemma3nTextConfig, the E4B shape). Per layer: q/k/v/o with per-head q/k norms (v_norm has no weight); a GeGLU MLP of
/// width intermediate_size[i] (a list, one per layer, or one width); input, post-attention, pre- and post-feedforward
/// and post-per-layer-input RMSNorms (5h); LAuReL linear_left h·r + linear_right r·h + post_laurel_norm h (r =
/// laurel_rank); AltUp correct_output_scale h, correction_coefs n·n, prediction_coefs n·n², modality_router h·n,
/// router_norm h (n = altup_num_inputs); per_layer_input_gate h·p and per_layer_projection p·h (p =
/// hidden_size_per_layer_input). Model: embed_tokens V·h (tied lm_head), the per-layer embedding table
/// embed_tokens_per_layer V_p·(L·p), per_layer_model_projection h·(L·p), per_layer_projection_norm p, altup_projections
/// and altup_unembed_projections 2·(n−1)·h², norm h. Layers at or after L − num_kv_shared_layers read the KV cache of
/// the last earlier layer of their kind (sliding/full) and hold none. Activation sparsity changes no parameter.
void parse_gemma3n_text(const Fields& f, ModelArch& a) {
  read_common_decoder(f, a, true);
  const std::int64_t L = a.num_layers, h = a.hidden_size;
  // intermediate_size: one width for every layer, or a list with one per layer (MatFormer slices may mix them).
  const std::vector<std::int64_t> widths = f.int_list_or_scalar("intermediate_size", static_cast<std::size_t>(L));
  if (static_cast<std::int64_t>(widths.size()) != L)
    throw_invalid(f.where("intermediate_size"), fmt::format("{} widths for {} layers", widths.size(), L),
                  "one width, or one per layer (num_hidden_layers)");
  std::map<std::int64_t, std::int64_t> layers_of_width;
  for (std::int64_t w : widths) ++layers_of_width[w];
  // The most common width goes through the shared dense-MLP geometry; other widths are added as their own matrices.
  const auto common = std::max_element(layers_of_width.begin(), layers_of_width.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
  a.intermediate_size = common->first;
  a.dense_mlp_layers = common->second;
  for (const auto& [width, layers] : layers_of_width) {
    if (width == common->first) continue;
    add_linear(a, fmt::format("mlp.gate_proj[{}]", width), "gate", LinearRole::mlp, ParamBucket::mlp, h, width, layers, false);
    add_linear(a, fmt::format("mlp.up_proj[{}]", width), "up", LinearRole::mlp, ParamBucket::mlp, h, width, layers, false);
    add_linear(a, fmt::format("mlp.down_proj[{}]", width), "down", LinearRole::mlp, ParamBucket::mlp, width, h, layers, false);
  }
  if (layers_of_width.size() > 1)
    a.notes.push_back(fmt::format("per-layer MLP widths (intermediate_size): {}; every matrix is counted at its width, the "
                                  "activation estimate takes {} for every layer (the most common width)",
                                  fmt::join(widths, ", "), common->first));
  a.attention_bias = a.attention_output_bias = f.opt_bool("attention_bias", false);
  a.norm_kind = NormKind::gemma_rms_norm;
  a.norms_per_layer = 5;
  a.qk_norm = true;
  if (a.hidden_act.empty()) a.hidden_act = "gelu_pytorch_tanh";
  if (!read_layer_types(f, a)) {
    // Gemma3nTextConfig's default: every 5th layer full attention, the others sliding.
    a.sliding_window = f.opt_pos("sliding_window").value_or(512);
    a.layer_uses_sliding_window.clear();
    for (std::int64_t i = 0; i < L; ++i) a.layer_uses_sliding_window.push_back((i + 1) % 5 != 0);
  }
  const std::int64_t shared = f.opt_nonneg("num_kv_shared_layers", 15);
  if (shared >= L)
    throw_invalid(f.where("num_kv_shared_layers"), fmt::format("{} shared layers of {}", shared, L),
                  "fewer than num_hidden_layers (the layers before them produce the cache)");
  a.kv_cache_layers = L - shared;
  const std::int64_t p = f.opt_pos("hidden_size_per_layer_input").value_or(256);
  const std::int64_t vp = f.opt_pos("vocab_size_per_layer_input").value_or(262144);
  const std::int64_t n = f.opt_pos("altup_num_inputs").value_or(4);
  const std::int64_t r = f.opt_pos("laurel_rank").value_or(64);
  const auto P = LinearRole::projection;
  add_linear(a, "laurel.linear_left", "", P, ParamBucket::mlp, h, r, L, false);
  add_linear(a, "laurel.linear_right", "", P, ParamBucket::mlp, r, h, L, false);
  add_linear(a, "altup.modality_router", "", P, ParamBucket::mlp, h, n, L, false);
  add_linear(a, "per_layer_input_gate", "", P, ParamBucket::mlp, h, p, L, false);
  add_linear(a, "per_layer_projection", "", P, ParamBucket::mlp, p, h, L, false);
  a.extra_tensors.push_back({"laurel.post_laurel_norm+altup.router_norm+altup.correct_output_scale", ParamBucket::norms, 3 * h, L});
  a.extra_tensors.push_back({"altup.correction_coefs+prediction_coefs", ParamBucket::norms, n * n + n * n * n, L});
  a.extra_tensors.push_back({"embed_tokens_per_layer", ParamBucket::embeddings, vp * L * p, 1});
  a.extra_tensors.push_back({"per_layer_projection_norm", ParamBucket::norms, p, 1});
  add_linear(a, "per_layer_model_projection", "", P, ParamBucket::other, h, L * p, 1, false);
  add_linear(a, "altup_projections+altup_unembed_projections", "", P, ParamBucket::other, h, h, 2 * (n - 1), false);
  a.notes.push_back(fmt::format("Gemma 3n: per-layer embedding table {} × {} ({} parameters, in embeddings); the last {} layers "
                                "share the KV cache of earlier ones ({} layers hold one); AltUp streams {}, LAuReL rank {}",
                                vp, L * p, vp * L * p, shared, L - shared, n, r));
}

void gemma1(const Fields& f, ModelArch& a) { parse_gemma(f, a, 1); }
void gemma2(const Fields& f, ModelArch& a) { parse_gemma(f, a, 2); }
void gemma3(const Fields& f, ModelArch& a) { parse_gemma(f, a, 3); }

template <void (*F)(const Fields&, ModelArch&)>
void plain(const Fields& f, ModelArch& a, ParamBreakdown&) {
  F(f, a);
}

const std::vector<FamilyReader>& family_readers() {
  static const std::vector<FamilyReader> kReaders = {
      {"bert", plain<parse_bert>},
      {"bloom", plain<parse_bloom>},
      {"deepseek_v2", plain<parse_deepseek>},
      {"deepseek_v3", plain<parse_deepseek>},
      {"falcon", plain<parse_falcon>},
      {"gemma", plain<gemma1>},
      {"gemma2", plain<gemma2>},
      {"gemma3",
       [](const Fields& f, ModelArch& a, ParamBreakdown& o) {
         read_nested_text(f, a, o, "Gemma 3", gemma3, "vision tower (vision_config) + projector counted in other (generic ViT formula)",
                          nullptr);
       }},
      {"gemma3_text", plain<gemma3>},
      {"gemma3n",
       [](const Fields& f, ModelArch& a, ParamBreakdown&) {
         auto t = f.object("text_config");
         if (!t) throw_invalid(f.where("text_config"), "missing field", "a JSON object (Gemma 3n text config)");
         parse_gemma3n_text(*t, a);
         if (a.torch_dtype.empty()) a.torch_dtype = dtype_of(f);
         a.notes.push_back("the vision (MobileNet-V5) and audio towers of the Gemma 3n checkpoint are not counted");
       }},
      {"gemma3n_text", plain<parse_gemma3n_text>},
      {"gpt2", plain<parse_gpt2>},
      {"gpt_bigcode", plain<parse_gpt_bigcode>},
      {"gpt_neox", plain<parse_gpt_neox>},
      {"gpt_oss", plain<parse_gpt_oss>},
      {"jamba", plain<parse_jamba>},
      {"llama", plain<parse_llama>},
      {"llama4",
       [](const Fields& f, ModelArch& a, ParamBreakdown& o) {
         read_nested_text(f, a, o, "Llama 4", parse_llama4_text,
                          "vision tower (vision_config) + projector counted in other (generic ViT formula; approximate for Llama 4's adapter)",
                          "the config has no vision_config: the vision tower of the published checkpoint is not counted");
       }},
      {"llama4_text", plain<parse_llama4_text>},
      {"mamba", plain<parse_mamba>},
      {"mistral", plain<parse_mistral>},
      {"mixtral", plain<parse_mixtral>},
      {"mpt", plain<parse_mpt>},
      {"nemotron_h", plain<parse_nemotron_h>},
      {"olmo", [](const Fields& f, ModelArch& a, ParamBreakdown&) { parse_olmo(f, a, 1); }},
      {"olmo2", [](const Fields& f, ModelArch& a, ParamBreakdown&) { parse_olmo(f, a, 2); }},
      {"olmo3", [](const Fields& f, ModelArch& a, ParamBreakdown&) { parse_olmo(f, a, 3); }},
      {"opt", plain<parse_opt>},
      {"phi", plain<parse_phi>},
      {"phi3", plain<parse_phi3>},
      {"qwen2", plain<parse_qwen2>},
      {"qwen2_moe", plain<parse_qwen2_moe>},
      {"qwen3", plain<parse_qwen3>},
      {"qwen3_moe", plain<parse_qwen3_moe>},
      {"smollm3", plain<parse_smollm3>},
      {"starcoder2", plain<parse_starcoder2>},
      {"t5", plain<parse_t5>},
  };
  return kReaders;
}

[[noreturn]] void unknown_type(const Fields& f, const std::string& key, const std::string& value) {
  throw Error(ErrorKind::invalid_input, f.where(key), fmt::format("unsupported {} '{}'", key, value),
              fmt::format("one of {}", fmt::join(supported_model_types(), ", ")));
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> kAll = [] {
    std::vector<std::string> v;
    for (const auto& r : family_readers()) v.emplace_back(r.model_type);
    v.push_back("FluxTransformer2DModel");
    v.push_back("UNet2DConditionModel");
    std::sort(v.begin(), v.end());
    return v;
  }();
  return kAll;
}

/// Physical ranges of a decoder / SSM config, checked after the family readers and before any
/// parameter is counted. The fields a reader took straight from the file were range-checked as
/// they were read (kKeyRanges); this adds the relations (experts per token <= experts, KV heads
/// <= heads, dense layers <= layers) and the values the readers derive (head_dim = hidden /
/// heads, MPT's expansion_ratio · hidden, DeepSeek's shared width), then bounds the total.
/// A field is named as the file wrote it (`log`, "text_config.num_experts_per_tok"); a derived
/// value, which no key gave, by its usual key and "derived".
void check_physical_ranges(const ModelArch& a, const std::string& source, const FieldLog& log) {
  auto where_of = [&](std::initializer_list<std::string_view> keys) -> std::optional<std::string> {
    for (auto k : keys)
      if (auto it = log.find(k); it != log.end()) return fmt::format("{}: {}", source, it->second);
    return std::nullopt;
  };
  auto in_range = [&](std::initializer_list<std::string_view> keys, std::int64_t v, std::int64_t lo, std::int64_t hi,
                      std::initializer_list<std::string_view> hi_keys = {}) {
    if (v >= lo && v <= hi) return;
    std::string expected = range_text(lo, hi);
    if (hi_keys.size() > 0) {  // a relation: say which field the bound comes from
      const auto hw = where_of(hi_keys);
      expected += fmt::format(" ({})", hw ? hw->substr(source.size() + 2) : std::string(*hi_keys.begin()));
    }
    if (const auto w = where_of(keys)) throw_invalid(*w, fmt::format("{} is outside the physical range", v), expected);
    throw_invalid(source, fmt::format("{} = {} (not in the file: derived from the other fields) is outside the physical range",
                                      *keys.begin(), v),
                  expected);
  };
  if (a.family == ModelFamily::decoder || a.family == ModelFamily::state_space) {
    in_range({"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, a.num_layers, 1, k1e4);
    in_range({"hidden_size", "n_embd", "n_embed", "d_model"}, a.hidden_size, 1, k1e6);
    in_range({"vocab_size"}, a.vocab_size, 1, k1e8);
    in_range({"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"}, a.max_position_embeddings, 0, k1e9);
  }
  if (a.family == ModelFamily::decoder) {
    in_range({"intermediate_size", "intermediate_size_mlp", "n_inner", "ffn_dim", "ffn_hidden_size", "d_ff"},
             a.intermediate_size, 0, k1e7);
    const std::initializer_list<std::string_view> heads = {"num_attention_heads", "n_head", "n_heads", "num_heads"};
    in_range(heads, a.num_attention_heads, 1, k1e5);
    in_range({"num_key_value_heads", "num_kv_heads", "n_head_kv", "kv_n_heads"}, a.num_kv_heads, 1, a.num_attention_heads,
             heads);
    in_range({"head_dim", "d_kv"}, a.head_dim, 1, k1e5);
    if (a.sliding_window) in_range({"sliding_window", "attention_chunk_size"}, *a.sliding_window, 1, k1e9);
  }
  long double experts_term = 0;
  if (a.moe) {
    const MoeSpec& m = *a.moe;
    const std::initializer_list<std::string_view> experts = {"num_experts", "num_local_experts", "n_routed_experts"};
    in_range(experts, m.num_routed_experts, 1, k1e5);
    // top-k cannot exceed the experts there are (the issue: active > total was accepted)
    in_range({"num_experts_per_tok", "experts_per_token"}, m.experts_per_token, 1, m.num_routed_experts, experts);
    in_range({"n_shared_experts"}, m.num_shared_experts, 0, k1e4);
    in_range({"moe_intermediate_size", "intermediate_size"}, m.expert_intermediate_size, 0, k1e7);
    in_range({"shared_expert_intermediate_size"}, m.shared_intermediate_size, 0, k1e7);
    in_range({"first_k_dense_replace"}, m.first_dense_layers, 0, a.num_layers, {"num_hidden_layers", "n_layer", "n_layers"});
    in_range({"interleave_moe_layer_step", "moe_layer_freq"}, m.moe_layer_interval, 1, k1e4);
    experts_term = 3.0L * a.hidden_size *
                   (static_cast<long double>(m.num_routed_experts) * m.expert_intermediate_size +
                    static_cast<long double>(m.num_shared_experts + 1) *
                        std::max(m.shared_intermediate_size, m.expert_intermediate_size));
  }
  long double mla_term = 0;
  if (a.mla) {
    const MlaSpec& m = *a.mla;
    if (m.q_lora_rank) in_range({"q_lora_rank"}, *m.q_lora_rank, 1, k1e6);
    in_range({"kv_lora_rank"}, m.kv_lora_rank, 0, k1e6);
    in_range({"qk_nope_head_dim"}, m.qk_nope_head_dim, 0, k1e5);
    in_range({"qk_rope_head_dim"}, m.qk_rope_head_dim, 0, k1e5);
    in_range({"v_head_dim"}, m.v_head_dim, 0, k1e5);
    const long double ranks = static_cast<long double>(m.q_lora_rank.value_or(0)) + m.kv_lora_rank + m.qk_rope_head_dim;
    mla_term = ranks * a.hidden_size +
               ranks * a.num_attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) +
               static_cast<long double>(a.num_attention_heads) * m.v_head_dim * a.hidden_size;
  }
  long double ssm_term = 0;
  if (a.ssm) {
    in_range({"state_size", "mamba_d_state"}, a.ssm->state_size, 0, k1e5);
    in_range({"conv_kernel", "mamba_d_conv"}, a.ssm->conv_kernel, 0, k1e4);
    in_range({"expand", "mamba_expand"}, a.ssm->expand, 0, k1e4);
    in_range({"time_step_rank", "mamba_dt_rank"}, a.ssm->time_step_rank, 0, k1e6);
    const long double inner = static_cast<long double>(a.ssm->expand) * a.hidden_size;
    ssm_term = inner * (3.0L * a.hidden_size + a.ssm->conv_kernel + 2.0L * a.ssm->state_size + a.ssm->time_step_rank + 4) +
               static_cast<long double>(a.ssm->time_step_rank) * inner;
  }
  if (a.family == ModelFamily::decoder || a.family == ModelFamily::state_space) {
    const long double h = a.hidden_size;
    const long double attn = 2.0L * h * a.num_attention_heads * a.head_dim + 2.0L * h * a.num_kv_heads * a.head_dim;
    const long double per_layer = attn + 3.0L * h * a.intermediate_size + experts_term + mla_term + ssm_term + 16.0L * h;
    const long double estimate =
        per_layer * a.num_layers + 3.0L * a.vocab_size * h + static_cast<long double>(a.max_position_embeddings + 2) * h;
    constexpr long double kMaxParams = 1e16L;  // 10 quadrillion; int64 holds 9.2e18
    if (estimate > kMaxParams)
      throw_invalid(source, fmt::format("the config describes about {:.3g} parameters", static_cast<double>(estimate)),
                    "a model below 1e16 parameters (the largest published models have about 2e12)");
  }
}

ModelArch parse_hf_config(const json& config, const std::string& source) {
  if (!config.is_object()) throw_invalid(source, "config is not a JSON object", "a JSON object");
  FieldLog log;
  Fields root(config, source, "", &log);
  ModelArch a;
  a.name = source;
  a.source = source;
  ParamBreakdown extra;
  ParamBreakdown diffusion_params;
  bool is_diffusion = false;

  if (root.has("_class_name")) {
    const std::string cls = root.req_string("_class_name");
    a.model_type = cls;
    if (cls == "UNet2DConditionModel") {
      parse_unet(root, a, diffusion_params);
    } else if (cls == "FluxTransformer2DModel") {
      parse_flux(root, a, diffusion_params);
    } else {
      unknown_type(root, "_class_name", cls);
    }
    is_diffusion = true;
  } else {
    const std::string type = root.req_string("model_type");
    a.model_type = type;
    const auto& readers = family_readers();
    auto it = std::find_if(readers.begin(), readers.end(), [&](const FamilyReader& r) { return type == r.model_type; });
    if (it == readers.end()) unknown_type(root, "model_type", type);
    it->read(root, a, extra);
  }

  if (!is_diffusion) check_physical_ranges(a, source, log);
  if (is_diffusion) {
    a.params = diffusion_params;
    a.attention = attention_kind(a);
  } else {
    add_moe_layers_count(a);
    finalize_arch(a, extra);
    if (a.model_type == "gpt_oss") {
      a.notes.push_back(fmt::format("active() includes the token-embedding table ({} params); the gpt-oss model card's active "
                                    "count excludes it", a.params.embeddings));
    }
    if (a.mtp_layers > 0) {
      // One MTP module per predicted token (DeepSeek-V3 §2.2): enorm h, hnorm h, eh_proj 2h·h, one decoder
      // layer (MoE, as the checkpoint's layer 61), shared_head norm h; the checkpoint also stores its own
      // copies of embed_tokens and shared_head.head (2·V·h), which the published 14B includes.
      ModelArch one = a;
      one.num_layers = 1;
      one.moe->num_moe_layers = 1;
      ParamBreakdown layer = count_decoder_params(one);
      const std::int64_t h = a.hidden_size;
      const std::int64_t layer_only = layer.total() - layer.embeddings - layer.head - h /*final norm*/;
      a.mtp_params = a.mtp_layers * (layer_only + 2 * h + 2 * h * h + h + 2 * a.vocab_size * h);
      a.notes.push_back(fmt::format("multi-token-prediction module ({} layer, {} params incl. its stored embedding and head copies) excluded from the total",
                                    a.mtp_layers, a.mtp_params));
    }
  }
  return a;
}

std::string json_error_location(std::string_view text, std::size_t offset, const std::string& source) {
  return source + ":" + line_col(text, offset);
}

/// `text` with Python's non-JSON float constants (NaN, Infinity, -Infinity) outside strings read as null: transformers
/// saves configs with Python's json module, which writes them (Nemotron-H "time_step_limit": [0.0, Infinity]). No field
/// gpuplan reads takes them; a field that did would find null (unknown) and say so. "Infinity" and "-Infinity" become
/// "null" padded with spaces, so line:column positions stay; "NaN" becomes "null" (one column more on its line).
static std::string python_float_constants_as_null(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const std::string_view token : {std::string_view("-Infinity"), std::string_view("Infinity"), std::string_view("NaN")}) {
      if (text.compare(i, token.size(), token) == 0) {
        out += "null";
        if (token.size() > 4) out.append(token.size() - 4, ' ');
        i += token.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

ModelArch parse_hf_config_text(std::string_view text, const std::string& source) {
  // Strict JSON (util/text_check.hpp): syntax errors and out-of-range numbers (1e400) at
  // line:col, duplicate keys and control characters refused; Python's NaN/Infinity read as null.
  const json j = parse_json_strict(python_float_constants_as_null(text), source, JsonPlaceStyle::dotted);
  return parse_hf_config(j, source);
}

ModelArch load_hf_config_file(const std::string& path) {
  return parse_hf_config_text(read_text_file(path), path);  // regular files only, size-capped
}

}  // namespace gpuplan
