// FSDL, tardellirs, ewyluda, gpuhunt and gpuplan-generic importers on the bundled files
// (data/offers, PROVENANCE.md §2-§5), the test fixtures (tests/data/import) and malformed input.
//
// Counts checked with a one-off Python script (csv.DictReader / json.load):
//   fsdl cloud-gpus.csv: 257 rows; 6 rows (Exoscale) with both On-demand and Spot empty;
//   fsdl serverless-gpus.csv: 72 rows; rows 70-73 write "$0.4" prices and "16GB" memory;
//   tardellirs offerings.json: 310 records; 13 say their price is "estimated";
//   ewyluda index-history.csv: 353 rows, 54 distinct (gpu_model, series) = 11 GPUs x 5 series
//     minus (H100-PCIe, hyperscaler); 49 series have 7 dates, 5 spot series have 2 (49x7 + 5x2 = 353);
//     H100 index: 3.82 on 2026-09-29..10-03, 4.02 on 10-04, 4.32 on 10-05;
//   gpuhunt tpu_pricing.json: 8 TPU names, 21 (name, region) entries.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>

#include "catalog/importers.hpp"
#include "util/csv.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

ImportBatch import_embedded(std::string_view path, ImportFormat format, std::string dataset) {
  ImportSource src;
  src.file = "data/" + std::string(path);
  src.dataset = std::move(dataset);
  return import_text(embedded_file_or_throw(path), format, src);
}

std::size_t count_rule(const ImportBatch& b, std::string_view rule, bool rejected) {
  std::size_t n = 0;
  for (const ImportIssue& i : b.issues)
    if (i.rule == rule && i.rejected == rejected) ++n;
  return n;
}

bool has_flag(const Offer& o, std::string_view rule) {
  for (const QualityFlag& f : o.flags)
    if (f.rule == rule) return true;
  return false;
}

