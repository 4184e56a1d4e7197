#include "util/error.hpp"

#include <gtest/gtest.h>

namespace gpuplan {
namespace {

TEST(Error, RendersWhereMessageAndExpected) {
  Error e(ErrorKind::invalid_input, "config.json:3:7", "bad value", "a positive integer");
  EXPECT_STREQ(e.what(), "config.json:3:7: bad value (expected: a positive integer)");
  EXPECT_EQ(e.where(), "config.json:3:7");
  EXPECT_EQ(e.expected(), "a positive integer");
}

TEST(Error, KindsMapToDistinctExitCodesAndHttpStatuses) {
  EXPECT_EQ(exit_code(ErrorKind::invalid_input), 2);
  EXPECT_EQ(exit_code(ErrorKind::not_found), 3);
  EXPECT_EQ(http_status(ErrorKind::invalid_input), 400);
  EXPECT_EQ(http_status(ErrorKind::not_found), 404);
  EXPECT_EQ(http_status(ErrorKind::conflict), 409);
  EXPECT_EQ(http_status(ErrorKind::unavailable), 503);
  EXPECT_EQ(http_status(ErrorKind::internal), 500);
  EXPECT_EQ(kind_name(ErrorKind::not_found), "not_found");
}

}  // namespace
}  // namespace gpuplan
