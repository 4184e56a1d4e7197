#pragma once
/// Fetch layer, HTTP: one shared client for every price source (libcurl underneath).
///
///  - HttpTransport: ONE attempt of one request. CurlTransport is the real one (timeouts, gzip/
///    deflate via CURLOPT_ACCEPT_ENCODING, a User-Agent, a response size cap, an optional
///    streaming line filter); tests may substitute a fake.
///  - HttpClient: what adapters call. Adds retries with exponential backoff on 429 and 5xx and
///    on transport failures (honouring Retry-After in seconds or as an HTTP date), and a
///    per-source rate limit (a minimum interval between two requests of one source).
///    Waiting goes through an injected Sleeper so tests run without real delays.
///
/// Errors: Error{unavailable} (where = the URL) when a request fails after its retries, times
/// out, is cut short (truncated body) or exceeds the size cap; the message names the HTTP status
/// or the libcurl error.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace gpuplan::fetch {

struct HttpRequest {
  std::string method = "GET";  ///< "GET" or "POST"
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  ///< name, value
  std::string body;                                          ///< POST body
  /// Streaming filter for very large text bodies (the AWS price list): when set, the body keeps
  /// only the first `keep_first_lines` lines and the lines for which keep_line returns true
  /// (without the newline). A last line without a newline is kept whatever keep_line says (a
  /// body cut mid-row must reach the parser, which rejects the short row, instead of losing the
  /// row silently). The size cap applies to what is kept.
  std::function<bool(std::string_view line)> keep_line;
  std::size_t keep_first_lines = 0;
  std::optional<double> timeout_s;  ///< overrides TransportOptions::timeout_s for this request
  /// AWS Signature Version 4 (keyed AWS APIs): libcurl signs the request (CURLOPT_AWS_SIGV4,
  /// libcurl >= 7.75) with these credentials; `provider` is curl's "aws:amz:REGION:SERVICE".
  /// A session token (temporary credentials) travels as the x-amz-security-token header.
  struct AwsSigV4 {
    std::string provider;
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;  ///< empty = long-term keys
  };
  std::optional<AwsSigV4> aws_sigv4;
};

struct HttpResponse {
  long status = 0;                            ///< HTTP status code
  std::string body;                           ///< decoded (gzip/deflate undone)
  std::map<std::string, std::string> headers; ///< names lower-case; the last value of a repeated header
  std::string url;                            ///< the URL requested
  /// Header value by lower-case name, or nullopt.
  std::optional<std::string> header(std::string_view lower_name) const;
};

/// A stop request shared by a scheduled refresh and the transfers and waits it runs (`gpuplan
/// serve --refresh-every` stopping on SIGTERM): once requested, a transfer in flight is aborted
/// (libcurl's progress callback, within about a second), a StoppableSleeper returns at once,
/// HttpClient retries no more and run_fetch starts no further source. Thread-safe.
class StopFlag {
 public:
  void request();
  bool requested() const noexcept { return stop_.load(); }
  /// Waits up to `seconds` or until requested; returns requested().
  bool wait_for(double seconds) const;

 private:
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
};

/// Settings of the real transport.
struct TransportOptions {
  double connect_timeout_s = 10;           ///< seconds to establish the connection
  double timeout_s = 120;                  ///< seconds for the whole request (body included)
  /// True: timeout_s also caps requests that ask for longer (HttpRequest::timeout_s, the AWS
  /// price list's 1800 s): `gpuplan fetch --timeout S` given explicitly.
  bool timeout_caps_every_request = false;
  std::size_t max_body_bytes = 512u << 20; ///< larger bodies fail (Error{unavailable})
  std::string user_agent = "gpuplan-fetch/0.1 (+https://github.com/gpuplan; price catalog refresh)";
  const StopFlag* stop = nullptr;          ///< when set and requested, transfers abort ("cancelled")
};

/// One attempt of one request. Returns the response for any HTTP status; throws
/// Error{unavailable} on a transport failure (connect, timeout, truncated body, size cap).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual HttpResponse perform(const HttpRequest& request) = 0;
};

/// libcurl transport. Thread-compatible: one instance per thread (curl easy handles are per call).
class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(TransportOptions options = {});
  HttpResponse perform(const HttpRequest& request) override;
  const TransportOptions& options() const { return options_; }

 private:
  TransportOptions options_;
};

/// Waiting (injected so tests do not sleep).
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void sleep(double seconds) = 0;
};
class RealSleeper final : public Sleeper {
 public:
  void sleep(double seconds) override;
};
/// Sleeps until the time passed or `stop` was requested.
class StoppableSleeper final : public Sleeper {
 public:
  explicit StoppableSleeper(const StopFlag& stop) : stop_(stop) {}
  void sleep(double seconds) override { (void)stop_.wait_for(seconds); }

