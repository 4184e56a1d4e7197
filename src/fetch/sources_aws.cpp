// AWS: EC2 on-demand prices from the Price List Bulk API (per-region CSV), spot prices from the
// spot-page feed (spot.json) and interruption-frequency bands from the Spot Advisor data.
// Field layouts: docs/fetch.md §aws. GPU model per instance family from AWS's accelerated
// computing instance pages (https://aws.amazon.com/ec2/instance-types/#Accelerated_Computing):
// the price list names no GPU model.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using namespace adapt;

constexpr const char* kPriceListUrl =
    "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{}/index.csv";
constexpr const char* kSpotUrl = "https://website.spot.ec2.aws.a2z.com/spot.json";
constexpr const char* kAdvisorUrl = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json";

struct Family {
  std::string_view prefix;  ///< instance family, e.g. "p5" (matches "p5.48xlarge", not "p5e.")
  std::string_view gpu;     ///< GPU name candidate for the hardware catalog
};
// Instance family → GPU (AWS accelerated-computing instance pages, read 2026-12-01).
constexpr Family kFamilies[] = {
    {"p3", "V100 SXM2 16GB"}, {"p3dn", "V100 SXM2 32GB"}, {"p4d", "A100 SXM 40GB"}, {"p4de", "A100 SXM 80GB"},
    {"p5", "H100 SXM"},       {"p5e", "H200 SXM"},        {"p5en", "H200 SXM"},     {"p6-b200", "B200"},
    {"g4dn", "T4"},           {"g4ad", "Radeon Pro V520"}, {"g5", "A10G"},          {"g6", "L4"},
    {"g6e", "L40S"},          {"gr6", "L4"},
};

const Family* family_of(std::string_view instance_type) {
  const auto dot = instance_type.find('.');
  if (dot == std::string_view::npos) return nullptr;
  const std::string_view fam = instance_type.substr(0, dot);
  for (const Family& f : kFamilies)
    if (f.prefix == fam) return &f;
  return nullptr;
}

std::vector<std::string> regions(const SourceContext& ctx) {
  std::vector<std::string> out;
  const std::string list = ctx.env ? ctx.env("GPUPLAN_AWS_REGIONS").value_or("") : "";
  std::stringstream ss(list.empty() ? "us-east-1,us-east-2,us-west-2,eu-west-1,eu-central-1,ap-northeast-1" : list);
  for (std::string r; std::getline(ss, r, ',');)
    if (!r.empty()) out.push_back(r);
  return out;
}

bool keep_price_line(std::string_view line) {
  if (line.find("\"OnDemand\"") == std::string_view::npos || line.find("\"Linux\"") == std::string_view::npos)
    return false;
  for (const Family& f : kFamilies)
    if (line.find(fmt::format("\"{}.", f.prefix)) != std::string_view::npos) return true;
  return false;
}

