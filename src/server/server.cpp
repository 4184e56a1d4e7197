#include "server/server.hpp"

#include <fmt/core.h>
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <ctime>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "api/catalog_reads.hpp"
#include "api/estimate.hpp"
#include "api/fields.hpp"
#include "api/import.hpp"
#include "server/fifo_slots.hpp"
#include "server/openapi.hpp"
#include "api/plan.hpp"
#include "api/size.hpp"
#include "catalog/filter.hpp"
#include "server/pages.hpp"
#include "server/response_cache.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan::server {

using nlohmann::json;

namespace {

std::string http_date(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::string etag_of(const std::string& body) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("\"{:016x}\"", h);
}

/// An HTTP-date (RFC 9110 §5.6.7, IMF-fixdate) as time_t; nullopt when it is not one.
std::optional<std::time_t> parse_http_date(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return timegm(&tm);
}

/// "2026-11-20" or "2026-11-20T12:33:53Z" as time_t (UTC); nullopt otherwise.
std::optional<std::time_t> parse_observed_at(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%d", &tm);
  if (end == nullptr) return std::nullopt;
  if (*end == 'T' || *end == ' ') {
    std::tm with_time = tm;
    if (strptime(end + 1, "%H:%M:%S", &with_time) != nullptr) tm = with_time;
  }
  return timegm(&tm);
}

/// True when an If-None-Match value ("*", or a list of entity tags, weak or strong) names `etag`
/// (weak comparison, RFC 9110 §13.1.2).
bool etag_listed(const std::string& if_none_match, const std::string& etag) {
  std::size_t start = 0;
  while (start < if_none_match.size()) {
    std::size_t comma = if_none_match.find(',', start);
    if (comma == std::string::npos) comma = if_none_match.size();
    std::string tag = if_none_match.substr(start, comma - start);
    start = comma + 1;
    tag.erase(0, tag.find_first_not_of(" \t"));
    tag.erase(tag.find_last_not_of(" \t") + 1);
    if (tag == "*" || tag == etag || (tag.rfind("W/", 0) == 0 && tag.substr(2) == etag)) return true;
  }
  return false;
}

/// `req`: the request, when known: a filter given as the query parameter `q` is named "/q" (the
/// parameter the client wrote), not the body field "/filter".
json error_body(const Error& e, const httplib::Request* req = nullptr) {
  // message_code and values (util/error_code.hpp): the message's stable id and the values it
  // quotes, for a client that words errors in its own language; "" and {} when it has none.
  const ErrorCode* c = error_code_of(e);
  // In the API's words: JSON field names, not CLI flags (api::api_wording); a filter error's
  // message echoes the client's filter, so it is kept as written.
  const bool filter_error = dynamic_cast<const FilterError*>(&e) != nullptr;
  json body = {{"code", kind_name(e.kind())}, {"message", filter_error ? e.message() : api::api_wording(e.message())},
               {"field", api::api_field_of(e)},
               {"expected", api::api_wording(e.expected())}, {"message_code", c ? c->code : std::string()},
               {"values", c ? json(c->values) : json::object()}};
  // A value that names a flag ("field": "--tp") is the field's JSON name here, as in the message.
  for (auto& [key, v] : body["values"].items())
    if (v.is_string() && v.get_ref<const std::string&>().rfind("--", 0) == 0) v = api::api_wording(v.get<std::string>());
  if (const auto* f = dynamic_cast<const FilterError*>(&e)) {  // where in the filter text
    body["offset"] = f->offset();
    body["length"] = f->length();
    // One line: the CLI's message shows the filter under it with a caret (catalog/filter.cpp);
    // the API keeps the first line and gives the position as values (1-based column, length).
    // The echoed filter (the message's second line, at most 80 characters with "…" where cut)
    // stays after the column, so a long or unprintable query is still recognisable.
    const std::string& m = e.message();
    const std::size_t nl = m.find('\n');
    std::string echo;
    if (nl != std::string::npos) {
      const std::size_t end = m.find('\n', nl + 1);
      echo = m.substr(nl + 1, end == std::string::npos ? std::string::npos : end - nl - 1);
      echo.erase(0, echo.find_first_not_of(' '));
    }
    body["message"] = echo.empty() ? fmt::format("{} (at column {})", m.substr(0, nl), f->offset() + 1)
                                    : fmt::format("{} (at column {} of: {})", m.substr(0, nl), f->offset() + 1, echo);
    body["values"]["column"] = std::to_string(f->offset() + 1);
    body["values"]["length"] = std::to_string(f->length());
    if (req && req->has_param("q") && !req->has_param("filter")) body["field"] = "/q";
  }
  return body;
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body) + "\n", "application/json");
}

