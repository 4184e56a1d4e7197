#pragma once
/// A test suite that runs the built `gpuplan` (GPUPLAN_BINARY) against its own throw-away store:
/// one temp folder per suite (XDG_DATA_HOME and --db inside it), removed after the suite.
///   class MyE2E : public BinaryE2E<MyE2E> { public: static constexpr const char* kName = "my"; };
/// run(args): the exit code and stdout+stderr; run_json(args, exit): `args --json`, parsed, with
/// the exit code and the parse checked (EXPECT, so a failure names the command and its output).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuplan::e2e {

struct RunResult {
  int exit_code = -1;
  std::string out;
};

template <class Suite>
class BinaryE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("gpuplan-e2e-") + Suite::kName + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  static RunResult run(const std::string& args) { return run_db("offers.sqlite", args); }
  /// `args` on the store `db` (a file name in the suite's folder; created and seeded from the
  /// bundled catalog on first use), stdout+stderr.
  static RunResult run_db(const std::string& db, const std::string& args) {
    return run_shell("XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                     (dir_ / db).string() + "' " + args + " 2>&1");
  }
  /// The store `db`: the bundled catalog plus `csv` (an offer file) imported, once per suite
  /// (the file is written beside it as `db`.csv). Returns `db`, for run_db.
  static std::string store_with_import(const std::string& db, const std::string& csv) {
    if (!std::filesystem::exists(dir_ / db)) {
      const std::filesystem::path file = dir_ / (db + ".csv");
      std::ofstream(file) << csv;
      const RunResult r = run_db(db, "import '" + file.string() + "'");
      EXPECT_EQ(r.exit_code, 0) << r.out;
    }
    return db;
  }
  /// A command's output parsed as JSON (EXPECT that it parses).
  static nlohmann::json json_of(const RunResult& r) {
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
    return j;
  }
  /// A whole shell command line: its stdout (stderr only where the command redirects it) and exit code.
  static RunResult run_shell(const std::string& cmd) {
    RunResult r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }
  static nlohmann::json run_json(const std::string& args, int expected_exit) {
    RunResult r = run(args + " --json");
    EXPECT_EQ(r.exit_code, expected_exit) << args << "\n" << r.out.substr(0, 2000);
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << args << "\n" << r.out.substr(0, 2000);
    return j;
  }
  static inline std::filesystem::path dir_;
};

}  // namespace gpuplan::e2e
