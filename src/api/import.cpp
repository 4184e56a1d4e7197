#include "api/import.hpp"

#include "catalog/ingest.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {

namespace {

/// A plain file name: 1..128 bytes of [A-Za-z0-9._-], not starting with '.'.
void check_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 128 && name.front() != '.';
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
  if (!ok)
    throw_invalid_coded("/name", "not_file_name", {{"value", name.substr(0, 64)}}, "\"" + name.substr(0, 64) + "\" is not a plain file name",
                        "1 to 128 of A-Z a-z 0-9 . _ - (not starting with .)");
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

ImportOutput run_import(const ImportInput& in, const Context& ctx) {
  check_name(in.name);
  std::optional<ImportFormat> format;
  if (!in.format.empty()) {
    format = parse_import_format(in.format);
    if (!format)
    {
      std::string known;  // every format, from the enum (catalog/importers.hpp): generic_json is the last
      for (int f = 0; f <= static_cast<int>(ImportFormat::generic_json); ++f)
        known += (known.empty() ? "" : ", ") + std::string(import_format_name(static_cast<ImportFormat>(f)));
      throw_invalid_coded("/format", "unknown_choice", {{"value", in.format.substr(0, 64)}, {"allowed", known}},
                          "unknown import format \"" + in.format.substr(0, 64) + "\"", "one of " + known);
    }
  }
  if (!format) {
    // Detected as import_file does (from the name's extension and the header / first key); a
    // name without .csv/.json is read as JSON when the body starts with '{' or '[', else CSV.
    std::string lower_name;
    for (char c : in.name) lower_name += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    std::string detect_as = in.name;
    if (!ends_with(lower_name, ".csv") && !ends_with(lower_name, ".json")) {
      const std::size_t first = in.body.find_first_not_of(" \t\r\n");
      const bool json_like = first != std::string::npos && (in.body[first] == '{' || in.body[first] == '[');
      detect_as += json_like ? ".json" : ".csv";
    }
    try {
      format = detect_import_format(detect_as, in.body);
    } catch (const Error& e) {  // name the file as the client called it
      throw Error(e.kind(), e.where() == detect_as ? in.name : e.where(), e.message(), e.expected());
    }
  }
  ImportSource src;
  src.file = in.name;
  src.locator_base = in.name;
  src.dataset = "user:" + std::string(import_format_name(*format));  // as import_file: identity without the name
  ImportBatch batch = import_text(in.body, *format, src);  // throws NAME:LINE: nothing written
  batch.dataset = "user:" + in.name;
  ImportOutput out;
  out.name = in.name;
  out.format = std::string(import_format_name(*format));
  out.dry_run = in.dry_run;
  {
    const auto lock = ctx.use_store();
    out.result = ingest(ctx.store(), batch, IngestOptions{ctx.clock().today(), in.dry_run});
  }
  if (!in.dry_run) ctx.note_write();
  out.rows_read = batch.rows_read;
  out.offers_in_file = batch.offers.size();
  out.rules = batch.summary();
  return out;
}

nlohmann::json to_json(const ImportOutput& out) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : out.rules) rules.push_back({{"rule", r.rule}, {"rejected", r.rejected}, {"flagged", r.flagged}});
  return {{"name", out.name},
          {"format", out.format},
          {"dry_run", out.dry_run},
          {"rows_read", out.rows_read},
          {"offers_in_file", out.offers_in_file},
          {"offers",
           {{"added", out.result.offers_added}, {"updated", out.result.offers_updated}, {"unchanged", out.result.offers_unchanged}}},
          {"observations",
           {{"added", out.result.observations_added}, {"already_known", out.result.observations_already_known}}},
          {"rules", rules}};
}

}  // namespace gpuplan::api
