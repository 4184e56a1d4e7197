#pragma once
/// Exact parameter counts and weight bytes from checkpoint metadata, without reading weights.
///
/// safetensors format (https://huggingface.co/docs/safetensors, "Format"): the file starts with
/// an 8-byte little-endian unsigned header length N, then N bytes of JSON:
///   { "__metadata__": {...}, "<tensor>": {"dtype": "BF16", "shape": [..], "data_offsets": [begin, end]}, ... }
/// Parameters = sum over tensors of prod(shape); bytes = sum of (end - begin).
///
/// Sharded checkpoints carry an index (model.safetensors.index.json, or pytorch_model.bin.index.json
/// for older .bin checkpoints): {"metadata": {"total_size": <bytes>}, "weight_map": {"<tensor>": "<shard>"}}.
/// total_size is the weight bytes; it does not give a parameter count by itself (dtype needed).
///
/// Errors: Error{not_found} for an unreadable file; Error{invalid_input} with where = "path" (bad
/// length prefix), "path:line:col" (malformed JSON) or the field in the dotted style of config.json
/// errors (util/text_check.hpp JsonPlaceStyle::dotted): "path: [\"model.norm.weight\"].dtype" (bad
/// tensor entry), "path: metadata.total_size", "path: weight_map[\"model.norm.weight\"]" (index).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;                 ///< as written: "F32", "BF16", "F16", "F8_E4M3", "I64", ...
  std::vector<std::int64_t> shape;
  std::int64_t num_elements = 0;     ///< prod(shape) (1 for a scalar)
  std::int64_t data_bytes = 0;       ///< data_offsets[1] - data_offsets[0]
};

struct SafetensorsSummary {
  std::vector<SafetensorsTensor> tensors;         ///< in header order (JSON object order: sorted by name)
  std::int64_t num_params = 0;                    ///< sum of num_elements
  std::int64_t weights_bytes = 0;                 ///< sum of data_bytes
  std::map<std::string, std::int64_t> params_by_dtype;  ///< element counts per dtype
  std::int64_t header_bytes = 0;                  ///< N (JSON header length)
};

/// Bytes per element of a safetensors dtype ("BF16" → 2); throws Error{invalid_input} when unknown.
/// Sub-byte packed types are not in the safetensors dtype list (they are stored as U8).
std::int64_t safetensors_dtype_bytes(std::string_view dtype, const std::string& where);

/// Parses a header given the first bytes of a file (at least 8 + N bytes). `source` names it in errors.
/// Checks that each data_bytes equals num_elements * dtype size.
SafetensorsSummary parse_safetensors_header(std::string_view file_prefix, const std::string& source);

/// Reads only the header of a .safetensors file (8 + N bytes; N capped at 100 MB as the format says).
SafetensorsSummary read_safetensors_header(const std::string& path);

struct WeightIndex {
  std::int64_t total_size_bytes = 0;             ///< metadata.total_size
  std::vector<std::string> tensor_names;         ///< weight_map keys, sorted
  std::vector<std::string> shard_files;          ///< distinct weight_map values, sorted
  /// Tensors that are non-parameter buffers stored in old .bin checkpoints (rotary "inv_freq").
  std::int64_t num_inv_freq_buffers = 0;
};

/// Parses an index JSON text (model.safetensors.index.json or pytorch_model.bin.index.json),
/// strictly (util/text_check.hpp parse_json_strict: duplicate keys and 1e400 are errors).
WeightIndex parse_weight_index(std::string_view text, const std::string& source);
/// Reads an index file.
WeightIndex read_weight_index(const std::string& path);

}  // namespace gpuplan
