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

LineIndex::LineIndex(std::string_view text) : size_(text.size()) {
  for (std::size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) newlines_.push_back(i);
}

std::string LineIndex::line_col(std::size_t byte_offset) const {
  const std::size_t end = std::min(byte_offset, size_);
  // newlines strictly before `end`: each starts a new line; the column counts bytes after the last.
  const auto it = std::lower_bound(newlines_.begin(), newlines_.end(), end);
  const std::size_t before = static_cast<std::size_t>(it - newlines_.begin());
  const std::size_t col = before == 0 ? end + 1 : end - newlines_[before - 1];
  return fmt::format("{}:{}", before + 1, col);
}

}  // namespace gpuplan
