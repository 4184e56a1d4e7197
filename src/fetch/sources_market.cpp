// Azure Retail Prices, RunPod GraphQL and the vast.ai marketplace. Field layouts: docs/fetch.md.
#include <fmt/core.h>

#include <cmath>
#include <algorithm>
#include <map>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using namespace adapt;

// ------------------------------------------------------------------------------------------
// Azure. The price feed names no GPU: model and count per VM size come from Azure's VM size
// pages (https://learn.microsoft.com/azure/virtual-machines/sizes/overview, GPU-accelerated
// families NCv3, NDv2, NCasT4_v3, NC A100 v4, ND A100 v4, NDm A100 v4, NCads H100 v5,
// ND H100 v5, ND H200 v5, ND MI300X v5, NVadsA10 v5; read 2026-12-01). Sizes not listed here
// are reported as unmapped_sku, never guessed; fractional A10 sizes are not modelled.
struct AzureSize {
  std::string_view sku;  ///< armSkuName, lower-case
  std::string_view gpu;
  int count;
};
constexpr AzureSize kAzureSizes[] = {
    {"standard_nc6s_v3", "V100 SXM2 16GB", 1},       {"standard_nc12s_v3", "V100 SXM2 16GB", 2},
    {"standard_nc24s_v3", "V100 SXM2 16GB", 4},      {"standard_nc24rs_v3", "V100 SXM2 16GB", 4},
    {"standard_nd40rs_v2", "V100 SXM2 32GB", 8},     {"standard_nc4as_t4_v3", "T4", 1},
    {"standard_nc8as_t4_v3", "T4", 1},               {"standard_nc16as_t4_v3", "T4", 1},
    {"standard_nc64as_t4_v3", "T4", 4},              {"standard_nc24ads_a100_v4", "A100 PCIe 80GB", 1},
    {"standard_nc48ads_a100_v4", "A100 PCIe 80GB", 2}, {"standard_nc96ads_a100_v4", "A100 PCIe 80GB", 4},
    {"standard_nd96asr_v4", "A100 SXM 40GB", 8},     {"standard_nd96amsr_a100_v4", "A100 SXM 80GB", 8},
    {"standard_nc40ads_h100_v5", "H100 NVL", 1},     {"standard_nc80adis_h100_v5", "H100 NVL", 2},
    {"standard_nd96isr_h100_v5", "H100 SXM", 8},     {"standard_nd96isr_h200_v5", "H200 SXM", 8},
    {"standard_nd96isr_mi300x_v5", "MI300X", 8},     {"standard_nv36ads_a10_v5", "A10", 1},
    {"standard_nv72ads_a10_v5", "A10", 2},
};

constexpr const char* kAzureUrl =
    "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter="
    "serviceName%20eq%20%27Virtual%20Machines%27%20and%20priceType%20eq%20%27Consumption%27%20and%20"
    "startswith(armSkuName,%27Standard_N%27)";

