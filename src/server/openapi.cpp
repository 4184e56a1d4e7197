#include "server/openapi.hpp"

#include <fmt/core.h>

#include <string>
#include <utility>
#include <vector>

#include "api/fields.hpp"
#include "util/error.hpp"

namespace gpuplan::detail {
const std::vector<std::pair<std::string_view, std::string_view>>& web_table();  // cmake/embed.cmake (web/)
}

namespace gpuplan::server {

using nlohmann::json;

std::string_view web_file(std::string_view path) {
  for (const auto& [p, bytes] : detail::web_table())
    if (p == path) return bytes;
  return {};
}

namespace {

json field_schema(const api::FieldInfo& f) {
  json s;
  switch (f.type) {
    case api::FieldType::boolean: s["type"] = "boolean"; break;
    case api::FieldType::integer: s["type"] = "integer"; break;
    case api::FieldType::number: s["type"] = "number"; break;
    case api::FieldType::string: s["type"] = "string"; break;
    case api::FieldType::count:
    case api::FieldType::duration: s["type"] = json::array({"number", "string"}); break;
  }
  s["description"] = std::string(f.help) + (f.flag.empty() ? "" : fmt::format(" (CLI {})", f.flag));
  return s;
}

const std::vector<api::FieldInfo>& table(std::string_view request) {
  for (const auto& t : api::request_tables())
    if (t.request == request) return t.fields;
  throw Error(ErrorKind::internal, "openapi", "no request table " + std::string(request));
}

json body_schema(std::string_view request) {
  json props = json::object();
  for (const auto& f : table(request))
    if (f.face == api::FieldFace::both) props[std::string(f.name)] = field_schema(f);
  return {{"type", "object"}, {"additionalProperties", false}, {"properties", props}};
}

json query_parameters(std::string_view request, std::vector<std::string_view> skip = {}) {
  json params = json::array();
  for (const auto& f : table(request)) {
    if (f.face != api::FieldFace::both) continue;
    if (std::find(skip.begin(), skip.end(), f.name) != skip.end()) continue;
    std::string name(f.name);
    if (request == "offers" && name == "filter") name = "q";
    params.push_back({{"name", name}, {"in", "query"}, {"required", false}, {"schema", field_schema(f)}});
  }
  return params;
}

/// Every status the server answers an operation with (a trial found 413, 405 and 503 missing
/// where the server sends them): `body` = a POST with a JSON body (413 over the body limit).
json responses(const std::string& schema_ref, bool cached, bool body = false) {
  json ok = {{"description", "the CLI's --json document"},
             {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/" + schema_ref}}}}}}}};
  if (cached) ok["headers"] = {{"ETag", {{"schema", {{"type", "string"}}}}}, {"Last-Modified", {{"schema", {{"type", "string"}}}}}};
  json err = {{"description", "an error"},
              {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
  json r = {{"200", ok}, {"400", err}, {"404", err}, {"500", err}};
  json r405 = err;
  r405["description"] = "another method (code method_not_allowed, with an Allow header)";
  r405["headers"] = {{"Allow", {{"schema", {{"type", "string"}}}}}};
  r["405"] = r405;
  json r503 = err;
  r503["description"] = "the store cannot be reached (code unavailable); the server keeps serving";
  r["503"] = r503;
  if (body) {
    json r413 = err;
    r413["description"] = "the body is over the request limit (code payload_too_large)";
    r["413"] = r413;
  }
  if (cached) r["304"] = {{"description", "not modified (If-None-Match matched the ETag)"}};
  return r;
}

json build() {
  const std::string_view schemas_text = web_file("openapi-responses.json");
  json schemas = schemas_text.empty() ? json::object() : json::parse(schemas_text);
  json paths = json::object();
  paths["/api/health"]["get"] = {{"summary", "liveness and catalog size"}, {"responses", responses("Health", false)}};
  paths["/api/gpus"]["get"] = {{"summary", "the hardware catalog (gpuplan gpus --json); with name, one GPU"},
                               {"parameters", query_parameters("gpus")},
                               {"responses", responses("GpusOrGpu", true)}};
  paths["/api/models"]["get"] = {{"summary", "the bundled model presets (gpuplan models --json); with name, one model"},
                                 {"parameters", query_parameters("models")},
                                 {"responses", responses("ModelsOrModel", true)}};
  paths["/api/offers"]["get"] = {{"summary", "offers filtered and sorted (gpuplan offers --format json); with group_by, "
                                              "the price spread per GPU or provider (gpuplan offers --group-by)"},
                                 {"parameters", query_parameters("offers")},
                                 {"responses", responses("OffersOrGroups", true)}};
  // The path parameter belongs to the path item, so OPTIONS declares it too (a trial's
  // openapi-spec-validator: "Path parameter 'id' for 'options' operation ... was not resolved").
  paths["/api/offers/{id}/history"]["parameters"] =
      json::array({{{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}});
  paths["/api/offers/{id}/history"]["get"] = {
      {"summary", "price observations of one offer (gpuplan history ID --format json)"},
      {"responses", responses("History", true)}};
  paths["/api/size"]["post"] = {
      {"summary", "memory per GPU and the GPUs that hold it (gpuplan size --json)"},
      {"requestBody", {{"required", true}, {"content", {{"application/json", {{"schema", body_schema("size")}}}}}}},
      {"responses", responses("Size", false, true)}};
  paths["/api/plan"]["post"] = {
      {"summary", "ranked plans over the offers (gpuplan plan --json)"},
      {"requestBody", {{"required", true}, {"content", {{"application/json", {{"schema", body_schema("plan")}}}}}}},
      {"responses", responses("PlanOrExplained", false, true)}};
  paths["/api/estimate"]["post"] = {
      {"summary", "time a training run you specify (GPU × count × layout) without the catalog (gpuplan estimate --json); "
                  "when no layout fits, estimate is null and no_fit says why"},
      {"requestBody", {{"required", true}, {"content", {{"application/json", {{"schema", body_schema("estimate")}}}}}}},
      {"responses", responses("Estimate", false, true)}};
  {
    json err = {{"description", "an error"}, {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
    json r401 = err;
    r401["description"] = "no or wrong bearer token (code unauthorized)";
    r401["headers"] = {{"WWW-Authenticate", {{"schema", {{"type", "string"}}}, {"description", "Bearer"}}}};
    json r403 = err;
    r403["description"] = "the server has no write token configured: read-only (code read_only)";
    json r400 = err;
    r400["description"] = "a malformed file (field: NAME:LINE or NAME:LINE:COL; nothing written) or a bad query parameter";
    json r413 = err;
    r413["description"] = "the body is over the import limit (32 MiB by default)";
    json params = json::array(
        {{{"name", "format"}, {"in", "query"}, {"required", false},
          {"schema", {{"type", "string"}, {"description", "an import format as `gpuplan import --format` takes it (generic-csv, generic-json, "
                                                          "skypilot-vms-csv, ...); default: detected from the name and the body"}}}},
         {{"name", "dry_run"}, {"in", "query"}, {"required", false},
          {"schema", {{"type", "boolean"}, {"description", "compare with the store and write nothing (CLI --dry-run)"}}}},
         {{"name", "name"}, {"in", "query"}, {"required", false},
          {"schema", {{"type", "string"}, {"description", "file name used in error positions and the dataset user:NAME; default request"}}}}});
    json body_content = json::object();
    for (const char* type : {"text/csv", "application/json", "application/octet-stream"})
      body_content[type] = {{"schema", {{"type", "string"}}}};
    paths["/api/import"]["post"] = {
        {"summary", "import an offer file into the store as `gpuplan import` does (all or nothing); only with the server's "
                    "write token (Authorization: Bearer TOKEN)"},
        {"security", json::array({{{"bearer", json::array()}}})},
        {"parameters", params},
        {"requestBody", {{"required", true}, {"description", "the offer file (docs/import-format.md)"}, {"content", body_content}}},
        {"responses",
         {{"200", {{"description", "what changed (or would change, dry_run), as `gpuplan import` prints it"},
                   {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/ImportResult"}}}}}}}}},
          {"400", r400}, {"401", r401}, {"403", r403}, {"413", r413}, {"500", err}}}};
  }
  // Every path answers OPTIONS with 204 and the methods it takes (server/pages.hpp add_method_not_allowed).
  for (auto& [path, ops] : paths.items()) {
    const std::string allow = ops.contains("post") ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
    ops["options"] = {{"summary", "the methods this path takes, in the Allow header (" + allow + ")"},
                      {"responses",
                       {{"204", {{"description", "no content"},
                                 {"headers", {{"Allow", {{"schema", {{"type", "string"}}}, {"description", allow}}}}}}}}}};
  }
  json count = {{"type", "integer"}};
  schemas["ImportResult"] = {
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"name", "format", "dry_run", "rows_read", "offers_in_file", "offers", "observations", "rules"}},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"format", {{"type", "string"}, {"description", "the import format used (given or detected)"}}},
        {"dry_run", {{"type", "boolean"}}},
        {"rows_read", count},
        {"offers_in_file", count},
        {"offers", {{"type", "object"}, {"additionalProperties", false}, {"required", {"added", "updated", "unchanged"}},
                    {"properties", {{"added", count}, {"updated", count}, {"unchanged", count}}}}},
        {"observations", {{"type", "object"}, {"additionalProperties", false}, {"required", {"added", "already_known"}},
                          {"properties", {{"added", count}, {"already_known", count}}}}},
        {"rules", {{"type", "array"},
                   {"description", "per data-quality rule: rows rejected and offers flagged"},
                   {"items", {{"type", "object"}, {"additionalProperties", false}, {"required", {"rule", "rejected", "flagged"}},
                              {"properties", {{"rule", {{"type", "string"}}}, {"rejected", count}, {"flagged", count}}}}}}}}}};
  schemas["GpusOrGpu"] = {{"anyOf", json::array({{{"$ref", "#/components/schemas/Gpus"}}, {{"$ref", "#/components/schemas/Gpu"}}})}};
  schemas["ModelsOrModel"] = {
      {"anyOf", json::array({{{"$ref", "#/components/schemas/Models"}}, {{"$ref", "#/components/schemas/Model"}}})}};
  schemas["OffersOrGroups"] = {
      {"anyOf", json::array({{{"$ref", "#/components/schemas/Offers"}}, {{"$ref", "#/components/schemas/OfferGroups"}}})}};
  schemas["PlanOrExplained"] = {
      {"anyOf", json::array({{{"$ref", "#/components/schemas/Plan"}}, {{"$ref", "#/components/schemas/PlanExplained"}}})}};
  schemas["Error"] = {{"type", "object"},
                      {"additionalProperties", false},
                      {"required", {"code", "message", "field", "expected"}},
                      {"properties",
                       {{"code", {{"type", "string"}, {"description", "invalid_input, not_found, conflict, unavailable, internal, method_not_allowed (405, with an Allow header), payload_too_large (413), read_only (403), unauthorized (401)"}}},
                        {"message", {{"type", "string"}}},
                        {"field", {{"type", "string"}, {"description", "JSON pointer of the request field, or \"\""}}},
                        {"expected", {{"type", "string"}}},
                        {"message_code", {{"type", "string"}, {"description", "stable id of the message (not_positive, unknown_model, filter_unknown_field, ...) for a client that words it in its own language; \"\" when none"}}},
                        {"values", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}, {"description", "the values the message quotes, by name, as text; a name ending in _field holds a request field's JSON name"}}},
                        {"offset", {{"type", "integer"}, {"description", "filter errors: byte offset of the token in the filter"}}},
                        {"length", {{"type", "integer"}, {"description", "filter errors: byte length of the token"}}}}}};
  return {{"openapi", "3.1.0"},
          {"info", {{"title", "gpuplan"}, {"version", "0.1.0"},
                    {"description", "Size AI workloads, compare GPU cloud offers, plan the cheapest way to finish. "
                                    "Units in names: bytes, seconds, usd_per_hour."}}},
          {"paths", paths},
          {"components", {{"schemas", schemas},
                          {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"},
                                                           {"description", "the server's write token (GPUPLAN_WRITE_TOKEN or --write-token-file)"}}}}}}}};
}

}  // namespace

const json& openapi_document() {
  static const json doc = build();
  return doc;
}

}  // namespace gpuplan::server
