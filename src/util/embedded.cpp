#include "util/embedded.hpp"

#include <algorithm>
#include <string>

#include "util/error.hpp"

namespace gpuplan {

std::optional<std::string_view> embedded_file(std::string_view path) {
  for (const auto& [name, bytes] : detail::embedded_table())
    if (name == path) return bytes;
  return std::nullopt;
}

std::string_view embedded_file_or_throw(std::string_view path) {
  if (auto f = embedded_file(path)) return *f;
  throw_not_found(std::string(path), "no such bundled data file");
}

std::optional<std::string_view> embedded_file_sha256(std::string_view path) {
  for (const auto& [name, digest] : detail::embedded_table_sha256())
    if (name == path) return digest;
  return std::nullopt;
}

std::vector<std::string_view> embedded_paths(std::string_view prefix) {
  std::vector<std::string_view> out;
  for (const auto& [name, bytes] : detail::embedded_table())
    if (name.substr(0, prefix.size()) == prefix) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuplan
