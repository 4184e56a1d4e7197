// Keyed price sources. Shadeform and Hyperstack have adapters (their documented replies); GCP
// billing and Verda are registered without an adapter yet (docs/fetch.md "Not yet done"): listed by
// `gpuplan fetch --list` with the environment variables they will need, so `gpuplan fetch gcp`
// without the key says which variable is missing, and with it says plainly that no adapter
// exists yet (nothing is fetched or recorded). Their endpoints are the documented public APIs
// (shared notes, price-sources.md); their prices reach the store today through the keyless
// SkyPilot and gpuhunt catalogs named in each description.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <regex>
#include <vector>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

class UnbuiltKeyedSource final : public Source {
 public:
  explicit UnbuiltKeyedSource(SourceInfo info) : info_(std::move(info)) {}
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext&) const override {
    throw Error(ErrorKind::unavailable, info_.name, "no adapter yet: " + info_.not_built);
  }
  ImportBatch parse(const std::vector<FetchedDoc>&, const SourceContext&) const override {
    throw Error(ErrorKind::unavailable, info_.name, "no adapter yet: " + info_.not_built);
  }

 private:
  SourceInfo info_;
};

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
// Hyperstack (NexGen Cloud): GET /v1/core/flavors and GET /v1/pricebook with the `api_key` header
// (Hyperstack API docs, shared notes price-sources.md):
//   flavors:   {"status": true, "data": [{"gpu": "H100-80G-PCIe", "region_name": "CANADA-1",
//               "flavors": [{"name": "n3-H100x1", "gpu_count": 1, "cpu": 28, "ram": 180, ...}]}]}
//   pricebook: [{"id", "name": "H100-80G-PCIe", "value": 1.9 (USD per GPU-hour), "original_value",
//                "discount_applied", "start_time", "end_time"}]
// One offer per (flavor, region): price = pricebook value of its GPU × gpu_count; a GPU with no
// pricebook entry has an unknown price (the notes: SkyPilot skipped H200 for that), never 0.
// GPU memory from the GPU name ("80G" → 80 GB). `ram`'s unit is not stated in the notes: not
// stored. The stocks endpoint (availability strings such as "200+") is not read yet: offers are
// not confirmed available.
constexpr const char* kHyperstackFlavors = "https://infrahub-api.nexgencloud.com/v1/core/flavors";
constexpr const char* kHyperstackPricebook = "https://infrahub-api.nexgencloud.com/v1/pricebook";

class HyperstackSource final : public Source {
 public:
  HyperstackSource() {
    info_.name = "hyperstack";
    info_.description = "Hyperstack flavors and pricebook (USD per GPU-hour x GPUs per flavor)";
    info_.urls = {kHyperstackFlavors, kHyperstackPricebook};
    info_.key_env = {"HYPERSTACK_API_KEY"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    const std::string key = ctx.env ? ctx.env("HYPERSTACK_API_KEY").value_or("") : "";
    return {get_doc(ctx, info_.name, kHyperstackFlavors, "flavors", {{"api_key", key}}),
            get_doc(ctx, info_.name, kHyperstackPricebook, "pricebook", {{"api_key", key}})};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& fd = docs.at(0);
    const FetchedDoc& pd = docs.at(1);
    const json flavors = parse_json(fd);
    const json book = parse_json(pd);
    const json& groups = require_array(at(flavors, "data"), fd.url + ": /data", "data");
    const json& entries = require_array(book, pd.url + ": /", "a pricebook array");
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

std::unique_ptr<Source> unbuilt(std::string name, std::string description, std::string url,
                                std::vector<std::string> keys, std::string via) {
  SourceInfo i;
  i.name = std::move(name);
  i.description = std::move(description) + " (not built yet; today via " + via + ")";
  i.urls = {std::move(url)};
  i.key_env = std::move(keys);
  i.not_built = "the " + i.name + " adapter is not built yet; its prices come through " + via;
  return std::make_unique<UnbuiltKeyedSource>(std::move(i));
}

}  // namespace

std::vector<std::unique_ptr<Source>> make_more_keyed_sources() {
  std::vector<std::unique_ptr<Source>> v;
  v.push_back(unbuilt("gcp", "GCP Cloud Billing Catalog API (Compute Engine SKUs)",
                      "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus", {"GCP_BILLING_API_KEY"},
                      "skypilot/gcp and gpuhunt/gcp"));
  v.push_back(unbuilt("verda", "Verda (ex-DataCrunch) instance types (OAuth2 client credentials)",
                      "https://api.datacrunch.io/v1/instance-types", {"VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"},
                      "skypilot/verda and gpuhunt/verda"));
  v.push_back(std::make_unique<HyperstackSource>());
  v.push_back(std::make_unique<ShadeformSource>());
  return v;
}

}  // namespace gpuplan::fetch