std::string error_of(std::string_view text, ImportFormat format, const std::string& file) {
  ImportSource src;
  src.file = file;
  src.dataset = "test";
  try {
    import_text(text, format, src);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ImportFsdl, CloudGpus) {
  const ImportBatch b =
      import_embedded("offers/fsdl-cloud-gpus/cloud-gpus.csv", ImportFormat::fsdl_cloud_gpus_csv, "fsdl-cloud-gpus");
  EXPECT_EQ(b.rows_read, 257u);
  EXPECT_EQ(count_rule(b, "no_price", true), 6u);
  // "AWS,A100 (80 GB),Ampere,8,640,96,1152,40.97,5.12,,p4de.24xlarge" (line 2). No region, no date.
  const Offer* p4de = b.find("aws/p4de.24xlarge/");
  ASSERT_NE(p4de, nullptr);
  EXPECT_EQ(p4de->gpu_count, 8);
  EXPECT_DOUBLE_EQ(*p4de->gpu_memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(*p4de->ram_bytes, 1152e9);
  const PriceObservation* od = p4de->latest_price(PriceKind::on_demand);
  ASSERT_NE(od, nullptr);
  EXPECT_DOUBLE_EQ(od->usd_per_hour, 40.97);
  EXPECT_EQ(od->source.observed_at, std::nullopt);
  EXPECT_EQ(p4de->latest_price(PriceKind::spot), nullptr);
  // Lambda rows have no Name: "1x H100 (80 GB)" names the configuration.
  const Offer* lambda_h100 = b.find("lambda/1x h100 (80 gb)/");
  ASSERT_NE(lambda_h100, nullptr);
  EXPECT_DOUBLE_EQ(lambda_h100->latest_price(PriceKind::on_demand)->usd_per_hour, 1.99);
  // g4dn.4xlarge appears 3 times with identical cells: one offer, one observation.
  const Offer* g4dn = b.find("aws/g4dn.4xlarge/");
  ASSERT_NE(g4dn, nullptr);
  EXPECT_EQ(g4dn->prices.size(), 2u);  // on-demand 1.20 and spot 0.36, each once
  // GCP attaches different GPUs to one n1-highmem-8 host: the shape is part of the name.
  EXPECT_NE(b.find("gcp/n1-highmem-8 [1x t4 (16 gb), 8 vcpu, 52 gb ram]/"), nullptr);
  // Ranges such as "4-6" vCPUs stay unknown (line 86).
  EXPECT_EQ(count_rule(b, "range_value", false), 18u);
}

TEST(ImportFsdl, ServerlessDollarPricesAndGbUnits) {
  const ImportBatch b = import_embedded("offers/fsdl-cloud-gpus/serverless-gpus.csv",
                                        ImportFormat::fsdl_serverless_gpus_csv, "fsdl-serverless-gpus");
  EXPECT_EQ(b.rows_read, 72u);
  std::size_t with_price = 0;
  for (const Offer& o : b.offers) with_price += o.prices.empty() ? 0 : 1;
  EXPECT_EQ(with_price, b.offers.size());
  // "Banana,A5000 (24 GB),Ampere,1,24,4,64,2.32,2.32"
  const Offer* banana = b.find("banana/serverless 1x a5000 (24 gb), 4 vcpu, 64 gb ram/");
  ASSERT_NE(banana, nullptr);
  EXPECT_DOUBLE_EQ(banana->latest_price(PriceKind::on_demand)->usd_per_hour, 2.32);
}

TEST(ImportFsdl, UnitParsing) {
  const std::string header = "Vendor,GPU Type,GPU Arch,GPUs,GPU RAM,vCPUs,RAM,Per-Hour,Per-GPU\n";
  ImportSource src;
  src.file = "s.csv";
  const ImportBatch b = import_fsdl_serverless_gpus_csv(header + "V,T4 (16 GB),Turing,2,32GB,4,16,$1.5,$0.75\n", src);
  ASSERT_EQ(b.offers.size(), 1u);
  EXPECT_DOUBLE_EQ(b.offers[0].prices[0].usd_per_hour, 1.5);
  EXPECT_DOUBLE_EQ(*b.offers[0].gpu_memory_bytes, 16e9);
  // 16 GiB = 17.179869184 GB.
  const ImportBatch gib = import_fsdl_serverless_gpus_csv(header + "V,T4 (16 GiB),Turing,1,,4,16,1,1\n", src);
  EXPECT_DOUBLE_EQ(*gib.offers[0].gpu_memory_bytes, 16.0 * 1073741824.0);
  const std::string e1 = error_of(header + "V,T4 (16 GB),Turing,1,16,4,16,1.5 USD,1\n",
                                  ImportFormat::fsdl_serverless_gpus_csv, "s.csv");
  EXPECT_NE(e1.find("s.csv:2"), std::string::npos) << e1;
  EXPECT_NE(e1.find("Per-Hour"), std::string::npos) << e1;
  const std::string e2 = error_of(header + "V,T4 (16 parsecs),Turing,1,16,4,16,1,1\n",
                                  ImportFormat::fsdl_serverless_gpus_csv, "s.csv");
  EXPECT_NE(e2.find("s.csv:2"), std::string::npos) << e2;
  EXPECT_NE(error_of(header + "V,T4,Turing,1,16,4,16,-1,1\n", ImportFormat::fsdl_serverless_gpus_csv, "s.csv")
                .find("negative"),
            std::string::npos);
}

TEST(ImportTardellirs, OfferingsWithDatesAndUrls) {
  const ImportBatch b = import_embedded("offers/tardellirs-gpu-pricing/offerings.json",
                                        ImportFormat::tardellirs_offerings_json, "tardellirs");
  EXPECT_EQ(b.rows_read, 310u);
  EXPECT_EQ(count_rule(b, "estimated_price", true), 13u);
  // {"id": "lambda-h100-sxm-on-demand", "gpu_model": "NVIDIA H100 SXM", "interconnect": "SXM",
  //  "price_usd_hour": 4.29, "source_url": "https://lambda.ai/pricing", "collected_at": "2026-05-24"}
  const Offer* o = b.find("lambda/h100-sxm/");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->gpu_count, 1);
  EXPECT_EQ(o->gpu_name, "NVIDIA H100 SXM");
  EXPECT_EQ(o->intra_node_link, IntraNodeLink::nvlink);
  const PriceObservation* p = o->latest_price(PriceKind::on_demand);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->usd_per_hour, 4.29);
  EXPECT_EQ(p->source.observed_at, "2026-05-24");
  EXPECT_EQ(p->source.locator.rfind("https://lambda.ai/pricing", 0), 0u) << p->source.locator;
  // Every observation has a date (tardellirs dates every row).
  for (const Offer& x : b.offers)
    for (const PriceObservation& q : x.prices) EXPECT_TRUE(q.source.observed_at.has_value()) << x.id;
}