void send_error(httplib::Response& res, const Error& e, const httplib::Request* req = nullptr) {
  send_json(res, http_status(e.kind()), error_body(e, req));
}

/// An error the server answers itself (no engine Error behind it: 401, 403, 404, 413, 500, ...),
/// in the same shape as error_body: code, message, field "", expected, message_code, values.
void send_server_error(httplib::Response& res, int status, const char* code, const std::string& message,
                       const std::string& expected, const char* message_code, json values = json::object()) {
  send_json(res, status, {{"code", code}, {"message", message}, {"field", ""}, {"expected", expected},
                          {"message_code", message_code}, {"values", std::move(values)}});
}
void send_internal_error(httplib::Response& res) {
  send_server_error(res, 500, "internal", "internal error", "", "http_internal_error");
}

/// `text` with each byte outside printable ASCII written as %XX: how an error quotes what a
/// request sent (the pages echo it).
std::string printable_or_percent(std::string_view text) {
  std::string quoted;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b > 0x20 && b < 0x7f) quoted += c;
    else quoted += fmt::format("%{:02X}", static_cast<unsigned>(b));
  }
  return quoted;
}

/// %XX and '+' decoded (application/x-www-form-urlencoded). A '%' not followed by two hex digits
/// is Error{invalid_input, "/NAME", query_not_percent_encoded} naming the parameter `name` (as
/// written) and the character: `?q=%zz` was passed on as the filter text "%zz" and answered
/// "unknown field" (trial11).
std::string decode_query_part(std::string_view s, std::string_view name) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) {
        // Quoted as percent-encoding: a byte outside printable ASCII in the name as written (or in
        // the bad sequence) is shown as %XX, never raw (the pages echo the name).
        const std::string seen = printable_or_percent(s.substr(i, 3));
        const std::string written = printable_or_percent(name);
        throw_invalid_coded("/" + written, "query_not_percent_encoded",
                            {{"name", written}, {"character", std::to_string(i + 1)}},
                            fmt::format("query parameter \"{}\" is not valid percent-encoding: '{}' at character {}", written, seen, i + 1),
                            "%XX with two hexadecimal digits (RFC 3986 §2.1); a percent sign is %25");
      }
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// A decoded query parameter whose name or value holds a C0 control character other than tab, line
/// feed and carriage return (a textarea's lines), or DEL, is Error{invalid_input, "/NAME",
/// query_text_not_clean}, as the JSON API refuses one in a string (json_text_not_clean): a NUL
/// was echoed raw into a page's error text (trial42 D6). Bytes that are not UTF-8 and bidi
/// controls keep their own handling (each reader words them, or echoes them repaired), as does the
/// filter (`q`, `filter`), whose reader words every byte problem in the page's language.
void check_query_text(const std::string& key, const std::string& value) {
  const bool filter = key == "q" || key == "filter";
  for (const std::string* text : {&key, &value}) {
    if (filter && text == &value) continue;
    for (std::size_t i = 0; i < text->size(); ++i) {
      const auto b = static_cast<unsigned char>((*text)[i]);
      if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F) {
        const std::string shown = printable_or_percent(key);
        throw_invalid_coded("/" + shown, "query_text_not_clean", {{"name", shown}, {"character", std::to_string(i + 1)}},
                            fmt::format("query parameter \"{}\": control character 0x{:02x} at character {} of its {}",
                                        shown, b, i + 1, text == &key ? "name" : "value"),
                            "text without control characters");
      }
    }
  }
}

/// Calls f(key, value) for each `key=value` part of the request target's query string, split at
/// the FIRST '=' (cpp-httplib's own parser keeps the text after the last one), still encoded; a
/// part without '=' has an empty value, empty parts are skipped, a '#' fragment is dropped.
template <class F>
void for_each_query_part(std::string_view target, F&& f) {
  const std::size_t qm = target.find('?');
  if (qm == std::string_view::npos) return;
  std::string_view query = target.substr(qm + 1);
  if (const std::size_t hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    f(part.substr(0, eq), eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1));
  }
}

