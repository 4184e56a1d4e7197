// Issue 11: imported text is UTF-8 without control characters; JSON is parsed strictly; numbers
// are decimal only; JSON output of stored bytes cannot fail.
#include "util/text_check.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

std::string where_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(TextCheck, AcceptsUtf8AndTabs) {
  EXPECT_FALSE(find_text_problem("gpu\tH100 — 80 GB, Größe, 日本, 🙂", false));
  EXPECT_FALSE(find_text_problem("a\r\nb\n", true));
}

TEST(TextCheck, RejectsInvalidUtf8) {
  EXPECT_EQ(find_text_problem("ab\xff", false)->offset, 2u);            // the issue's invalid byte
  EXPECT_EQ(find_text_problem("\xc0\xaf", false)->offset, 0u);          // overlong "/"
  EXPECT_EQ(find_text_problem("x\xed\xa0\x80", false)->offset, 1u);     // surrogate U+D800
  EXPECT_EQ(find_text_problem("\xf4\x90\x80\x80", false)->offset, 0u);  // beyond U+10FFFF
  EXPECT_EQ(find_text_problem("\xe2\x82", false)->offset, 0u);          // truncated
}

TEST(TextCheck, RejectsControlCharacters) {
  EXPECT_EQ(find_text_problem(std::string("a\0b", 3), false)->offset, 1u);  // NUL (issue: stored raw)
  EXPECT_EQ(find_text_problem("a\x1b[31m", false)->offset, 1u);            // ESC (terminal escapes)
  EXPECT_EQ(find_text_problem("a\x7f", false)->offset, 1u);
  EXPECT_EQ(find_text_problem("a\xc2\x85", false)->offset, 1u);             // C1 NEL
  EXPECT_EQ(find_text_problem("a\nb", false)->offset, 1u);                  // newline inside a cell
}

TEST(TextCheck, FileErrorNamesLineAndColumn) {
  EXPECT_NE(where_of([] { check_text_file("provider,gpu\nlambda,H1\xff" "00\n", "q.csv"); }).find("q.csv:2:10:"),
            std::string::npos);
}

TEST(JsonStrict, DuplicateKeyIsAnErrorWithItsPointer) {
  const std::string w = where_of([] { parse_json_strict(R"({"offers":[{"gpu":"H100","gpu":"A100"}]})", "q.json"); });
  EXPECT_NE(w.find("q.json: /offers/0/gpu"), std::string::npos) << w;
  EXPECT_NE(w.find("duplicate key"), std::string::npos) << w;
}

TEST(JsonStrict, NumberOutOfRangeHasAPosition) {
  // The issue: `1e400` in an import was an internal error with no file position.
  const std::string w = where_of([] { parse_json_strict("{\n  \"usd_per_hour\": 1e400\n}", "q.json"); });
  EXPECT_NE(w.find("q.json:2:19:"), std::string::npos) << w;
}

TEST(JsonStrict, EscapedControlCharacterIsAnError) {
  const std::string w = where_of([] { parse_json_strict(R"({"a":{"b":"x\u0000y"}})", "q.json"); });
  EXPECT_NE(w.find("q.json: /a/b"), std::string::npos) << w;
}

TEST(JsonStrict, DeepNestingIsAnError) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(where_of([&] { parse_json_strict(deep, "q.json"); }).find("nests more than"), std::string::npos);
}

TEST(JsonStrict, SyntaxErrorHasAPosition) {
  EXPECT_NE(where_of([] { parse_json_strict("{\"a\": [1, 2,, 3]}", "q.json"); }).find("q.json:1:13:"),
            std::string::npos);
}

TEST(DumpJson, InvalidUtf8BecomesReplacementCharacter) {
  nlohmann::json j = {{"provider", std::string("bad\xff")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what made `offers --format json` exit 70
  EXPECT_EQ(dump_json(j, -1), "{\"provider\":\"bad\xef\xbf\xbd\"}");
}

TEST(ParseDecimal, DecimalOnly) {
  EXPECT_EQ(parse_decimal("12.5"), 12.5);
  EXPECT_EQ(parse_decimal("-3e2"), -300);
  EXPECT_EQ(parse_decimal("+.5"), 0.5);
  EXPECT_FALSE(parse_decimal("0x10"));  // was $16
  EXPECT_FALSE(parse_decimal("inf"));
  EXPECT_FALSE(parse_decimal("nan"));
  EXPECT_FALSE(parse_decimal("1e400"));
  EXPECT_FALSE(parse_decimal("1e"));
  EXPECT_FALSE(parse_decimal("."));
  EXPECT_FALSE(parse_decimal("1,5"));
  EXPECT_THROW(parse_optional_double("0x10", "x"), Error);
}

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpuplan-readfile-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ReadFile, DevZeroIsRefusedNotReadForever) {
  // The issue: `gpuplan import /dev/zero` grew to 7 GB in 20 s.
  EXPECT_NE(where_of([] { read_text_file("/dev/zero"); }).find("device"), std::string::npos);
}

TEST_F(ReadFile, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = (dir_ / "pipe.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(where_of([&] { read_text_file(fifo); }).find("FIFO"), std::string::npos);  // returns: no hang
}

TEST_F(ReadFile, DirectoryAndOversizedFileAreRefused) {
  EXPECT_NE(where_of([&] { read_text_file(dir_.string()); }).find("directory"), std::string::npos);
  const std::string f = (dir_ / "big.csv").string();
  std::ofstream(f) << std::string(1000, 'x');
  EXPECT_NE(where_of([&] { read_text_file(f, 999); }).find("1000 bytes"), std::string::npos);
  EXPECT_EQ(read_text_file(f, 1000).size(), 1000u);
}

TEST(CsvLimits, OverlongLineAndCellAreErrors) {
  const std::string long_line = "a,b\n" + std::string(kMaxCsvLineBytes + 1, 'x') + ",1\n";
  EXPECT_NE(where_of([&] { CsvTable::parse(long_line, "f.csv"); }).find("f.csv:2:"), std::string::npos);
  const std::string long_cell = "a,b\n\"" + std::string(kMaxCsvFieldBytes + 1, 'x') + "\",1\n";
  EXPECT_NE(where_of([&] { CsvTable::parse(long_cell, "f.csv"); }).find("cell longer"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
