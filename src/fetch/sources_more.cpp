// Vultr, OCI, Scaleway and OVHcloud (EUR, converted at the ECB reference rate fetched with it),
// CUDO and Lambda (keyed). Field layouts: docs/fetch.md.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using namespace adapt;

// ------------------------------------------------------------------------------------------
// Vultr: cloud GPU plans (type "vcg") and bare-metal plans; cursor pagination (meta.links.next).
constexpr const char* kVultrPlans = "https://api.vultr.com/v2/plans?type=all&per_page=500";
constexpr const char* kVultrMetal = "https://api.vultr.com/v2/plans-metal?per_page=500";

std::vector<FetchedDoc> cursor_pages(const SourceContext& ctx, const std::string& source, const std::string& url,
                                     const std::string& label) {
  HttpRequest first;
  first.url = ctx.endpoint(url);
  auto pages = paginate(
      *ctx.http, first,
      [&](const HttpResponse& r, int) -> std::optional<HttpRequest> {
        const json j = json::parse(r.body, nullptr, false);
        const std::string next = string_at(at(at(j, "meta"), "links"), "next");
        if (next.empty()) return std::nullopt;
        HttpRequest n;
        n.url = ctx.endpoint(url) + "&cursor=" + next;
        return n;
      },
      200, source);
  std::vector<FetchedDoc> docs;
  for (HttpResponse& p : pages) docs.push_back(FetchedDoc{p.url, std::move(p.body), label});
  return docs;
}

