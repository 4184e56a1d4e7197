#include "util/text_position.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace gpuplan {

std::string line_col(std::string_view text, std::size_t byte_offset) {
  std::size_t line = 1;
  std::size_t col = 1;
  const std::size_t end = std::min(byte_offset, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

}  // namespace gpuplan
