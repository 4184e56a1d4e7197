// End-to-end: `gpuplan import` shows a `\r` progress line only on a terminal. A redirected stderr
// (a log file) gets no `\r` — a log full of carriage returns is unreadable. The positive control
// runs the same import under a pseudo-terminal (util-linux `script`) and must see the progress
// line, so the test fails if the import is too quick to show progress at all.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

class ImportProgressE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-import-progress-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // A generic CSV large enough that the import runs for more than a second (the progress
    // line starts after one second). Distinct instance types: each row is its own offer.
    csv_ = dir_ / "many.csv";
    std::ofstream out(csv_);
    out << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n";
    for (int i = 0; i < kRows; ++i)
      out << "examplecloud,h100-x" << i << ",us-west,H100 SXM,8,on-demand," << 2 + (i % 100) * 0.01
          << ",2026-11-02,generated for the import progress test\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string import_cmd(const std::string& db) const {
    return "GPUPLAN_PROGRESS_INTERVAL_MS=" + std::to_string(kIntervalMs) + " XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" + (dir_ / db).string() +
           "' import '" + csv_.string() + "'";
  }
  static constexpr int kRows = 4000;
  /// Progress period for these runs: short, so a 4,000-row import outlasts several periods on any machine.
  static constexpr int kIntervalMs = 20;
  fs::path dir_;
  fs::path csv_;
};

TEST_F(ImportProgressE2E, NoCarriageReturnInARedirectedStderr) {
  const fs::path err = dir_ / "stderr.log";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system((import_cmd("redirected.sqlite") + " >/dev/null 2>'" + err.string() + "'").c_str());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(exit_code(status), 0) << slurp(err);
  EXPECT_GT(seconds, 5 * kIntervalMs / 1000.0)
      << "the import must outlast several progress periods for this test to mean anything";
  EXPECT_EQ(slurp(err).find('\r'), std::string::npos) << slurp(err);
}

TEST_F(ImportProgressE2E, ProgressShownOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux script not installed";
  const fs::path out = dir_ / "tty.log";
  // script(1) runs the command with stdin/stdout/stderr on a pseudo-terminal and copies it to stdout.
  const std::string cmd = "script -qec \"" + import_cmd("tty.sqlite") + "\" /dev/null >'" + out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_EQ(exit_code(status), 0) << slurp(out);
  EXPECT_NE(slurp(out).find("\rimport "), std::string::npos) << slurp(out).substr(0, 2000);
}

}  // namespace