TEST(ImportTardellirs, SpotAndOnDemandRowsOfOneProductMerge) {
  const std::string text = R"([
  {"id": "acme-h100-sxm-on-demand", "provider_id": "acme", "gpu_model": "H100 SXM", "vram_gb": 80,
   "interconnect": "SXM", "tier": "on-demand", "is_spot": false, "price_usd_hour": 2.5, "vcpu": null,
   "ram_gb": null, "source_url": "https://example.invalid/a", "collected_at": "2026-05-24", "caveats": []},
  {"id": "acme-h100-sxm-spot", "provider_id": "acme", "gpu_model": "H100 SXM", "vram_gb": 80,
   "interconnect": "SXM", "tier": "spot", "is_spot": true, "price_usd_hour": 1.5, "vcpu": null,
   "ram_gb": null, "source_url": "https://example.invalid/a", "collected_at": "2026-05-24"}
])";
  ImportSource src;
  src.file = "o.json";
  const ImportBatch b = import_tardellirs_offerings_json(text, src);
  ASSERT_EQ(b.offers.size(), 1u);
  EXPECT_EQ(b.offers[0].id, "acme/h100-sxm/");
  EXPECT_DOUBLE_EQ(b.offers[0].latest_price(PriceKind::on_demand)->usd_per_hour, 2.5);
  EXPECT_DOUBLE_EQ(b.offers[0].latest_price(PriceKind::spot)->usd_per_hour, 1.5);
}

TEST(ImportTardellirs, MalformedJsonGivesLineAndColumn) {
  // Missing comma after "acme" on line 2: nlohmann reports the byte of the next token.
  const std::string e = error_of("[\n {\"id\": \"acme\" \"provider_id\": 1}\n]", ImportFormat::tardellirs_offerings_json,
                                 "o.json");
  EXPECT_NE(e.find("o.json:2:"), std::string::npos) << e;
  // Wrong type: the record's line:col and the field are named.
  const std::string t = error_of(
      "[\n  {\"id\": \"a\", \"provider_id\": \"p\", \"gpu_model\": \"T4\", \"is_spot\": \"no\", \"price_usd_hour\": 1,"
      " \"source_url\": \"u\", \"collected_at\": \"2026-05-24\"}\n]",
      ImportFormat::tardellirs_offerings_json, "o.json");
  EXPECT_NE(t.find("o.json:2:3"), std::string::npos) << t;
  EXPECT_NE(t.find("is_spot"), std::string::npos) << t;
  // Unknown field.
  const std::string u = error_of("[{\"id\": \"a\", \"surprise\": 1}]", ImportFormat::tardellirs_offerings_json, "o.json");
  EXPECT_NE(u.find("surprise"), std::string::npos) << u;
}

TEST(ImportEwyluda, PriceIndexHistory) {
  const ImportBatch b = import_embedded("offers/ewyluda-gpu-price-index/index-history.csv",
                                        ImportFormat::ewyluda_index_history_csv, "ewyluda-gpu-price-index");
  EXPECT_EQ(b.rows_read, 353u);
  EXPECT_EQ(b.offers.size(), 54u);
  const Offer* h100 = b.find("index:index/h100/");
  ASSERT_NE(h100, nullptr);
  EXPECT_TRUE(h100->excluded_from_ranking());  // a statistic, not a rentable offer
  EXPECT_TRUE(has_flag(*h100, "price_index"));
  ASSERT_EQ(h100->prices.size(), 7u);  // one observation per date, oldest first
  EXPECT_EQ(h100->prices.front().source.observed_at, "2026-09-29");
  EXPECT_EQ(h100->prices.back().source.observed_at, "2026-10-05");
  const PriceObservation* latest = h100->latest_price(PriceKind::on_demand);
  ASSERT_NE(latest, nullptr);
  EXPECT_DOUBLE_EQ(latest->usd_per_hour, 4.32);
  EXPECT_EQ(latest->source.observed_at, "2026-10-05");
  // The "spot" series records spot observations.
  const Offer* spot = b.find("index:spot/h100/");
  ASSERT_NE(spot, nullptr);
  EXPECT_NE(spot->latest_price(PriceKind::spot), nullptr);
  EXPECT_EQ(spot->latest_price(PriceKind::on_demand), nullptr);
  const std::string e = error_of("date,gpu_model,series,usd_per_gpu_hour\n2026-13-01,H100,index,3\n",
                                 ImportFormat::ewyluda_index_history_csv, "h.csv");
  EXPECT_NE(e.find("h.csv:2"), std::string::npos) << e;
}

