// tardellirs/gpu-pricing offerings.json importer. Format notes: data/offers/PROVENANCE.md §3.
// Every row carries source_url and collected_at; prices are per single GPU.
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/error.hpp"

namespace gpuplan {

using namespace import_detail;

namespace {

/// Byte offsets of the elements of the top-level JSON array (text already known to parse).
std::vector<std::size_t> top_level_element_offsets(std::string_view text) {
  std::vector<std::size_t> out;
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      if (depth == 1) out.push_back(i);
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (depth == 1) out.push_back(i);
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return out;
}

const std::set<std::string, std::less<>>& known_keys() {
  static const std::set<std::string, std::less<>> k = {
      "id",    "provider_id", "gpu_model", "gpu_brand", "vram_gb",    "interconnect", "tier",    "is_spot",
      "price_usd_hour", "vcpu", "ram_gb", "notes",     "source_url", "collected_at", "caveats"};
  return k;
}

[[noreturn]] void bad(const std::string& where, const std::string& key, const std::string& expected) {
  throw Error(ErrorKind::invalid_input, where, fmt::format("field '{}' has the wrong type or is missing", key),
              expected);
}

std::string req_string(const nlohmann::json& r, const char* key, const std::string& where) {
  if (!r.contains(key) || !r.at(key).is_string() || r.at(key).get<std::string>().empty())
    bad(where, key, fmt::format("\"{}\": a non-empty string", key));
  return r.at(key).get<std::string>();
}

std::optional<std::string> opt_string(const nlohmann::json& r, const char* key, const std::string& where) {
  if (!r.contains(key) || r.at(key).is_null()) return std::nullopt;
  if (!r.at(key).is_string()) bad(where, key, fmt::format("\"{}\": a string or null", key));
  return r.at(key).get<std::string>();
}

std::optional<double> opt_number(const nlohmann::json& r, const char* key, const std::string& where) {
  if (!r.contains(key) || r.at(key).is_null()) return std::nullopt;
  if (!r.at(key).is_number()) bad(where, key, fmt::format("\"{}\": a number or null", key));
  return r.at(key).get<double>();
}

/// Strip "<provider>-" and a trailing "-spot" / "-on-demand": rows of one product that differ only
/// in that tier become one offer with two price kinds.
std::string product_of(const std::string& id, const std::string& provider_id) {
  std::string s = id;
  if (s.rfind(provider_id + "-", 0) == 0) s = s.substr(provider_id.size() + 1);
  for (std::string_view suffix : {"-on-demand", "-spot"}) {
    if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
      s.resize(s.size() - suffix.size());
      break;
    }
  }
  return s;
}

}  // namespace

ImportBatch import_tardellirs_offerings_json(std::string_view text, const ImportSource& src) {
  const nlohmann::json doc = parse_json(text, src);
  if (!doc.is_array()) {
    throw Error(ErrorKind::invalid_input, fmt::format("{}:{}", src.file, line_col(text, text.find_first_not_of(" \t\r\n"))),
                "offerings must be a JSON array", "[ {\"id\": ..., \"provider_id\": ..., ...}, ... ]");
  }
  const std::vector<std::size_t> offsets = top_level_element_offsets(text);
  const LineIndex lines(text);
  ImportBatch batch;
  batch.dataset = src.dataset;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    ++batch.rows_read;
    const std::size_t offset = i < offsets.size() ? offsets[i] : 0;
    const std::string lc = lines.line_col(offset);
    const std::string where = fmt::format("{}:{}", src.file, lc);
    const nlohmann::json& r = doc[i];
    if (!r.is_object()) {
      throw Error(ErrorKind::invalid_input, where, "offering is not a JSON object", "{\"id\": ..., ...}");
    }
    for (const auto& [key, value] : r.items()) {
      if (known_keys().count(key) == 0) {
        throw Error(ErrorKind::invalid_input, where, fmt::format("unknown field '{}'", key),
                    "only id, provider_id, gpu_model, gpu_brand, vram_gb, interconnect, tier, is_spot, "
                    "price_usd_hour, vcpu, ram_gb, notes, source_url, collected_at, caveats");
      }
    }
    const std::string id = req_string(r, "id", where);
    const std::string provider_id = req_string(r, "provider_id", where);
    const std::string gpu_model = req_string(r, "gpu_model", where);
    const std::string source_url = req_string(r, "source_url", where);
    const std::string collected_at = req_string(r, "collected_at", where);
    if (!is_iso_date(collected_at)) bad(where, "collected_at", "\"collected_at\": an ISO date YYYY-MM-DD");
    if (!r.contains("is_spot") || !r.at("is_spot").is_boolean()) bad(where, "is_spot", "\"is_spot\": true or false");
    const bool is_spot = r.at("is_spot").get<bool>();
    const std::optional<double> price = opt_number(r, "price_usd_hour", where);
    if (!price || *price < 0) bad(where, "price_usd_hour", "\"price_usd_hour\": a number >= 0 (USD per GPU-hour)");
    const std::optional<std::string> interconnect = opt_string(r, "interconnect", where);
    const std::optional<std::string> notes = opt_string(r, "notes", where);
    (void)opt_string(r, "gpu_brand", where);
    (void)opt_string(r, "tier", where);
    std::vector<std::string> caveats;
    if (r.contains("caveats") && !r.at("caveats").is_null()) {
      if (!r.at("caveats").is_array()) bad(where, "caveats", "\"caveats\": a list of strings");
      for (const auto& c : r.at("caveats")) {
        if (!c.is_string()) bad(where, "caveats", "\"caveats\": a list of strings");
        caveats.push_back(c.get<std::string>());
      }
    }

    Offer o;
    o.provider = canonical_provider_id(provider_id);
    o.instance_type = product_of(id, provider_id);
    o.gpu_count = 1;
    o.gpu_name_raw = gpu_model;
    o.id = make_offer_id(o);
    if (auto v = opt_number(r, "vram_gb", where)) o.gpu_memory_bytes = *v * 1e9;
    if (auto v = opt_number(r, "vcpu", where)) o.vcpus = *v;
    if (auto v = opt_number(r, "ram_gb", where)) o.ram_bytes = *v * 1e9;
    FormHint hint = form_hint({gpu_model});
    if (interconnect) {
      const std::string ic = lower(*interconnect);
      if (ic == "pcie" && hint.form_factor.empty()) hint.form_factor = "PCIe";
      if (ic == "sxm") hint.form_factor = "SXM";
      if (ic == "nvlink" || ic == "nvl") hint.nvlink_named = true;
    }

    const PriceKind kind = is_spot ? PriceKind::spot : PriceKind::on_demand;
    std::string said;
    for (const std::string& t : caveats) said += t + " ";
    if (notes) said += *notes;
    if (contains_ci(said, "estimated")) {
      report(batch, nullptr, where, import_rule::kEstimatedPrice,
             fmt::format("{} {} price ${}/h is an estimate, not an observed price (source says: \"{}\"): dropped", id,
                         price_kind_name(kind), *price, std::string(trim(said))),
             true, false);
      continue;
    }
    resolve_gpu(o, {gpu_model}, hint, batch, src, where);
    const SourceRef ref{src.dataset,
                        fmt::format("{} (via {}:{})", source_url,
                                    src.locator_base.empty() ? src.file : src.locator_base, lc.substr(0, lc.find(':'))),
                        collected_at};
    add_checked_price(batch, o, kind, *price, ref, where);
    add_offer(batch, std::move(o));
  }
  return batch;
}

}  // namespace gpuplan
