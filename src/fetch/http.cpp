#include "fetch/http.hpp"

#include <curl/curl.h>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include "util/digest.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// curl_global_init once per process (thread-safe since C++11 statics).
void ensure_curl_global() {
  static const bool done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)done;
}

struct WriteState {
  std::string body;
  std::string pending;  ///< partial line when filtering
  std::size_t lines_seen = 0;
  std::size_t cap = 0;
  bool over_cap = false;
  const HttpRequest* request = nullptr;

  bool keep(std::string_view line) {
    ++lines_seen;
    if (lines_seen <= request->keep_first_lines) return true;
    std::string_view l = line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return request->keep_line(l);
  }
  bool append(std::string_view s) {
    if (body.size() + s.size() > cap) {
      over_cap = true;
      return false;
    }
    body.append(s);
    return true;
  }
  bool take(const char* data, std::size_t n) {
    if (!request->keep_line) return append(std::string_view(data, n));
    pending.append(data, n);
    std::size_t start = 0;
    for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      std::string_view line(pending.data() + start, nl - start);
      if (keep(line) && (!append(line) || !append("\n"))) return false;
      start = nl + 1;
    }
    pending.erase(0, start);
    return pending.size() <= cap || (over_cap = true, false);
  }
  bool finish() {
    if (request->keep_line && !pending.empty()) {
      // No newline after it: maybe a row cut short. Kept unfiltered, so the parser sees it (a
      // short row is rejected there) instead of the filter dropping it without a word.
      if (!append(pending)) return false;
      pending.clear();
    }
    return true;
  }
};

std::size_t on_write(char* data, std::size_t size, std::size_t nmemb, void* user) {
  auto* st = static_cast<WriteState*>(user);
  const std::size_t n = size * nmemb;
  return st->take(data, n) ? n : 0;  // returning less aborts the transfer (CURLE_WRITE_ERROR)
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* stop = static_cast<const StopFlag*>(user);
  return stop->requested() ? 1 : 0;  // nonzero aborts the transfer (CURLE_ABORTED_BY_CALLBACK)
}

std::size_t on_header(char* data, std::size_t size, std::size_t nmemb, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  const std::size_t n = size * nmemb;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();  // a new response (after a redirect or 100-continue)
    return n;
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos)
    (*headers)[lower(trim(line.substr(0, colon)))] = std::string(trim(line.substr(colon + 1)));
  return n;
}

struct CurlFree {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
  void operator()(char* p) const { curl_free(p); }
};

}  // namespace

std::optional<std::string> HttpResponse::header(std::string_view lower_name) const {
  auto it = headers.find(std::string(lower_name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

CurlTransport::CurlTransport(TransportOptions options) : options_(std::move(options)) { ensure_curl_global(); }

HttpResponse CurlTransport::perform(const HttpRequest& request) {
  std::unique_ptr<CURL, CurlFree> curl(curl_easy_init());
  if (!curl) throw Error(ErrorKind::internal, request.url, "curl_easy_init failed");
  CURL* c = curl.get();
  WriteState st;
  st.cap = options_.max_body_bytes;
  st.request = &request;
  HttpResponse resp;
  resp.url = request.url;
  std::unique_ptr<curl_slist, CurlFree> headers;
  std::vector<std::pair<std::string, std::string>> header_list = request.headers;
  if (request.aws_sigv4 && !request.aws_sigv4->session_token.empty())
    header_list.emplace_back("x-amz-security-token", request.aws_sigv4->session_token);
  for (const auto& [name, value] : header_list) {
    curl_slist* l = curl_slist_append(headers.get(), (name + ": " + value).c_str());
    if (l == nullptr) throw Error(ErrorKind::internal, request.url, "curl_slist_append failed");
    (void)headers.release();
    headers.reset(l);
  }
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // every encoding libcurl can decode (gzip, deflate, ...)
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_s * 1000));
  double timeout_s = request.timeout_s.value_or(options_.timeout_s);
  if (options_.timeout_caps_every_request) timeout_s = std::min(timeout_s, options_.timeout_s);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(request.keep_line ? 0 : options_.max_body_bytes));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &resp.headers);
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (request.aws_sigv4) {
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, request.aws_sigv4->provider.c_str());
    curl_easy_setopt(c, CURLOPT_USERNAME, request.aws_sigv4->access_key_id.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, request.aws_sigv4->secret_access_key.c_str());
  }
  if (options_.stop != nullptr) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<StopFlag*>(options_.stop));
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  if (request.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    throw Error(ErrorKind::internal, request.url, "unsupported HTTP method " + request.method);
  }
  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) st.finish();
  if (st.over_cap || rc == CURLE_FILESIZE_EXCEEDED) {
    throw Error(ErrorKind::unavailable, request.url,
                fmt::format("response larger than the {} byte cap", options_.max_body_bytes),
                "a smaller response (raise the source's size cap if the feed grew)");
  }
  if (rc != CURLE_OK) {
    const std::string detail = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    std::string what = rc == CURLE_ABORTED_BY_CALLBACK ? std::string("cancelled: the refresh is stopping")
                       : rc == CURLE_OPERATION_TIMEDOUT ? "timed out: " + detail
                       : rc == CURLE_PARTIAL_FILE   ? "truncated body: " + detail
                       : rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY
                           ? std::string(kHostNotFound) + detail
                           : "request failed: " + detail;
    throw Error(ErrorKind::unavailable, request.url, what);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  resp.body = std::move(st.body);
  return resp;
}

