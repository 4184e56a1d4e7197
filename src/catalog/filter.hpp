#pragma once
/// Catalog layer, offer filter language (docs/filter-language.md), in the spirit of vast.ai
/// search:  `gpu=H100 gpus>=8 vram>=80GB link=nvlink (net=infiniband or nodes<=1) price<=30 not stale`
///
/// Grammar (juxtaposition means `and`; keywords are case-insensitive):
///   query      := [or_expr]
///   or_expr    := and_expr ( "or" and_expr )*
///   and_expr   := unary ( ["and"] unary )*
///   unary      := "not" unary | primary
///   primary    := "(" or_expr ")" | FIELD [ OP VALUE ]      (no OP: boolean fields only)
///   OP         := = | != | < | <= | > | >= | ~ | !~        (~ substring, !~ no substring)
///   VALUE      := bare word (80GB, 3.35TB/s, us-east-1, 2025-06-01) | "quoted" | 'quoted'
///
/// Values carry units (converted to SI at parse time): bytes fields take MB GB TB (1e6/1e9/1e12)
/// and MiB GiB TiB (2^20/2^30/2^40), bare = GB; bandwidth fields take MB/s GB/s TB/s GiB/s TiB/s,
/// bare = GB/s; network fields take Mb/s Gb/s Tb/s Gbps (bits) and GB/s (×8), bare = Gb/s;
/// prices are USD per hour (bare). Dates are YYYY-MM-DD and compare on the date part.
///
/// Three-valued logic (Kleene, as SQL NULL): a comparison on an unknown value (vram not listed,
/// no price of the query's kind, undated price for `stale`) is UNKNOWN; `not UNKNOWN` is UNKNOWN;
/// an offer is selected only when the whole query is TRUE. So `not stale` never selects an offer
/// whose price date is unknown: we neither guess it fresh nor stale.
///
/// The same AST is evaluated in memory on an Offer (PreparedFilter) and compiled to a
/// parameterized SQL WHERE clause per database (filter_sql.hpp: SQLite and PostgreSQL); field
/// names map to fixed column expressions from a whitelist, values are always bound parameters.
///
/// Errors: FilterError (a gpuplan::Error{invalid_input}) with where "filter:COL" (1-based column),
/// a message whose second and third lines show the query and a caret under the bad token, and
/// what was expected. offset()/length() give the token's byte range for the API.
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "catalog/offer.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan {

class GpuCatalog;
struct GpuSpec;

/// Limits (each an error at the offending token, exit 2): they keep the recursive-descent
/// parser's stack and the generated SQL's nesting bounded (SQLite's parser stack overflows at
/// about 100 levels; 45 nested NOTs or ~90 left-nested ORs were enough before these limits).
/// Chains `a or b or c ...` / `a and b ...` become balanced trees (log2(n) levels).
inline constexpr std::size_t kMaxFilterBytes = 65536;     ///< query text length
inline constexpr std::size_t kMaxFilterNesting = 16;      ///< nested "(" and "not"
inline constexpr std::size_t kMaxFilterClauses = 128;     ///< FIELD [OP VALUE] clauses
inline constexpr std::size_t kMaxFilterTreeDepth = 32;    ///< levels of the parsed tree

enum class FilterFieldType { text, number, boolean, date };
std::string_view filter_field_type_name(FilterFieldType t) noexcept;  ///< "text", "number", ...

/// One field of the language, for --help-fields and error messages.
struct FilterFieldInfo {
  std::string_view name;
  FilterFieldType type;
  std::string_view unit;         ///< unit of a bare number and accepted suffixes, "" for none
  std::string_view example;      ///< a valid clause using the field
  std::string_view description;  ///< what it reads from the Offer
};
/// All fields (aliases listed under their own name with description "alias of X"), in help order.
const std::vector<FilterFieldInfo>& filter_fields();

/// A parse error pointing at a token.
/// Also an ErrorCode (util/error_code.hpp): code "filter_<problem>" and the values it quotes, so
/// a page words it in its own language (the token's place is offset()).
class FilterError : public Error, public ErrorCode {
 public:
  FilterError(std::string_view query, std::size_t offset, std::size_t length, const std::string& problem,
              std::string expected, std::string message_code = {}, std::map<std::string, std::string> message_values = {});
  std::size_t offset() const noexcept { return offset_; }  ///< 0-based byte offset in the query
  std::size_t length() const noexcept { return length_; }