/// The query string's parameters (`q` read as `filter`), each split at its first '=' so that a
/// filter typed unencoded (`?q=gpu=H100`, `?q=gpus>=8`) keeps its whole text. `q` is the short
/// name of `filter`. A parameter given twice (`?q=a&q=b`, or `q` with `filter`) is 400
/// `parameter_twice` at the name the client wrote (`/q`), on every endpoint that reads a query string.
std::multimap<std::string, std::string> query_params(const httplib::Request& req) {
  std::multimap<std::string, std::string> out;
  std::map<std::string, std::string> written;  // canonical name -> the name the client wrote
  for_each_query_part(req.target, [&](std::string_view k, std::string_view v) {
    std::string key = decode_query_part(k, k);
    std::string value = v.empty() ? std::string() : decode_query_part(v, key);
    check_query_text(key, value);
    std::string canonical = key == "q" ? "filter" : key;
    if (const auto [it, fresh] = written.emplace(canonical, key); !fresh)
      throw_invalid_coded("/" + key, "parameter_twice", {{"name", key}}, "query parameter \"" + key + "\" given twice",
                          it->second == key ? "each parameter once" : "one of " + it->second + " and " + key);
    out.emplace(std::move(canonical), std::move(value));
  });
  return out;
}

/// cpp-httplib's own reading of a query string (Request::params, which the pages read) keeps the
/// text after the last '=': `/offers?q=gpus>=8` became the filter "8" and `/plan?model=a=b` the
/// model "b" (trial of issue 10). This re-reads it split at the first '=', decoded by
/// cpp-httplib's own decoder (`%XX`, '+' for a space). A bad '%' is refused before anything reads
/// the parameters: by query_params on the API, by check_query_percent_encoding on the pages.
void resplit_params(httplib::Request& req) {
  req.params.clear();
  for_each_query_part(req.target, [&](std::string_view k, std::string_view v) {
    req.params.emplace(httplib::detail::decode_url(std::string(k), true), httplib::detail::decode_url(std::string(v), true));
  });
}

/// The request body through robust's strict reader (util/text_check.hpp: duplicate keys, nesting
/// depth, numbers out of range, invalid UTF-8 and control characters are errors). Its error
/// positions are mapped to the API's field: a JSON pointer ("/model" for a duplicate "model"),
/// or "/" with the line:column for a syntax error.
json parse_body(const httplib::Request& req) {
  if (req.body.empty()) throw_invalid_coded("/", "body_empty", {}, "empty request body", "a JSON object");
  static const std::string source = "body";
  try {
    return parse_json_strict(req.body, source);
  } catch (const Error& e) {
    const std::string& w = e.where();
    if (w.rfind(source + ": /", 0) == 0) rethrow_at(e, w.substr(source.size() + 2));
    const std::string at = w.rfind(source + ":", 0) == 0 ? w.substr(source.size() + 1) : std::string();
    const std::string message = at.empty() ? e.message() : "at line:column " + at + ": " + e.message();
    if (const ErrorCode* c = error_code_of(e))  // json_malformed etc. (util/text_check.cpp): the code stays
      throw CodedError(e.kind(), "/", message, e.expected(), c->code, c->values);
    throw Error(e.kind(), "/", message, e.expected());
  }
}

/// Equal strings, in time that depends only on the lengths (not on where they first differ).
bool constant_time_equal(const std::string& a, const std::string& b) {
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

void send_too_large(httplib::Response& res, std::size_t limit) {
  send_server_error(res, 413, "payload_too_large", "request body too large", fmt::format("at most {} bytes", limit),
                    "http_payload_too_large");
}

/// "true"/"false" (also 1/0) for a query flag; Error{invalid_input, "/NAME"} otherwise.
bool query_bool(const std::string& name, const std::string& v) {
  if (v == "true" || v == "1" || v.empty()) return true;
  if (v == "false" || v == "0") return false;
  throw_invalid_coded("/" + name, "not_boolean", {{"value", v.substr(0, 32)}}, "\"" + v.substr(0, 32) + "\" is not true or false",
                      "true or false");
}

}  // namespace

