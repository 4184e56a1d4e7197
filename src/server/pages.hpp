#pragma once
#include <string>
/// Server layer: the HTML pages (server-rendered mustache templates from web/templates, texts
/// from web/locales/{en,fr,th}.json, both embedded in the binary). See pages.cpp for the routes.
namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace gpuplan::api {
class Context;
}

namespace gpuplan::server {

/// Registers the page routes on `http` (/, /offers, /size, /plan, ... and /fr/..., /th/...).
void add_pages(httplib::Server& http, const api::Context& ctx);

/// The "page not found" page (404) in the request's language (its /fr or /th prefix, else
/// Accept-Language), with the site's menu: for a browser that asked for a page that does not exist.
void send_not_found_page(const httplib::Request& req, httplib::Response& res);

/// Answers the methods a route does not take with 405 Method Not Allowed, an `Allow` header and
/// the API's error body {code: "method_not_allowed", message, field: "", expected: allow}:
/// routes that take GET (and HEAD, which cpp-httplib answers from GET) refuse POST, PUT, PATCH
/// and DELETE; routes that take POST refuse GET, PUT, PATCH and DELETE. `pattern` is the route's
/// cpp-httplib pattern (a regular expression over the path).
void add_method_not_allowed(httplib::Server& http, const std::string& pattern, bool takes_post);

}  // namespace gpuplan::server
