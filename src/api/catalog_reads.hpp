#pragma once
/// Application layer (api): the read-only catalog use cases — GPUs, models, offers and one
/// offer's price history. Each has an input filled by the CLI's flags / the API's query string
/// through its field table, a result value, and the JSON writer that is both `gpuplan ... --json`
/// and the body of the matching GET /api/... endpoint.
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/context.hpp"
#include "api/fields.hpp"
#include "catalog/freshness.hpp"
#include "catalog/store.hpp"
#include "model/model_arch.hpp"
#include "model/model_source.hpp"
#include "model/presets.hpp"

namespace gpuplan::api {

// ---- gpus ---------------------------------------------------------------------------------
struct GpusInput {
  std::string name;  ///< "" = the whole catalog; else a name to resolve (tolerant: "h100")
};
std::span<const FieldDef<GpusInput>> gpus_fields();
/// The whole catalog, or the one GPU `name` resolves to (Error{not_found} otherwise).
std::vector<const GpuSpec*> run_gpus(const GpusInput& in, const Context& ctx);
nlohmann::json gpu_json(const GpuSpec& g);  ///< SI units: bytes, bytes/s, FLOP/s
/// One object when in.name is set, else an array (the CLI's shape).
nlohmann::json gpus_to_json(const GpusInput& in, const std::vector<const GpuSpec*>& gpus);

// ---- models -------------------------------------------------------------------------------
struct ModelsInput {
  std::string name;    ///< positional NAME (a preset); "" with no source = list every preset
  ModelSource source;  ///< or any model field
};
std::span<const FieldDef<ModelsInput>> models_fields();
struct ModelEntry {
  ModelArch arch;
  const PresetInfo* preset = nullptr;  ///< bundled preset info, when the model is one
};
struct ModelsOutput {
  bool single = false;  ///< one model asked for (an object), else the list (an array)
  std::vector<ModelEntry> models;
};
ModelsOutput run_models(const ModelsInput& in, const Context& ctx);
nlohmann::json to_json(const ModelsOutput& out);

// ---- offers -------------------------------------------------------------------------------
struct OffersInput {
  std::string filter;  ///< filter language text (docs/filter-language.md); query parameter `q` or `filter`
  std::string sort = std::string(kSortPricePerGpuHour);
  std::size_t limit = 0;  ///< 0 = all
  bool spot = false;
  /// "" = on-demand (spot with `spot`); else a price_kind_name: the kind listed, sorted, filtered
  std::string price_kind;
  /// false (default): rows in the planner's price order, clean dated prices first, then stale,
  /// undated and flagged (OfferQuery::evidence_first), and --group-by leaves flagged prices out of
  /// its statistics; true: also offers excluded by a flag, all in plain sort order.
  bool include_flagged = false;
  double stale_days = 30;  ///< --stale-days or --max-price-age: a price older than this is stale
  double fresh_days = 7;  ///< a price at most this many days old is fresh (catalog/freshness.hpp)
  std::string today;      ///< YYYY-MM-DD for age and freshness; "" = ctx.clock()
  std::string group_by;   ///< "" = rows; "gpu" or "provider" = min/median/max USD per GPU-hour per group
};
std::span<const FieldDef<OffersInput>> offers_fields();
/// One listed offer: the offer and what is derived from it for display.
struct OfferRow {
  Offer offer;
  std::optional<PriceObservation> price;  ///< latest of the query's kind
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> bandwidth_bytes_per_s;
  /// Memory per GPU: the offer's own figure, else its resolved GPU model's datasheet memory (as
  /// the filter's `vram` and the planner read it); nullopt only when neither is known.
  std::optional<double> gpu_memory_bytes;
  bool gpu_memory_from_datasheet = false;  ///< gpu_memory_bytes is the datasheet's, not the offer's
  BillingTerms billing;
  std::optional<bool> stale;
  Freshness freshness;
  /// The price's evidence (catalog/freshness.hpp); rows come clean first unless include_flagged.
  EvidenceTier evidence = EvidenceTier::undated;
  /// No price of the listed kind: the offer's latest price of the first other kind it has (in
  /// kPriceKinds order: on-demand, spot, reserved-1y, reserved-3y, reserved-1m, reserved-1w, reserved-3m,
  /// reserved-6m), with its USD per
  /// GPU-hour and freshness, shown with its kind. Not sorted or filtered on.
  std::optional<PriceObservation> other_price;
  std::optional<double> other_usd_per_gpu_hour;
  Freshness other_freshness;
};
struct OffersOutput {
  OfferQuery query;  ///< as run (now_date from in.today or ctx.clock())
  FreshnessLimits limits;
  std::optional<OfferGroupKey> group_key;  ///< set: `groups` holds the answer, `rows` is empty
  std::vector<OfferGroupStats> groups;     ///< cut to the limit
  std::size_t grouped_offers = 0;          ///< offers the groups were computed from
  std::size_t groups_total = 0;            ///< groups before the limit cut them
  std::size_t flagged_prices_total = 0;    ///< flagged prices left out, over every group (not only those shown)
  std::vector<OfferRow> rows;
  StoreCounts counts;
  std::size_t matched = 0;  ///< offers matching the filter before the limit
};
/// Validates (Error where "--sort"/"--limit"/"--today"/"--group-by"/"--fresh-days"/"--stale-days" or
/// a FilterError), queries ctx.store().
OffersOutput run_offers(const OffersInput& in, const Context& ctx);
nlohmann::json to_json(const OffersOutput& out);  ///< an array of rows (or of groups with group_by)

// ---- history ------------------------------------------------------------------------------
struct HistoryInput {
  std::string offer_id;
};
std::span<const FieldDef<HistoryInput>> history_fields();
/// Error{not_found} when no offer has this id.
Offer run_history(const HistoryInput& in, const Context& ctx);
nlohmann::json history_to_json(const Offer& offer);

}  // namespace gpuplan::api