 private:
  const StopFlag& stop_;
};
/// Records the waits and returns at once.
class RecordingSleeper final : public Sleeper {
 public:
  void sleep(double seconds) override { waits.push_back(seconds); }
  std::vector<double> waits;
};

struct RetryPolicy {
  int max_attempts = 4;            ///< attempts in all (1 = no retry)
  double initial_backoff_s = 1.0;  ///< wait before the 2nd attempt
  double backoff_factor = 2.0;     ///< each later wait is multiplied by this
  double max_backoff_s = 60.0;     ///< no wait (backoff or Retry-After) is longer
};

/// The start of a transport failure whose host name does not resolve (curl
/// CURLE_COULDNT_RESOLVE_HOST / _PROXY): HttpClient does not retry it (offline, or a mistyped
/// --base-url; the answer will not change in seconds).
inline constexpr std::string_view kHostNotFound = "host not found: ";

/// True for statuses worth retrying: 408, 425, 429, 500, 502, 503, 504.
bool is_retryable_status(long status) noexcept;
/// The HTTP status a failed HttpClient::send names (its message starts "HTTP <status>"); nullopt
/// for a transport failure (timeout, connection, truncated body) or any other error.
std::optional<long> failed_http_status(const Error& e);
/// Seconds a Retry-After value asks for ("120" or an HTTP date relative to `now`); nullopt when
/// absent or unreadable.
std::optional<double> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now);

class HttpClient {
 public:
  /// `stop` (optional): once requested, send() throws Error{unavailable} "cancelled" instead of
  /// sending or retrying.
  HttpClient(HttpTransport& transport, Sleeper& sleeper, RetryPolicy retry = {}, const StopFlag* stop = nullptr);

  /// Sends with retries; `rate_key` names the source whose rate limit applies (see
  /// set_min_interval). Returns a 2xx response; throws Error{unavailable} otherwise, naming the
  /// last status or transport error and the number of attempts.
  HttpResponse send(const HttpRequest& request, const std::string& rate_key = {});
  HttpResponse get(const std::string& url, const std::string& rate_key = {},
                   std::vector<std::pair<std::string, std::string>> headers = {});

  /// Minimum seconds between the starts of two requests with this rate key (0 = no limit).
  void set_min_interval(const std::string& rate_key, double seconds);
  /// Requests sent (attempts included), for tests and reports.
  std::size_t attempts() const { return attempts_; }

 private:
  void wait_rate_limit(const std::string& key);
  HttpTransport& transport_;
  Sleeper& sleeper_;
  RetryPolicy retry_;
  const StopFlag* stop_;
  std::mutex mu_;
  std::map<std::string, double> min_interval_s_;
  std::map<std::string, std::chrono::steady_clock::time_point> last_start_;
  std::size_t attempts_ = 0;
};

/// Pagination: sends `first`, then asks `next(response, page_index)` for the following request
/// (nullopt = done), at most `max_pages` pages (more is an Error{unavailable}: a runaway feed).
std::vector<HttpResponse> paginate(HttpClient& client, HttpRequest first,
                                   const std::function<std::optional<HttpRequest>(const HttpResponse&, int)>& next,
                                   int max_pages, const std::string& rate_key);

/// Checks a base URL for rebase_url: scheme http or https, a host, an optional port and nothing
/// else (no path but "/", no query, fragment, user or password: rebase_url keeps only scheme,
/// host and port, so anything more would be dropped without a word). Throws
/// Error{invalid_input} (where "--base-url") naming what is wrong, also for "" (given but empty:
/// not "no base URL").
void check_base_url(const std::string& base);
/// `value` percent-encoded for a URL query (libcurl's curl_easy_escape: every byte but
/// A-Z a-z 0-9 - . _ ~ as %XX), e.g. a page token a source returns.
std::string query_escape(const std::string& value);
/// Replaces the scheme, host and port of `url` with those of `base` ("http://127.0.0.1:8080"),
/// keeping path, query and fragment. Uses libcurl's URL parser. Throws Error{invalid_input}
/// (where "--base-url") when `base` fails check_base_url or `url` is not an absolute URL.
std::string rebase_url(const std::string& url, const std::string& base);

/// "sha256:<64 hex>" of the bodies, each prefixed by its length (so boundaries count).
std::string content_hash(const std::vector<std::string_view>& bodies);

}  // namespace gpuplan::fetch