void StopFlag::request() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  cv_.notify_all();
}

bool StopFlag::wait_for(double seconds) const {
  std::unique_lock<std::mutex> lock(mu_);
  if (seconds > 0)
    cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stop_.load(); });
  return stop_.load();
}

void RealSleeper::sleep(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::optional<long> failed_http_status(const Error& e) {
  constexpr std::string_view prefix = "HTTP ";
  const std::string& m = e.message();
  if (e.kind() != ErrorKind::unavailable || m.rfind(prefix, 0) != 0) return std::nullopt;
  long status = 0;
  const auto [end, ec] = std::from_chars(m.data() + prefix.size(), m.data() + m.size(), status);
  if (ec != std::errc() || end == m.data() + prefix.size()) return std::nullopt;
  return status;
}

bool is_retryable_status(long status) noexcept {
  return status == 408 || status == 425 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

std::optional<double> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  const std::string v(trim(value));
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
    if (v.size() > 9) return std::nullopt;
    return std::stod(v);
  }
  const time_t t = curl_getdate(v.c_str(), nullptr);  // RFC 7231 HTTP-date
  if (t == -1) return std::nullopt;
  const double s = std::difftime(t, std::chrono::system_clock::to_time_t(now));
  return s > 0 ? s : 0.0;
}

HttpClient::HttpClient(HttpTransport& transport, Sleeper& sleeper, RetryPolicy retry, const StopFlag* stop)
    : transport_(transport), sleeper_(sleeper), retry_(retry), stop_(stop) {}

void HttpClient::set_min_interval(const std::string& rate_key, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  min_interval_s_[rate_key] = seconds;
}

void HttpClient::wait_rate_limit(const std::string& key) {
  double wait = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = min_interval_s_.find(key);
    const auto now = std::chrono::steady_clock::now();
    if (it != min_interval_s_.end() && it->second > 0) {
      auto last = last_start_.find(key);
      if (last != last_start_.end()) {
        const double since = std::chrono::duration<double>(now - last->second).count();
        if (since < it->second) wait = it->second - since;
      }
    }
    last_start_[key] = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(wait));
  }
  if (wait > 0) sleeper_.sleep(wait);
}

