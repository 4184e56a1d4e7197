#include "fetch/adapter.hpp"

#include <fmt/core.h>

#include <cmath>

#include "hardware/gpu_spec.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {

std::string SourceContext::endpoint(const std::string& url) const {
  return base_url.empty() ? url : rebase_url(url, base_url);
}

namespace adapt {

ImportSource import_source(const SourceContext& ctx, const FetchedDoc& doc, std::string_view source_name,
                           std::string provider) {
  ImportSource s;
  s.file = doc.url;
  s.dataset = "fetch:" + std::string(source_name);
  s.locator_base = doc.url;
  s.provider = std::move(provider);
  s.gpus = ctx.gpus;
  return s;
}

json parse_json(const FetchedDoc& doc) {
  ImportSource s;
  s.file = doc.url;
  return import_detail::parse_json(doc.body, s);
}

std::optional<double> as_number(const json& v) {
  if (v.is_number()) {
    const double d = v.get<double>();
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      return parse_optional_double(s, "");
    } catch (const Error&) {
      return std::nullopt;  // "N/A", "N/A*": the feed's unknown
    }
  }
  return std::nullopt;
}

std::optional<double> number_at(const json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(std::string(key));
  if (it == j.end()) return std::nullopt;
  return as_number(*it);
}

std::string string_at(const json& j, std::string_view key) {
  if (!j.is_object()) return {};
  auto it = j.find(std::string(key));
  if (it == j.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

const json& at(const json& j, std::string_view key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(std::string(key));
  return it == j.end() ? null_value : *it;
}

const json& require_object(const json& j, const std::string& where, std::string_view what) {
  if (!j.is_object())
    throw Error(ErrorKind::invalid_input, where, fmt::format("{} is not a JSON object", what),
                fmt::format("{} as the source documents it", what));
  return j;
}

const json& require_array(const json& j, const std::string& where, std::string_view what) {
  if (!j.is_array())
    throw Error(ErrorKind::invalid_input, where, fmt::format("{} is not a JSON array", what),
                fmt::format("{} as the source documents it", what));
  return j;
}

SourceRef ref(const SourceContext& ctx, std::string_view source_name, std::string locator) {
  return SourceRef{"fetch:" + std::string(source_name), std::move(locator), ctx.fetched_at};
}

void add_price(ImportBatch& batch, Offer& offer, PriceKind kind, std::optional<double> usd_per_hour,
               const SourceRef& source, const std::string& where) {
  if (!usd_per_hour || !(*usd_per_hour > 0) || !std::isfinite(*usd_per_hour)) {
    // Worded "price is $X" ("-$X" when negative: it read "$-1") for a given price, "price is
    // missing" otherwise: apply_gates (fetch.cpp) counts offers whose source gave only $0 or
    // negative prices by this wording.
    const std::string given = !usd_per_hour ? std::string("missing")
                              : *usd_per_hour < 0 ? fmt::format("-${}", -*usd_per_hour)
                                                  : fmt::format("${}", *usd_per_hour);
    import_detail::report(batch, &offer, where, kRuleUnknownPrice,
                          fmt::format("{} price is {}: stored as unknown (no observation)", price_kind_name(kind), given),
                          false, false);
    return;
  }
  import_detail::add_checked_price(batch, offer, kind, *usd_per_hour, source, where);
}

const GpuSpec* resolve(Offer& offer, const std::vector<std::string>& names, ImportBatch& batch, const ImportSource& src,
                       const std::string& where) {
  std::vector<std::string_view> views(names.begin(), names.end());
  views.push_back(offer.instance_type);
  return import_detail::resolve_gpu(offer, names, import_detail::form_hint(views), batch, src, where);
}

void unmapped(ImportBatch& batch, const std::string& where, std::string detail) {
  import_detail::report(batch, nullptr, where, kRuleUnmappedSku, std::move(detail), true, false);
}

FetchedDoc get_doc(const SourceContext& ctx, const std::string& source_name, const std::string& url, std::string label,
                   std::vector<std::pair<std::string, std::string>> headers) {
  const std::string u = ctx.endpoint(url);
  HttpResponse r = ctx.http->get(u, source_name, std::move(headers));
  return FetchedDoc{u, std::move(r.body), std::move(label)};
}

}  // namespace adapt
}  // namespace gpuplan::fetch
