#pragma once
// One `gpuplan serve` child process for the end-to-end tests (api, serve_write, serve_pg): started
// on a free loopback port (`--listen 127.0.0.1:0`), its port read from the first line it prints
// ("serving on http://127.0.0.1:PORT ..."), stopped with SIGTERM. Shared so that the three suites
// start and stop servers one way.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {

struct ServeProcess {
  pid_t pid = -1;
  int port = 0;            ///< 0 when the server did not say "serving on"
  FILE* out = nullptr;     ///< the child's stdout (and stderr with ServeOptions::stderr_too)
  std::string first_line;  ///< what it printed first ("serving on ..." or an error)
};

struct ServeOptions {
  std::string db;                           ///< --db (a path or a postgresql:// URL)
  std::filesystem::path home;               ///< XDG_DATA_HOME of the child
  std::optional<std::string> write_token;   ///< GPUPLAN_WRITE_TOKEN: nullopt = inherited, "" = unset
  std::vector<std::string> extra_args;      ///< after `serve --listen 127.0.0.1:0 --threads 4`
  bool stderr_too = false;                  ///< the child's stderr into `out` as well
};
/// One HTTP/1.1 request written by hand to 127.0.0.1:`port` (so that a POST can go without a body
/// and without Content-Length, as `curl -X POST URL` sends it; the caller writes its headers,
/// `Connection: close` to get the end of the answer), and the whole answer; "" if no connection.
inline std::string raw_http(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "";
  }
  (void)!::write(fd, request.data(), request.size());
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}


inline ServeProcess start_serve(const ServeOptions& o) {
  ServeProcess s;
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) return s;
  s.pid = ::fork();
  if (s.pid == 0) {
    ::dup2(out_pipe[1], 1);
    if (o.stderr_too) ::dup2(out_pipe[1], 2);
    ::close(out_pipe[0]);
    ::setenv("XDG_DATA_HOME", o.home.c_str(), 1);
    if (o.write_token) {
      if (o.write_token->empty()) ::unsetenv("GPUPLAN_WRITE_TOKEN");
      else ::setenv("GPUPLAN_WRITE_TOKEN", o.write_token->c_str(), 1);
    }
    std::vector<std::string> args = {GPUPLAN_BINARY, "--db", o.db, "serve", "--listen", "127.0.0.1:0", "--threads", "4"};
    args.insert(args.end(), o.extra_args.begin(), o.extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(GPUPLAN_BINARY, argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  s.out = ::fdopen(out_pipe[0], "r");
  std::array<char, 1024> line{};
  if (std::fgets(line.data(), line.size(), s.out) == nullptr) return s;
  s.first_line = line.data();
  if (s.first_line.find("serving on") == std::string::npos) return s;
  s.port = std::atoi(s.first_line.substr(s.first_line.rfind(':') + 1).c_str());
  return s;
}

/// SIGTERM when it is serving (a server that failed to start exits by itself), then its exit
/// code (-1 when it did not exit normally).
inline int stop_serve(ServeProcess& s) {
  int status = 0;
  if (s.pid > 0) {
    if (s.port > 0) ::kill(s.pid, SIGTERM);
    ::waitpid(s.pid, &status, 0);
  }
  if (s.out) std::fclose(s.out);
  s = ServeProcess{};
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A BinaryE2E suite with one `gpuplan serve` child on its own store (started on first use by
/// server(), read-only: no write token), stopped after the suite:
///   class MyE2E : public ServedBinaryE2E<MyE2E> { public: static constexpr const char* kName = "my"; };
template <class Suite>
class ServedBinaryE2E : public BinaryE2E<Suite> {
 protected:
  static ServeProcess& server() {
    started_ = true;
    static ServeProcess s = [] {
      ServeOptions o;
      o.db = (BinaryE2E<Suite>::dir_ / "offers.sqlite").string();
      o.home = BinaryE2E<Suite>::dir_;
      o.write_token = "";
      return start_serve(o);
    }();
    return s;
  }
  static void TearDownTestSuite() {
    if (started_) {
      ServeProcess& s = server();
      if (s.pid > 0 && s.port == 0) ::kill(s.pid, SIGTERM);
      if (s.pid > 0) stop_serve(s);
    }
    BinaryE2E<Suite>::TearDownTestSuite();
  }
  static inline bool started_ = false;
};

}  // namespace gpuplan::e2e