void check_path_percent_encoding(std::string_view target, const std::string& field) {
  const std::string_view path = target.substr(0, target.find_first_of("?#"));
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') continue;
    if (i + 2 < path.size() && std::isxdigit(static_cast<unsigned char>(path[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(path[i + 2]))) {
      i += 2;
      continue;
    }
    // The segment holding the bad sequence, quoted as the query check quotes (printable ASCII).
    const std::size_t from = path.rfind('/', i) + 1, to = std::min(path.find('/', i), path.size());
    const std::string segment = printable_or_percent(path.substr(from, std::min<std::size_t>(to - from, 80)));
    throw_invalid_coded(field, "path_not_percent_encoded",
                        {{"segment", segment}, {"character", std::to_string(i - from + 1)}},
                        fmt::format("path segment \"{}\" is not valid percent-encoding at character {}", segment, i - from + 1),
                        "%XX with two hexadecimal digits (RFC 3986 §2.1); a percent sign is %25");
  }
}

void check_query_percent_encoding(std::string_view target) {
  for_each_query_part(target, [](std::string_view k, std::string_view v) {
    const std::string key = decode_query_part(k, k);
    check_query_text(key, v.empty() ? std::string() : decode_query_part(v, key));
  });
}

struct Server::Impl {
  const api::Context& ctx;
  ServerOptions options;
  httplib::Server http;
  int bound_port = 0;
  std::time_t opened_at = std::time(nullptr);
  /// Last-Modified of the catalog data: the newest observation in the store (flagged ones too),
  /// or — when the data changed while this process ran — the time it saw the change, whichever
  /// is later; the server's start only when the store has no dated observation. Per data version.
  std::mutex data_time_mutex;
  std::optional<std::string> data_time_version;
  std::time_t data_time_value = 0;
  ResponseCache catalog_cache{512};  ///< GET /api/gpus, models, offers, history: URL → body, ETag
  ResponseCache compute_cache{256};  ///< POST /api/size, plan, estimate: path + body bytes → body
  /// With ServerOptions::compute_threads > 0: at most that many computations (size, plan,
  /// estimate) run at once; the others wait here in arrival order (compute()).
  std::optional<FifoSlots> compute_slots;
  RouteMethods methods;  ///< each route's Allow (filled by routes(); read by the pre-routing handler)

  Impl(const api::Context& c, ServerOptions o) : ctx(c), options(std::move(o)) {
    if (options.compute_threads > 0) compute_slots.emplace(options.compute_threads);
  }

  /// Wraps a handler: maps gpuplan::Error to its status and body, anything else to a bare 500.
  template <class F>
  httplib::Server::Handler guarded(F f) {
    return [f](const httplib::Request& req, httplib::Response& res) {
      try {
        f(req, res);
      } catch (const Error& e) {
        send_error(res, e, &req);
      } catch (const std::exception&) {
        send_internal_error(res);
      }
    };
  }

  std::time_t data_time() {
    if (!ctx.caching()) return opened_at;
    const std::string version = ctx.data_version();
    std::lock_guard<std::mutex> lock(data_time_mutex);
    if (data_time_version && *data_time_version == version) return data_time_value;
    OfferQuery q;
    q.include_excluded = true;
    q.now_date = ctx.clock().today();
    std::optional<std::time_t> newest;
    for (const Offer& o : *ctx.query_offers(q))
      for (const PriceObservation& p : o.prices)
        if (p.source.observed_at)
          if (const auto t = parse_observed_at(*p.source.observed_at); t && (!newest || *t > *newest)) newest = t;
    std::time_t t = newest.value_or(opened_at);
    if (data_time_version) t = std::max(t, std::time(nullptr));  // changed under this process
    data_time_version = version;
    data_time_value = t;
    return t;
  }

  /// A catalog read: cached by URL (with the data version and today: ResponseCache), ETag and
  /// Last-Modified (data_time(); for an answer that depends on today's date without a `today`
  /// parameter — offer ages and staleness — at least today's 00:00 UTC). Conditional requests
  /// (RFC 9110 §13.2.2): If-None-Match decides when present, else If-Modified-Since.
  template <class F>
  httplib::Server::Handler catalog_read(F produce, bool depends_on_today = false) {
    return guarded([this, produce, depends_on_today](const httplib::Request& req, httplib::Response& res) {
      std::string url = req.path;
      for (const auto& [k, v] : query_params(req)) url += "\n" + k + "=" + v;
      const std::string key = ResponseCache::key(ctx, url);
      std::shared_ptr<const CachedResponse> hit = catalog_cache.get(key);
      std::string body, etag;
      if (hit) {
        body = hit->body;
        etag = hit->etag;
      } else {
        body = dump_json(produce(req)) + "\n";
        etag = etag_of(body);
        catalog_cache.put(key, CachedResponse{body, "application/json", etag, ""});
      }
      std::time_t modified = data_time();
      if (depends_on_today && !req.has_param("today")) {
        if (const auto midnight = parse_observed_at(ctx.clock().today())) modified = std::max(modified, *midnight);
      }
      res.set_header("ETag", etag);
      res.set_header("Last-Modified", http_date(modified));
      res.set_header("Cache-Control", "no-cache");
      bool not_modified = false;
      if (req.has_header("If-None-Match")) {
        not_modified = etag_listed(req.get_header_value("If-None-Match"), etag);
      } else if (req.has_header("If-Modified-Since")) {
        const auto since = parse_http_date(req.get_header_value("If-Modified-Since"));
        not_modified = since && modified <= *since;
      }
      if (not_modified) {
        res.status = 304;
        return;
      }
      res.status = 200;
      res.set_content(std::move(body), "application/json");
    });
  }

  /// A computation on a JSON body (size, plan, estimate): an answer is a pure function of the
  /// request value, the catalog's data version and today (ResponseCache::key), so a repeated
  /// request is answered from compute_cache. The key is the canonical request: the body parsed by
  /// the strict reader and written again (object keys sorted, no spaces, numbers as their value:
  /// `{"tokens": 5e8, "model": "x"}` and `{"model":"x","tokens":500000000.0}` are one request),
  /// never the raw bytes. `X-Cache: hit` or `miss` says which (docs/server.md).
  template <class F>
  httplib::Server::Handler compute(F produce) {
    return guarded([this, produce](const httplib::Request& req, httplib::Response& res) {
      if (req.body.size() > options.max_body_bytes) {  // the global limit is the import's with a token
        send_too_large(res, options.max_body_bytes);
        return;
      }
      // The fields are the JSON body's: a query string would be ignored without a word (trial48:
      // POST /api/plan?model=x answered 200 for the body's model), so it is refused by name.
      for (const auto& [k, v] : query_params(req))
        throw_invalid_coded("/" + k, "unknown_field", {{"name", k}, {"known", "none: a POST takes its fields in the JSON body"}},
                            "query parameter on a POST: the fields go in the JSON body", "no query string");
      const json request = parse_body(req);
      const std::string key = ResponseCache::key(ctx, req.path + '\x1f' + request.dump());
      if (auto hit = compute_cache.get(key)) {
        res.status = 200;
        res.set_header("X-Cache", "hit");
        res.set_content(hit->body, "application/json");
        return;
      }
      std::string body;
      {
        // CPU-bound work: as many at once as there are cores. With one worker thread per
        // keep-alive connection, 32 connections would otherwise time-share 2 cores, and a long
        // plan would take 16 times its CPU time (docs/server.md "Speed").
        std::optional<FifoSlots::Hold> hold;
        if (compute_slots) hold.emplace(*compute_slots);
        body = dump_json(produce(request)) + "\n";
      }
      compute_cache.put(key, CachedResponse{body, "application/json", "", ""});
      res.status = 200;
      res.set_header("X-Cache", key.empty() ? "off" : "miss");
      res.set_content(std::move(body), "application/json");
    });
  }

  /// POST /api/import (server.hpp): token, query, then api::run_import.
  void import(const httplib::Request& req, httplib::Response& res) {
    if (!options.write_token) {
      send_server_error(res, 403, "read_only", "this server is read-only: no write token is configured",
                        "a server started with GPUPLAN_WRITE_TOKEN or --write-token-file", "http_read_only");
      return;
    }
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (auth.size() <= prefix.size() || auth.compare(0, prefix.size(), prefix) != 0 ||
        !constant_time_equal(auth.substr(prefix.size()), *options.write_token)) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_server_error(res, 401, "unauthorized", auth.empty() ? "no Authorization header" : "wrong or malformed bearer token",
                        "Authorization: Bearer TOKEN (the server's write token)", "http_unauthorized");
      return;
    }
    if (req.body.size() > options.max_import_bytes) {
      send_too_large(res, options.max_import_bytes);
      return;
    }
    api::ImportInput in;
    for (const auto& [k, v] : query_params(req)) {
      if (k == "format") in.format = v;
      else if (k == "dry_run") in.dry_run = query_bool(k, v);
      else if (k == "name") in.name = v;
      else throw_invalid_coded("/" + k, "unknown_field", {{"name", k}, {"known", "format, dry_run, name"}}, "unknown query parameter",
                          "format, dry_run or name");
    }
    if (in.body = req.body; in.body.empty())
      throw_invalid_coded("/", "body_empty", {}, "empty request body", "an offer file (docs/import-format.md)");
    try {
      send_json(res, 200, api::to_json(api::run_import(in, ctx)));
    } catch (const Error& e) {
      if (!e.where().empty() && e.where().front() == '/') throw;  // a query parameter: the usual body
      // The file's position (NAME:LINE or NAME:LINE:COL) is the field, and leads the message.
      json body = error_body(e);
      body["field"] = e.where();
      body["message"] = e.where().empty() ? e.message() : e.where() + ": " + e.message();
      // The importers' own errors name the row and what was expected in English (catalog/import_*);
      // one code says "the file was refused at this position" for a client that words it itself.
      if (body["message_code"] == "") {
        body["message_code"] = "import_refused";
        body["values"] = {{"position", e.where().empty() ? std::string("?") : e.where()}};
      }
      send_json(res, http_status(e.kind()), body);
    }
  }

  void routes() {
    http.Get("/api/health", guarded([this](const httplib::Request&, httplib::Response& res) {
               // For a load balancer: 200 only while the store answers; 503 takes this process
               // out of rotation while its database is unreachable (it recovers by itself).
               StoreCounts c;
               try {
                 c = ctx.store_counts();
               } catch (const Error& e) {
                 send_json(res, 503, {{"status", "unavailable"}, {"version", "0.1.0"}, {"store", "unreachable"},
                                      {"message", e.what()}});
                 return;
               }
               send_json(res, 200, {{"status", "ok"}, {"version", "0.1.0"}, {"store", "reachable"},
                                    {"offers", c.offers}, {"observations", c.observations}});
             }));
    http.Get("/api/openapi.json", guarded([](const httplib::Request&, httplib::Response& res) {
               send_json(res, 200, openapi_document());
             }));
    http.Get("/api/gpus", catalog_read([this](const httplib::Request& req) {
               api::GpusInput in;
               api::read_query(in, query_params(req), api::gpus_fields());
               return api::gpus_to_json(in, api::run_gpus(in, ctx));
             }));
    http.Get("/api/models", catalog_read([this](const httplib::Request& req) {
               api::ModelsInput in;
               api::read_query(in, query_params(req), api::models_fields());
               return api::to_json(api::run_models(in, ctx));
             }));
    http.Get("/api/offers", catalog_read([this](const httplib::Request& req) {
               api::OffersInput in;
               api::read_query(in, query_params(req), api::offers_fields());
               return api::to_json(api::run_offers(in, ctx));
             }, /*depends_on_today=*/true));
    http.Get(R"(/api/offers/(.+)/history)", catalog_read([this](const httplib::Request& req) {
               if (!req.params.empty()) throw_invalid("/" + req.params.begin()->first, "unknown query parameter", "none");
               check_path_percent_encoding(req.target, "/offer_id");
               api::HistoryInput in;
               in.offer_id = req.matches[1].str();
               return api::history_to_json(api::run_history(in, ctx));
             }));
    http.Post("/api/size", compute([this](const json& body) {
                api::SizeInput in;
                api::read_fields(in, body, api::size_fields());
                return api::api_worded(api::to_json(api::run_size(in, ctx)));
              }));
    http.Post("/api/plan", compute([this](const json& body) {
                api::PlanInput in;
                api::read_fields(in, body, api::plan_fields());
                in.search_memo_key = api::search_memo_key(body);  // planner.hpp SearchMemo
                api::PlanOutput out = api::run_plan(in, ctx);
                if (!options.write_token) api::drop_import_suggestions(out);  // no POST /api/import here
                return api::api_worded(api::to_json(out));
              }));
    http.Post("/api/estimate", compute([this](const json& body) {
                api::EstimateInput in;
                api::read_fields(in, body, api::estimate_fields());
                return api::api_worded(api::to_json(api::run_estimate(in, ctx)));
              }));
    http.Post("/api/import", guarded([this](const httplib::Request& req, httplib::Response& res) {
                import(req, res);
              }));
    for (const char* get_route : {"/api/health", "/api/openapi.json", "/api/gpus", "/api/models", "/api/offers",
                                  R"(/api/offers/(.+)/history)"})
      add_method_not_allowed(http, get_route, false, methods);
    for (const char* post_route : {"/api/size", "/api/plan", "/api/estimate", "/api/import"}) add_method_not_allowed(http, post_route, true, methods);
    add_pages(http, ctx, methods, /*can_import=*/options.write_token.has_value());
  }
};

