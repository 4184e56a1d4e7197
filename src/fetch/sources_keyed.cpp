// Keyed price sources with adapters on the shared HTTP client: GCP billing (machine prices
// assembled from SKUs), Verda (OAuth2 client credentials), Hyperstack and Shadeform. Each reads
// its key(s) from the environment; run_fetch skips a source whose variables are unset and names
// them. Endpoints and layouts: shared notes price-sources.md, docs/fetch.md.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <tuple>
#include <vector>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "util/csv.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using namespace adapt;  // NOLINT: the adapters' shared helpers (adapter.hpp)

// ------------------------------------------------------------------------------------------
// Shadeform (a GPU cloud aggregator): GET /v1/instances/types with the X-API-KEY header
// (shadeform/docs openapi.yaml, shared notes price-sources.md). Reply:
//   {"instance_types": [{"cloud": "hyperstack", "shade_instance_type": "H100",
//     "cloud_instance_type": "n3-H100x1", "configuration": {"memory_in_gb", "storage_in_gb",
//     "vcpus", "num_gpus", "gpu_type": "H100", "interconnect": "pcie", "vram_per_gpu_in_gb"},
//     "hourly_price": 219 (US cents per hour, the instance), "availability": [{"region",
//     "available"}]}]}
// One offer per (cloud, cloud instance type, region), provider "shadeform" (Shadeform's price
// for the underlying cloud's machine; instance type "<cloud>:<cloud_instance_type>"); a region
// with available=true → confirmed available at fetch time; no region listed → one offer with no
// region. GPU from gpu_type and interconnect ("pcie" → "<gpu> PCIe", "sxm"/"nvlink" → "<gpu>
// SXM"), memory per GPU from vram_per_gpu_in_gb (GB; the datasheet gate checks it).
constexpr const char* kShadeformUrl = "https://api.shadeform.ai/v1/instances/types";

