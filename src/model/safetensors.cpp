#include "model/safetensors.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "model/hf_config.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan {
namespace {

using nlohmann::json;

/// The safetensors format caps the header at 100 MB (safetensors crate: N_MAX / "HeaderTooLarge").
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

json parse_json(std::string_view text, const std::string& source, std::size_t base_offset = 0) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    if (auto pos = msg.find("parse error"); pos != std::string::npos) msg = msg.substr(pos);
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string where = base_offset == 0 ? json_error_location(text, at, source)
                                         : fmt::format("{}: header byte {}", source, base_offset + at);
    throw Error(ErrorKind::invalid_input, where, "malformed JSON: " + msg, "a JSON object");
  } catch (const json::exception& e) {  // out_of_range 406: a number such as 1e400
    throw Error(ErrorKind::invalid_input, source, std::string("malformed JSON: ") + e.what(), "a JSON object");
  }
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_not_found(path, "cannot open file", "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// "source: PLACE" in the dotted style of config errors (util/text_check.hpp JsonPlaceStyle):
/// `metadata.total_size`, `weight_map["model.norm.weight"]`, `["model.norm.weight"].dtype`.
std::string at(const std::string& source, std::string_view place) {
  return json_place_where(source, place, JsonPlaceStyle::dotted);
}
std::string key_place(std::string_view parent, std::string_view key) { return json_place_key(parent, key, JsonPlaceStyle::dotted); }

}  // namespace

std::int64_t safetensors_dtype_bytes(std::string_view dtype, const std::string& where) {
  // Dtype list of the safetensors format (safetensors/src/tensor.rs Dtype).
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "F8_E4M3" || dtype == "F8_E5M2" || dtype == "F8_E8M0" || dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  throw_invalid(where, fmt::format("unknown safetensors dtype '{}'", dtype), "F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, I8, U8, BOOL");
}

SafetensorsSummary parse_safetensors_header(std::string_view file_prefix, const std::string& source) {
  if (file_prefix.size() < 8) throw_invalid(source, "file shorter than the 8-byte header length", "a .safetensors file");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file_prefix[static_cast<std::size_t>(i)]);
  if (n == 0 || n > kMaxHeaderBytes) {
    throw_invalid(source, fmt::format("header length {} out of range", n), "1 to 100000000 bytes (little-endian u64 at offset 0)");
  }
  if (file_prefix.size() < 8 + n) {
    throw_invalid(source, fmt::format("file has {} bytes, header needs {}", file_prefix.size(), 8 + n), "a complete header");
  }
  const json header = parse_json(file_prefix.substr(8, n), source, 8);
  if (!header.is_object()) throw_invalid(source, "header is not a JSON object", "a JSON object");
  SafetensorsSummary s;
  s.header_bytes = static_cast<std::int64_t>(n);
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string place = key_place("", it.key());
    const std::string where = at(source, place);
    auto member = [&](std::string_view key) { return at(source, key_place(place, key)); };
    const json& t = it.value();
    if (!t.is_object()) throw_invalid(where, "tensor entry is not an object", "{\"dtype\", \"shape\", \"data_offsets\"}");
    SafetensorsTensor out;
    out.name = it.key();
    auto dt = t.find("dtype");
    if (dt == t.end() || !dt->is_string()) throw_invalid(member("dtype"), "missing or not a string", "a dtype string such as BF16");
    out.dtype = dt->get<std::string>();
    const std::int64_t elem_bytes = safetensors_dtype_bytes(out.dtype, member("dtype"));
    auto shape = t.find("shape");
    if (shape == t.end() || !shape->is_array()) throw_invalid(member("shape"), "missing or not a list", "a list of non-negative integers");
    out.num_elements = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned()) throw_invalid(member("shape"), fmt::format("bad dimension {}", d.dump()), "non-negative integers");
      const auto dim = d.get<std::uint64_t>();
      if (dim > 0 && static_cast<std::uint64_t>(out.num_elements) > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / dim) {
        throw_invalid(member("shape"), "element count overflows int64", "a realistic tensor shape");
      }
      out.shape.push_back(static_cast<std::int64_t>(dim));
      out.num_elements *= static_cast<std::int64_t>(dim);
    }
    auto off = t.find("data_offsets");
    if (off == t.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned()) {
      throw_invalid(member("data_offsets"), "missing or malformed", "[begin, end] byte offsets");
    }
    const auto begin = (*off)[0].get<std::uint64_t>(), end = (*off)[1].get<std::uint64_t>();
    if (end < begin) throw_invalid(member("data_offsets"), "end before begin", "[begin, end] with begin <= end");
    out.data_bytes = static_cast<std::int64_t>(end - begin);
    if (out.data_bytes != out.num_elements * elem_bytes) {
      throw_invalid(member("data_offsets"),
                    fmt::format("{} bytes for {} elements of {}", out.data_bytes, out.num_elements, out.dtype),
                    fmt::format("{} bytes", out.num_elements * elem_bytes));
    }
    s.num_params += out.num_elements;
    s.weights_bytes += out.data_bytes;
    s.params_by_dtype[out.dtype] += out.num_elements;
    s.tensors.push_back(std::move(out));
  }
  return s;
}

