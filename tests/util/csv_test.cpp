#include "util/csv.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"

namespace gpuplan {
namespace {

TEST(Csv, ParsesQuotedCellsCrlfAndKeepsLineNumbers) {
  auto t = CsvTable::parse("a,b\r\n1,\"x, y\"\r\n2,\"say \"\"hi\"\"\"\r\n", "t.csv");
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.cell(t.rows()[0], "b"), "x, y");
  EXPECT_EQ(t.cell(t.rows()[1], "b"), "say \"hi\"");
  EXPECT_EQ(t.rows()[1].line, 3u);
  EXPECT_EQ(t.where(t.rows()[1]), "t.csv:3");
}

TEST(Csv, WrongCellCountNamesTheLine) {
  try {
    CsvTable::parse("a,b\n1,2\n3\n", "bad.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "bad.csv:3");
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
  }
}

TEST(Csv, UnclosedQuoteIsAnError) {
  EXPECT_THROW(CsvTable::parse("a,b\n1,\"open\n", "q.csv"), Error);
}

TEST(Csv, StrictNumbers) {
  EXPECT_EQ(parse_optional_double(" 2.5 ", "w"), 2.5);
  EXPECT_FALSE(parse_optional_double("", "w").has_value());
  EXPECT_THROW(parse_optional_double("2.5x", "w"), Error);
}

}  // namespace
}  // namespace gpuplan
