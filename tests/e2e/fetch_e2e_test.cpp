// End-to-end: the built `gpuplan fetch` (GPUPLAN_BINARY) against recorded responses served by a
// loopback server in this test (--base-url http://127.0.0.1:PORT), into a temporary --db.
// No test touches the internet.
#include <gtest/gtest.h>
#include <httplib.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/fetch/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

class FetchE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuplan-e2e-fetch-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    server_.Get("/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
                [this](const httplib::Request&, httplib::Response& r) { r.set_content(*body_, "text/csv"); });
    server_.Post("/api/v0/bundles/", [](const httplib::Request&, httplib::Response& r) { r.status = 503; });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  RunResult run(const std::string& args) {
    const std::string cmd = "XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                            (dir_ / "offers.sqlite").string() + "' " + args + " 2>&1";
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
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

  fs::path dir_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::shared_ptr<std::string> body_ = std::make_shared<std::string>(fixture("skypilot-lambda-vms.csv"));
};

TEST_F(FetchE2E, FetchesASourceThroughTheBinaryAndKeepsHistory) {
  RunResult dry = run("fetch skypilot/lambda --dry-run --base-url " + base());
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("would-accept"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("nothing written"), std::string::npos) << dry.out;

  RunResult first = run("fetch skypilot/lambda --base-url " + base());
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("accepted"), std::string::npos) << first.out;

  RunResult again = run("fetch skypilot/lambda --base-url " + base());
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;

  // A new price adds an observation; the old one stays.
  const auto pos = body_->find("0.75,,us-east-1");
  ASSERT_NE(pos, std::string::npos);
  body_->replace(pos, 4, "0.80");
  RunResult third = run("fetch skypilot/lambda --base-url " + base());
  ASSERT_EQ(third.exit_code, 0) << third.out;
  RunResult hist = run("history lambda/gpu_1x_a10/us-east-1 --format json");
  ASSERT_EQ(hist.exit_code, 0) << hist.out;
  const auto j = nlohmann::json::parse(hist.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << hist.out;
  int fetched = 0;
  bool saw_075 = false, saw_080 = false;
  const auto& obs = j.contains("observations") ? j["observations"] : j;
  for (const auto& o : obs) {
    if (o.dump().find("fetch:skypilot/lambda") == std::string::npos) continue;
    ++fetched;
    const double p = o.value("usd_per_hour", -1.0);
    saw_075 = saw_075 || p == 0.75;
    saw_080 = saw_080 || p == 0.80;
  }
  EXPECT_EQ(fetched, 2) << hist.out;
  EXPECT_TRUE(saw_075 && saw_080) << hist.out;
}

TEST_F(FetchE2E, AFailingSourceExitsOneAndOthersStillLand) {
  RunResult r = run("fetch vast skypilot/lambda --retries 1 --base-url " + base());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("accepted"), std::string::npos) << r.out;
}

TEST_F(FetchE2E, UnknownSourceAndBadBaseUrlAreClearErrors) {
  RunResult unknown = run("fetch no-such-source");
  EXPECT_EQ(unknown.exit_code, 3) << unknown.out;
  EXPECT_NE(unknown.out.find("no-such-source"), std::string::npos) << unknown.out;
  RunResult bad = run("fetch skypilot/lambda --base-url not-a-url");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--base-url"), std::string::npos) << bad.out;
}

TEST_F(FetchE2E, ListNamesTheSources) {
  RunResult r = run("fetch --list");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* s : {"aws", "azure", "runpod", "vast", "skypilot/lambda", "gpuhunt/oci"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

}  // namespace
