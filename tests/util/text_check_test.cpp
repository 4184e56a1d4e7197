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

TEST(TextCheck, RejectsBidirectionalControls) {
  // trial11: a U+202E (RIGHT-TO-LEFT OVERRIDE) in an instance type printed raw made one offer id
  // display as another. Every code point of Unicode's Bidi_Control property (PropList.txt):
  // U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069.
  for (const char* bidi : {"\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac",
                           "\xe2\x80\xad", "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"}) {
    const auto pr = find_text_problem(std::string("gpu_8x_h100") + bidi + "evil", false);
    ASSERT_TRUE(pr) << bidi;
    EXPECT_EQ(pr->offset, 11u);
    EXPECT_NE(pr->what.find("bidirectional control character U+"), std::string::npos) << pr->what;
  }
  EXPECT_EQ(find_text_problem("a\xe2\x80\xae", true)->what, "bidirectional control character U+202E");
  // Their neighbours are text: U+200D ZERO WIDTH JOINER (emoji sequences), U+2030 PER MILLE, U+2065
  // (unassigned), U+206A; Arabic and Hebrew letters.
  EXPECT_FALSE(find_text_problem("\xe2\x80\x8d \xe2\x80\xb0 \xe2\x81\xa5 \xe2\x81\xaa \xd8\xa8 \xd7\x90", false));
}

TEST(TextCheck, FileErrorNamesTheCsvField) {
  // The cell's column: in a data row, in a quoted cell over two lines, in the header row.
  const std::string w = where_of([] {
    check_text_file("provider,instance_type\nlambda,gpu_8x\xe2\x80\xaeh100\n", "q.csv",
                    [](std::size_t at) { return csv_field_at("provider,instance_type\nlambda,gpu_8x\xe2\x80\xaeh100\n", at); });
  });
  EXPECT_NE(w.find("q.csv:2:14: bidirectional control character U+202E in field instance_type"), std::string::npos) << w;
  EXPECT_EQ(csv_field_at("a,b,c\n1,\"x\ny\",3\n", 13), "field b");  // the 'y' of the quoted cell
  EXPECT_EQ(csv_field_at("a,b,c\n1,2,3\n", 10), "field c");
  EXPECT_EQ(csv_field_at("a,b,c\n", 2), "the header row");
  EXPECT_EQ(csv_field_at("\xef\xbb\xbf" "a,b\n1,2\n", 7), "field a");  // after a byte-order mark
  // The streaming reader names it too (the generic CSV import).
  const std::string r = where_of([] {
    CsvReader rows = CsvReader::over_text("provider,instance_type\nlambda,x\n\"q\n\x01\",z\n", "s.csv", true);
    CsvRow row;
    while (rows.next(row)) {
    }
  });
  EXPECT_NE(r.find("s.csv:4:1: control character (byte 0x01) in field provider"), std::string::npos) << r;
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
  // Named by its field and by its line and column (line 2, column 19 is the '1' of 1e400).
  const std::string w = where_of([] { parse_json_strict("{\n  \"usd_per_hour\": 1e400\n}", "q.json"); });
  EXPECT_NE(w.find("q.json: /usd_per_hour:"), std::string::npos) << w;
  EXPECT_NE(w.find("at line:column 2:19:"), std::string::npos) << w;
  // A bare number has no field: the file, line and column.
  const std::string bare = where_of([] { parse_json_strict("1e400", "q.json"); });
  EXPECT_NE(bare.find("q.json:1:1:"), std::string::npos) << bare;
  const std::string element = where_of([] { parse_json_strict("[1, 1e400]", "q.json"); });
  EXPECT_NE(element.find("q.json: /1:"), std::string::npos) << element;
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

// Issue 11 leftovers A/B: the whole number a count's text writes, digit for digit, and whether a
// double is it. 2^53 = 9007199254740992 is the last of the consecutive integers a double holds;
// 2^53 + 1 rounds to 2^53 (IEEE 754 binary64: 53-bit significand).
TEST(DecimalIntegerDigits, ExactDigitsOfWholeNumbers) {
  EXPECT_EQ(decimal_integer_digits("9007199254740993"), "9007199254740993");
  EXPECT_EQ(decimal_integer_digits("9.007199254740993e15"), "9007199254740993");
  EXPECT_EQ(decimal_integer_digits("1.5e12"), "1500000000000");
  EXPECT_EQ(decimal_integer_digits("1.5", 6), "1500000");  // "1.5M"
  EXPECT_EQ(decimal_integer_digits("0012"), "12");
  EXPECT_EQ(decimal_integer_digits("-0"), "0");
  EXPECT_EQ(decimal_integer_digits("-25"), "-25");
  EXPECT_EQ(decimal_integer_digits("2500e-2"), "25");
  EXPECT_FALSE(decimal_integer_digits("0.5"));  // not a whole number
  EXPECT_FALSE(decimal_integer_digits("1e-3"));
  EXPECT_FALSE(decimal_integer_digits("1e400"));  // more than 400 digits
  EXPECT_FALSE(decimal_integer_digits("0x10"));
  EXPECT_FALSE(decimal_integer_digits("1e"));
  EXPECT_FALSE(decimal_integer_digits("12a"));
}

TEST(DecimalIntegerDigits, ADoubleIsExactlyTheDigitsOrNot) {
  EXPECT_TRUE(double_is_exactly(9007199254740992.0, "9007199254740992"));
  EXPECT_FALSE(double_is_exactly(*parse_decimal("9007199254740993"), "9007199254740993"));  // became ...992
  EXPECT_TRUE(double_is_exactly(1e16, "10000000000000000"));  // 2^16 × 5^16, 5^16 < 2^53
  EXPECT_FALSE(double_is_exactly(*parse_decimal("9999999999999999"), "9999999999999999"));  // became 1e16
  EXPECT_TRUE(double_is_exactly(-0.0, "0"));
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

// trial11: a JSON file with a raw 0xff byte inside a string failed with nlohmann's message, which
// quotes the bytes it last read: the raw byte reached the terminal. It is shown as \xff.
TEST(TextCheck, AMalformedJsonMessageNeverCarriesARawBadByte) {
  const std::string text = "{\"model_type\": \"lla\xff" "ma\"}";
  std::string message;
  try {
    (void)parse_json_strict(text, "config.json");
  } catch (const Error& e) {
    message = e.what();
  }
  ASSERT_NE(message.find("malformed JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("lla\\xff"), std::string::npos) << message;
  EXPECT_EQ(message.find('\xff'), std::string::npos) << message;
  EXPECT_FALSE(find_text_problem(message, false).has_value()) << message;
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// An error echoes at most 40 bytes of a value, cut at a character boundary (trial41: a
// 100,000-character --recompute-modules value was echoed whole).
TEST(EchoClip, KeepsShortTextAndCutsLongTextAtACharacter) {
  EXPECT_EQ(echo_clip("hybridep"), "hybridep");
  EXPECT_EQ(echo_clip(std::string(40, 'x')), std::string(40, 'x'));
  EXPECT_EQ(echo_clip(std::string(41, 'x')), std::string(40, 'x') + "…");
  // "é" is 2 bytes: 39 ASCII bytes then "é" would end at byte 41, so the cut falls before it.
  EXPECT_EQ(echo_clip(std::string(39, 'a') + "éé"), std::string(39, 'a') + "…");
  // Thai: 3 bytes a character; 14 characters = 42 bytes, 13 fit in 40.
  std::string thai;
  for (int i = 0; i < 14; ++i) thai += "ก";
  EXPECT_EQ(echo_clip(thai), thai.substr(0, 39) + "…");
}

}  // namespace
}  // namespace gpuplan