class VultrSource final : public Source {
 public:
  VultrSource() {
    info_.name = "vultr";
    info_.description = "Vultr plans: cloud GPU (vcg) and bare-metal GPU plans, per location";
    info_.urls = {kVultrPlans, kVultrMetal};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    auto docs = cursor_pages(ctx, info_.name, kVultrPlans, "plans");
    for (auto& d : cursor_pages(ctx, info_.name, kVultrMetal, "plans-metal")) docs.push_back(std::move(d));
    return docs;
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    ImportBatch batch;
    static const std::regex metal_re(R"(-(\d+)-([a-z0-9]+)-gpu$)");
    for (const FetchedDoc& d : docs) {
      const json j = parse_json(d);
      const bool metal = d.label == "plans-metal";
      const char* key = metal ? "plans_metal" : "plans";
      const json& plans = require_array(at(j, key), d.url + ": /" + key, key);
      const ImportSource src = import_source(ctx, d, info_.name, "vultr");
      for (std::size_t i = 0; i < plans.size(); ++i) {
        const json& p = plans[i];
        ++batch.rows_read;
        const std::string where = fmt::format("{}#{}/{}", d.url, key, i);
        const std::string id = string_at(p, "id");
        std::string gpu;
        int count = 0;
        std::optional<double> mem_per_gpu;
        if (metal) {
          std::smatch m;
          if (!std::regex_search(id, m, metal_re)) {  // CPU bare metal: counted, not silent (trial9b D8)
            import_detail::report(batch, nullptr, where, import_rule::kCpuRow,
                                  fmt::format("bare-metal plan {} has no GPU in its id: skipped", id), true, false);
            continue;
          }
          count = std::stoi(m[1].str());
          gpu = m[2].str();
        } else {
          const std::string type = string_at(p, "gpu_type");
          if (type.empty() || type == "none") {  // a CPU-only plan: counted, not silent (trial9b D8)
            import_detail::report(batch, nullptr, where, import_rule::kCpuRow,
                                  fmt::format("plan {} has gpu_type '{}': no GPU, skipped", id, type), true, false);
            continue;
          }
          gpu = type.rfind("NVIDIA_", 0) == 0 ? type.substr(7) : type;
          for (char& c : gpu) c = c == '_' ? ' ' : c;
          const auto vram = number_at(p, "gpu_vram_gb");
          const GpuSpec* spec = import_detail::gpu_catalog(src).try_find(gpu);
          if (!vram || spec == nullptr || spec->memory_bytes <= 0) {
            unmapped(batch, where, fmt::format("plan {}: GPU '{}' with {} GB not resolvable; skipped", id, type,
                                               vram ? *vram : 0.0));
            continue;
          }
          const double n = gb(*vram) / spec->memory_bytes;
          if (std::abs(n - std::round(n)) > 0.15 || std::round(n) < 1) {
            unmapped(batch, where, fmt::format("plan {}: {} GB of a {:.0f} GB {} is a fractional GPU; not modelled",
                                               id, *vram, spec->memory_bytes / 1e9, spec->name));
            continue;
          }
          count = static_cast<int>(std::round(n));
          mem_per_gpu = gb(*vram) / count;
        }
        const json& locs = at(p, "locations");
        std::vector<std::string> regions;
        if (locs.is_array())
          for (const json& l : locs)
            if (l.is_string()) regions.push_back(l.get<std::string>());
        if (regions.empty()) regions.push_back("");
        for (const std::string& region : regions) {
          Offer o;
          o.provider = "vultr";
          o.instance_type = id;
          o.region = region;
          o.gpu_name_raw = gpu;
          o.gpu_count = count;
          o.gpu_memory_bytes = mem_per_gpu;
          o.vcpus = metal ? number_at(p, "cpu_threads") : number_at(p, "vcpu_count");
          if (auto r = number_at(p, "ram")) o.ram_bytes = mib(*r);  // MB as Vultr writes it (MiB)
          o.id = import_detail::make_offer_id(o);
          resolve(o, {gpu}, batch, src, where);
          add_price(batch, o, PriceKind::on_demand, number_at(p, "hourly_cost"), ref(ctx, info_.name, where), where);
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
// OCI: per-part-number list prices (products API, follows links rel=next) and the Cost
// Estimator's shapes (GPU count, GPU memory, the part numbers and quantities of each shape).
constexpr const char* kOciProducts = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/";
constexpr const char* kOciShapes = "https://www.oracle.com/a/ocom/docs/cloudestimator2/data/shapes.json";

class OciSource final : public Source {
 public:
  OciSource() {
    info_.name = "oci";
    info_.description = "Oracle Cloud price list (products API) and Cost Estimator shapes: GPU shapes, list price";
    info_.urls = {kOciProducts, kOciShapes};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    HttpRequest first;
    first.url = ctx.endpoint(kOciProducts);
    auto pages = paginate(
        *ctx.http, first,
        [&](const HttpResponse& r, int) -> std::optional<HttpRequest> {
          const json j = json::parse(r.body, nullptr, false);
          if (at(j, "hasMore") != true) return std::nullopt;
          const json& links = at(j, "links");
          if (!links.is_array()) return std::nullopt;
          for (const json& l : links)
            if (string_at(l, "rel") == "next" && !string_at(l, "href").empty()) {
              HttpRequest n;
              n.url = ctx.endpoint(string_at(l, "href"));
              return n;
            }
          return std::nullopt;
        },
        200, info_.name);
    std::vector<FetchedDoc> docs;
    for (HttpResponse& p : pages) docs.push_back(FetchedDoc{p.url, std::move(p.body), "products"});
    docs.push_back(get_doc(ctx, info_.name, kOciShapes, "shapes"));
    return docs;
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    std::map<std::string, double> usd;  // part number → USD per unit-hour (pay as you go)
    for (const FetchedDoc& d : docs) {
      if (d.label != "products") continue;
      const json j = parse_json(d);
      for (const json& it : require_array(at(j, "items"), d.url + ": /items", "items")) {
        for (const json& loc : at(it, "currencyCodeLocalizations").is_array() ? at(it, "currencyCodeLocalizations")
                                                                               : json::array()) {
          if (string_at(loc, "currencyCode") != "USD") continue;
          for (const json& pr : at(loc, "prices").is_array() ? at(loc, "prices") : json::array())
            if (string_at(pr, "model") == "PAY_AS_YOU_GO")
              if (auto v = number_at(pr, "value")) usd[string_at(it, "partNumber")] = *v;
        }
      }
    }
    ImportBatch batch;
    const FetchedDoc& sd = docs.back();
    const json j = parse_json(sd);
    const json& shapes = require_array(at(j, "items"), sd.url + ": /items", "items");
    const ImportSource src = import_source(ctx, sd, info_.name, "oci");
    // Shape names without a model token (OCI shape pages): GPU2 = P100, GPU3 = V100, GPU4 = A100 40GB.
    static const std::map<std::string, std::string> kGen = {
        {"GPU2", "Tesla P100"}, {"GPU3", "V100 SXM2 16GB"}, {"GPU4", "A100 SXM 40GB"}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const json& s = shapes[i];
      ++batch.rows_read;
      const auto qty = number_at(s, "gpuQty");
      if (!qty || *qty < 1 || at(s, "hidden") == true) continue;
      const std::string where = fmt::format("{}#items/{}", sd.url, i);
      const std::string name = string_at(s, "name");  // "BM.GPU.H100.8", "VM.GPU.A10.1", "BM.GPU4.8"
      std::vector<std::string> parts;
      for (std::size_t a = 0, b; a <= name.size(); a = b + 1) {
        b = name.find('.', a);
        if (b == std::string::npos) b = name.size();
        parts.push_back(name.substr(a, b - a));
      }
      std::string gpu;
      if (parts.size() >= 3 && parts[1] == "GPU") gpu = parts[2];
      else if (parts.size() >= 2 && kGen.count(parts[1])) gpu = kGen.at(parts[1]);
      if (gpu.empty()) {
        unmapped(batch, where, "shape '" + name + "' names no GPU model; skipped");
        continue;
      }
      if (auto dash = gpu.find("-v"); dash != std::string::npos) gpu = gpu.substr(0, dash);  // "A100-v2"
      Offer o;
      o.provider = "oci";
      o.instance_type = name;
      o.gpu_name_raw = gpu;
      o.gpu_count = static_cast<int>(*qty);
      if (auto m = number_at(s, "gpuMemoryQty")) o.gpu_memory_bytes = gb(*m / *qty);
      if (auto m = number_at(s, "bundleMemoryQty")) o.ram_bytes = gb(*m);
      o.id = import_detail::make_offer_id(o);
      resolve(o, {gpu}, batch, src, where);
      std::optional<double> price = 0.0;
      const json& products = at(s, "products");
      if (!products.is_array() || products.empty()) price.reset();
      else
        for (const json& p : products) {
          auto it = usd.find(string_at(p, "partNumber"));
          const auto q = number_at(p, "qty");
          if (it == usd.end() || !q) {
            price.reset();
            break;
          }
          *price += it->second * *q;
        }
      add_price(batch, o, PriceKind::on_demand, price, ref(ctx, info_.name, where), where);
      import_detail::add_offer(batch, std::move(o));
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// ECB euro reference rates (daily XML): USD per EUR and its date, for sources priced in EUR.
constexpr const char* kEcbUrl = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml";

struct EurUsd {
  double usd_per_eur = 0;
  std::string date;
};

EurUsd parse_ecb(const FetchedDoc& d) {
  static const std::regex rate_re(R"(currency=['"]USD['"]\s+rate=['"]([0-9.]+)['"])");
  static const std::regex time_re(R"(time=['"](\d{4}-\d{2}-\d{2})['"])");
  std::smatch m;
  EurUsd r;
  if (!std::regex_search(d.body, m, rate_re))
    throw Error(ErrorKind::invalid_input, d.url, "no USD rate in the ECB reference rates",
                "<Cube currency='USD' rate='...'/>");
  r.usd_per_eur = std::stod(m[1].str());
  if (std::regex_search(d.body, m, time_re)) r.date = m[1].str();
  if (!(r.usd_per_eur > 0.2 && r.usd_per_eur < 5))
    throw Error(ErrorKind::invalid_input, d.url, fmt::format("USD rate {} out of range", r.usd_per_eur),
                "a USD per EUR rate between 0.2 and 5");
  return r;
}

// ------------------------------------------------------------------------------------------
// Scaleway: GPU server types per zone (EUR per hour), page/per_page with X-Total-Count.
constexpr const char* kScalewayUrl = "https://api.scaleway.com/instance/v1/zones/{}/products/servers?per_page=100&page={}";

class ScalewaySource final : public Source {
 public:
  ScalewaySource() {
    info_.name = "scaleway";
    info_.description = "Scaleway instance server types with GPUs, per zone (EUR, converted at the ECB rate)";
    info_.urls = {fmt::format(kScalewayUrl, "fr-par-2", 1), kEcbUrl};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    std::vector<FetchedDoc> docs;
    for (const char* zone : {"fr-par-1", "fr-par-2", "nl-ams-1", "pl-waw-2"}) {
      std::size_t seen = 0;
      for (int page = 1; page <= 50; ++page) {
        const std::string url = ctx.endpoint(fmt::format(kScalewayUrl, zone, page));
        HttpResponse r = ctx.http->get(url, info_.name);
        const json j = json::parse(r.body, nullptr, false);
        seen += at(j, "servers").is_object() ? at(j, "servers").size() : 0;
        const std::size_t total = static_cast<std::size_t>(
            std::stoul(r.header("x-total-count").value_or("0").empty() ? "0" : r.header("x-total-count").value_or("0")));
        docs.push_back(FetchedDoc{url, std::move(r.body), std::string("zone:") + zone});
        if (seen >= total || !at(j, "servers").is_object() || at(j, "servers").empty()) break;
      }
    }
    docs.push_back(get_doc(ctx, info_.name, kEcbUrl, "ecb"));
    return docs;
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const EurUsd fx = parse_ecb(docs.back());
    ImportBatch batch;
    for (const FetchedDoc& d : docs) {
      if (d.label.rfind("zone:", 0) != 0) continue;
      const std::string zone = d.label.substr(5);
      const json j = parse_json(d);
      const json& servers = require_object(at(j, "servers"), d.url + ": /servers", "servers");
      const ImportSource src = import_source(ctx, d, info_.name, "scaleway");
      for (const auto& [name, s] : servers.items()) {
        ++batch.rows_read;
        const auto gpus = number_at(s, "gpu");
        if (!gpus || *gpus < 1) continue;
        const std::string where = fmt::format("{}#servers/{}", d.url, name);
        const json& gi = at(s, "gpu_info");
        Offer o;
        o.provider = "scaleway";
        o.instance_type = name;
        o.region = zone;
        o.gpu_name_raw = string_at(gi, "gpu_name");
        o.gpu_count = static_cast<int>(*gpus);
        if (auto m = number_at(gi, "gpu_memory")) o.gpu_memory_bytes = *m;  // bytes
        o.vcpus = number_at(s, "ncpus");
        o.ram_bytes = number_at(s, "ram");  // bytes
        o.id = import_detail::make_offer_id(o);
        resolve(o, {o.gpu_name_raw, name}, batch, src, where);
        const auto eur = number_at(s, "hourly_price");
        const std::string loc = fmt::format("{} (EUR {} × {} USD/EUR, ECB {})", where, eur ? *eur : 0.0,
                                            fx.usd_per_eur, fx.date);
        add_price(batch, o, PriceKind::on_demand,
                  eur ? std::optional<double>(*eur * fx.usd_per_eur) : std::nullopt, ref(ctx, info_.name, loc), where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// Lambda (needs LAMBDA_API_KEY): instance types, price in cents per hour, regions with capacity.
constexpr const char* kLambdaUrl = "https://cloud.lambdalabs.com/api/v1/instance-types";

class LambdaSource final : public Source {
 public:
  LambdaSource() {
    info_.name = "lambda";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description = "Lambda Cloud instance types (prices in cents, regions with capacity); needs a key";
    info_.urls = {kLambdaUrl};
    info_.key_env = {"LAMBDA_API_KEY"};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    const std::string key = ctx.env ? ctx.env("LAMBDA_API_KEY").value_or("") : "";
    return {get_doc(ctx, info_.name, kLambdaUrl, "instance-types", {{"Authorization", "Bearer " + key}})};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(0);
    const json j = parse_json(d);
    const json& data = require_object(at(j, "data"), d.url + ": /data", "data");
    const ImportSource src = import_source(ctx, d, info_.name, "lambda");
    ImportBatch batch;
    static const std::regex desc_re(R"(^(\d+)x\s+(.*)$)");
    for (const auto& [name, v] : data.items()) {
      ++batch.rows_read;
      const json& it = at(v, "instance_type");
      const json& specs = at(it, "specs");
      const std::string where = fmt::format("{}#data/{}", d.url, name);
      const auto gpus = number_at(specs, "gpus");
      if (!gpus || *gpus < 1) continue;
      std::string desc = string_at(it, "description");  // "1x H100 (80 GB PCIe)"
      std::smatch m;
      if (std::regex_match(desc, m, desc_re)) desc = m[2].str();
      std::vector<std::string> regions;
      for (const json& r : at(v, "regions_with_capacity_available").is_array() ? at(v, "regions_with_capacity_available")
                                                                              : json::array())
        regions.push_back(string_at(r, "name"));
      const bool available = !regions.empty();
      if (!available) regions.push_back("");
      for (const std::string& region : regions) {
        Offer o;
        o.provider = "lambda";
        o.instance_type = name;
        o.region = region;
        o.gpu_name_raw = desc;
        o.gpu_count = static_cast<int>(*gpus);
        o.vcpus = number_at(specs, "vcpus");
        if (auto g = number_at(specs, "memory_gib")) o.ram_bytes = gib(*g);
        if (auto g = number_at(specs, "storage_gib")) o.local_disk_bytes = gib(*g);
        if (available) o.confirmed_available_at = ctx.fetched_at;
        o.id = import_detail::make_offer_id(o);
        resolve(o, {desc, name}, batch, src, where);
        const auto cents = number_at(it, "price_cents_per_hour");
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
// CUDO Compute: per-component hourly prices per machine type and data centre. The offer is OUR
// choice of configuration, the smallest valid 1-GPU VM: minVcpuPerGpu vCPUs (at least 1) and the
// least memory the type allows for them (vCPUs ÷ maxVcpuPerMemoryGib GiB), plus one IPv4
// address; storage is billed apart (not included). Price unknown when a component is missing.
constexpr const char* kCudoUrl = "https://rest.compute.cudo.org/v1/vms/machine-types";

class CudoSource final : public Source {
 public:
  CudoSource() {
    info_.name = "cudo";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // reports live availability / stock
    info_.description = "CUDO Compute machine types: smallest 1-GPU VM per type and data centre (component prices)";
    info_.urls = {kCudoUrl};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    return {get_doc(ctx, info_.name, kCudoUrl, "machine-types")};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(0);
    const json j = parse_json(d);
    const json& types = require_array(at(j, "machineTypes"), d.url + ": /machineTypes", "machineTypes");
    const ImportSource src = import_source(ctx, d, info_.name, "cudo");
    ImportBatch batch;
    for (std::size_t i = 0; i < types.size(); ++i) {
      const json& t = types[i];
      ++batch.rows_read;
      const std::string model = string_at(t, "gpuModel");
      if (model.empty()) continue;  // CPU machine type
      const std::string where = fmt::format("{}#machineTypes/{}", d.url, i);
      auto price = [&](const char* key) { return number_at(at(t, key), "value"); };
      const double vcpus = std::max(1.0, number_at(t, "minVcpuPerGpu").value_or(1.0));
      const auto vcpu_per_gib = number_at(t, "maxVcpuPerMemoryGib");
      Offer o;
      o.provider = "cudo";
      o.instance_type = string_at(t, "machineType");
      o.region = string_at(t, "dataCenterId");
      o.gpu_name_raw = model;
      o.gpu_count = 1;
      if (auto g = number_at(t, "gpuMemoryGib")) o.gpu_memory_bytes = gib(*g);
      o.vcpus = vcpus;
      std::optional<double> mem_gib;
      if (vcpu_per_gib && *vcpu_per_gib > 0) mem_gib = std::ceil(vcpus / *vcpu_per_gib);
      if (mem_gib) o.ram_bytes = gib(*mem_gib);
      if (number_at(t, "maxGpuFree").value_or(0) >= 1) o.confirmed_available_at = ctx.fetched_at;
      o.id = import_detail::make_offer_id(o);
      resolve(o, {model, string_at(t, "gpuModelId")}, batch, src, where);
      std::optional<double> total;
      const auto g = price("gpuPriceHr");
      const auto c = price("vcpuPriceHr");
      const auto m = price("memoryGibPriceHr");
      const auto ip = price("ipv4PriceHr");
      if (g && *g > 0 && c && m && ip && mem_gib) total = *g + vcpus * *c + *mem_gib * *m + *ip;
      add_price(batch, o, PriceKind::on_demand, total, ref(ctx, info_.name, where), where);
      import_detail::add_offer(batch, std::move(o));
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

// ------------------------------------------------------------------------------------------
// OVHcloud: the public order catalogue of Public Cloud, one book per billing subsidiary (no key):
// FR on api.ovh.com (EUR, converted at the ECB rate fetched with it) and US on
// api.us.ovhcloud.com (USD). GPU instance flavors are the `addons[]` whose
// blobs.commercial.brick is "gpu" (AI Training/Deploy addons carry a GPU blob too but are priced
// per minute under another brick); the GPU model and count come from blobs.technical.gpu
// {model, number, memory.size (GB)}, never from the flavor name. planCode "<flavor>.consumption"
// is the hourly on-demand price; "<flavor>.monthly.postpaid" (pricings[0] interval 1, intervalUnit
// "month") is the monthly plan, a one-month commitment stored on the same offer as a reserved-1m
// price of month price / 730 h (the planner bills its 730-hour term whole, so a run pays whole
// months); other billing modes are not stored.
// pricings[0].price is an integer in 1e-8 of the book's currency (ex-VAT); a row whose
// formattedPrice disagrees with it by more than half a cent is reported, not stored. Windows
// flavors (blobs.technical.os.family "windows": licence included) are skipped.
constexpr const char* kOvhFrUrl = "https://api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR";
constexpr const char* kOvhUsUrl = "https://api.us.ovhcloud.com/1.0/order/catalog/public/cloud?ovhSubsidiary=US";

class OvhSource final : public Source {
 public:
  OvhSource() {
    info_.name = "ovhcloud";
    info_.description = "OVHcloud Public Cloud GPU flavors from the public order catalogue, FR (EUR, ECB rate) and US (USD) books";
    info_.urls = {kOvhFrUrl, kOvhUsUrl, kEcbUrl};
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    return {get_doc(ctx, info_.name, kOvhFrUrl, "book:FR"), get_doc(ctx, info_.name, kOvhUsUrl, "book:US"),
            get_doc(ctx, info_.name, kEcbUrl, "ecb")};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const EurUsd fx = parse_ecb(docs.at(2));
    ImportBatch batch;
    for (std::size_t b = 0; b < 2; ++b) {
      const FetchedDoc& d = docs.at(b);
      const std::string subsidiary = d.label.substr(5);  // "FR", "US"
      const std::string currency = subsidiary == "FR" ? "EUR" : "USD";
      const json j = parse_json(d);
      const json& locale = require_object(at(j, "locale"), d.url + ": /locale", "locale");
      if (string_at(locale, "currencyCode") != currency || string_at(locale, "subsidiary") != subsidiary)
        throw Error(ErrorKind::invalid_input, d.url + ": /locale",
                    fmt::format("the book is subsidiary '{}' in '{}'", string_at(locale, "subsidiary"),
                                string_at(locale, "currencyCode")),
                    fmt::format("subsidiary {} priced in {}", subsidiary, currency));
      const json& addons = require_array(at(j, "addons"), d.url + ": /addons", "addons");
      const ImportSource src = import_source(ctx, d, info_.name, "ovhcloud");
      for (std::size_t i = 0; i < addons.size(); ++i) {
        const json& a = addons[i];
        const json& blobs = at(a, "blobs");
        if (string_at(at(blobs, "commercial"), "brick") != "gpu") continue;
        ++batch.rows_read;
        const std::string plan = string_at(a, "planCode");
        const std::string where = fmt::format("{}#addons/{} ({})", d.url, i, plan);
        static constexpr std::string_view kHourly = ".consumption";
        static constexpr std::string_view kMonthly = ".monthly.postpaid";
        auto ends_with = [&](std::string_view suffix) {
          return plan.size() > suffix.size() && plan.compare(plan.size() - suffix.size(), suffix.size(), suffix) == 0;
        };
        const bool monthly = ends_with(kMonthly);
        if (!monthly && !ends_with(kHourly)) continue;  // other billing modes: not stored
        const std::size_t suffix_size = monthly ? kMonthly.size() : kHourly.size();
        const json& tech = at(blobs, "technical");
        if (string_at(at(tech, "os"), "family") == "windows") continue;  // Windows licence included
        const json& gpu = at(tech, "gpu");
        const std::string model = string_at(gpu, "model");
        const auto number = number_at(gpu, "number");
        if (model.empty() || !number || *number < 1 || std::floor(*number) != *number) {
          unmapped(batch, where, "no blobs.technical.gpu {model, number}: skipped, not guessed from the flavor name");
          continue;
        }
        const json& pricings = at(a, "pricings");
        if (monthly && !(pricings.is_array() && pricings.size() == 1 && string_at(pricings[0], "intervalUnit") == "month" &&
                         number_at(pricings[0], "interval") == 1.0)) {
          unmapped(batch, where, "monthly plan without one pricing of interval 1 month: skipped");
          continue;
        }
        const auto units = pricings.is_array() && pricings.size() == 1 ? number_at(pricings[0], "price") : std::nullopt;
        std::optional<double> price;  // in the book's currency per hour
        if (units && *units > 0) {
          price = *units / 1e8;
          static const std::regex shown_re(R"(([0-9]+(?:[.,][0-9]{1,2})?))");
          const std::string shown = string_at(pricings[0], "formattedPrice");
          std::smatch m;
          if (!std::regex_search(shown, m, shown_re)) {
            unmapped(batch, where, fmt::format("formattedPrice '{}' has no number to check the 1e-8 scale", shown));
            continue;
          }
          std::string num = m[1].str();
          std::replace(num.begin(), num.end(), ',', '.');
          if (std::abs(std::stod(num) - *price) > 0.005 + 1e-9) {
            unmapped(batch, where, fmt::format("price {} (÷1e8 = {}) disagrees with formattedPrice '{}'", *units,
                                               *price, shown));
            continue;
          }
        }
        Offer o;
        o.provider = "ovhcloud";
        o.instance_type = plan.substr(0, plan.size() - suffix_size);
        o.region = subsidiary;
        o.gpu_name_raw = model;
        o.gpu_count = static_cast<int>(*number);
        if (auto g = number_at(at(gpu, "memory"), "size")) o.gpu_memory_bytes = gb(*g);
        if (auto c = number_at(at(tech, "cpu"), "cores")) o.vcpus = *c;
        if (auto m = number_at(at(tech, "memory"), "size")) o.ram_bytes = gb(*m);
        o.id = import_detail::make_offer_id(o);
        resolve(o, {model, o.instance_type}, batch, src, where);
        std::optional<double> usd;
        std::string loc = where;
        if (price && currency == "EUR") {
          usd = *price * fx.usd_per_eur;
          loc = fmt::format("{} (EUR {} × {} USD/EUR, ECB {})", where, *price, fx.usd_per_eur, fx.date);
        } else if (price) {
          usd = *price;
        }
        static constexpr double kHoursPerMonth = 730.0;  // 8,760 h / 12, the reserved-1m term
        if (monthly && usd) {
          *usd /= kHoursPerMonth;
          loc += fmt::format(" (per month ÷ {:.0f} h)", kHoursPerMonth);
        }
        add_price(batch, o, monthly ? PriceKind::reserved_1m : PriceKind::on_demand, usd, ref(ctx, info_.name, loc),
                  where);
        import_detail::add_offer(batch, std::move(o));
      }
    }
    return batch;
  }

 private:
  SourceInfo info_;
};

}  // namespace

std::unique_ptr<Source> make_vultr_source() { return std::make_unique<VultrSource>(); }
std::unique_ptr<Source> make_oci_source() { return std::make_unique<OciSource>(); }
std::unique_ptr<Source> make_scaleway_source() { return std::make_unique<ScalewaySource>(); }
std::unique_ptr<Source> make_lambda_source() { return std::make_unique<LambdaSource>(); }
std::unique_ptr<Source> make_cudo_source() { return std::make_unique<CudoSource>(); }
std::unique_ptr<Source> make_ovh_source() { return std::make_unique<OvhSource>(); }

}  // namespace gpuplan::fetch
