// AWS: EC2 on-demand prices from the Price List Bulk API (per-region CSV), spot prices from the
// spot-page feed (spot.json) and interruption-frequency bands from the Spot Advisor data.
// Field layouts: docs/fetch.md §aws. GPU model per instance family from AWS's accelerated
// computing instance pages (https://aws.amazon.com/ec2/instance-types/#Accelerated_Computing):
// the price list names no GPU model.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
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
  // An AWS region code ("us-east-2", "ap-southeast-1", "us-gov-west-1"): it becomes part of a host
  // name the signed request goes to, so anything else is refused (trial9e: "evil.com/x#").
  static const std::regex kRegion(R"(^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$)");
  for (std::string r; std::getline(ss, r, ',');) {
    if (r.empty() || std::find(out.begin(), out.end(), r) != out.end()) continue;  // "a,,a": once
    if (!std::regex_match(r, kRegion))
      throw Error(ErrorKind::invalid_input, "GPUPLAN_AWS_REGIONS", fmt::format("'{}' is not an AWS region code", r),
                  "comma-separated region codes such as us-east-1,us-west-2");
    out.push_back(r);
  }
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


// ------------------------------------------------------------------------------------------
// AWS EC2 Capacity Blocks for ML (needs AWS credentials): DescribeCapacityBlockOfferings of the
// EC2 Query API (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/
// API_DescribeCapacityBlockOfferings.html, Version 2016-11-15), signed with Signature Version 4 by
// libcurl. One request per region (GPUPLAN_AWS_REGIONS, as the `aws` source) for 1-day blocks
// (CapacityDurationHours=24, the shortest term), following nextToken. Each returned
// CapacityBlockOffering (instanceType, availabilityZone, instanceCount, startDate, endDate,
// capacityBlockDurationHours, upfrontFee, currencyCode) is a block one can buy now: the price per
// instance-hour is upfrontFee / (capacityBlockDurationHours × instanceCount). The offer per
// instance type, region and instance count is "<type> capacity-block" (the bundled rows' naming,
// data/offers/sourced/aws-capacity-blocks.csv; " xN" for a block of N instances) at the cheapest
// such rate, billed whole (granularity and minimum = the block's duration; min_nodes = max_nodes
// = N: a block is bought whole), confirmed available at the fetch. The operating-system fee AWS adds while instances run is not in the offering.
constexpr const char* kCapacityBlocksUrl =
    "https://ec2.{}.amazonaws.com/?Action=DescribeCapacityBlockOfferings&Version=2016-11-15&CapacityDurationHours=24";

/// Capacity-Block instance types → GPUs per instance and the EFA rate per instance (AWS
/// accelerated computing instance pages; the same rates as the SkyPilot importer's AWS table).
struct BlockType {
  std::string_view instance_type;
  int gpus;
  std::optional<double> efa_bits_per_s;
};
constexpr BlockType kBlockTypes[] = {
    {"p4d.24xlarge", 8, 400e9},  {"p4de.24xlarge", 8, 400e9},  {"p5.48xlarge", 8, 3200e9},
    {"p5e.48xlarge", 8, 3200e9}, {"p5en.48xlarge", 8, 3200e9}, {"p6-b200.48xlarge", 8, std::nullopt},
};

/// The text of each <tag>…</tag> in `xml` (not nested in itself), entity-decoded by xml_text.
std::vector<std::string_view> xml_elements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
  for (std::size_t at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at)) {
    const std::size_t begin = at + open.size();
    const std::size_t end = xml.find(close, begin);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(begin, end - begin));
    at = end + close.size();
  }
  return out;
}
std::optional<std::string> xml_text(std::string_view xml, std::string_view tag) {
  const auto v = xml_elements(xml, tag);
  if (v.empty()) return std::nullopt;
  std::string out;
  const std::string_view t = v.front();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '&') {
      out += t[i];
      continue;
    }
    static constexpr std::pair<std::string_view, char> kEntities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    bool done = false;
    for (const auto& [e, c] : kEntities)
      if (t.substr(i, e.size()) == e) {
        out += c;
        i += e.size() - 1;
        done = true;
        break;
      }
    if (!done) out += '&';
  }
  return out;
}