TEST(ImportGpuhunt, TpuPricing) {
  const ImportBatch b =
      import_embedded("offers/gpuhunt/tpu_pricing.json", ImportFormat::gpuhunt_tpu_pricing_json, "gpuhunt-tpu-pricing");
  EXPECT_EQ(b.rows_read, 21u);
  // "TPU v6e" / "us-east1": On Demand 2.7000, Spot 1.8900 (USD per chip-hour).
  const Offer* o = b.find("gcp/tpu v6e/us-east1");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->gpu_count, 1);
  EXPECT_DOUBLE_EQ(o->latest_price(PriceKind::on_demand)->usd_per_hour, 2.70);
  EXPECT_DOUBLE_EQ(o->latest_price(PriceKind::spot)->usd_per_hour, 1.89);
  EXPECT_EQ(o->latest_price(PriceKind::on_demand)->source.observed_at, std::nullopt);
  const std::string e = error_of("{\"TPU x\": {\"r\": {\"On Demand (USD)\": \"cheap\"}}}",
                                 ImportFormat::gpuhunt_tpu_pricing_json, "t.json");
  EXPECT_NE(e.find("/TPU x/r"), std::string::npos) << e;
}

TEST(ImportGeneric, JsonFixtureFromTheDocs) {
  const ImportBatch b = import_file(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/import/quotes.json");
  ASSERT_EQ(b.offers.size(), 1u);
  const Offer& o = b.offers[0];
  EXPECT_EQ(o.id, "examplecloud/hgx-h100-8x-reserved/us-west");
  EXPECT_EQ(o.gpu_name, "NVIDIA H100 SXM");
  EXPECT_EQ(o.inter_node_network, InterNodeNetwork::infiniband);
  EXPECT_DOUBLE_EQ(*o.inter_node_bits_per_s, 3200e9);
  EXPECT_EQ(o.max_nodes, 32);
  // usd_per_gpu_hour 2.10 × 8 GPUs = 16.80 per node-hour.
  const PriceObservation* p = o.latest_price(PriceKind::reserved_1y);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->usd_per_hour, 2.10 * 8);
  EXPECT_EQ(p->source.observed_at, "2026-11-02");
  EXPECT_EQ(o.billing_override.granularity_seconds, 3600.0);
  EXPECT_EQ(o.billing_override.minimum_billed_seconds, 2592000.0);
  EXPECT_EQ(b.dataset, "user:quotes.json");
}

TEST(ImportGeneric, MonthlyPlanIsAReserved1mPrice) {
  ImportSource src;
  src.file = "q.csv";
  const ImportBatch b = import_generic_csv(
      "provider,instance_type,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
      "p,i,H100,1,reserved-1m,2.5,2026-11-30,s\n",
      src);
  ASSERT_EQ(b.offers.size(), 1u);
  const PriceObservation* p = b.offers[0].latest_price(PriceKind::reserved_1m);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->usd_per_hour, 2.5);
  EXPECT_EQ(b.offers[0].latest_price(PriceKind::reserved_1y), nullptr);
}

