#pragma once
/// Data files compiled into the binary (data/ in the source tree; see cmake/embed.cmake),
/// so the gpuplan binary works anywhere without a data directory.
/// Paths are relative to data/, with '/' separators: "gpus.csv", "models/Qwen__Qwen3-8B/config.json".
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan {

/// The bytes of an embedded file, or nullopt when no such file was embedded.
std::optional<std::string_view> embedded_file(std::string_view path);
/// Throws Error{not_found} naming the path when it was not embedded.
std::string_view embedded_file_or_throw(std::string_view path);
/// The SHA-256 of an embedded file's bytes (64 lower-case hex digits, FIPS 180-4), computed at
/// build time (cmake/embed_one.cmake), or nullopt when no such file was embedded.
std::optional<std::string_view> embedded_file_sha256(std::string_view path);
/// Paths of all embedded files that start with prefix, sorted.
std::vector<std::string_view> embedded_paths(std::string_view prefix = {});

namespace detail {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_table();
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_table_sha256();
}

}  // namespace gpuplan
