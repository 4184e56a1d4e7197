#pragma once
/// Internal helpers shared by the import_*.cpp files (not part of the catalog's public API).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/text_position.hpp"
#include "catalog/importers.hpp"

namespace gpuplan {
struct GpuSpec;
}

namespace gpuplan::import_detail {

/// Lower-case ASCII copy.
std::string lower(std::string_view s);
/// Trim ASCII whitespace.
std::string_view trim(std::string_view s);
/// Case-insensitive substring test (ASCII).
bool contains_ci(std::string_view haystack, std::string_view needle);

/// Canonical provider id: lower-case slug ("Oracle Cloud" → "oci", "vast-ai" → "vast",
/// "Lambda" → "lambda", "Latitude.sh" → "latitude-sh"); aliases listed in import_common.cpp.
std::string canonical_provider_id(std::string_view name);
/// "provider/instance_type/region[/zone]", lower-case, "%" → "%25" and "/" → "%2F" in each part.
std::string make_offer_id(const Offer& o);
/// The place in the file of an observation's locator, for an error's where: "SOURCE (FILE:LINE)"
/// (the generic formats' locator) gives "FILE:LINE"; another locator is returned as it is.
std::string locator_place(const std::string& locator);
/// Whether two rows of one offer id describe one machine: the same GPU count and the same GPU
/// (canonical names when both resolved; when neither resolved, equal normalised raw names or one
/// part of the bundled GPU catalog; one side unresolved: the count alone).
bool same_machine(const Offer& a, const Offer& b);
/// "8 x NVIDIA H100 SXM": the count and the canonical GPU name (the raw name when unresolved).
std::string hardware_text(const Offer& o);
/// Throws Error{invalid_input} when `b` has the id of `a` but another GPU model or count.
void check_same_hardware(const Offer& a, const Offer& b);

/// The catalog used to resolve names (src.gpus or the bundled one).
const GpuCatalog& gpu_catalog(const ImportSource& src);
/// "file:line".
std::string where_line(const ImportSource& src, std::size_t line);
/// locator_base (or file) + ":" + line.
std::string locator_line(const ImportSource& src, std::size_t line);

/// Hints on the physical part read from names: "SXM"/"PCIe"/"" and whether NVLink is named.
struct FormHint {
  std::string form_factor;  ///< "SXM", "PCIe" or ""
  bool nvlink_named = false;
};
/// Reads SXM / HGX / NVLINK / NVL / PCIe tokens in any of the texts.
FormHint form_hint(const std::vector<std::string_view>& texts);

/// Resolves the GPU of `offer` from name candidates (tried in order; a form hint and the
/// per-GPU memory in GB are appended as extra candidates first). A candidate whose spec memory
/// differs from the offer's gpu_memory_bytes by more than 20 % is skipped when another
/// candidate matches. Sets gpu_name, intra_node_link, intra_node_link_bytes_per_s and
/// form_factor (names first, then the spec). Unresolved → flag unresolved_gpu (excludes) +
/// issue. Returns the spec or nullptr.
const GpuSpec* resolve_gpu(Offer& offer, const std::vector<std::string>& candidates, const FormHint& hint,
                           ImportBatch& batch, const ImportSource& src, const std::string& where);

/// The first GPU spec found for the candidates (same candidate expansion as resolve_gpu) whose
/// memory is within 20 % of memory_bytes; nullptr when none. No side effects.
const GpuSpec* match_gpu_memory(const std::vector<std::string>& candidates, const FormHint& hint, double memory_bytes,
                                const ImportSource& src);

/// Adds an issue; when `offer` is given also a QualityFlag on it (detail prefixed with where).
void report(ImportBatch& batch, Offer* offer, const std::string& where, std::string_view rule, std::string detail,
            bool rejected, bool excludes);

/// Price gates on one observation: $0 (zero_price, excludes) and per-GPU price outside
/// [$0.01, $100] per GPU-hour (implausible_per_gpu_price, excludes). The observation is kept.
void check_price(ImportBatch& batch, Offer& offer, PriceKind kind, double usd_per_hour, const std::string& where);

/// Appends an observation with offer_id set.
void add_price(Offer& offer, PriceKind kind, double usd_per_hour, SourceRef source);

/// add_price, then check_price on it: the usual way an importer records a price.
void add_checked_price(ImportBatch& batch, Offer& offer, PriceKind kind, double usd_per_hour, SourceRef source,
                       const std::string& where);

/// Sets the id (if empty) and adds the offer to the batch, merging with an existing offer of
/// the same id (see merge_batch).
void add_offer(ImportBatch& batch, Offer offer);
/// Merge b into a (same id).
void merge_offer(Offer& a, Offer b);
/// merge_offer's facts part alone (no hardware check, no observations): flags united, unknown
/// fields filled from b (for a store that holds a's observations itself: ImportWriter).
void merge_offer_facts(Offer& a, Offer b);

/// Strict number of a cell: nullopt when empty; throws Error{invalid_input} at where otherwise.
std::optional<double> cell_number(std::string_view text, const std::string& where, std::string_view column);
/// A price cell in USD: a number with an optional leading "$" ("$0.4", "12.50"); nullopt when
/// empty; throws Error{invalid_input} naming the column otherwise (also for a negative price).
std::optional<double> cell_price(std::string_view text, const std::string& where, std::string_view column);
/// A memory cell in GB (1e9 bytes): a number with an optional unit suffix GB, GiB, MB, MiB, TB,
/// TiB ("16GB", "80 GiB", "24"); a bare number is GB. Returns GB; nullopt when empty; throws
/// Error{invalid_input} for anything else.
std::optional<double> cell_gb(std::string_view text, const std::string& where, std::string_view column);
/// "4-6" → {4, 6}; nullopt when the text is not a range of two numbers.
std::optional<std::pair<double, double>> parse_range(std::string_view text);

/// Required integer count in [min_count, 1e6] (accepts "8" and "8.0"); the error states that range.
/// The bundled feeds list CPU-only rows (0 GPUs, skipped by the caller); a user quote needs ≥ 1.
/// `noun` names the count in the message ("'four' is not a GPU count"); text that is no number
/// at all gets the same message and range.
int cell_count(std::string_view text, const std::string& where, std::string_view column, int min_count = 0,
               std::string_view noun = "GPU count");

/// Parses JSON; a syntax error throws Error{invalid_input} at "file:line:col" computed from
/// nlohmann's byte offset.
nlohmann::json parse_json(std::string_view text, const ImportSource& src);
/// line:col (1-based) of a byte offset in text.

/// ISO date "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ" (also with +HH:MM): true when well-formed.
bool is_iso_date(std::string_view s);

}  // namespace gpuplan::import_detail
