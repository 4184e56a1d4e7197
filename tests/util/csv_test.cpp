#include "util/csv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

// Streaming (issue 11): the reader pulls input in pieces; whatever the piece boundaries, it must
// give the rows, cells and line numbers a reading of the whole text gives. Expected rows are
// written out here by hand for a text whose quoted cells span lines.
TEST(CsvReader, GivesTheSameRowsAndLinesWhateverThePieceBoundaries) {
  const std::string text = "\xEF\xBB\xBFname,note\r\nA100,\"two\nlines\"\r\nH100,plain\n\"B\"\"200\",\"a, b\"\nL4,last";
  for (std::size_t piece : {1u, 2u, 3u, 7u, 64u, 100000u}) {
    std::size_t pos = 0;
    CsvReader r(
        [&](char* buf, std::size_t cap) {
          const std::size_t n = std::min({cap, piece, text.size() - pos});
          std::memcpy(buf, text.data() + pos, n);
          pos += n;
          return n;
        },
        "s.csv");
    ASSERT_EQ(r.header(), (std::vector<std::string>{"name", "note"})) << "piece " << piece;
    std::vector<std::pair<std::size_t, std::vector<std::string>>> rows;
    CsvRow row;
    while (r.next(row)) rows.emplace_back(row.line, row.fields);
    ASSERT_EQ(rows.size(), 4u) << "piece " << piece;
    EXPECT_EQ(rows[0], (std::pair<std::size_t, std::vector<std::string>>{3, {"A100", "two\nlines"}}));
    EXPECT_EQ(rows[1], (std::pair<std::size_t, std::vector<std::string>>{4, {"H100", "plain"}}));
    EXPECT_EQ(rows[2], (std::pair<std::size_t, std::vector<std::string>>{5, {"B\"200", "a, b"}}));
    EXPECT_EQ(rows[3], (std::pair<std::size_t, std::vector<std::string>>{6, {"L4", "last"}}));
  }
}

/// "where" of the invalid_input error f throws ("" and a test failure when it throws none).
template <class F>
std::string error_where(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    return e.where();
  }
  ADD_FAILURE() << "expected an error";
  return {};
}

TEST(CsvReader, ChecksTextLineByLineWithFileLineAndColumn) {
  // Row 3 (line 3) has an invalid UTF-8 byte 0xff at byte column 4.
  CsvReader r = CsvReader::over_text("a,b\n1,2\n3,x\xff\n", "t.csv", /*check_text=*/true);
  CsvRow row;
  ASSERT_TRUE(r.next(row));
  EXPECT_EQ(error_where([&] { r.next(row); }), "t.csv:3:4");
}

TEST(CsvReader, AnOverlongLineIsAnErrorWithoutReadingTheRest) {
  // A line longer than kMaxCsvLineBytes (no newline for 2 MiB): the reader stops once it has
  // buffered just over the limit, so memory stays bounded whatever follows.
  std::size_t served = 0;
  const std::size_t total = 64 * (std::size_t{1} << 20);
  const auto read = [&](char* buf, std::size_t cap) {
    const std::size_t n = std::min(cap, total - served);
    std::memset(buf, 'x', n);
    served += n;
    return n;
  };
  EXPECT_EQ(error_where([&] { CsvReader r(read, "long.csv"); }), "long.csv:1");
  EXPECT_LT(served, kMaxCsvLineBytes + (std::size_t{1} << 17));
}

TEST(CsvReader, RowCountMismatchAndEmptyInputNameTheLine) {
  EXPECT_THROW(CsvReader::over_text("", "e.csv"), Error);
  CsvReader r = CsvReader::over_text("a,b\n1,2\n3\n", "bad.csv");
  CsvRow row;
  ASSERT_TRUE(r.next(row));
  EXPECT_EQ(error_where([&] { r.next(row); }), "bad.csv:3");
}

}  // namespace
}  // namespace gpuplan
