#include "util/text_position.hpp"

#include <gtest/gtest.h>

namespace gpuplan {
namespace {

TEST(TextPosition, CountsLinesAndColumnsFromOne) {
  // "ab\ncd": offset 0 is 1:1, offset 4 ('d') is line 2, column 2; past the end names the end.
  EXPECT_EQ(line_col("ab\ncd", 0), "1:1");
  EXPECT_EQ(line_col("ab\ncd", 4), "2:2");
  EXPECT_EQ(line_col("ab\ncd", 99), "2:3");
}

TEST(TextPosition, LineIndexAgreesWithLineColAtEveryOffset) {
  // Every offset of a text with empty lines, a leading and a trailing newline, and past the end.
  const std::string text = "\nab\n\ncd e\nf\n";
  const LineIndex index(text);
  for (std::size_t i = 0; i <= text.size() + 2; ++i) EXPECT_EQ(index.line_col(i), line_col(text, i)) << "offset " << i;
  // By hand: offset 5 is 'c', first byte of line 4 (the newlines at 0, 3 and 4 precede it);
  // offset 7 is the space, column 3 of that line.
  EXPECT_EQ(index.line_col(5), "4:1");
  EXPECT_EQ(index.line_col(7), "4:3");
  EXPECT_EQ(LineIndex("").line_col(0), "1:1");
}

}  // namespace
}  // namespace gpuplan
