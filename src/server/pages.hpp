#pragma once
/// Server layer: the HTML pages (server-rendered mustache templates from web/templates, texts
/// from web/locales/{en,fr,th}.json, both embedded in the binary). See pages.cpp for the routes.
namespace httplib {
class Server;
}

namespace gpuplan::api {
class Context;
}

namespace gpuplan::server {

/// Registers the page routes on `http` (/, /offers, /size, /plan, ... and /fr/..., /th/...).
void add_pages(httplib::Server& http, const api::Context& ctx);

}  // namespace gpuplan::server
