// docs/api.md lists every error code an API client can receive (trial of issue 10: the list lacked
// `method_not_allowed` and `read_only`): each `message_code` of src/util/error_code.cpp, each
// error kind's `code` (util/error.hpp) and each `code` the server writes itself (found in
// src/server/*.cpp as `{"code", "X"}` or `send_server_error(res, STATUS, "X"`), as `X` in backticks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "util/error.hpp"
#include "util/error_code.hpp"

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ApiDocCodes, EveryMessageCodeIsListedInApiMd) {
  const std::string doc = read_text(fs::path(GPUPLAN_SOURCE_DIR) / "docs" / "api.md");
  ASSERT_FALSE(doc.empty());
  ASSERT_GT(gpuplan::error_message_codes().size(), 100u);  // the table is read, not empty
  for (std::string_view c : gpuplan::error_message_codes())
    EXPECT_NE(doc.find("`" + std::string(c) + "`"), std::string::npos) << c << " is not listed in docs/api.md";
}

TEST(ApiDocCodes, EveryErrorKindAndServerCodeIsListedInApiMd) {
  const std::string doc = read_text(fs::path(GPUPLAN_SOURCE_DIR) / "docs" / "api.md");
  std::set<std::string> codes;
  for (auto k : {gpuplan::ErrorKind::invalid_input, gpuplan::ErrorKind::not_found, gpuplan::ErrorKind::conflict,
                 gpuplan::ErrorKind::unavailable, gpuplan::ErrorKind::internal})
    codes.insert(std::string(gpuplan::kind_name(k)));
  const std::regex literal_code(R"re(\{"code", "([a-z_]+)"\})re");
  const std::regex server_error(R"re(send_server_error\(res, [0-9]+, "([a-z_]+)")re");
  std::size_t from_server = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(GPUPLAN_SOURCE_DIR) / "src" / "server")) {
    const std::string src = read_text(entry.path());
    for (const std::regex* re : {&literal_code, &server_error}) {
      for (auto it = std::sregex_iterator(src.begin(), src.end(), *re); it != std::sregex_iterator(); ++it) {
        codes.insert((*it)[1].str());
        ++from_server;
      }
    }
  }
  // 401 unauthorized, 403 read_only, 405 method_not_allowed, 413 payload_too_large at least.
  for (const char* known : {"unauthorized", "read_only", "method_not_allowed", "payload_too_large"})
    EXPECT_TRUE(codes.count(known)) << known << " not found in src/server: the scan misses it";
  EXPECT_GE(from_server, 4u);
  for (const std::string& c : codes) EXPECT_NE(doc.find("`" + c + "`"), std::string::npos) << c << " is not listed in docs/api.md";
}

}  // namespace
