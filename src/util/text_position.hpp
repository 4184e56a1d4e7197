#pragma once
/// Positions in text for error messages.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuplan {

/// "LINE:COL" (both 1-based; COL counts bytes) of a byte offset into text, e.g. for the byte
/// offset nlohmann::json reports in a parse error. An offset past the end names the end.
std::string line_col(std::string_view text, std::size_t byte_offset);

}  // namespace gpuplan
