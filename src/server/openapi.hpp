#pragma once
/// Server layer: the OpenAPI 3.1 document served at GET /api/openapi.json. Request parameters
/// and bodies are generated from the api field tables (the same rows the CLI's flags come from);
/// response schemas come from web/openapi-responses.json, embedded in the binary, and a test
/// (tests/server) validates real responses against them.
#include <nlohmann/json.hpp>
#include <string_view>

namespace gpuplan::server {

const nlohmann::json& openapi_document();

/// Bytes of a file under web/ embedded in the binary (templates, locales, schemas), or empty view.
std::string_view web_file(std::string_view path);

}  // namespace gpuplan::server
