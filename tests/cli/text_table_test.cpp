// The CLI's plain-text table (cli/common.hpp TextTable) with cells of several lines, and
// wrap_cell (cli/plan_render.hpp), which the plan table uses to keep a long layout whole on a
// narrow terminal instead of clipping it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/common.hpp"
#include "cli/plan_render.hpp"

namespace gpuplan::cli {
namespace {

TEST(TextTable, ARowIsAsTallAsItsTallestCellAndAColumnAsWideAsItsWidestLine) {
  TextTable t;
  t.header = {"#", "layout", "time"};
  t.right_align = {true, false, true};
  t.rows = {{"1", "TP1 PP16\nrc:full", "5.5 h"}, {"2", "TP8", "18.9 h"}};
  // Column widths: "#" 1, "layout" 8 ("TP1 PP16"), "time" 6 ("18.9 h"); two spaces between: a
  // rule of 1 + 2 + 8 + 2 + 6 = 19 dashes.
  const std::string expected =
      "#  layout      time\n"
      "-------------------\n"
      "1  TP1 PP16   5.5 h\n"
      "   rc:full\n"
      "2  TP8       18.9 h\n";
  EXPECT_EQ(t.render(), expected);
}

TEST(WrapCell, BreaksAtSpacesWithinTheWidthAndKeepsEveryWord) {
  EXPECT_EQ(wrap_cell("TP1 PP16 VP6 DP32 EP2 Z1 mb1 rc:layernorm,moe_act", 22),
            "TP1 PP16 VP6 DP32 EP2\nZ1 mb1\nrc:layernorm,moe_act");
  EXPECT_EQ(wrap_cell("TP1 PP1 DP8", 22), "TP1 PP1 DP8");  // fits: unchanged
  // A single word wider than the cell is clipped (the only case that loses text).
  EXPECT_EQ(wrap_cell("TP1 rc:layernorm,moe_act,mlp", 10), "TP1\nrc:layern…");
}

}  // namespace
// $COLUMNS outside 40..1000 is taken at the nearest bound (trial49: 20 and 100000 gave 120); text
// that is not a positive whole number is not a width.
TEST(TerminalColumns, AWidthOutsideTheRangeIsTakenAtItsBound) {
  const char* before = std::getenv("COLUMNS");
  const std::string saved = before ? before : "";
  const std::pair<const char*, int> cases[] = {{"20", 40}, {"60", 60}, {"100000", 1000}, {"1000", 1000}};
  for (const auto& [text, want] : cases) {
    ::setenv("COLUMNS", text, 1);
    EXPECT_EQ(terminal_columns(), want) << text;
  }
  ::setenv("COLUMNS", "abc", 1);
  EXPECT_GE(terminal_columns(), 40);  // the terminal's width, or 120 off a terminal
  if (before) ::setenv("COLUMNS", saved.c_str(), 1);
  else ::unsetenv("COLUMNS");
}

// trial56 #14: 999.96 tokens/s printed "1000.0" in the row above a "1.0k"; the unit follows the
// value as rounded for print.
TEST(RateText, TheUnitFollowsTheRoundedValue) {
  EXPECT_EQ(rate_text(999.94), "999.9");
  EXPECT_EQ(rate_text(999.96), "1.0k");
  EXPECT_EQ(rate_text(1000.0), "1.0k");
  EXPECT_EQ(rate_text(12345.0), "12.3k");
  EXPECT_EQ(rate_text(999949.0), "999.9k");
  EXPECT_EQ(rate_text(999960.0), "1.00M");
  EXPECT_EQ(rate_text(1.5e6), "1.50M");
}

}  // namespace gpuplan::cli