HttpResponse HttpClient::send(const HttpRequest& request, const std::string& rate_key) {
  std::string last_error;
  const int attempts = std::max(1, retry_.max_attempts);
  const auto cancelled = [&] {
    return Error(ErrorKind::unavailable, request.url, "cancelled: the refresh is stopping", "a 2xx response");
  };
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (stop_ != nullptr && stop_->requested()) throw cancelled();
    wait_rate_limit(rate_key);
    if (stop_ != nullptr && stop_->requested()) throw cancelled();
    std::optional<double> retry_after;
    bool retryable = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++attempts_;
    }
    try {
      HttpResponse r = transport_.perform(request);
      if (r.status >= 200 && r.status < 300) return r;
      last_error = fmt::format("HTTP {}", r.status);
      if (!r.body.empty()) {
        std::string snippet = r.body.substr(0, 160);
        std::replace(snippet.begin(), snippet.end(), '\n', ' ');
        last_error += ": " + snippet;
      }
      retryable = is_retryable_status(r.status);
      if (auto ra = r.header("retry-after")) retry_after = parse_retry_after(*ra, std::chrono::system_clock::now());
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unavailable) throw;
      last_error = e.message();
      // A body over the cap will be over the cap again; a host name that does not resolve (no
      // network, or a mistyped --base-url) will not resolve seconds later: retrying it made an
      // offline `gpuplan fetch` wait minutes for 35 sources that had all failed at once.
      retryable = e.message().find("cap") == std::string::npos && !e.message().starts_with(kHostNotFound);
    }
    if (stop_ != nullptr && stop_->requested()) throw cancelled();
    if (!retryable || attempt == attempts) break;
    double wait = retry_.initial_backoff_s * std::pow(retry_.backoff_factor, attempt - 1);
    if (retry_after) wait = *retry_after;
    sleeper_.sleep(std::min(wait, retry_.max_backoff_s));
  }
  throw Error(ErrorKind::unavailable, request.url, last_error, "a 2xx response");
}

HttpResponse HttpClient::get(const std::string& url, const std::string& rate_key,
                             std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.url = url;
  r.headers = std::move(headers);
  return send(r, rate_key);
}

std::vector<HttpResponse> paginate(HttpClient& client, HttpRequest first,
                                   const std::function<std::optional<HttpRequest>(const HttpResponse&, int)>& next,
                                   int max_pages, const std::string& rate_key) {
  std::vector<HttpResponse> pages;
  std::optional<HttpRequest> req = std::move(first);
  // Each page requested once: a next-page link back to a page already read is a loop (trial48: an
  // Azure feed whose NextPageLink named itself was read 2000 times over 6 minutes).
  std::map<std::string, int> seen;
  while (req) {
    if (static_cast<int>(pages.size()) >= max_pages) {
      throw Error(ErrorKind::unavailable, req->url, fmt::format("more than {} pages: stopped", max_pages),
                  "a feed that ends (check the next-page link)");
    }
    const auto [at, added] = seen.try_emplace(req->url + '\n' + req->body, static_cast<int>(pages.size()) + 1);
    if (!added) {
      throw Error(ErrorKind::unavailable, req->url,
                  fmt::format("the next-page link after page {} asks for page {} again: stopped", pages.size(), at->second),
                  "a feed whose next-page links end (each page once)");
    }
    pages.push_back(client.send(*req, rate_key));
    req = next(pages.back(), static_cast<int>(pages.size()) - 1);
  }
  return pages;
}

std::string query_escape(const std::string& value) {
  ensure_curl_global();
  std::unique_ptr<char, decltype(&curl_free)> e(curl_easy_escape(nullptr, value.data(), static_cast<int>(value.size())),
                                                &curl_free);
  if (!e) throw Error(ErrorKind::internal, "query_escape", "curl_easy_escape failed");
  return std::string(e.get());
}