 private:
  std::size_t offset_;
  std::size_t length_;
};

/// What the computed fields depend on.
struct FilterContext {
  PriceKind price_kind = PriceKind::on_demand;  ///< kind read by price, price_per_gpu, observed, source, stale
  std::string now_date;                         ///< "YYYY-MM-DD"; empty → `stale` is unknown for every offer
  double stale_after_days = 30;                 ///< a price older than this many days (strictly) is stale
  const GpuCatalog* gpus = nullptr;             ///< gpu matching, bandwidth, memtype; nullptr → bundled
};

namespace detail {
struct FilterNode;
}

class PreparedFilter;

/// A parsed filter. Cheap to copy (shares the immutable AST).
class Filter {
 public:
  Filter() = default;  ///< the empty filter: selects everything
  /// Parses `text`; throws FilterError.
  static Filter parse(std::string_view text);

  bool empty() const noexcept { return root_ == nullptr; }
  const std::string& text() const noexcept { return text_; }
  /// Fully parenthesised canonical form with SI values, e.g. "((gpus >= 8) and (vram >= 8e+10))".
  std::string to_string() const;
  /// Binds the context for in-memory evaluation.
  PreparedFilter prepare(const FilterContext& ctx) const;
  /// True when every field the filter reads is a plan-class fact (store.hpp plan_class_of:
  /// provider, instance, region, zone, gpu, form, flag, link, net, memtype, gpus, vram,
  /// total_vram, bandwidth, link_bw, net_gbps, nodes, confirmed, flagged, excluded), so all
  /// offers of one class match alike and
  /// one offer decides for its class (the bounded read). True for the empty filter.
  bool reads_only_plan_class_facts() const;
  /// The parse tree (filter_ast.hpp), for the SQL compilers (filter_sql.hpp); nullptr when empty.
  const detail::FilterNode* root() const noexcept { return root_.get(); }

 private:
  std::shared_ptr<const detail::FilterNode> root_;
  std::string text_;
};

/// A filter bound to a context, evaluated on Offers in memory.
class PreparedFilter {
 public:
  /// Kleene value: true / false / nullopt = unknown.
  std::optional<bool> evaluate(const Offer& offer) const;
  /// True only when evaluate() is true.
  bool matches(const Offer& offer) const { return evaluate(offer) == true; }

 private:
  friend class Filter;
  std::shared_ptr<const detail::FilterNode> root_;
  FilterContext ctx_;
  std::unordered_map<std::string, const GpuSpec*> specs_;                          ///< by canonical name
  std::unordered_map<const detail::FilterNode*, std::vector<std::string>> gpu_names_;  ///< per gpu= node
};

/// Lower-case ASCII letters and digits of `s`, everything else dropped ("H100-SXM5 80GB" →
/// "h100sxm580gb"). Used for tolerant GPU name matching in memory and, as the SQL function
/// gpuplan_norm, in the database.
std::string norm_gpu_name(std::string_view s);

/// Canonical GPU names that `gpu=value` selects: the catalog's tolerant lookup (try_find) of
/// the value, plus every spec whose normalised name, name without vendor, or alias equals the
/// normalised value. An offer also matches when its raw GPU name normalises to the value.
std::vector<std::string> gpu_names_matching(const GpuCatalog& gpus, std::string_view value);

/// Memory family of a spec for the `memtype` field: "hbm", "gddr", or the lower-cased type.
std::string memory_family(const GpuSpec& spec);

/// Days from 1970-01-01 of the date part of an ISO date/timestamp; nullopt when its first ten
/// characters are not YYYY-MM-DD naming a calendar day (2026-02-30 is not one). Stored dates and
/// query dates are checked the same way, so SQLite's julianday() on them agrees.
std::optional<long> days_since_epoch(std::string_view iso_date);

/// Staleness of the offer's latest price of `kind` at `now_date`: true when it is more than
/// `stale_after_days` old, false when not, nullopt when there is no such price, its date is
/// unknown or unparsable, or now_date is empty. Unknown dates are never guessed.
std::optional<bool> is_stale(const Offer& offer, PriceKind kind, std::string_view now_date,
                             double stale_after_days);

}  // namespace gpuplan
