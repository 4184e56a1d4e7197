#pragma once
/// Model-choosing flags shared by `gpuplan size` and `gpuplan plan` (and `models`).
#include <CLI/CLI.hpp>

#include "model/model_source.hpp"

namespace gpuplan::cli {

/// Adds --model (preset short name), --config (config.json), --safetensors (.safetensors or index
/// JSON), --params (total parameters: 7e9, 7B, 124M, 1.5T), --layers, --hidden, --heads, --kv-heads,
/// --vocab, --intermediate, writing into `src`. `src` must outlive the parse. Call
/// src.validate() / resolve_model(src) in the command callback.
void add_model_flags(CLI::App& sub, ModelSource& src);

/// Parses a --params value: a number with an optional K/M/B/T suffix (case-insensitive).
/// Throws Error{invalid_input, "--params"} otherwise.
double parse_param_count(const std::string& text);

}  // namespace gpuplan::cli