// min_nodes (issue 9): the fewest nodes a reserved cluster is sold as, from CSV and JSON; a
// minimum above max_nodes, 0 or 2.5 is refused at the row naming the column.
TEST(ImportGeneric, MinNodesColumn) {
  ImportSource src;
  src.file = "q.csv";
  const std::string header =
      "provider,instance_type,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,network,max_nodes,min_nodes\n";
  const ImportBatch b = import_generic_csv(header + "p,cluster,H100,8,reserved-1m,2,2026-11-30,s,infiniband,16,4\n"
                                                    "p,node,H100,8,on-demand,3,2026-11-30,s,infiniband,16,\n",
                                           src);
  ASSERT_EQ(b.offers.size(), 2u);
  const Offer* c = b.find("p/cluster/");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->min_nodes, 4);
  EXPECT_EQ(c->max_nodes, 16);
  const Offer* n = b.find("p/node/");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->min_nodes, std::nullopt);  // empty cell: no minimum known
  const auto err = [&](const std::string& text) { return error_of(text, ImportFormat::generic_csv, "q.csv"); };
  const std::string above = err(header + "p,cluster,H100,8,reserved-1m,2,2026-11-30,s,infiniband,4,8\n");
  EXPECT_NE(above.find("q.csv:2"), std::string::npos) << above;
  EXPECT_NE(above.find("min_nodes"), std::string::npos) << above;
  EXPECT_NE(above.find("max_nodes 4"), std::string::npos) << above;
  for (const char* bad : {"0", "2.5", "four"}) {
    const std::string e = err(header + "p,cluster,H100,8,reserved-1m,2,2026-11-30,s,infiniband,16," + bad + "\n");
    EXPECT_NE(e.find("q.csv:2"), std::string::npos) << e;
    EXPECT_NE(e.find("min_nodes"), std::string::npos) << e;
  }
  ImportSource js;
  js.file = "q.json";
  const ImportBatch j = import_generic_json(
      R"({"offers": [{"provider": "p", "instance_type": "cluster", "gpu": "H100", "gpu_count": 8,
          "price_kind": "reserved-1m", "usd_per_gpu_hour": 2, "observed_at": "2026-11-30", "source": "s",
          "network": "infiniband", "max_nodes": 16, "min_nodes": 4}]})",
      js);
  ASSERT_EQ(j.offers.size(), 1u);
  EXPECT_EQ(j.offers[0].min_nodes, 4);
}