class ShadeformSource final : public Source {
 public:
  ShadeformSource() {
    info_.name = "shadeform";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description = "Shadeform instance types (aggregator: other clouds' machines at Shadeform's price, cents/h)";
    info_.urls = {kShadeformUrl};
    info_.key_env = {"SHADEFORM_API_KEY"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    const std::string key = ctx.env ? ctx.env("SHADEFORM_API_KEY").value_or("") : "";
    return {get_doc(ctx, info_.name, kShadeformUrl, "instance-types", {{"X-API-KEY", key}})};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(0);
    const json j = parse_json(d);
    const json& types = require_array(at(j, "instance_types"), d.url + ": /instance_types", "instance_types");
    const ImportSource src = import_source(ctx, d, info_.name, "shadeform");
    ImportBatch batch;
    for (std::size_t i = 0; i < types.size(); ++i) {
      const json& t = types[i];
      ++batch.rows_read;
      const json& conf = at(t, "configuration");
      const std::string where = fmt::format("{}#instance_types/{}", d.url, i);
      const std::string cloud = string_at(t, "cloud");
      const std::string type = string_at(t, "cloud_instance_type");
      const auto gpus = number_at(conf, "num_gpus");
      if (!gpus || *gpus < 1) continue;  // a CPU machine
      if (cloud.empty() || type.empty()) {
        unmapped(batch, where, "no cloud or cloud_instance_type: the offer cannot be named");
        continue;
      }
      const std::string gpu = string_at(conf, "gpu_type");
      const std::string link = string_at(conf, "interconnect");
      IntraNodeLink intra = IntraNodeLink::unknown;
      std::vector<std::string> names;
      if (link == "pcie") {
        intra = IntraNodeLink::pcie;
        names.push_back(gpu + " PCIe");
      } else if (link.rfind("sxm", 0) == 0 || link == "nvlink") {
        intra = IntraNodeLink::nvlink;
        names.push_back(gpu + " SXM");
      }
      const auto vram_gb = number_at(conf, "vram_per_gpu_in_gb");
      if (vram_gb) names.push_back(fmt::format("{} {:g}GB", gpu, *vram_gb));
      names.push_back(gpu);
      std::vector<std::pair<std::string, bool>> regions;  // region, available
      const json& avail = at(t, "availability");
      for (const json& a : avail.is_array() ? avail : json::array())
        regions.emplace_back(string_at(a, "region"), at(a, "available") == true);
      if (regions.empty()) regions.emplace_back("", false);
      const auto cents = number_at(t, "hourly_price");
      for (const auto& [region, available] : regions) {
        Offer o;
        o.provider = "shadeform";
        o.instance_type = cloud + ":" + type;
        o.region = region;
        o.gpu_name_raw = gpu;
        o.gpu_count = static_cast<int>(*gpus);
        o.intra_node_link = intra;
        o.vcpus = number_at(conf, "vcpus");
        if (auto g = number_at(conf, "memory_in_gb")) o.ram_bytes = gb(*g);
        if (auto g = number_at(conf, "storage_in_gb")) o.local_disk_bytes = gb(*g);
        if (vram_gb) o.gpu_memory_bytes = gb(*vram_gb);
        if (available) o.confirmed_available_at = ctx.fetched_at;
        o.id = import_detail::make_offer_id(o);
        resolve(o, names, batch, src, where);
        add_price(batch, o, PriceKind::on_demand, cents ? std::optional<double>(*cents / 100.0) : std::nullopt,
                  ref(ctx, info_.name, where), where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// Hyperstack (NexGen Cloud): GET /v1/core/flavors, GET /v1/pricebook and GET /v1/core/stocks with
// the `api_key` header (Hyperstack API docs, infrahub-doc.nexgencloud.com api-reference
// core-resources/{flavors,stocks}; shared notes price-sources.md):
//   flavors:   {"status": true, "data": [{"gpu": "H100-80G-PCIe", "region_name": "CANADA-1",
//               "flavors": [{"name": "n3-H100x1", "gpu_count": 1, "cpu": 28, "ram": 180 (GB),
//               "ephemeral": 750 (GB), ...}]}]}
//   pricebook: [{"id", "name": "H100-80G-PCIe", "value": 1.9 (USD per GPU-hour), "original_value",
//                "discount_applied", "start_time", "end_time"}]
//   stocks:    {"stocks": [{"region": "CANADA-1", "stock-type": "GPU", "models": [{"model":
//               "RTX-A6000", "available": "200+", "planned_7_days": null, ..., "configurations":
//               {"1x": 396, "2x": 197, "4x": 98, "8x": 45, "10x": 0}}]}]}
// One offer per (flavor, region): price = pricebook value of its GPU × gpu_count; a GPU with no
// pricebook entry has an unknown price (the notes: SkyPilot skipped H200 for that), never 0.
// GPU memory from the GPU name ("80G" → 80 GB); RAM and local (ephemeral) disk in GB.
// Availability: a flavor of N GPUs is confirmed available at fetch time when the stocks entry of
// its region and GPU model (the flavor group's `gpu`, compared as written) lists a positive count
// for the "<N>x" configuration. The `available` total ("200+") does not confirm a size: 200 free
// GPUs need not hold an 8-GPU machine. No entry, no such configuration or 0 → not confirmed.
constexpr const char* kHyperstackFlavors = "https://infrahub-api.nexgencloud.com/v1/core/flavors";
constexpr const char* kHyperstackPricebook = "https://infrahub-api.nexgencloud.com/v1/pricebook";
constexpr const char* kHyperstackStocks = "https://infrahub-api.nexgencloud.com/v1/core/stocks";

/// (region, GPU model) → "<N>x" → configurations in stock, from the stocks reply.
using HyperstackStock = std::map<std::pair<std::string, std::string>, std::map<std::string, double>>;

HyperstackStock hyperstack_stock(const FetchedDoc& d) {
  const json j = parse_json(d);
  require_object(j, d.url + ": /", "the stocks reply");
  const json& stocks = require_array(at(j, "stocks"), d.url + ": /stocks", "stocks");
  HyperstackStock out;
  for (std::size_t i = 0; i < stocks.size(); ++i) {
    const json& st = stocks[i];
    const std::string type = string_at(st, "stock-type");
    if (!type.empty() && type != "GPU") continue;
    const json& models = require_array(at(st, "models"), fmt::format("{}: /stocks/{}/models", d.url, i), "models");
    for (const json& m : models) {
      const json& conf = at(m, "configurations");
      if (!conf.is_object()) continue;
      auto& sizes = out[{string_at(st, "region"), string_at(m, "model")}];
      for (const auto& [size, count] : conf.items())
        if (const auto n = as_number(count)) sizes[size] = *n;
    }
  }
  return out;
}

class HyperstackSource final : public Source {
 public:
  HyperstackSource() {
    info_.name = "hyperstack";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description = "Hyperstack flavors, pricebook (USD per GPU-hour x GPUs per flavor) and GPU stock per region";
    info_.urls = {kHyperstackFlavors, kHyperstackPricebook, kHyperstackStocks};
    info_.key_env = {"HYPERSTACK_API_KEY"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    const std::string key = ctx.env ? ctx.env("HYPERSTACK_API_KEY").value_or("") : "";
    return {get_doc(ctx, info_.name, kHyperstackFlavors, "flavors", {{"api_key", key}}),
            get_doc(ctx, info_.name, kHyperstackPricebook, "pricebook", {{"api_key", key}}),
            get_doc(ctx, info_.name, kHyperstackStocks, "stocks", {{"api_key", key}})};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& fd = docs.at(0);
    const FetchedDoc& pd = docs.at(1);
    const json flavors = parse_json(fd);
    const json book = parse_json(pd);
    const json& groups = require_array(at(flavors, "data"), fd.url + ": /data", "data");
    const json& entries = require_array(book, pd.url + ": /", "a pricebook array");
    const HyperstackStock stock = hyperstack_stock(docs.at(2));
    ImportBatch batch;
    // GPU name → USD per GPU-hour; a current entry (no end_time) wins over an ended one.
    std::map<std::string, std::pair<double, bool>> price_per_gpu;  // value, current
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string name = string_at(entries[i], "name");
      const auto value = number_at(entries[i], "value");
      if (name.empty() || !value) continue;
      const bool current = at(entries[i], "end_time").is_null();
      auto it = price_per_gpu.find(name);
      if (it == price_per_gpu.end() || (current && !it->second.second)) price_per_gpu[name] = {*value, current};
    }
    const ImportSource src = import_source(ctx, fd, info_.name, "hyperstack");
    static const std::regex mem_re(R"((\d+)G)");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const json& group = groups[g];
      const std::string gpu = string_at(group, "gpu");
      const std::string region = string_at(group, "region_name");
      const json& list = at(group, "flavors");
      for (std::size_t k = 0; k < (list.is_array() ? list.size() : 0); ++k) {
        const json& f = list[k];
        ++batch.rows_read;
        const std::string where = fmt::format("{}#data/{}/flavors/{}", fd.url, g, k);
        const auto count = number_at(f, "gpu_count");
        if (gpu.empty() || !count || *count < 1) continue;  // a CPU flavor
        Offer o;
        o.provider = "hyperstack";
        o.instance_type = string_at(f, "name");
        o.region = region;
        o.gpu_name_raw = gpu;
        o.gpu_count = static_cast<int>(*count);
        o.vcpus = number_at(f, "cpu");
        if (auto ram_gb = number_at(f, "ram")) o.ram_bytes = gb(*ram_gb);
        if (auto disk_gb = number_at(f, "ephemeral"); disk_gb && *disk_gb > 0) o.local_disk_bytes = gb(*disk_gb);
        if (const auto st = stock.find({region, gpu}); st != stock.end()) {
          const auto size = st->second.find(fmt::format("{}x", o.gpu_count));
          if (size != st->second.end() && size->second > 0) o.confirmed_available_at = ctx.fetched_at;
        }
        std::smatch m;
        if (std::regex_search(gpu, m, mem_re)) o.gpu_memory_bytes = gb(std::stod(m[1].str()));
        o.id = import_detail::make_offer_id(o);
        std::string spaced = gpu;
        std::replace(spaced.begin(), spaced.end(), '-', ' ');
        resolve(o, {spaced, gpu}, batch, src, where);
        const auto p = price_per_gpu.find(gpu);
        add_price(batch, o, PriceKind::on_demand,
                  p == price_per_gpu.end() ? std::nullopt : std::optional<double>(p->second.first * *count),
                  ref(ctx, info_.name, where), where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// Verda (ex-DataCrunch), base https://api.datacrunch.io (shared notes price-sources.md):
//   POST /v1/oauth2/token  JSON {"grant_type": "client_credentials", "client_id", "client_secret"}
//                          → {"access_token", "token_type": "Bearer", "expires_in"}
//   GET  /v1/instance-types (Bearer): [{"instance_type": "1H100.80S.30V", "price_per_hour": "2.19"
//        (USD per hour, the instance, a string), "spot_price": "0.99", "cpu": {"number_of_cores"},
//        "memory": {"size_in_gigabytes"}, "gpu": {"number_of_gpus", "description": "1x H100 SXM5
//        80GB"}, "gpu_memory": {"size_in_gigabytes"} (the node total)}]
//   GET  /v1/instance-availability (Bearer): [{"location_code": "FIN-01", "availabilities":
//        ["1H100.80S.30V", ...]}]
// One offer per (instance type, location listing it as available), confirmed available at fetch
// time; a type no location lists → one offer with no region, not confirmed. Provider "verda"
// (the keyless catalogs' name, import_common.cpp maps "datacrunch" to it). GPU model from the
// description ("8x H100 SXM5 80GB" → "H100 SXM5 80GB") through the GPU catalog's names; memory
// per GPU = gpu_memory total ÷ GPU count (GB). CPU-only types (no GPUs) are no offer. A missing,
// non-numeric or zero price stays unknown (no observation). The token reply is not recorded
// (it holds the bearer token): the snapshot's documents are the two lists.
constexpr const char* kVerdaToken = "https://api.datacrunch.io/v1/oauth2/token";
constexpr const char* kVerdaTypes = "https://api.datacrunch.io/v1/instance-types";
constexpr const char* kVerdaAvailability = "https://api.datacrunch.io/v1/instance-availability";

class VerdaSource final : public Source {
 public:
  VerdaSource() {
    info_.name = "verda";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description = "Verda (ex-DataCrunch) instance types and availability per location (OAuth2 client credentials)";
    info_.urls = {kVerdaTypes, kVerdaAvailability};
    info_.key_env = {"VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    HttpRequest tok;
    tok.method = "POST";
    tok.url = ctx.endpoint(kVerdaToken);
    tok.headers = {{"Content-Type", "application/json"}};
    tok.body = json{{"grant_type", "client_credentials"},
                    {"client_id", ctx.env ? ctx.env("VERDA_CLIENT_ID").value_or("") : ""},
                    {"client_secret", ctx.env ? ctx.env("VERDA_CLIENT_SECRET").value_or("") : ""}}
                   .dump();
    const HttpResponse r = ctx.http->send(tok, info_.name);  // 401 etc.: Error{unavailable} naming the status
    const json j = json::parse(r.body, nullptr, false);
    const std::string token = string_at(j, "access_token");
    if (token.empty())
      throw Error(ErrorKind::unavailable, tok.url, "the OAuth2 token reply has no access_token: not signed in");
    const std::vector<std::pair<std::string, std::string>> auth = {{"Authorization", "Bearer " + token}};
    return {get_doc(ctx, info_.name, kVerdaTypes, "instance-types", auth),
            get_doc(ctx, info_.name, kVerdaAvailability, "instance-availability", auth)};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& td = docs.at(0);
    const FetchedDoc& ad = docs.at(1);
    const json types = parse_json(td);
    const json avail = parse_json(ad);
    require_array(types, td.url + ": /", "an array of instance types");
    require_array(avail, ad.url + ": /", "an array of locations");
    std::map<std::string, std::vector<std::string>> locations;  // instance type → locations listing it
    for (const json& loc : avail) {
      const std::string code = string_at(loc, "location_code");
      const json& list = at(loc, "availabilities");
      if (code.empty() || !list.is_array()) continue;
      for (const json& t : list)
        if (t.is_string()) locations[t.get<std::string>()].push_back(code);
    }
    const ImportSource src = import_source(ctx, td, info_.name, "verda");
    static const std::regex desc_re(R"(^\s*(\d+)\s*x\s+(.*\S)\s*$)");
    ImportBatch batch;
    for (std::size_t i = 0; i < types.size(); ++i) {
      const json& t = types[i];
      ++batch.rows_read;
      const std::string where = fmt::format("{}#{}", td.url, i);
      const std::string type = string_at(t, "instance_type");
      const json& gpu = at(t, "gpu");
      const auto count = number_at(gpu, "number_of_gpus");
      if (!count || *count < 1) continue;  // a CPU-only type
      if (type.empty()) {
        unmapped(batch, where, "no instance_type: the offer cannot be named");
        continue;
      }
      std::string desc = string_at(gpu, "description");  // "8x H100 SXM5 80GB"
      std::smatch m;
      if (std::regex_match(desc, m, desc_re)) desc = m[2].str();
      std::vector<std::string> regions;
      if (auto it = locations.find(type); it != locations.end()) regions = it->second;
      const bool available = !regions.empty();
      if (!available) regions.push_back("");
      const auto total_vram_gb = number_at(at(t, "gpu_memory"), "size_in_gigabytes");
      for (const std::string& region : regions) {
        Offer o;
        o.provider = "verda";
        o.instance_type = type;
        o.region = region;
        o.gpu_name_raw = desc;
        o.gpu_count = static_cast<int>(*count);
        o.vcpus = number_at(at(t, "cpu"), "number_of_cores");
        if (auto g = number_at(at(t, "memory"), "size_in_gigabytes")) o.ram_bytes = gb(*g);
        if (total_vram_gb && *total_vram_gb > 0) o.gpu_memory_bytes = gb(*total_vram_gb / *count);
        if (available) o.confirmed_available_at = ctx.fetched_at;
        o.id = import_detail::make_offer_id(o);
        resolve(o, {desc}, batch, src, where);
        add_price(batch, o, PriceKind::on_demand, number_at(t, "price_per_hour"), ref(ctx, info_.name, where), where);
        auto spot = number_at(t, "spot_price");
        if (!spot) spot = number_at(t, "spot_price_per_hour");
        if (spot && *spot > 0) add_price(batch, o, PriceKind::spot, spot, ref(ctx, info_.name, where), where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// GCP, Cloud Billing Catalog API (shared notes price-sources.md): GET
// /v1/services/6F81-5844-456A/skus (Compute Engine; the API key in the X-Goog-Api-Key header,
// the documented equivalent of ?key=KEY), pages chained by nextPageToken (?pageToken=...). Reply: {"skus": [{"skuId", "description": "Nvidia H100 80GB GPU running in
// Americas", "category": {"resourceFamily": "Compute", "resourceGroup": "GPU", "usageType":
// "OnDemand" | "Preemptible" | "Commit1Yr" ...}, "serviceRegions": ["us-central1"],
// "pricingInfo": [{"pricingExpression": {"usageUnit": "h" | "GiBy.h", "tieredRates":
// [{"unitPrice": {"currencyCode": "USD", "units": "9", "nanos": 800000000}}]}}]}],
// "nextPageToken": ""}. unitPrice = units + nanos / 1e9 (USD per usage unit).
//
// The billing API prices parts, not machines: an offer's price is ASSEMBLED per (machine type,
// region, on-demand | spot) as gpu_count × GPU SKU + vcpus × "<family> Instance Core" SKU +
// ram_gib × "<family> Instance Ram" SKU, with the machine shapes (and the regions each machine
// type exists in) from data/gcp-machine-shapes.csv (provenance beside it). Spot parts are the
// usageType "Preemptible" SKUs (descriptions "Spot Preemptible ..."). A part missing for a
// (family, region, kind), or priced by two SKUs that disagree, leaves that price unassembled:
// the machine is skipped there with a counted reason ("unmapped_sku"), never priced from a part.
//
// Machines with bundled Local SSD (a2-ultragpu-*, a3-highgpu-*, a3-megagpu-8g: "billed for their
// attached GPUs, predefined vCPU, memory, and bundled Local SSD", Google Cloud docs,
// accelerator-optimized machines) add local_ssd_gib × the Local SSD SKU: "SSD backed Local Storage"
// (on demand) or "SSD backed Local Storage attached to Spot Preemptible VMs" (spot), optionally
// followed by " in <place>" (resourceFamily "Storage"). Google's docs do not print these texts:
// they are the ones Cyclenerd/google-cloud-pricing-cost-calculator maps for local SSD
// (build/mapping.csv gce.storage.ssd.local / .spot at dac31281, 2026-08-20; it prices these
// machines' bundled SSD with them), and infracost matches the same prefix. The spot Local SSD
// SKU is told by its description, not its usageType (a public adapter notes Google files it as
// "OnDemand"). Its price is per GiB-month ("GiBy.mo"), turned into per GiB-hour over 730 hours
// (the Google Cloud Pricing Calculator's month, as Cyclenerd's pricing.pl states; per GiB-hour
// "GiBy.h" is read as is). A missing Local SSD SKU leaves the machine unpriced there (counted),
// never priced without its disk. Committed-use SKUs are not read.
constexpr const char* kGcpSkus = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus";
constexpr const char* kGcpShapes = "gcp-machine-shapes.csv";
constexpr const char* kGcpLocalSsdPart = "ssd backed local storage";
constexpr double kGcpHoursPerMonth = 730;  // the pricing calculator's month (8,760 h / 12)

struct GcpShape {
  std::string machine_type, family, gpu_sku, gpu;
  int gpu_count = 0;
  double gpu_memory_gb = 0, vcpus = 0, ram_gib = 0, local_ssd_gib = 0;
  std::vector<std::string> regions;
  std::string where;  // data file:line
};

const std::vector<GcpShape>& gcp_shapes() {
  static const std::vector<GcpShape> shapes = [] {
    const CsvTable t = CsvTable::parse(embedded_file_or_throw(kGcpShapes), std::string("data/") + kGcpShapes);
    std::vector<GcpShape> v;
    for (const CsvRow& r : t.rows()) {
      GcpShape s;
      s.where = t.where(r);
      s.machine_type = t.cell(r, "machine_type");
      s.family = t.cell(r, "host_sku_family");
      s.gpu_sku = t.cell(r, "gpu_sku");
      s.gpu = t.cell(r, "gpu");
      auto num = [&](std::string_view col) {
        const std::string& c = t.cell(r, col);
        if (c.empty()) return 0.0;
        try {
          return std::stod(c);
        } catch (const std::exception&) {
          throw Error(ErrorKind::internal, s.where, fmt::format("{} '{}' is not a number", col, c));
        }
      };
      s.gpu_count = static_cast<int>(num("gpu_count"));
      s.gpu_memory_gb = num("gpu_memory_gb");
      s.vcpus = num("vcpus");
      s.ram_gib = num("ram_gib");
      s.local_ssd_gib = num("local_ssd_gib");
      const std::string& regions = t.cell(r, "regions");
      for (std::size_t a = 0; a < regions.size();) {
        std::size_t b = regions.find(';', a);
        if (b == std::string::npos) b = regions.size();
        if (b > a) s.regions.push_back(regions.substr(a, b - a));
        a = b + 1;
      }
      v.push_back(std::move(s));
    }
    return v;
  }();
  return shapes;
}

/// "Spot Preemptible Nvidia L4 GPU attached to Spot Preemptible VMs running in Americas" →
/// "nvidia l4 gpu"; "A2 Instance Core running in Americas" → "a2 instance core".
std::string gcp_part_name(std::string d) {
  constexpr std::string_view attached = " attached to Spot Preemptible VMs", prefix = "Spot Preemptible ";
  if (const auto p = d.find(attached); p != std::string::npos) d.erase(p, attached.size());
  if (d.rfind(prefix, 0) == 0) d.erase(0, prefix.size());
  if (const auto p = d.find(" running in "); p != std::string::npos) d.erase(p);
  return import_detail::lower(d);
}

/// The price kind of a Local SSD SKU from its description ("SSD backed Local Storage[ attached
/// to Spot Preemptible VMs][ in <place>]"); nullopt for any other SKU.
std::optional<PriceKind> gcp_local_ssd_kind(std::string_view d) {
  constexpr std::string_view prefix = "SSD backed Local Storage", spot = " attached to Spot Preemptible VMs";
  if (d.rfind(prefix, 0) != 0) return std::nullopt;
  d.remove_prefix(prefix.size());
  PriceKind kind = PriceKind::on_demand;
  if (d.rfind(spot, 0) == 0) {
    kind = PriceKind::spot;
    d.remove_prefix(spot.size());
  }
  if (!d.empty() && d.rfind(" in ", 0) != 0) return std::nullopt;  // another Local SSD product
  return kind;
}

class GcpSource final : public Source {
 public:
  GcpSource() {
    info_.name = "gcp";
    info_.description =
        "GCP Cloud Billing Catalog API (Compute Engine SKUs): machine price assembled from GPU, vCPU, RAM "
        "and local SSD SKUs";
    info_.urls = {kGcpSkus};
    info_.key_env = {"GCP_BILLING_API_KEY"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    const std::string key = ctx.env ? ctx.env("GCP_BILLING_API_KEY").value_or("") : "";
    const std::string base = ctx.endpoint(kGcpSkus);
    // The key travels in the X-Goog-Api-Key header (Google Cloud's documented alternative to
    // ?key=), so no URL that errors, snapshots or logs name ever carries it.
    const std::vector<std::pair<std::string, std::string>> auth = {{"X-Goog-Api-Key", key}};
    HttpRequest first;
    first.url = base;
    first.headers = auth;
    auto pages = paginate(
        *ctx.http, first,
        [&](const HttpResponse& r, int) -> std::optional<HttpRequest> {
          const json j = json::parse(r.body, nullptr, false);
          const std::string next = string_at(j, "nextPageToken");
          if (next.empty()) return std::nullopt;
          HttpRequest n;
          n.url = base + "?pageToken=" + next;
          n.headers = auth;
          return n;
        },
        500, info_.name);
    std::vector<FetchedDoc> docs;
    for (HttpResponse& p : pages) docs.push_back(FetchedDoc{p.url, std::move(p.body), "skus"});
    return docs;
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    ImportBatch batch;
    // (part name, kind, region) → USD per unit; NaN marks two SKUs that disagree.
    std::map<std::tuple<std::string, PriceKind, std::string>, std::pair<double, std::string>> parts;
    for (const FetchedDoc& d : docs) {
      const json j = parse_json(d);
      const json& skus = require_array(at(j, "skus"), d.url + ": /skus", "skus");
      for (std::size_t i = 0; i < skus.size(); ++i) {
        const json& sku = skus[i];
        ++batch.rows_read;
        const json& cat = at(sku, "category");
        const std::string usage = string_at(cat, "usageType");
        if (usage != "OnDemand" && usage != "Preemptible") continue;  // committed use and other terms: not read
        const std::string description = string_at(sku, "description");
        const std::optional<PriceKind> ssd = gcp_local_ssd_kind(description);
        if (!ssd && string_at(cat, "resourceFamily") != "Compute") continue;
        const PriceKind kind = ssd ? *ssd : usage == "OnDemand" ? PriceKind::on_demand : PriceKind::spot;
        const json& info = at(sku, "pricingInfo");
        if (!info.is_array() || info.empty()) continue;
        const json& expr = at(info[0], "pricingExpression");
        const json& tiers = at(expr, "tieredRates");
        if (!tiers.is_array() || tiers.empty()) continue;
        const json& unit_price = at(tiers[0], "unitPrice");
        const std::string currency = string_at(unit_price, "currencyCode");
        if (!currency.empty() && currency != "USD") continue;
        const auto units = number_at(unit_price, "units");
        const auto nanos = number_at(unit_price, "nanos");
        if (!units && !nanos) continue;
        double usd = units.value_or(0) + nanos.value_or(0) / 1e9;
        const std::string unit = string_at(expr, "usageUnit");
        const std::string name = ssd ? kGcpLocalSsdPart : gcp_part_name(description);
        // GPU and core SKUs are per hour, RAM per GiB-hour, Local SSD per GiB-month (or GiB-hour):
        // another unit is not this part.
        const bool ram = name.size() > 13 && name.compare(name.size() - 13, 13, " instance ram") == 0;
        if (ssd && unit == "GiBy.mo") usd /= kGcpHoursPerMonth;
        else if (unit != (ram || ssd ? "GiBy.h" : "h")) continue;
        const std::string where = fmt::format("{}#skus/{}", d.url, i);
        const json& regions = at(sku, "serviceRegions");
        for (const json& r : regions.is_array() ? regions : json::array()) {
          if (!r.is_string()) continue;
          auto [it, fresh] = parts.try_emplace({name, kind, r.get<std::string>()}, usd, where);
          if (!fresh && it->second.first != usd) it->second.first = std::numeric_limits<double>::quiet_NaN();
        }
      }
    }
    const FetchedDoc& d0 = docs.at(0);
    const ImportSource src = import_source(ctx, d0, info_.name, "gcp");
    for (const GcpShape& s : gcp_shapes()) {
      const std::string gpu_part = import_detail::lower(s.gpu_sku) + " gpu";
      // The parts of the machine and how many of each: GPUs, vCPUs, GiB of RAM, GiB of local SSD.
      const std::string family = import_detail::lower(s.family);
      std::vector<std::pair<std::string, double>> need = {
          {gpu_part, s.gpu_count}, {family + " instance core", s.vcpus}, {family + " instance ram", s.ram_gib}};
      if (s.local_ssd_gib > 0) need.emplace_back(kGcpLocalSsdPart, s.local_ssd_gib);
      for (const std::string& region : s.regions) {
        struct Assembled {
          PriceKind kind;
          double usd;
          std::string where;
        };
        std::vector<Assembled> prices;
        for (const PriceKind kind : {PriceKind::on_demand, PriceKind::spot}) {
          const auto gpu = parts.find({gpu_part, kind, region});
          if (gpu == parts.end()) continue;  // this GPU is not sold this way here
          std::string missing;
          double usd = 0;
          for (const auto& [part, quantity] : need) {
            const auto it = parts.find({part, kind, region});
            if (it == parts.end()) missing += (missing.empty() ? "" : ", ") + fmt::format("no '{}' SKU", part);
            else if (std::isnan(it->second.first))
              missing += (missing.empty() ? "" : ", ") + fmt::format("two '{}' SKUs with different prices", part);
            else usd += quantity * it->second.first;
          }
          if (!missing.empty()) {
            unmapped(batch, gpu->second.second,
                     fmt::format("{} in {} ({}): {}: not priced from its other parts", s.machine_type, region,
                                 price_kind_name(kind), missing));
            continue;
          }
          prices.push_back({kind, usd, gpu->second.second});
        }
        if (prices.empty()) {
          bool any_gpu = false;
          for (const PriceKind kind : {PriceKind::on_demand, PriceKind::spot})
            any_gpu = any_gpu || parts.count({gpu_part, kind, region}) > 0;
          if (!any_gpu)
            unmapped(batch, s.where,
                     fmt::format("{} in {}: no '{}' SKU for the region: not priced", s.machine_type, region, gpu_part));
          continue;
        }
        Offer o;
        o.provider = "gcp";
        o.instance_type = s.machine_type;
        o.region = region;
        o.gpu_name_raw = s.gpu;
        o.gpu_count = s.gpu_count;
        o.vcpus = s.vcpus;
        o.ram_bytes = gib(s.ram_gib);
        o.gpu_memory_bytes = gb(s.gpu_memory_gb);
        if (s.local_ssd_gib > 0) o.local_disk_bytes = gib(s.local_ssd_gib);
        o.id = import_detail::make_offer_id(o);
        const std::string where = prices.front().where;
        resolve(o, {s.gpu}, batch, src, where);
        for (const Assembled& p : prices)
          add_price(batch, o, p.kind, p.usd, ref(ctx, info_.name, p.where), p.where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

}  // namespace

std::vector<std::unique_ptr<Source>> make_more_keyed_sources() {
  std::vector<std::unique_ptr<Source>> v;
  v.push_back(std::make_unique<GcpSource>());
  v.push_back(std::make_unique<VerdaSource>());
  v.push_back(std::make_unique<HyperstackSource>());
  v.push_back(std::make_unique<ShadeformSource>());
  return v;
}

}  // namespace gpuplan::fetch