class AwsSource final : public Source {
 public:
  AwsSource() {
    info_.name = "aws";
    info_.description = "AWS EC2 GPU instances: price list (on-demand), spot.json (spot), Spot Advisor (interruption bands)";
    info_.urls = {fmt::format(kPriceListUrl, "us-east-1"), kSpotUrl, kAdvisorUrl};
    info_.parser_version = 1;
    info_.expected_gpus = {"NVIDIA H100 SXM", "NVIDIA A10G", "NVIDIA L4"};
  }
  const SourceInfo& info() const override { return info_; }

  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    std::vector<FetchedDoc> docs;
    for (const std::string& region : regions(ctx)) {
      HttpRequest r;
      r.url = ctx.endpoint(fmt::format(kPriceListUrl, region));
      r.keep_first_lines = 6;  // 5 disclaimer lines + the header
      r.keep_line = keep_price_line;
      r.timeout_s = 1800;      // hundreds of MB per region, filtered while streaming
      HttpResponse resp = ctx.http->send(r, info_.name);
      docs.push_back(FetchedDoc{r.url, std::move(resp.body), "price-list:" + region});
    }
    // The two spot feeds are undocumented: a failure leaves spot prices unknown, not the snapshot.
    for (const auto& [url, label] : {std::pair{kSpotUrl, "spot"}, std::pair{kAdvisorUrl, "spot-advisor"}}) {
      try {
        docs.push_back(get_doc(ctx, info_.name, url, label));
      } catch (const Error& e) {
        docs.push_back(FetchedDoc{ctx.endpoint(url), std::string("unavailable: ") + e.what(),
                                  std::string(label) + "-unavailable"});
      }
    }
    return docs;
  }

  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    ImportBatch batch;
    for (const FetchedDoc& d : docs)
      if (d.label.rfind("price-list:", 0) == 0) parse_price_list(d, ctx, batch);
    for (const FetchedDoc& d : docs) {
      if (d.label == "spot") parse_spot(d, ctx, batch);
      if (d.label == "spot-advisor") parse_advisor(d, ctx, batch);
      if (d.label.find("-unavailable") != std::string::npos)
        import_detail::report(batch, nullptr, d.url, kRuleUnknownPrice, d.label + ": " + d.body, false, false);
    }
    return batch;
  }

 private:
  void parse_price_list(const FetchedDoc& d, const SourceContext& ctx, ImportBatch& batch) const {
    // Five disclaimer lines precede the header ("FormatVersion", "Disclaimer", ...).
    std::size_t pos = 0;
    for (int i = 0; i < 5 && pos != std::string::npos; ++i) {
      pos = d.body.find('\n', pos);
      if (pos != std::string::npos) ++pos;
    }
    if (pos == std::string::npos || d.body.compare(pos, 5, "\"SKU\"") != 0)
      throw Error(ErrorKind::invalid_input, d.url + ":6", "no \"SKU\" header after the 5 disclaimer lines",
                  "the AWS price list CSV layout");
    const ImportSource src = import_source(ctx, d, info_.name, "aws");
    const CsvTable t = CsvTable::parse(std::string_view(d.body).substr(pos), d.url);
    for (const char* c : {"TermType", "PricePerUnit", "Unit", "Currency", "Instance Type", "Region Code", "GPU",
                          "Tenancy", "Operating System", "CapacityStatus", "Pre Installed S/W", "vCPU", "Memory"})
      (void)t.column(c);
    for (const CsvRow& row : t.rows()) {
      ++batch.rows_read;
      auto cell = [&](std::string_view c) { return t.cell(row, c); };
      const std::string where = fmt::format("{}:{}", d.url, row.line + 5);
      if (cell("TermType") != "OnDemand" || cell("Tenancy") != "Shared" || cell("Operating System") != "Linux" ||
          cell("CapacityStatus") != "Used" || !(cell("Pre Installed S/W").empty() || cell("Pre Installed S/W") == "NA"))
        continue;
      if (auto mo = t.cell_if(row, "MarketOption"); mo && !mo->empty() && *mo != "OnDemand") continue;
      if (cell("Unit") != "Hrs" || cell("Currency") != "USD") continue;
      const Family* fam = family_of(cell("Instance Type"));
      if (fam == nullptr) continue;
      const auto gpus = import_detail::cell_number(cell("GPU"), where, "GPU");
      if (!gpus || *gpus < 1 || *gpus != static_cast<int>(*gpus)) {
        unmapped(batch, where, fmt::format("{}: GPU count '{}' (fractional or missing) is not modelled; skipped",
                                           cell("Instance Type"), cell("GPU")));
        continue;
      }
      Offer o;
      o.provider = "aws";
      o.instance_type = cell("Instance Type");
      o.region = cell("Region Code");
      o.gpu_name_raw = std::string(fam->gpu);
      o.gpu_count = static_cast<int>(*gpus);
      o.vcpus = import_detail::cell_number(cell("vCPU"), where, "vCPU");
      if (auto m = import_detail::cell_gb(cell("Memory"), where, "Memory")) o.ram_bytes = gb(*m);
      // "GPU Memory": "640 GB HBM3" (for the instance) or a per-GPU figure; decided per row by the
      // datasheet of the family's GPU.
      if (auto gm = t.cell_if(row, "GPU Memory"); gm && !gm->empty()) {
        std::string num = gm->substr(0, gm->find(' '));
        std::string unit = gm->size() > num.size() ? gm->substr(num.size() + 1, 2) : "GB";
        try {
          if (auto v = import_detail::cell_gb(num + unit, where, "GPU Memory")) {
            const GpuSpec* spec = import_detail::gpu_catalog(src).try_find(fam->gpu);
            const double total = gb(*v);
            const double per = total / o.gpu_count;
            if (spec && std::abs(per - spec->memory_bytes) > 0.2 * spec->memory_bytes &&
                std::abs(total - spec->memory_bytes) <= 0.2 * spec->memory_bytes)
              o.gpu_memory_bytes = total;
            else
              o.gpu_memory_bytes = per;
          }
        } catch (const Error&) {
          // An unreadable memory cell leaves memory unknown.
        }
      }
      o.id = import_detail::make_offer_id(o);
      resolve(o, {std::string(fam->gpu)}, batch, src, where);
      const std::optional<double> price = import_detail::cell_price(cell("PricePerUnit"), where, "PricePerUnit");
      add_price(batch, o, PriceKind::on_demand, price, ref(ctx, info_.name, where), where);
      import_detail::add_offer(batch, std::move(o));
    }
  }

  Offer* find(ImportBatch& batch, const std::string& id) const {
    for (Offer& o : batch.offers)
      if (o.id == id) return &o;
    return nullptr;
  }

  void parse_spot(const FetchedDoc& d, const SourceContext& ctx, ImportBatch& batch) const {
    const json j = parse_json(d);
    const json& cfg = require_object(at(j, "config"), d.url + ": /config", "config");
    const json& regs = require_array(at(cfg, "regions"), d.url + ": /config/regions", "config.regions");
    for (const json& r : regs) {
      const std::string region = string_at(r, "region");
      for (const json& it : r.value("instanceTypes", json::array())) {
        for (const json& sz : it.value("sizes", json::array())) {
          const std::string size = string_at(sz, "size");
          Offer* o = find(batch, import_detail::lower("aws/" + size + "/" + region));
          if (o == nullptr) continue;  // only GPU offers of the fetched regions
          ++batch.rows_read;
          std::optional<double> price;
          for (const json& vc : sz.value("valueColumns", json::array()))
            if (string_at(vc, "name") == "linux") price = number_at(vc.value("prices", json::object()), "USD");
          const std::string where = fmt::format("{}#{}/{}", d.url, region, size);
          add_price(batch, *o, PriceKind::spot, price, ref(ctx, info_.name, where), where);
        }
      }
    }
  }

  void parse_advisor(const FetchedDoc& d, const SourceContext& ctx, ImportBatch& batch) const {
    const json j = parse_json(d);
    const json& ranges = require_array(at(j, "ranges"), d.url + ": /ranges", "ranges");
    std::map<int, std::pair<std::string, double>> bands;  // index → label, max % per month
    for (const json& r : ranges) {
      auto idx = number_at(r, "index");
      auto max = number_at(r, "max");
      if (idx && max) bands[static_cast<int>(*idx)] = {string_at(r, "label"), *max};
    }
    const json& adv = require_object(at(j, "spot_advisor"), d.url + ": /spot_advisor", "spot_advisor");
    for (Offer& o : batch.offers) {
      auto reg = adv.find(o.region);
      if (reg == adv.end() || !reg->is_object()) continue;
      auto lin = reg->find("Linux");
      if (lin == reg->end() || !lin->is_object()) continue;
      auto t = lin->find(o.instance_type);
      if (t == lin->end()) continue;
      auto r = number_at(*t, "r");
      if (!r || !bands.count(static_cast<int>(*r))) continue;
      const auto& [label, max_pct] = bands[static_cast<int>(*r)];
      // AWS defines the band as the share of Spot instances of that type and region interrupted
      // in the trailing month; its upper bound ÷ 30 days is a per-instance-day rate (conservative).
      o.billing_override.preemptions_per_day = max_pct / 100.0 / 30.0;
      o.billing_override.sources.push_back(
          fmt::format("preemptions_per_day: AWS Spot Advisor interruption frequency band '{}' (upper bound {}%/month "
                      "/ 30 days), {} (fetched {})",
                      label, max_pct, d.url, ctx.fetched_at));
    }
  }

  SourceInfo info_;
};

}  // namespace

std::unique_ptr<Source> make_aws_source() { return std::make_unique<AwsSource>(); }

}  // namespace gpuplan::fetch
