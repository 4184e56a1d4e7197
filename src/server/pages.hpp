#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "api/assistant.hpp"
/// Server layer: the HTML pages (server-rendered mustache templates from web/templates, texts
/// from web/locales/{en,fr,th}.json, both embedded in the binary). See pages.cpp for the routes.
namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace gpuplan {
struct NoPlanReason;
}
namespace gpuplan::api {
class Context;
}

namespace gpuplan::server {

/// The methods each route takes (its `Allow` header), by the route's cpp-httplib pattern: filled
/// by add_method_not_allowed while the routes are registered, then only read. The server's error
/// handler asks it about a request cpp-httplib refused before routing: a POST, PUT or PATCH
/// without a body and without Content-Length is a 400 there, and on a route that does not take
/// the method it must be the same 405 with `Allow` as with a body (trial of issue 10, D8).
class RouteMethods {
 public:
  void add(const std::string& pattern, std::string allow);
  /// The `Allow` value of the first route whose pattern matches all of `path`; nullopt for none.
  std::optional<std::string> allow_for(const std::string& path) const;

 private:
  std::vector<std::pair<std::regex, std::string>> routes_;
};

/// Registers the page routes on `http` (/, /offers, /size, /plan, ... and /fr/..., /th/...), and
/// the methods each takes in `methods`. `can_import`: the server has an import route (a write
/// token); without one a plan page suggests no import (api::drop_import_suggestions).
void add_pages(httplib::Server& http, const api::Context& ctx, RouteMethods& methods, bool can_import);

/// The "page not found" page (404) in the request's language (its /fr or /th prefix, else
/// Accept-Language), with the site's menu: for a browser that asked for a page that does not exist.
void send_not_found_page(const httplib::Request& req, httplib::Response& res);

/// Answers OPTIONS on a route with 204 No Content and an `Allow` header ("GET, HEAD, OPTIONS" or
/// "POST, OPTIONS"), and the methods a route does not take with 405 Method Not Allowed, the same
/// `Allow` header and the API's error body {code: "method_not_allowed", message, field: "",
/// expected: allow}: routes that take GET (and HEAD, which cpp-httplib answers from GET) refuse
/// POST, PUT, PATCH and DELETE; routes that take POST refuse GET, PUT, PATCH and DELETE.
/// `pattern` is the route's cpp-httplib pattern (a regular expression over the path); the route
/// and its `Allow` value are recorded in `methods`.
void add_method_not_allowed(httplib::Server& http, const std::string& pattern, bool takes_post, RouteMethods& methods);
/// The 405 answer add_method_not_allowed's handlers give: status 405, `Allow: allow`, and on an
/// API path the API's error body (code method_not_allowed, message_code http_method_not_allowed),
/// on a page route the error page in the page's language.
void send_method_not_allowed(const httplib::Request& req, httplib::Response& res, const std::string& allow);

/// The texts of one locale (web/locales/LANG.json; "en", "fr" or "th"), for the pages and for the
/// CLI's `gpuplan ask`, which answers in the question's language.
const nlohmann::json& locale_texts(const std::string& lang);
/// `text` with each {name} replaced by vars[name].
std::string fill_text(std::string text, const std::map<std::string, std::string>& vars);
/// Formatting per locale: money ("$1,234.50", "1 234,50 $", "US$1,234.50"), a duration in
/// min / h / days in the locale's units, a count grouped as the locale writes it ("200 000 000").
std::string locale_money(double usd, const std::string& lang);
std::string locale_duration(double seconds, const std::string& lang);
std::string locale_count(double v, const std::string& lang);
/// A JSON number the same way; a JSON integer with every digit, grouped (9007199254740993 →
/// "9,007,199,254,740,993": through a double it was ...992, issue 11).
std::string locale_count(const nlohmann::json& v, const std::string& lang);
/// The assistant's note on a field the sentence gave twice (api/assistant.hpp AmbiguousField):
/// "model: the sentence names “llama-3.1-8b” and “llama-3.1-70b”; the plan uses the first: name
/// only one to be sure" in the locale's words (ask_ambiguous).
/// Where a preset's config comes from, for the pages' "Model on Hugging Face" line: {hf_id,
/// hf_url, config_url, config_revision (when the copy names one)}; {} for a model that is no
/// preset (a --params shape or a local config).
nlohmann::json model_origin_view(const std::string& model_name);
std::string ambiguous_text(const api::AmbiguousField& field, const std::string& lang);
/// "model: “mistral 7b” names several models: A or B. Say which one." in `lang` (ask_model_candidates).
std::string model_candidates_text(const api::ModelCandidates& c, const std::string& lang);

/// The sentence's numbers no field read (api::AskResult::unread), quoted as written, in the
/// locale's words (ask_unread); "" when there are none.
std::string unread_text(const std::vector<std::string>& words, const std::string& lang);
/// The plan's warnings (a plan document's "warnings" array: code, message, values) in the
/// locale's words, as the plan pages show them ("[code] text" each), English as the engine writes
/// it (CLI flags and commands): `gpuplan ask` prints them as `gpuplan plan` does (trial of issue
/// 10's assistant: ask omitted idle_gpus, cheaper_stale_plan).
std::vector<std::string> warning_lines(const nlohmann::json& warnings, const std::string& lang);
/// A no-plan answer in the locale's words: the reason (no_plan_<code>) and the suggestions
/// (suggest_<code>), with the numbers of reason.values; the planner's English sentence only for a
/// code the locale lacks.
struct NoPlanWords {
  std::string reason;
  std::vector<std::string> suggestions;
};
NoPlanWords no_plan_words(const NoPlanReason& reason, const std::string& lang);

}  // namespace gpuplan::server