SafetensorsSummary read_safetensors_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_not_found(path, "cannot open safetensors file", "a readable .safetensors file");
  std::string prefix(8, '\0');
  in.read(prefix.data(), 8);
  if (in.gcount() != 8) throw_invalid(path, "file shorter than the 8-byte header length", "a .safetensors file");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
  if (n == 0 || n > kMaxHeaderBytes) {
    throw_invalid(path, fmt::format("header length {} out of range", n), "1 to 100000000 bytes (little-endian u64 at offset 0)");
  }
  prefix.resize(8 + n);
  in.read(prefix.data() + 8, static_cast<std::streamsize>(n));
  prefix.resize(8 + static_cast<std::size_t>(in.gcount()));
  return parse_safetensors_header(prefix, path);
}

WeightIndex parse_weight_index(std::string_view text, const std::string& source) {
  const json j = parse_json_strict(text, source, JsonPlaceStyle::dotted);  // duplicate keys, 1e400, control characters
  if (!j.is_object()) throw_invalid(source, "index is not a JSON object", "{\"metadata\", \"weight_map\"}");
  WeightIndex w;
  auto meta = j.find("metadata");
  if (meta == j.end() || !meta->is_object()) throw_invalid(at(source, "metadata"), "missing field", "an object with total_size");
  auto total = meta->find("total_size");
  if (total == meta->end() || !total->is_number()) throw_invalid(at(source, "metadata.total_size"), "missing field", "a byte count");
  if (total->is_number_integer()) {
    w.total_size_bytes = total->get<std::int64_t>();
  } else {
    const double d = total->get<double>();  // some writers emit 1.6e10 as a float
    // Range first: converting a double beyond int64 (1e100, found by fuzz_safetensors) is
    // undefined behaviour. 2^63 is exactly representable; every double below it converts.
    if (!(d > 0 && d < 9223372036854775808.0)) {
      throw_invalid(at(source, "metadata.total_size"), fmt::format("{} is out of range", d),
                    "a positive byte count below 2^63");
    }
    if (d != static_cast<double>(static_cast<std::int64_t>(d))) {
      throw_invalid(at(source, "metadata.total_size"), "not an integer", "a byte count");
    }
    w.total_size_bytes = static_cast<std::int64_t>(d);
  }
  if (w.total_size_bytes <= 0) throw_invalid(at(source, "metadata.total_size"), "must be positive", "a positive byte count");
  auto map = j.find("weight_map");
  if (map == j.end() || !map->is_object()) throw_invalid(at(source, "weight_map"), "missing field", "an object tensor → shard file");
  std::set<std::string> shards;
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (!it.value().is_string()) throw_invalid(at(source, key_place("weight_map", it.key())), "not a string", "a shard file name");
    w.tensor_names.push_back(it.key());
    shards.insert(it.value().get<std::string>());
    const std::string_view name = it.key();
    if (name.size() >= 8 && name.substr(name.size() - 8) == "inv_freq") ++w.num_inv_freq_buffers;
  }
  std::sort(w.tensor_names.begin(), w.tensor_names.end());
  w.shard_files.assign(shards.begin(), shards.end());
  return w;
}

WeightIndex read_weight_index(const std::string& path) { return parse_weight_index(read_all(path), path); }

}  // namespace gpuplan
