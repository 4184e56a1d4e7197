#pragma once
/// Fetch layer, internal helpers shared by the adapters (sources_*.cpp). Not a public API.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "fetch/fetch.hpp"
#include "fetch/source.hpp"

namespace gpuplan::fetch::adapt {

using nlohmann::json;

/// ImportSource for a document: file = URL, dataset = "fetch:<source>", locator_base = URL.
ImportSource import_source(const SourceContext& ctx, const FetchedDoc& doc, std::string_view source_name,
                           std::string provider = {});
/// Parses a JSON document; a syntax error throws Error{invalid_input} at "URL:line:col".
json parse_json(const FetchedDoc& doc);
/// The value at `key` of `j` as a number: a JSON number or a numeric string ("0.45"); nullopt
/// when missing, null, "" or a non-numeric string such as "N/A" (the feeds' way to say unknown).
std::optional<double> number_at(const json& j, std::string_view key);
/// Same for a value.
std::optional<double> as_number(const json& v);
/// The string at key, "" when missing or not a string.
std::string string_at(const json& j, std::string_view key);
/// The member `key` of object j, or a null value (a reference that stays valid: never a temporary).
const json& at(const json& j, std::string_view key);
/// Requires j to be an object/array (else Error{invalid_input} at where naming what was expected).
const json& require_object(const json& j, const std::string& where, std::string_view what);
const json& require_array(const json& j, const std::string& where, std::string_view what);
/// SourceRef for a fetched observation.
SourceRef ref(const SourceContext& ctx, std::string_view source_name, std::string locator);
/// Records a price: a positive finite price becomes an observation (through the catalog's
/// add_checked_price, so its gates apply); a missing or $0 price becomes an "unknown_price"
/// finding on the offer and NO observation (unknown is stored as unknown, never as 0).
void add_price(ImportBatch& batch, Offer& offer, PriceKind kind, std::optional<double> usd_per_hour,
               const SourceRef& source, const std::string& where);
/// resolve_gpu with a plain candidate list.
const GpuSpec* resolve(Offer& offer, const std::vector<std::string>& names, ImportBatch& batch, const ImportSource& src,
                       const std::string& where);
/// Reports a row the adapter cannot map (rejected, listed in the issues).
void unmapped(ImportBatch& batch, const std::string& where, std::string detail);
/// Bytes from GiB / MiB / GB.
inline double gib(double v) { return v * 1073741824.0; }
inline double mib(double v) { return v * 1048576.0; }
inline double gb(double v) { return v * 1e9; }
/// GET helper: fetches url (rebased), returns the doc.
FetchedDoc get_doc(const SourceContext& ctx, const std::string& source_name, const std::string& url,
                   std::string label = {}, std::vector<std::pair<std::string, std::string>> headers = {});

}  // namespace gpuplan::fetch::adapt