class AwsCapacityBlocksSource final : public Source {
 public:
  AwsCapacityBlocksSource() {
    info_.name = "aws-capacity-blocks";
    info_.frozen_after_days = kLiveFeedFrozenAfterDays;  // offerings bookable now: live
    info_.description =
        "AWS EC2 Capacity Blocks for ML: 1-day blocks on sale per region (DescribeCapacityBlockOfferings, signed); "
        "needs keys";
    info_.urls = {fmt::format(kCapacityBlocksUrl, "us-east-1")};
    info_.key_env = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"};
  }
  const SourceInfo& info() const override { return info_; }

  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    auto env = [&](const char* k) { return ctx.env ? ctx.env(k).value_or("") : std::string(); };
    std::vector<FetchedDoc> docs;
    for (const std::string& region : regions(ctx)) {
      HttpRequest first;
      first.url = ctx.endpoint(fmt::format(kCapacityBlocksUrl, region));
      first.aws_sigv4 = HttpRequest::AwsSigV4{fmt::format("aws:amz:{}:ec2", region), env("AWS_ACCESS_KEY_ID"),
                                              env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN")};
      const std::string base_url = first.url;
      const auto pages = paginate(
          *ctx.http, first,
          [&](const HttpResponse& r, int) -> std::optional<HttpRequest> {
            const auto token = xml_text(r.body, "nextToken");
            if (!token || token->empty()) return std::nullopt;
            HttpRequest next = first;
            next.url = base_url + "&NextToken=" + query_escape(*token);
            return next;
          },
          50, info_.name);
      for (const HttpResponse& r : pages) docs.push_back(FetchedDoc{r.url, r.body, "capacity-blocks:" + region});
    }
    return docs;
  }

  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    ImportBatch batch;
    struct Best {
      double usd_per_instance_hour = 0;
      double hours = 0;
      int max_instances = 0;
      std::string where;
      std::string region;
      const BlockType* type = nullptr;
    };
    std::map<std::string, Best> best;  // "<type>|<region>"
    const FetchedDoc* first_doc = docs.empty() ? nullptr : &docs.front();
    for (const FetchedDoc& d : docs) {
      const std::string region = d.label.substr(d.label.find(':') + 1);
      if (d.body.find("<capacityBlockOfferingSet") == std::string::npos)
        throw Error(ErrorKind::invalid_input, d.url,
                    "not a DescribeCapacityBlockOfferings reply: no <capacityBlockOfferingSet>",
                    "the EC2 Query API's XML reply (Version 2016-11-15)");
      // A body cut after the offering set loses its nextToken (the next page) without a word:
      // the reply must end with its root element (trial9e).
      if (d.body.find("</DescribeCapacityBlockOfferingsResponse>") == std::string::npos)
        throw Error(ErrorKind::invalid_input, d.url,
                    "truncated DescribeCapacityBlockOfferings reply: no closing </DescribeCapacityBlockOfferingsResponse>",
                    "the whole XML reply");
      const auto sets = xml_elements(d.body, "capacityBlockOfferingSet");
      const std::string_view set = sets.empty() ? std::string_view() : sets.front();  // <capacityBlockOfferingSet/>: none
      std::size_t index = 0;
      for (const std::string_view item : xml_elements(set, "item")) {
        ++batch.rows_read;
        const std::string where = fmt::format("{}#capacityBlockOfferingSet/item/{}", d.url, index++);
        const std::string type = xml_text(item, "instanceType").value_or("");
        const BlockType* bt = nullptr;
        for (const BlockType& b : kBlockTypes)
          if (b.instance_type == type) bt = &b;
        if (bt == nullptr) {
          unmapped(batch, where, fmt::format("instance type '{}' is not a GPU type gpuplan maps; skipped", type));
          continue;
        }
        const auto number = [&](std::string_view tag) -> std::optional<double> {
          const auto t = xml_text(item, tag);
          if (!t) return std::nullopt;
          char* end = nullptr;
          const double v = std::strtod(t->c_str(), &end);
          if (end == t->c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
          return v;
        };
        const auto fee = number("upfrontFee");
        const auto hours = number("capacityBlockDurationHours");
        const auto count = number("instanceCount");
        const std::string currency = xml_text(item, "currencyCode").value_or("");
        if (currency != "USD") {
          unmapped(batch, where, fmt::format("{}: currency '{}' is not USD; skipped", type, currency));
          continue;
        }
        if (!fee || !(*fee > 0) || !hours || !(*hours >= 1) || !count || !(*count >= 1) || *count != std::floor(*count)) {
          unmapped(batch, where,
                   fmt::format("{}: upfrontFee, capacityBlockDurationHours or instanceCount missing or not positive; "
                               "skipped",
                               type));
          continue;
        }
        const double rate = *fee / (*hours * *count);
        // A block is bought whole: its instance count is both the least and the most nodes a plan
        // on it bills, so each count is its own offer (trial9e: the largest block's size beside the
        // cheapest block's rate priced a 4-node plan at a 2-instance block's rate).
        Best& b = best[fmt::format("{}|{}|{}", type, region, *count)];
        b.max_instances = static_cast<int>(*count);
        if (b.type == nullptr || rate < b.usd_per_instance_hour) {
          b.usd_per_instance_hour = rate;
          b.hours = *hours;
          b.where = where;
          b.region = region;
          b.type = bt;
        }
      }
    }
    if (first_doc == nullptr) return batch;
    const ImportSource src = import_source(ctx, *first_doc, info_.name, "aws");
    for (const auto& [key, b] : best) {
      Offer o;
      o.provider = "aws";
      o.instance_type = std::string(b.type->instance_type) + " capacity-block" +
                        (b.max_instances > 1 ? fmt::format(" x{}", b.max_instances) : std::string());
      o.region = b.region;
      o.gpu_count = b.type->gpus;
      o.max_nodes = b.max_instances;
      o.min_nodes = b.max_instances;
      o.inter_node_network = InterNodeNetwork::ethernet;  // EFA, as the `aws` source records it
      o.inter_node_bits_per_s = b.type->efa_bits_per_s;
      o.confirmed_available_at = ctx.fetched_at;  // on sale at the fetch
      const std::string why = fmt::format(
          "EC2 DescribeCapacityBlockOfferings (a Capacity Block is paid up front for its whole duration, {:g} h)", b.hours);
      o.billing_override.granularity_seconds = b.hours * 3600;
      o.billing_override.minimum_billed_seconds = b.hours * 3600;
      o.billing_override.sources = {"granularity_seconds: " + why, "minimum_billed_seconds: " + why};
      o.id = import_detail::make_offer_id(o);
      const Family* f = family_of(b.type->instance_type);
      resolve(o, {f ? std::string(f->gpu) : std::string()}, batch, src, b.where);
      add_price(batch, o, PriceKind::on_demand, b.usd_per_instance_hour, ref(ctx, info_.name, b.where), b.where);
      import_detail::add_offer(batch, std::move(o));
    }
    return batch;
  }

 private:
  SourceInfo info_;
};
}  // namespace

std::unique_ptr<Source> make_aws_source() { return std::make_unique<AwsSource>(); }
std::unique_ptr<Source> make_aws_capacity_blocks_source() { return std::make_unique<AwsCapacityBlocksSource>(); }

}  // namespace gpuplan::fetch