Server::Server(const api::Context& ctx, ServerOptions options) : impl_(std::make_unique<Impl>(ctx, std::move(options))) {
  auto& http = impl_->http;
  const std::size_t threads = impl_->options.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  const ServerOptions& o = impl_->options;
  http.set_payload_max_length(o.write_token ? std::max(o.max_body_bytes, o.max_import_bytes) : o.max_body_bytes);
  // With a token the import's limit is the global one (cpp-httplib has one): every other handler
  // taking a body checks max_body_bytes itself (compute(); the 405 handlers ignore theirs).
  http.set_read_timeout(impl_->options.read_timeout_seconds, 0);
  http.set_write_timeout(impl_->options.write_timeout_seconds, 0);
  // cpp-httplib's pool keeps one worker per keep-alive connection until it closes: a connection
  // beyond `threads` waits in the queue, so a small request cap per connection rotates them.
  http.set_keep_alive_max_count(100);
  http.set_keep_alive_timeout(5);
  http.set_tcp_nodelay(true);
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, with which a second
  // `gpuplan serve` on the same address bound too and the kernel split the connections between
  // the two (trial of issue 10). Now the second one fails to bind (Error{unavailable, "--listen"}).
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
  });
  // Every handler sees Request::params split at the first '=' (resplit_params). The object is the
  // server's own non-const request, handed to handlers as const.
  http.set_pre_routing_handler([impl = impl_.get()](const httplib::Request& req, httplib::Response& res) {
    resplit_params(const_cast<httplib::Request&>(req));
    // Methods cpp-httplib parses but routes nowhere (TRACE, CONNECT, PRI) got its bare 400: a
    // method the route does not take is 405 with Allow (RFC 9110 §15.5.6), as for PUT or DELETE;
    // on a path no route has, the 404 every method gets there (trial10b D8).
    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST" && req.method != "PUT" &&
        req.method != "PATCH" && req.method != "DELETE" && req.method != "OPTIONS") {
      if (const auto allow = impl->methods.allow_for(req.path)) send_method_not_allowed(req, res, *allow);
      else res.status = 404;
      return httplib::Server::HandlerResponse::Handled;
    }
    // A Content-Length that is not decimal digits is invalid (RFC 9112 §6.3: 400). cpp-httplib
    // read "-1" as 2^64 - 1 bytes and answered 413, too large (trial of issue 10).
    if (req.has_header("Content-Length")) {
      // Two Content-Length fields that differ frame the body two ways (RFC 9112 §6.3: "the
      // message framing is invalid", 400); cpp-httplib read the first (trial11).
      const std::size_t fields = req.get_header_value_count("Content-Length");
      for (std::size_t i = 1; i < fields; ++i)
        if (req.get_header_value("Content-Length", i) != req.get_header_value("Content-Length")) {
          send_server_error(res, 400, "invalid_input", "two different Content-Length fields",
                            "one Content-Length (RFC 9112 §6.3)", "http_bad_request");
          return httplib::Server::HandlerResponse::Handled;
        }
      const std::string length = req.get_header_value("Content-Length");
      if (length.empty() || !std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        send_server_error(res, 400, "invalid_input",
                          fmt::format("Content-Length '{}' is not a number of bytes", printable_or_percent(length.substr(0, 32))),
                          "a Content-Length of decimal digits (RFC 9112 §6.3)", "http_bad_request");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    // A POST, PUT or PATCH with neither Content-Length nor Transfer-Encoding has no body (RFC 9112
    // §6.3), but cpp-httplib reads one until the connection ends or its read timeout (5 s), then
    // answers 400 before any handler: `curl -X POST /api/offers` waited 5 s for 400 body_empty
    // where a POST with a body got 405 (trial of issue 10, D8). Answered here, before the read:
    // on a route that does not take the method the same 405 and Allow as with a body; on one
    // that does, 400 body_empty at once.
    if ((req.method == "POST" || req.method == "PUT" || req.method == "PATCH") && !req.has_header("Content-Length") &&
        !req.has_header("Transfer-Encoding")) {
      if (const auto allow = impl->methods.allow_for(req.path)) {
        if (allow->find(req.method) == std::string::npos) {
          send_method_not_allowed(req, res, *allow);
        } else {
          send_server_error(res, 400, "invalid_input", "empty request body (no body and no Content-Length header)",
                            "a request body with a Content-Length header (a JSON object; /api/import: an offer file)",
                            "body_empty");
        }
        return httplib::Server::HandlerResponse::Handled;
      }
      // No route has this path: the 404 every method gets there (the error handler writes it),
      // at once instead of after the 5 s read.
      res.status = 404;
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });  // small JSON replies: no Nagle wait on the delayed ACK (~40 ms per read)
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_internal_error(res);
  });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    // A browser's unknown page gets a page (in its language); the JSON API keeps JSON errors.
    const bool api_path = req.path == "/api" || req.path.rfind("/api/", 0) == 0;
    const std::string accept = req.get_header_value("Accept");
    const bool wants_json = accept.find("application/json") != std::string::npos && accept.find("text/html") == std::string::npos;
    if (res.status == 404 && !api_path && !wants_json) {
      send_not_found_page(req, res);
      return;
    }
    // A method cpp-httplib does not know at all ("FOO"): it refused the request line with 400;
    // RFC 9110 §15.6.2 says 501 Not Implemented (the method is supported for no resource).
    static const std::set<std::string> known = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PRI"};
    if (res.status == 400 && !req.method.empty() && !known.count(req.method)) {
      // cpp-httplib refused the request line before it set the path (measured: req.path is empty),
      // so a page cannot be told from the API here: the JSON error everywhere, as for a 414.
      const std::string method = req.method.substr(0, 32);
      // The methods some route takes (add_method_not_allowed): PUT, PATCH and DELETE are known but
      // every route answers them 405, so offering them here promised what no route does (trial of issue 10).
      send_server_error(res, 501, "not_implemented", "method " + method + " is not implemented",
                        "GET, HEAD, POST or OPTIONS", "http_not_implemented", {{"method", method}});
      return;
    }
    const char* code = res.status == 404 ? "not_found" : res.status == 413 ? "payload_too_large" : "invalid_input";
    const char* message = res.status == 404   ? "no such page or endpoint"
                          : res.status == 413 ? "request body too large"
                          : res.status == 414 ? "request URI too long"
                                              : "bad request";
    // message_code/values as on every other error (util/error_code.hpp), so that a client words it.
    const char* message_code = res.status == 404   ? "http_not_found"
                               : res.status == 413 ? "http_payload_too_large"
                               : res.status == 414 ? "http_uri_too_long"
                                                   : "http_bad_request";
    json values = json::object();
    if (res.status == 404) values["path"] = req.path;
    // A POST without a body and without Content-Length: the pre-routing handler answers it (405,
    // 400 body_empty or 404) before cpp-httplib reads a body; should cpp-httplib still refuse one
    // with 400, say what is missing, with the code a handler gives an empty body (body_empty).
    if (res.status == 400 && (req.method == "POST" || req.method == "PUT" || req.method == "PATCH") &&
        !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding") && req.body.empty()) {
      send_server_error(res, 400, "invalid_input", "empty request body (no body and no Content-Length header)",
                        "a request body with a Content-Length header (a JSON object; /api/import: an offer file)",
                        "body_empty");
      return;
    }
    send_server_error(res, res.status, code, message, "", message_code, std::move(values));
  });
  impl_->routes();
}

Server::~Server() = default;

void Server::bind() {
  const auto& o = impl_->options;
  if (o.port == 0) {
    impl_->bound_port = impl_->http.bind_to_any_port(o.host);
  } else {
    impl_->bound_port = impl_->http.bind_to_port(o.host, o.port) ? o.port : -1;
  }
  if (impl_->bound_port <= 0) {
    throw Error(ErrorKind::unavailable, "--listen", fmt::format("cannot listen on {}:{}", o.host, o.port),
                "a free local address and port");
  }
}

int Server::port() const { return impl_->bound_port; }

void Server::run() { impl_->http.listen_after_bind(); }

void Server::stop() { impl_->http.stop(); }

void parse_listen(const std::string& text, ServerOptions& options) {
  std::string host = "127.0.0.1";
  std::string port = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    throw_invalid("--listen", fmt::format("cannot read '{}' as HOST:PORT", text), "HOST:PORT, :PORT or PORT (0-65535)");
  options.host = host;
  options.port = static_cast<int>(p);
}

}  // namespace gpuplan::server