TEST(ImportGeneric, CsvErrors) {
  const std::string header = "provider,instance_type,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n";
  const auto err = [&](const std::string& text) { return error_of(text, ImportFormat::generic_csv, "q.csv"); };
  EXPECT_NE(err("provider,instance_type,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source,colour\n").find(
                "unknown column 'colour'"),
            std::string::npos);
  EXPECT_NE(err(header + "p,i,H100,8,on-demand,10,yesterday,s\n").find("q.csv:2"), std::string::npos);
  // Not calendar days: February 30th, and February 29th of 2025 (not a leap year); 2024-02-29 is.
  EXPECT_NE(err(header + "p,i,H100,8,on-demand,10,2026-02-30,s\n").find("q.csv:2"), std::string::npos);
  EXPECT_NE(err(header + "p,i,H100,8,on-demand,10,2025-02-29,s\n").find("q.csv:2"), std::string::npos);
  EXPECT_NE(err(header + "p,i,H100,8,on-demand,10,2025-04-31,s\n").find("q.csv:2"), std::string::npos);
  {
    ImportSource leap;
    leap.file = "q.csv";
    EXPECT_EQ(import_generic_csv(header + "p,i,H100,8,on-demand,10,2024-02-29,s\n", leap).offers.size(), 1u);
  }
  EXPECT_NE(err(header + "p,i,H100,8,hourly,10,,s\n").find("price_kind"), std::string::npos);
  EXPECT_NE(err(header + "p,i,H100,0,on-demand,10,,s\n").find("gpu_count"), std::string::npos);
  EXPECT_NE(err(header + "p,i,H100,8,on-demand,,,s\n").find("usd_per_hour"), std::string::npos);
  EXPECT_NE(err(header + ",i,H100,8,on-demand,10,,s\n").find("provider"), std::string::npos);
  // trial50 #15: a GPU price × gpu_count above the instance bound (1,000,000 USD per hour) was stored:
  // 1,000,000 GPUs × $100 = $1e8 per hour. 10,000 × $100 = $1e6 is the bound itself, accepted.
  {
    const std::string per_gpu = "provider,instance_type,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n";
    EXPECT_EQ(err(per_gpu + "p,i,H100,1000000,on-demand,100,,s\n"),
              "q.csv:2: usd_per_gpu_hour 100 × gpu_count 1000000 = 100000000 USD per instance-hour is out of range "
              "(expected: usd_per_gpu_hour × gpu_count from 0 to 1000000 USD per hour)");
    ImportSource bound;
    bound.file = "q.csv";
    EXPECT_EQ(import_generic_csv(per_gpu + "p,i,H100,10000,on-demand,100,,s\n", bound).offers.size(), 1u);
    // The product as computed, not rounded into the range it is refused for (trial51).
    EXPECT_EQ(err(per_gpu + "p,i,H100,8,on-demand,125000.01,,s\n"),
              "q.csv:2: usd_per_gpu_hour 125000.01 × gpu_count 8 = 1000000.08 USD per instance-hour is out of range "
              "(expected: usd_per_gpu_hour × gpu_count from 0 to 1000000 USD per hour)");
  }
  // Unknown date stays unknown; a $0 price is flagged and excluded.
  ImportSource src;
  src.file = "q.csv";
  const ImportBatch b = import_generic_csv(header + "p,i,H100,8,on-demand,0,unknown,s\n", src);
  ASSERT_EQ(b.offers.size(), 1u);
  EXPECT_EQ(b.offers[0].prices[0].source.observed_at, std::nullopt);
  EXPECT_TRUE(has_flag(b.offers[0], "zero_price"));
  EXPECT_TRUE(b.offers[0].excluded_from_ranking());
  // $900 for 8 GPUs = $112.5 per GPU-hour: above the $100 plausibility bound.
  const ImportBatch hi = import_generic_csv(header + "p,i,H100,8,on-demand,900,,s\n", src);
  EXPECT_TRUE(has_flag(hi.offers[0], "implausible_per_gpu_price"));
  // A price that has no exact double prints in 6 significant digits (trial49: "$983.1999999999999/h";
  // 98.32 × 10 is 983.1999999999999 in binary).
  const ImportBatch odd = import_generic_csv(header + "p,i,H100,8,on-demand," + fmt::format("{}", 98.32 * 10) + ",,s\n", src);
  bool said = false;
  for (const ImportIssue& i : odd.issues)
    if (i.rule == "implausible_per_gpu_price") said = i.detail.rfind("on-demand price $983.2/h for 8 GPU(s)", 0) == 0;
  EXPECT_TRUE(said);
  const ImportBatch unresolved = import_generic_csv(header + "p,i,Quantum Abacus 9000,1,on-demand,1,,s\n", src);
  EXPECT_EQ(unresolved.offers[0].gpu_name, std::nullopt);
  EXPECT_TRUE(has_flag(unresolved.offers[0], "unresolved_gpu"));
  EXPECT_TRUE(unresolved.offers[0].excluded_from_ranking());
}

TEST(ImportGeneric, JsonErrorsUsePointers) {
  const auto err = [&](const std::string& text) { return error_of(text, ImportFormat::generic_json, "q.json"); };
  EXPECT_NE(err("{\"offers\": [{\"provider\": 1}]}").find("q.json: /offers/0/provider"), std::string::npos);
  EXPECT_NE(err("{\"offers\": [], \"extra\": 1}").find("extra"), std::string::npos);
  EXPECT_NE(err("{\"offers\": [\n  {\"provider\": \"p\",}\n]}").find("q.json:2:"), std::string::npos);
}

TEST(ImportFormat, DetectAndNames) {
  EXPECT_EQ(detect_import_format("x/vms.csv", "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"),
            ImportFormat::skypilot_vms_csv);
  EXPECT_EQ(detect_import_format("q.csv", "provider,instance_type,usd_per_hour\r\n"), ImportFormat::generic_csv);
  EXPECT_EQ(detect_import_format("t.json", "{\"TPU v5e\": {\"r\": {\"On Demand (USD)\": 1}}}"),
            ImportFormat::gpuhunt_tpu_pricing_json);
  EXPECT_THROW(detect_import_format("notes.txt", "hello"), Error);
  for (ImportFormat f : {ImportFormat::skypilot_vms_csv, ImportFormat::generic_json, ImportFormat::fsdl_cloud_gpus_csv})
    EXPECT_EQ(parse_import_format(import_format_name(f)), f);
  EXPECT_EQ(parse_import_format("excel"), std::nullopt);
}

}  // namespace
}  // namespace gpuplan