void check_base_url(const std::string& base) {
  const char* expected = "http:// or https:// with a host and an optional port only, e.g. http://127.0.0.1:8080";
  if (base.empty()) throw Error(ErrorKind::invalid_input, "--base-url", "the base URL is empty", expected);
  // The port as written (after the host: "[::1]:PORT" or "host:PORT"), for the out-of-range error
  // (trial9b D7: http://127.0.0.1:99999 was called "not an absolute URL").
  auto written_port = [&]() -> std::string {
    const std::size_t start = base.find("://");
    if (start == std::string::npos) return "";
    std::string authority = base.substr(start + 3, base.find_first_of("/?#", start + 3) - (start + 3));
    if (const std::size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
    const std::size_t colon = authority.rfind(':');
    if (colon == std::string::npos || authority.find(']', colon) != std::string::npos) return "";
    return authority.substr(colon + 1);
  };
  auto port_out_of_range = [&](const std::string& port) {
    return Error(ErrorKind::invalid_input, "--base-url",
                 fmt::format("base URL '{}' has port {}: a port is a whole number from 1 to 65535", base, port),
                 expected);
  };
  std::unique_ptr<CURLU, CurlFree> h(curl_url());
  const CURLUcode set = h ? curl_url_set(h.get(), CURLUPART_URL, base.c_str(), 0) : CURLUE_OUT_OF_MEMORY;
  if (set == CURLUE_BAD_PORT_NUMBER && !written_port().empty()) throw port_out_of_range(written_port());
  if (set != CURLUE_OK)
    throw Error(ErrorKind::invalid_input, "--base-url", fmt::format("base URL '{}' is not an absolute URL", base),
                expected);
  auto part = [&](CURLUPart p) -> std::optional<std::string> {
    char* out = nullptr;
    if (curl_url_get(h.get(), p, &out, 0) != CURLUE_OK || out == nullptr) return std::nullopt;
    std::unique_ptr<char, CurlFree> guard(out);
    return std::string(out);
  };
  if (const auto port = part(CURLUPART_PORT); port && std::strtol(port->c_str(), nullptr, 10) == 0)
    throw port_out_of_range(*port);
  const auto scheme = part(CURLUPART_SCHEME);
  if (!scheme || (*scheme != "http" && *scheme != "https"))
    throw Error(ErrorKind::invalid_input, "--base-url",
                fmt::format("base URL '{}' has scheme '{}': only http and https are fetched", base,
                            scheme.value_or("")),
                expected);
  if (!part(CURLUPART_HOST))
    throw Error(ErrorKind::invalid_input, "--base-url", fmt::format("base URL '{}' has no host", base), expected);
  const auto path = part(CURLUPART_PATH);
  std::vector<std::string> extra;
  if (path && !path->empty() && *path != "/") extra.push_back("path '" + *path + "'");
  if (part(CURLUPART_QUERY)) extra.push_back("a query");
  if (part(CURLUPART_FRAGMENT)) extra.push_back("a fragment");
  if (part(CURLUPART_USER)) extra.push_back("a user name");
  if (!extra.empty()) {
    std::string list;
    for (const auto& e : extra) list += (list.empty() ? "" : ", ") + e;
    throw Error(ErrorKind::invalid_input, "--base-url",
                fmt::format("base URL '{}' has {}: only its scheme, host and port replace those of each endpoint "
                            "(the endpoint's own path and query are kept), so it would be ignored",
                            base, list),
                expected);
  }
}

std::string rebase_url(const std::string& url, const std::string& base) {
  check_base_url(base);
  auto parse = [](const std::string& u, const char* what) {
    std::unique_ptr<CURLU, CurlFree> h(curl_url());
    if (!h || curl_url_set(h.get(), CURLUPART_URL, u.c_str(), 0) != CURLUE_OK)
      throw Error(ErrorKind::invalid_input, "--base-url", fmt::format("{} '{}' is not an absolute URL", what, u),
                  "scheme://host[:port], e.g. http://127.0.0.1:8080");
    return h;
  };
  auto b = parse(base, "base URL");
  auto u = parse(url, "URL");
  auto part = [](CURLU* h, CURLUPart p) -> std::optional<std::string> {
    char* out = nullptr;
    if (curl_url_get(h, p, &out, 0) != CURLUE_OK || out == nullptr) return std::nullopt;
    std::unique_ptr<char, CurlFree> guard(out);
    return std::string(out);
  };
  const auto scheme = part(b.get(), CURLUPART_SCHEME);
  const auto host = part(b.get(), CURLUPART_HOST);
  const auto port = part(b.get(), CURLUPART_PORT);
  if (!scheme || !host)
    throw Error(ErrorKind::invalid_input, "--base-url", "base URL '" + base + "' has no scheme or host",
                "scheme://host[:port]");
  curl_url_set(u.get(), CURLUPART_SCHEME, scheme->c_str(), 0);
  curl_url_set(u.get(), CURLUPART_HOST, host->c_str(), 0);
  curl_url_set(u.get(), CURLUPART_PORT, port ? port->c_str() : nullptr, 0);
  auto out = part(u.get(), CURLUPART_URL);
  if (!out) throw Error(ErrorKind::internal, url, "cannot rebuild URL");
  return *out;
}

std::string content_hash(const std::vector<std::string_view>& bodies) { return sha256_of_parts(bodies); }

}  // namespace gpuplan::fetch
