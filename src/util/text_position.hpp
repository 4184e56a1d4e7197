#pragma once
/// Positions in text for error messages.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

/// "LINE:COL" (both 1-based; COL counts bytes) of a byte offset into text, e.g. for the byte
/// offset nlohmann::json reports in a parse error. An offset past the end names the end.
std::string line_col(std::string_view text, std::size_t byte_offset);

/// The same "LINE:COL" for many offsets of one text: the newlines are found once (O(n)) and each
/// lookup is a binary search (O(log n)), so naming every record of a large file stays linear
/// (calling line_col per record rescanned the text from its start: quadratic, issue 11).
/// The text must outlive nothing here: only newline offsets and the size are kept.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  std::string line_col(std::size_t byte_offset) const;

 private:
  std::vector<std::size_t> newlines_;  ///< byte offsets of '\n', ascending
  std::size_t size_ = 0;
};

}  // namespace gpuplan
