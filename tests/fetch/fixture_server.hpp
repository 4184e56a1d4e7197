#pragma once
// A loopback HTTP server for the fetch tests (cpp-httplib), bound to 127.0.0.1 on a free port.
// Recorded responses are read from tests/data/fetch (documented layouts, invented values).
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace gpuplan::fetch::testing {

inline std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/fetch/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FixtureServer {
 public:
  FixtureServer() = default;
  ~FixtureServer() { stop(); }
  httplib::Server& server() { return server_; }
  /// Starts listening (after routes were added); returns the base URL.
  std::string start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return base();
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void stop() {
    if (thread_.joinable()) {
      server_.stop();
      thread_.join();
    }
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace gpuplan::fetch::testing
