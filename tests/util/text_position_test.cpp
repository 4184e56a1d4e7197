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

}  // namespace
}  // namespace gpuplan