class AzureSource final : public Source {
 public:
  AzureSource() {
    info_.name = "azure";
    info_.description = "Azure Retail Prices API, N-series VMs (on-demand and spot, Linux)";
    info_.urls = {kAzureUrl};
    info_.parser_version = 1;
    info_.expected_gpus = {"NVIDIA H100 SXM", "NVIDIA A100 PCIe 80GB"};
  }
  const SourceInfo& info() const override { return info_; }

  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    HttpRequest first;
    first.url = ctx.endpoint(kAzureUrl);
    // Each page's Items once: the same Items under a new link (trial49: a counter in each
    // NextPageLink served one page 598 times) is a feed that does not advance.
    std::map<std::string, int> seen_items;
    auto pages = paginate(
        *ctx.http, first,
        [&](const HttpResponse& r, int page) -> std::optional<HttpRequest> {
          const json j = json::parse(r.body, nullptr, false);
          if (j.is_discarded() || !j.is_object()) return std::nullopt;  // parse() reports it
          const std::string next = string_at(j, "NextPageLink");
          const auto items = j.find("Items");
          if (next.empty() || items == j.end() || !items->is_array() || items->empty()) return std::nullopt;
          const auto [same, fresh] = seen_items.try_emplace(sha256_hex(items->dump()), page + 1);
          if (!fresh)
            throw Error(ErrorKind::unavailable, r.url,
                        fmt::format("page {} holds the same Items as page {}: the feed does not advance; stopped", page + 1,
                                    same->second),
                        "a feed whose pages differ");
          HttpRequest n;
          n.url = ctx.endpoint(next);  // absolute link: rebased under --base-url
          return n;
        },
        2000, info_.name);
    std::vector<FetchedDoc> docs;
    for (HttpResponse& p : pages) docs.push_back(FetchedDoc{p.url, std::move(p.body), "page"});
    return docs;
  }

  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    ImportBatch batch;
    for (const FetchedDoc& d : docs) {
      const json j = parse_json(d);
      require_object(j, d.url, "the response");
      const json& items = require_array(at(j, "Items"), d.url + ": /Items", "Items");
      const ImportSource src = import_source(ctx, d, info_.name, "azure");
      for (std::size_t i = 0; i < items.size(); ++i) {
        const json& it = items[i];
        ++batch.rows_read;
        const std::string where = fmt::format("{}#Items/{}", d.url, i);
        const std::string meter = string_at(it, "meterName") + " " + string_at(it, "skuName");
        if (string_at(it, "serviceName") != "Virtual Machines" || string_at(it, "type") != "Consumption") continue;
        if (import_detail::contains_ci(string_at(it, "productName"), "windows") ||
            import_detail::contains_ci(meter, "low priority"))
          continue;
        if (string_at(it, "unitOfMeasure") != "1 Hour" || string_at(it, "currencyCode") != "USD") continue;
        const std::string sku = import_detail::lower(string_at(it, "armSkuName"));
        const AzureSize* size = nullptr;
        for (const AzureSize& s : kAzureSizes)
          if (s.sku == sku) size = &s;
        if (size == nullptr) {
          unmapped(batch, where, fmt::format("Azure size '{}' is not in the adapter's GPU table; skipped",
                                             string_at(it, "armSkuName")));
          continue;
        }
        Offer o;
        o.provider = "azure";
        o.instance_type = string_at(it, "armSkuName");
        o.region = string_at(it, "armRegionName");
        o.gpu_name_raw = std::string(size->gpu);
        o.gpu_count = size->count;
        o.id = import_detail::make_offer_id(o);
        resolve(o, {std::string(size->gpu)}, batch, src, where);
        const PriceKind kind = import_detail::contains_ci(meter, "spot") ? PriceKind::spot : PriceKind::on_demand;
        const std::optional<double> price = number_at(it, "retailPrice");
        // Two meters for one size, region and kind (the Cloud Services duplicates): keep the first.
        bool dup = false;
        for (const Offer& e : batch.offers)
          if (e.id == o.id)
            for (const PriceObservation& p : e.prices) dup = dup || p.kind == kind;
        if (dup) {
          unmapped(batch, where, fmt::format("second {} meter for {} in {}: kept the first", price_kind_name(kind),
                                             o.instance_type, o.region));
          continue;
        }
        add_price(batch, o, kind, price, ref(ctx, info_.name, where), where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// RunPod GraphQL: per-GPU prices for Secure and Community cloud, spot ("interruptible") prices
// and a stock status. Offers: 1 GPU, and maxGpuCount GPUs (prices × count).
// Savings plans: `oneWeekPrice`, `oneMonthPrice`, `threeMonthPrice`, `sixMonthPrice` are the
// discounted USD per GPU-hour of a plan paid up front for that term (runpod/docs
// pods/savings-plans.mdx: "an upfront commitment for a chosen duration, such as 3 months or 6
// months ... a significantly lower hourly rate"; field names as in runpod-python's gpuTypes
// query). They are stored as reserved-1w / -1m / -3m / -6m prices of the Secure Cloud offer only,
// × GPU count: the fields carry no cloud tier, and one tier keeps a plan from being listed twice.
// A missing, null or 0 value is no plan (0 is never a price: price-sources.md pitfalls).
constexpr const char* kRunpodUrl = "https://api.runpod.io/graphql";
constexpr const char* kRunpodQuery =
    "query GpuTypes { gpuTypes { id displayName memoryInGb maxGpuCount securePrice communityPrice "
    "secureSpotPrice communitySpotPrice oneWeekPrice oneMonthPrice threeMonthPrice sixMonthPrice "
    "lowestPrice(input: {gpuCount: 1}) { stockStatus } } }";

class RunpodSource final : public Source {
 public:
  RunpodSource() {
    info_.name = "runpod";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description =
        "RunPod GraphQL gpuTypes: secure/community on-demand and spot per-GPU prices, savings plans (1 week, 1/3/6 "
        "months), stock status";
    info_.urls = {kRunpodUrl};
    info_.parser_version = 2;  // 2: savings-plan prices
    info_.expected_gpus = {"NVIDIA H100 SXM", "NVIDIA GeForce RTX 4090"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    HttpRequest r;
    r.method = "POST";
    r.url = ctx.endpoint(kRunpodUrl);
    if (auto key = ctx.env ? ctx.env("RUNPOD_API_KEY") : std::nullopt) r.url += "?api_key=" + *key;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = json{{"query", kRunpodQuery}}.dump();
    HttpResponse resp = ctx.http->send(r, info_.name);
    return {FetchedDoc{ctx.endpoint(kRunpodUrl), std::move(resp.body), "gpuTypes"}};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(0);
    const json j = parse_json(d);
    require_object(j, d.url, "the response");
    if (j.contains("errors") && !j.contains("data"))
      throw Error(ErrorKind::invalid_input, d.url, "GraphQL errors: " + j["errors"].dump().substr(0, 200),
                  "a data.gpuTypes answer");
    const json& types =
        require_array(at(at(j, "data"), "gpuTypes"), d.url + ": /data/gpuTypes", "gpuTypes");
    const ImportSource src = import_source(ctx, d, info_.name, "runpod");
    ImportBatch batch;
    for (std::size_t i = 0; i < types.size(); ++i) {
      const json& t = types[i];
      ++batch.rows_read;
      const std::string id = string_at(t, "id");
      if (id.empty() || id == "unknown") continue;
      const std::string where = fmt::format("{}#gpuTypes/{}", d.url, i);
      const std::string display = string_at(t, "displayName");
      const auto mem = number_at(t, "memoryInGb");
      const int max_count = static_cast<int>(number_at(t, "maxGpuCount").value_or(1));
      std::string stock;
      if (auto lp = t.find("lowestPrice"); lp != t.end() && lp->is_object()) stock = string_at(*lp, "stockStatus");
      for (const auto& [tier, od_key, spot_key] :
           {std::tuple{"secure", "securePrice", "secureSpotPrice"},
            std::tuple{"community", "communityPrice", "communitySpotPrice"}}) {
        const auto od = number_at(t, od_key);
        const auto spot = number_at(t, spot_key);
        if (!od && !spot) continue;  // tier not offered
        std::vector<int> counts = {1};
        if (max_count > 1) counts.push_back(max_count);
        for (int n : counts) {
          Offer o;
          o.provider = "runpod";
          o.instance_type = fmt::format("{}x {} {}", n, display.empty() ? id : display, tier);
          o.gpu_name_raw = id;
          o.gpu_count = n;
          if (mem) o.gpu_memory_bytes = gb(*mem);
          o.id = import_detail::make_offer_id(o);
          resolve(o, {id, display}, batch, src, where);
          if (n == 1 && !stock.empty() && stock != "None") o.confirmed_available_at = ctx.fetched_at;
          add_price(batch, o, PriceKind::on_demand, od ? std::optional<double>(*od * n) : std::nullopt,
                    ref(ctx, info_.name, where), where);
          if (spot && *spot > 0)
            add_price(batch, o, PriceKind::spot, *spot * n, ref(ctx, info_.name, where), where);
          if (std::string_view(tier) == "secure") {
            for (const auto& [plan_key, plan_kind] :
                 {std::pair{"oneWeekPrice", PriceKind::reserved_1w}, std::pair{"oneMonthPrice", PriceKind::reserved_1m},
                  std::pair{"threeMonthPrice", PriceKind::reserved_3m},
                  std::pair{"sixMonthPrice", PriceKind::reserved_6m}}) {
              const auto plan = number_at(t, plan_key);
              if (plan && *plan > 0)
                add_price(batch, o, plan_kind, *plan * n, ref(ctx, info_.name, where + "/" + plan_key), where);
            }
          }
          import_detail::add_offer(batch, std::move(o));
        }
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// vast.ai marketplace: rentable offers; one offer per (GPU, count, country) at the cheapest
// rentable price seen (locator names the machine offer id); confirmed available at fetch time.
// Spot: the key's cheapest positive `min_bid` (a marketplace bid, flagged marketplace_bid).
constexpr const char* kVastUrl = "https://console.vast.ai/api/v0/bundles/";

class VastSource final : public Source {
 public:
  VastSource() {
    info_.name = "vast";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description =
        "vast.ai marketplace (rentable on-demand offers, cheapest per GPU × count × country; spot: cheapest min_bid)";
    info_.urls = {kVastUrl};
    info_.parser_version = 2;  // 2: min_bid stored as the spot price
    info_.expected_gpus = {"NVIDIA GeForce RTX 4090"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    HttpRequest r;
    r.method = "POST";
    r.url = ctx.endpoint(kVastUrl);
    r.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    r.body = json{{"rentable", {{"eq", true}}},
                  {"rented", {{"eq", false}}},
                  {"type", "on-demand"},
                  {"order", json::array({json::array({"dph_total", "asc"})})},
                  {"limit", 5000}}
                 .dump();
    HttpResponse resp = ctx.http->send(r, info_.name);
    return {FetchedDoc{r.url, std::move(resp.body), "bundles"}};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(0);
    const json j = parse_json(d);
    require_object(j, d.url, "the response");
    const json& offers = require_array(at(j, "offers"), d.url + ": /offers", "offers");
    const ImportSource src = import_source(ctx, d, info_.name, "vast");
    ImportBatch batch;
    batch.rows_read = offers.size();
    // Cheapest rentable offer per key. No row is dropped unsaid (trial9c item 2): a row not
    // rentable or without num_gpus is reported skipped; a row without a dph_total is reported
    // skipped when its key has a priced row, and otherwise becomes the key's offer with an
    // unknown price (an unknown_price flag and no observation), so the price-lost and priced
    // gates count it: a renamed price field rejects the snapshot, naming the price.
    struct Pick {
      std::optional<double> price;  ///< nullopt: no row of this key has a dph_total
      std::size_t row;
    };
    std::map<std::string, Pick> best;
    // Cheapest positive `min_bid` per key (USD/h for the machine: the lowest bid that rents it
    // interruptibly), over the key's rentable rows with a num_gpus, priced or not. A min_bid that
    // is missing, ≤ 0 or not finite is unknown: that row gives no bid (never a $0 spot price).
    std::map<std::string, Pick> best_bid;
    std::vector<std::pair<std::string, std::size_t>> unpriced;  // (key, row)
    for (std::size_t i = 0; i < offers.size(); ++i) {
      const json& x = offers[i];
      const std::string where = fmt::format("{}#offers/{}", d.url, i);
      if (x.value("rentable", false) != true) {
        import_detail::report(batch, nullptr, where, kRuleNotRentable,
                              fmt::format("offer {} is not rentable (rentable is not true); skipped", id_of(x)), true,
                              false);
        continue;
      }
      const auto price = number_at(x, "dph_total");
      const auto n = number_at(x, "num_gpus");
      if (!n) {
        unmapped(batch, where, fmt::format("offer {} has no num_gpus; skipped", id_of(x)));
        continue;
      }
      if (!(*n >= 1 && *n <= 1024 && *n == std::floor(*n))) {  // trial9d D2: num_gpus 0 vanished unsaid
        unmapped(batch, where, fmt::format("offer {} has num_gpus {}, not a whole number of GPUs from 1; skipped",
                                           id_of(x), *n));
        continue;
      }
      const std::string key = fmt::format("{}|{}|{}", string_at(x, "gpu_name"), *n, country(string_at(x, "geolocation")));
      if (!price) unpriced.emplace_back(key, i);
      if (const auto bid = number_at(x, "min_bid"); bid && *bid > 0 && std::isfinite(*bid)) {
        auto b = best_bid.find(key);
        if (b == best_bid.end() || *bid < *b->second.price) best_bid[key] = {bid, i};
      }
      auto it = best.find(key);
      if (it == best.end() || (price && (!it->second.price || *price < *it->second.price))) best[key] = {price, i};
    }
    for (const auto& [key, row] : unpriced) {
      const Pick& p = best.at(key);
      if (p.row == row) continue;  // the key's offer: flagged unknown_price below
      import_detail::report(
          batch, nullptr, fmt::format("{}#offers/{}", d.url, row), kRuleUnknownPrice,
          fmt::format("offer {} has no dph_total (price is missing); skipped, the key's cheapest priced row is used",
                      id_of(offers[row])),
          true, false);
    }
    for (const auto& [key, pick] : best) {
      const std::pair<std::optional<double>, std::size_t> v{pick.price, pick.row};
      const json& x = offers[v.second];
      const std::string where = fmt::format("{}#offers/{}", d.url, v.second);
      Offer o;
      o.provider = "vast";
      const int n = static_cast<int>(*number_at(x, "num_gpus"));
      o.gpu_name_raw = string_at(x, "gpu_name");
      o.instance_type = fmt::format("{}x {}", n, o.gpu_name_raw);
      o.region = country(string_at(x, "geolocation"));
      o.gpu_count = n;
      if (auto m = number_at(x, "gpu_ram")) o.gpu_memory_bytes = mib(*m);  // MiB per GPU
      if (auto c = number_at(x, "cpu_cores_effective")) o.vcpus = *c;
      if (auto m = number_at(x, "cpu_ram")) o.ram_bytes = mib(*m);
      if (auto s = number_at(x, "disk_space")) o.local_disk_bytes = gb(*s);
      o.confirmed_available_at = ctx.fetched_at;
      o.id = import_detail::make_offer_id(o);
      resolve(o, {o.gpu_name_raw}, batch, src, where);
      const std::string loc = fmt::format("{} (offer {})", where, id_of(x));
      add_price(batch, o, PriceKind::on_demand, v.first, ref(ctx, info_.name, loc), where);
      if (const auto b = best_bid.find(key); b != best_bid.end()) {
        // Marketplace spot (issue 9): the key's cheapest min_bid, from the row that has it (which
        // need not be the on-demand row). Flagged marketplace_bid: the planner's own caveat for a
        // bid (no preemption rate is published; a spot plan needs --preemptions-per-day).
        const std::string bid_where = fmt::format("{}#offers/{}", d.url, b->second.row);
        const std::string bid_loc = fmt::format("{} (offer {}; vast interruptible: minimum bid, outbid → paused)",
                                                bid_where, id_of(offers[b->second.row]));
        add_price(batch, o, PriceKind::spot, b->second.price, ref(ctx, info_.name, bid_loc), bid_where);
        import_detail::report(batch, &o, bid_where, import_rule::kMarketplaceBid,
                              fmt::format("min_bid {:g} is a marketplace bid (vast interruptible): the instance is "
                                          "paused whenever a higher bid or an on-demand renter takes the machine; no "
                                          "preemption rate is published",
                                          *b->second.price),
                              false, false);
      }
      import_detail::add_offer(batch, std::move(o));
    }
    return batch;
  }

 private:
  static std::string id_of(const json& x) { return x.contains("id") ? x["id"].dump() : "?"; }
  static std::string country(const std::string& geo) {
    const auto comma = geo.rfind(',');
    return std::string(import_detail::trim(comma == std::string::npos ? geo : geo.substr(comma + 1)));
  }
  SourceInfo info_;
};

}  // namespace

std::unique_ptr<Source> make_azure_source() { return std::make_unique<AzureSource>(); }
std::unique_ptr<Source> make_runpod_source() { return std::make_unique<RunpodSource>(); }
std::unique_ptr<Source> make_vast_source() { return std::make_unique<VastSource>(); }

}  // namespace gpuplan::fetch
