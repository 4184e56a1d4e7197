#pragma once
/// Catalog layer: the filter language (filter.hpp) compiled to a parameterized SQL WHERE clause,
/// one compiler over the parse tree (filter_ast.hpp) with a dialect per database.
///
/// The clause reads these names, which each store provides in its query:
///   `o`              the offers row (columns of the schema in sqlite_store.cpp / pg_store.cpp);
///   `lp`             the offer's row of latest_prices for the query's price kind
///                    (usd_per_hour REAL/float8, observed_at TEXT as the source wrote it, dataset,
///                    last_seen_at TEXT: when the price was last seen, what `stale` reads),
///                    all NULL when the offer has no price of that kind;
///   `latest_prices`, `flags`  the store's tables (latest_prices: one row per offer and kind,
///                    kept by every import: migration 3; the clause never reads price history);
///   `gpuplan_specs(name, memory_bandwidth_bytes_per_s, memtype)`  a per-connection temp table
///                    of the process's GPU catalog;
///   `gpuplan_norm(text)`      norm_gpu_name as an SQL function.
/// Semantics equal PreparedFilter::evaluate (three-valued logic is SQL NULL); the parity test
/// (tests/catalog/filter_eval_test.cpp) checks both dialects against it on the bundled catalog.
///
/// Dialects: SQLite takes numbered `?N` placeholders, instr(), julianday(); PostgreSQL takes `$N`
/// placeholders with explicit casts (`$N::float8`, `$N::text`), strpos(), date arithmetic,
/// boolean flags.excludes and byte-order (COLLATE "C") date comparisons.
/// A run of `or`-ed equalities on one field (`gpu=A or gpu=B ...` aside, which already expands
/// to a list) compiles to one `IN (...)` (Kleene-equal: NULL IN (...) is NULL like each `=`).
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "catalog/filter.hpp"

namespace gpuplan {

namespace detail {
struct FilterNode;
}

enum class SqlDialect { sqlite, postgresql };

/// A bound SQL parameter.
using SqlValue = std::variant<double, std::string>;
/// A WHERE clause with placeholders and the values to bind, in order.
struct SqlWhere {
  std::string sql;
  std::vector<SqlValue> params;
};

/// Compiles `filter` for `dialect`. Placeholders (`$N`, `?N`) are numbered from `first_param`
/// (the caller's own parameters come before); params[i] binds number first_param + i. An empty
/// filter gives a clause that is always true. ctx.gpus nullptr → GpuCatalog::bundled().
/// `assume_true`: a node of filter's tree to compile as TRUE (a conjunct the caller's own
/// WHERE already guarantees, see IndexCandidates), or nullptr.
SqlWhere compile_filter_sql(const Filter& filter, const FilterContext& ctx, SqlDialect dialect, int first_param = 1,
                            const detail::FilterNode* assume_true = nullptr);

/// Index keys every match of a filter must have, when the filter says so at its top level: a
/// conjunct `gpu=X` (or an or-list of them), else a conjunct `provider=X` (or an or-list). A
/// match then has, in latest_prices, gpu_name in the names of X or gpu_norm = norm(X) (what
/// `gpu=` compiles to), or provider = lower(X); so a store may read only those rows (through
/// latest_prices' (kind, column, sort key) indexes) and still apply the whole clause.
/// nullopt: no such conjunct (any offer may match).
struct IndexCandidates {
  /// (latest_prices column: "gpu_name", "gpu_norm" or "provider"; value), no duplicates.
  std::vector<std::pair<std::string, std::string>> keys;
  /// The conjunct the keys come from: true for every row whose column equals one of its values
  /// (latest_prices keeps gpu_name, gpu_norm and provider equal to the offer's), so a walk of
  /// those rows may compile it as TRUE (compile_filter_sql's assume_true).
  const detail::FilterNode* conjunct = nullptr;
};
std::optional<IndexCandidates> index_candidates(const Filter& filter, const GpuCatalog& gpus);

/// The comparisons `gpus OP N` among the filter's top-level conjuncts (every match satisfies
/// each), as (SQL operator "=", "<>", "<", "<=", ">", ">=", N). latest_prices keeps the offer's
/// gpu_count (migration 5), so a store's walk of latest_prices may repeat them on
/// lp.gpu_count and skip rows on the index entry, before it reads the offer (issue 12:
/// `gpu=H100 gpus>=8` at 100x the catalog). Empty when there is none.
std::vector<std::pair<std::string, double>> gpu_count_bounds(const Filter& filter);

}  // namespace gpuplan
