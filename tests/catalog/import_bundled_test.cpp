// bundled_catalog(): every bundled offer file imported with provenance and merged.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "catalog/importers.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

bool same(const PriceObservation& a, const PriceObservation& b) {
  return a.offer_id == b.offer_id && a.kind == b.kind && a.usd_per_hour == b.usd_per_hour &&
         a.source.dataset == b.source.dataset && a.source.locator == b.source.locator &&
         a.source.observed_at == b.source.observed_at;
}

TEST(ImportBundled, IsDeterministic) {
  const ImportBatch a = bundled_catalog();
  const ImportBatch b = bundled_catalog();
  ASSERT_EQ(a.offers.size(), b.offers.size());
  ASSERT_EQ(a.issues.size(), b.issues.size());
  EXPECT_EQ(a.rows_read, b.rows_read);
  for (std::size_t i = 0; i < a.offers.size(); ++i) {
    const Offer& x = a.offers[i];
    const Offer& y = b.offers[i];
    ASSERT_EQ(x.id, y.id);
    EXPECT_EQ(x.gpu_name, y.gpu_name);
    EXPECT_EQ(x.flags.size(), y.flags.size());
    ASSERT_EQ(x.prices.size(), y.prices.size()) << x.id;
    for (std::size_t k = 0; k < x.prices.size(); ++k) EXPECT_TRUE(same(x.prices[k], y.prices[k])) << x.id;
  }
}

TEST(ImportBundled, AzureEuPricesCarryTheFetcherRunDate) {
  const ImportBatch b = bundled_catalog();
  // data/offers/azure-pricing-radar/azure-gpu-vms.csv (PROVENANCE.md §12): every row observed at the
  // run recorded in last-checked.json of azure-pricing-radar@cf741f2.
  std::size_t rows = 0;
  for (const Offer& o : b.offers)
    for (const PriceObservation& p : o.prices)
      if (p.source.dataset == "azure-pricing-radar") {
        ++rows;
        EXPECT_EQ(p.source.observed_at, "2026-08-22T20:59:40Z") << o.id;
      }
  // 132 on-demand and spot meters + 55 reserved-1y rows from the on-demand meters' 1-year savings-plan
  // price + 39 rows of the four sizes added from the Azure size pages (NV36adms A10 v5, NV12s/24s/48s v3:
  // 13 size x region pairs x on-demand, spot, savings plan) → wc -l minus the header = 226.
  EXPECT_EQ(rows, 226u);
  const Offer* nd = b.find("azure/standard_nd96isr_h100_v5/westeurope");
  ASSERT_NE(nd, nullptr);
  EXPECT_EQ(nd->gpu_count, 8);
  EXPECT_EQ(nd->gpu_name, "NVIDIA H100 SXM");
  // The file's Linux meters for this size and region: on-demand 127.816, spot 23.620397 USD/h
  // (ewyluda's later 2026-10-10 observations of the same offer may be the latest ones).
  auto radar = [&](PriceKind kind) -> const PriceObservation* {
    for (const PriceObservation& p : nd->prices)
      if (p.kind == kind && p.source.dataset == "azure-pricing-radar") return &p;
    return nullptr;
  };
  ASSERT_NE(radar(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(radar(PriceKind::on_demand)->usd_per_hour, 127.816);
  ASSERT_NE(radar(PriceKind::spot), nullptr);
  EXPECT_DOUBLE_EQ(radar(PriceKind::spot)->usd_per_hour, 23.620397);
  // vm-swedencentral.json at cf741f2, meter DZH318Z0F8W2/0011 ("NC40adsH100v5", productName without
  // "Windows"): retailPrice 9.074, savingsPlanPrice 7.5486606 (the fetcher keeps the "1 Year" term).
  // The Windows meter of the same size (10.914 / 9.0793566) is not read.
  const Offer* nc = b.find("azure/standard_nc40ads_h100_v5/swedencentral");
  ASSERT_NE(nc, nullptr);
  const PriceObservation* od = nullptr;
  const PriceObservation* sp1y = nullptr;
  for (const PriceObservation& p : nc->prices) {
    if (p.source.dataset != "azure-pricing-radar") continue;
    if (p.kind == PriceKind::on_demand) od = &p;
    if (p.kind == PriceKind::reserved_1y) sp1y = &p;
  }
  ASSERT_NE(od, nullptr);
  ASSERT_NE(sp1y, nullptr);
  EXPECT_DOUBLE_EQ(od->usd_per_hour, 9.074);
  EXPECT_DOUBLE_EQ(sp1y->usd_per_hour, 7.5486606);
  // ND96isr H100 v5 in westeurope has no savings-plan price in the file: no reserved row is made up.
  EXPECT_EQ(radar(PriceKind::reserved_1y), nullptr);
  // nvv3-series.md (MicrosoftDocs/azure-docs): NV12s_v3 has 1 GPU, "one-half M60 card" of 8 GiB; the
  // westeurope Linux meter "NV12s v3" (DZH318Z0C0XF/0002) is 1.426 USD/h.
  const Offer* nv = b.find("azure/standard_nv12s_v3/westeurope");
  ASSERT_NE(nv, nullptr);
  EXPECT_EQ(nv->gpu_count, 1);
  EXPECT_EQ(nv->gpu_name, std::optional<std::string>("NVIDIA Tesla M60 (per GPU)"));
  ASSERT_NE(nv->latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(nv->latest_price(PriceKind::on_demand)->usd_per_hour, 1.426);
}

// SpareCores/sc-data@ce414d8e src/sc_data/data/sc-data-all.db, table server_price: ('aws', 'us-east-1', '',
// 'g5.xlarge', 'Linux', 'ONDEMAND', 1.006, ..., 'USD', 'HOUR', '2024-02-21 08:20:21.856627'); server g5.xlarge:
// 1 x NVIDIA A10G, 4 vCPUs, 16384 MiB RAM. p4d.24xlarge us-east-1 is in the same table at 32.7726 but left out:
// AWS has cut it since (SkyPilot 21.957642, ewyluda 2026-10-10 21.9576), likewise p5 (98.32 there, 55.04 later).
TEST(ImportBundled, SpareCoresAwsRowsCarryTheCrawlerTime) {
  const ImportBatch b = bundled_catalog();
  const Offer* g5 = b.find("aws/g5.xlarge/us-east-1");
  ASSERT_NE(g5, nullptr);
  EXPECT_EQ(g5->gpu_count, 1);
  EXPECT_EQ(g5->gpu_name, std::optional<std::string>("NVIDIA A10G"));
  const PriceObservation* sc = nullptr;
  for (const PriceObservation& p : g5->prices)
    if (p.source.dataset == "sparecores-aws") sc = &p;
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->kind, PriceKind::on_demand);
  EXPECT_DOUBLE_EQ(sc->usd_per_hour, 1.006);
  EXPECT_EQ(sc->source.observed_at, std::optional<std::string>("2024-02-21T08:20:21Z"));
  std::size_t rows = 0;
  for (const Offer& o : b.offers)
    for (const PriceObservation& p : o.prices)
      if (p.source.dataset == "sparecores-aws") {
        ++rows;
        EXPECT_NE(o.instance_type.rfind("p4d", 0), 0u) << o.id;
        EXPECT_NE(o.instance_type.rfind("p5", 0), 0u) << o.id;
      }
  EXPECT_EQ(rows, 471u);  // wc -l minus the header
  // p3 is kept (its 2024 price equals the SkyPilot excerpt's): a region-level offer next to SkyPilot's
  // zone-level ones, 8 x V100 16GB at 24.48 USD/h in us-east-1.
  const Offer* p3 = b.find("aws/p3.16xlarge/us-east-1");
  ASSERT_NE(p3, nullptr);
  EXPECT_EQ(p3->gpu_count, 8);
  ASSERT_FALSE(p3->prices.empty());
  EXPECT_DOUBLE_EQ(p3->prices.front().usd_per_hour, 24.48);
}

TEST(ImportBundled, EveryOfferHasProvenanceAndUniqueId) {
  const ImportBatch b = bundled_catalog();
  // Rows per file (python csv/json counts, see import_skypilot_test.cpp / import_formats_test.cpp):
  // skypilot 223+357+61+3+33+4+25+190+118+67+1+19 = 1101, fsdl 257+72, tardellirs 310,
  // ewyluda 353, gpuhunt 21 → 2114; + ewyluda observations 602 + AWS capacity blocks 4 → 2720;
  // + Cyclenerd GCP GPU machines 1396 (wc -l minus the header) → 4116; + azure-pricing-radar
  // 132 (wc -l minus the header) → 4248; + its 55 savings-plan rows → 4303; + Spare Cores AWS 471
  // (wc -l minus the header) → 4774; + 39 Azure rows of four sizes from the size pages → 4813.
  EXPECT_EQ(b.rows_read, 4813u);
  std::set<std::string> ids;
  for (const Offer& o : b.offers) {
    EXPECT_TRUE(ids.insert(o.id).second) << "duplicate id " << o.id;
    EXPECT_FALSE(o.prices.empty()) << o.id;
    for (const PriceObservation& p : o.prices) {
      EXPECT_EQ(p.offer_id, o.id);
      EXPECT_FALSE(p.source.dataset.empty()) << o.id;
      EXPECT_FALSE(p.source.locator.empty()) << o.id;
      // Never an invented date: SkyPilot rows have none, except AWS on-demand prices equal to a
      // dated observation of the same type and region, which cite it (the price-dates sidecar);
      // every FSDL row and gpuhunt TPU entry has the date its price was published (the row-dates
      // sidecars, derived from the git history).
      if (p.source.dataset.rfind("skypilot", 0) == 0) {
        const bool cites = p.source.locator.find(" = same price observed in ") != std::string::npos;
        EXPECT_EQ(p.source.observed_at.has_value(), cites) << o.id;
        if (cites) {
          EXPECT_EQ(p.kind, PriceKind::on_demand) << o.id;
          EXPECT_EQ(o.provider, "aws") << o.id;
        }
      }
      if (p.source.dataset.rfind("fsdl", 0) == 0 || p.source.dataset.rfind("gpuhunt", 0) == 0) {
        EXPECT_NE(p.source.observed_at, std::nullopt) << o.id;
      }
    }
  }
  const Offer* aws = b.find("aws/p5.48xlarge/us-east-1/use1-az2");
  ASSERT_NE(aws, nullptr);
  // The excerpt's line first (then, for a dated price, the observation it equals).
  EXPECT_EQ(aws->prices.front().source.locator.rfind(
                "skypilot-org/skypilot-catalog@00148f2af3672e2229b4f7bf8157d5a3f36e3c35:catalogs/v8/aws/"
                "vms.csv[p-family excerpt]:149",
                0),
            0u)
      << aws->prices.front().source.locator;
}

// PROVENANCE.md §13: the Spare Cores crawl of 2024-02-21T08:20:21Z lists p3.16xlarge us-east-1
// on-demand at 24.48 (sparecores-aws line 444), and the SkyPilot excerpt lists the same price in the
// zones of us-east-1 (line 18: use1-az1). That on-demand observation takes the crawl's date and
// cites it; the row's spot price (3.3915, not observed by Spare Cores) stays undated. The ewyluda
// observations of 2026-10-10 list p5.48xlarge us-east-1 at 55.04 (line 23), as the excerpt's line
// 149 (use1-az2): dated 2026-10-10. p4d.24xlarge us-east-1 is 21.957642 in the excerpt (line 108)
// and 21.9576 in ewyluda (line 6): not the same price, so it stays undated.
TEST(ImportBundled, SkyPilotAwsOnDemandPriceDatedByTheSamePriceObservedElsewhere) {
  const ImportBatch b = bundled_catalog();
  const Offer* p3 = b.find("aws/p3.16xlarge/us-east-1/use1-az1");
  ASSERT_NE(p3, nullptr);
  const PriceObservation* od = p3->latest_price(PriceKind::on_demand);
  ASSERT_NE(od, nullptr);
  EXPECT_DOUBLE_EQ(od->usd_per_hour, 24.48);
  EXPECT_EQ(od->source.observed_at, std::optional<std::string>("2024-02-21T08:20:21Z"));
  EXPECT_EQ(od->source.locator,
            "skypilot-org/skypilot-catalog@00148f2af3672e2229b4f7bf8157d5a3f36e3c35:catalogs/v8/aws/"
            "vms.csv[p-family excerpt]:18 = same price observed in SpareCores/sc-data@"
            "ce414d8e9d6bb1faf6ce9407fedac0c1f25f587a:src/sc_data/data/sc-data-all.db[AWS GPU on-demand, converted; "
            "PROVENANCE.md §13]:444 (data/offers/sparecores-aws/aws-gpu-ondemand-2024-02.csv:444)");
  const Offer* sc = b.find("aws/p3.16xlarge/us-east-1");  // the dated observation itself
  ASSERT_NE(sc, nullptr);
  ASSERT_NE(sc->latest_price(PriceKind::on_demand), nullptr);
  EXPECT_EQ(sc->latest_price(PriceKind::on_demand)->usd_per_hour, od->usd_per_hour);
  const PriceObservation* spot = p3->latest_price(PriceKind::spot);
  ASSERT_NE(spot, nullptr);
  EXPECT_DOUBLE_EQ(spot->usd_per_hour, 3.3915);
  EXPECT_EQ(spot->source.observed_at, std::nullopt);

  const Offer* p5 = b.find("aws/p5.48xlarge/us-east-1/use1-az2");
  ASSERT_NE(p5, nullptr);
  const PriceObservation* p5_od = p5->latest_price(PriceKind::on_demand);
  ASSERT_NE(p5_od, nullptr);
  EXPECT_DOUBLE_EQ(p5_od->usd_per_hour, 55.04);
  EXPECT_EQ(p5_od->source.observed_at, std::optional<std::string>("2026-10-10T12:33:53Z"));
  EXPECT_NE(p5_od->source.locator.find(" = same price observed in ewyluda/gpu-price-index@ab49c8081de81f1dae5f8f7e7d46af80b68c35d6"
                                       ":data/observations/2026/2026-10-10.csv:23 "),
            std::string::npos)
      << p5_od->source.locator;

  const Offer* p4d = b.find("aws/p4d.24xlarge/us-east-1/use1-az1");
  ASSERT_NE(p4d, nullptr);
  ASSERT_NE(p4d->latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(p4d->latest_price(PriceKind::on_demand)->usd_per_hour, 21.957642);
  EXPECT_EQ(p4d->latest_price(PriceKind::on_demand)->source.observed_at, std::nullopt);
}

// Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml at fd66b26 (generated 2026-07-30T06:13:17Z):
// compute.instance.a3-highgpu-8g.cost.us-central1 = {hour: 88.4899999025753, hour_spot: 50.6095408219178,
// month_1y: 44810.08066464, month_3y: 28370.99821392}; the tool's month is hour x 730, so the committed
// hourly rates are month_1y / 730 and month_3y / 730.
TEST(ImportBundled, GcpMachinePricesCarryTheirGenerationDateAndCommitments) {
  const ImportBatch b = bundled_catalog();
  const Offer* a3 = b.find("gcp/a3-highgpu-8g/us-central1");
  ASSERT_NE(a3, nullptr);
  EXPECT_EQ(a3->gpu_name, std::optional<std::string>("NVIDIA H100 SXM"));
  EXPECT_EQ(a3->gpu_count, 8);
  // The same offer also has newer ewyluda observations (2026-10-10): look at the Cyclenerd ones.
  auto from_cyclenerd = [&](PriceKind k) -> const PriceObservation* {
    for (const PriceObservation& p : a3->prices)
      if (p.kind == k && p.source.dataset == "cyclenerd-gcp-pricing") return &p;
    return nullptr;
  };
  const PriceObservation* od = from_cyclenerd(PriceKind::on_demand);
  const PriceObservation* spot = from_cyclenerd(PriceKind::spot);
  const PriceObservation* r1 = from_cyclenerd(PriceKind::reserved_1y);
  const PriceObservation* r3 = from_cyclenerd(PriceKind::reserved_3y);
  ASSERT_NE(od, nullptr);
  ASSERT_NE(spot, nullptr);
  ASSERT_NE(r1, nullptr);
  ASSERT_NE(r3, nullptr);
  EXPECT_DOUBLE_EQ(od->usd_per_hour, 88.4899999025753);
  EXPECT_DOUBLE_EQ(spot->usd_per_hour, 50.6095408219178);
  EXPECT_NEAR(r1->usd_per_hour, 44810.08066464 / 730, 1e-6);
  EXPECT_NEAR(r3->usd_per_hour, 28370.99821392 / 730, 1e-6);
  EXPECT_EQ(a3->latest_price(PriceKind::reserved_1y), r1);  // the only committed-use source
  for (const PriceObservation* p : {od, spot, r1, r3})
    EXPECT_EQ(p->source.observed_at, std::optional<std::string>("2026-07-30T06:13:17Z"));
  // Only regions where tools/machinetyperegion.csv lists the machine type: A2 is priced in
  // africa-south1 by the billing catalog but not offered there.
  EXPECT_EQ(b.find("gcp/a2-highgpu-1g/africa-south1"), nullptr);
  EXPECT_NE(b.find("gcp/a2-highgpu-1g/us-central1"), nullptr);
  // Fractional G4 slices (g4-standard-6 = 1/8 GPU) are not whole-GPU offers and are left out.
  EXPECT_EQ(b.find("gcp/g4-standard-6/us-central1"), nullptr);
}

// the-full-stack/website commit b08f276 (2023-06-20T15:33:41-07:00, "updates Lambda H100 price")
// changed cloud-gpus.csv line 168 from $2.40 to $1.99, and no later commit changed that price:
// the row's price was published 2023-06-20T22:33:41Z.
TEST(ImportBundled, FsdlRowsCarryTheDateTheirPriceWasPublished) {
  const ImportBatch b = bundled_catalog();
  const std::string locator =
      "the-full-stack/website@2bddc6d52544dc258e7e34396c6958377f72816b:docs/cloud-gpus/cloud-gpus.csv:168";
  const PriceObservation* found = nullptr;
  for (const Offer& o : b.offers)
    for (const PriceObservation& p : o.prices)
      if (p.source.locator == locator) found = &p;
  ASSERT_NE(found, nullptr);
  EXPECT_DOUBLE_EQ(found->usd_per_hour, 1.99);
  EXPECT_EQ(found->source.observed_at, std::optional<std::string>("2023-06-20T22:33:41Z"));
}

// dstackai/gpuhunt src/gpuhunt/resources/tpu_pricing.json, git log: c8bb9a7 "Add TPU support in GCP (#69)"
// 2024-06-11T16:34:24+05:00 wrote "TPU v5e"/"us-east5" (no later commit touched its prices); "TPU v6e" was
// added by edc13c0 (2024-12-20) and its spot prices changed by b707e74 "Update spot TPUs prices (#114)",
// 2024-12-23T10:19:35+05:00: the pair stands since then.
TEST(ImportBundled, TpuEntriesCarryTheDateTheirPricesWerePublished) {
  const ImportBatch b = bundled_catalog();
  const Offer* v5e = b.find("gcp/tpu v5e/us-east5");
  const Offer* v6e = b.find("gcp/tpu v6e/us-east1");
  ASSERT_NE(v5e, nullptr);
  ASSERT_NE(v6e, nullptr);
  for (const PriceObservation& p : v5e->prices)
    EXPECT_EQ(p.source.observed_at, std::optional<std::string>("2024-06-11T11:34:24Z"));
  for (const PriceObservation& p : v6e->prices)
    EXPECT_EQ(p.source.observed_at, std::optional<std::string>("2024-12-23T05:19:35Z"));
}

// data/offers/aws-spot-advisor/interruption-bands.csv (AWS Spot Advisor via alexei-led/spotinfo, 2025-06-28):
// "us-east-1,p4d.24xlarge,Linux,67,2,10-15%,16" and "us-east-1,p5.48xlarge,Linux,52,4,>20%,100". The planning
// rate is the band's upper edge per trailing month: 16 % / 30 days and 100 % / 30 days per instance-day.
TEST(ImportBundled, AwsSpotOffersGetTheAdvisorInterruptionBand) {
  const ImportBatch b = bundled_catalog();
  int p4d = 0, p5 = 0;
  for (const Offer& o : b.offers) {
    if (o.provider != "aws" || o.region != "us-east-1" || o.latest_price(PriceKind::spot) == nullptr) continue;
    if (o.instance_type == "p4d.24xlarge") {
      ++p4d;
      ASSERT_TRUE(o.billing_override.preemptions_per_day.has_value()) << o.id;
      EXPECT_NEAR(*o.billing_override.preemptions_per_day, 0.16 / 30, 1e-12) << o.id;
      bool cited = false;
      for (const std::string& s : o.billing_override.sources)
        cited = cited || (s.rfind("preemptions_per_day:", 0) == 0 && s.find("10-15%") != std::string::npos &&
                          s.find("spot-advisor-data.json") != std::string::npos);
      EXPECT_TRUE(cited) << o.id;
    }
    if (o.instance_type == "p5.48xlarge") {
      ++p5;
      ASSERT_TRUE(o.billing_override.preemptions_per_day.has_value()) << o.id;
      EXPECT_NEAR(*o.billing_override.preemptions_per_day, 1.0 / 30, 1e-12) << o.id;
    }
  }
  EXPECT_GT(p4d, 0);  // SkyPilot lists p4d.24xlarge spot prices in four us-east-1 zones
  EXPECT_GT(p5, 0);
  // Offers without a spot price get no rate; other providers get none from AWS's bands.
  for (const Offer& o : b.offers) {
    if (o.provider != "aws" && o.billing_override.preemptions_per_day) {
      for (const std::string& s : o.billing_override.sources)
        EXPECT_EQ(s.find("spot-advisor-data.json"), std::string::npos) << o.id;
    }
    if (o.provider == "aws" && o.latest_price(PriceKind::spot) == nullptr) {
      EXPECT_FALSE(o.billing_override.preemptions_per_day.has_value()) << o.id;
    }
  }
}

// data/providers.toml [[providers.gcp.networks]] from cloud.google.com/compute/docs/gpus/gpu-network-bandwidth:
// A3 Mega 1,800 Gb/s and A3 High (8 GPUs) 1,000 Gb/s per VM; the 1-GPU A3 type has no multi-NIC network entry.
TEST(ImportBundled, GcpA3NetworksComeFromTheNetworkTable) {
  const ImportBatch b = bundled_catalog();
  const Offer* mega = b.find("gcp/a3-megagpu-8g/us-central1");
  const Offer* high = b.find("gcp/a3-highgpu-8g/us-central1");
  const Offer* one = b.find("gcp/a3-highgpu-1g/us-central1");
  ASSERT_NE(mega, nullptr);
  ASSERT_NE(high, nullptr);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(mega->inter_node_network, InterNodeNetwork::ethernet);
  EXPECT_EQ(mega->inter_node_bits_per_s, std::optional<double>(1800e9));
  EXPECT_EQ(high->inter_node_bits_per_s, std::optional<double>(1000e9));
  EXPECT_EQ(one->inter_node_network, InterNodeNetwork::unknown);
}

// data/providers.toml [[providers.azure.networks]] from the ND A100 v4 / NDm A100 v4 size pages:
// "8 x 200 Gigabit HDR" InfiniBand, one link per GPU = 8 × 200 Gb/s = 1,600 Gb/s per VM.
TEST(ImportBundled, AzureA100NetworksComeFromTheSizePages) {
  const ImportBatch b = bundled_catalog();
  std::size_t seen = 0;
  for (const Offer& o : b.offers) {
    if (o.provider != "azure") continue;
    const std::string id = o.id;
    if (id.rfind("azure/standard_nd96asr_v4/", 0) != 0 && id.rfind("azure/standard_nd96amsr_a100_v4/", 0) != 0) continue;
    ++seen;
    EXPECT_EQ(o.inter_node_network, InterNodeNetwork::infiniband) << o.id;
    EXPECT_EQ(o.inter_node_bits_per_s, std::optional<double>(8 * 200e9)) << o.id;
  }
  EXPECT_GT(seen, 0u);
  // The single-node NC A100 v4 sizes have no such entry: unknown, not guessed.
  const Offer* nc = b.find("azure/standard_nc24ads_a100_v4/eastus");
  ASSERT_NE(nc, nullptr);
  EXPECT_EQ(nc->inter_node_network, InterNodeNetwork::unknown);
}

// data/providers.toml networks added 2026-12-04, each value from the quoted page:
//   Azure ND H200 v5: "3.2Tb/s of interconnect bandwidth per VM", one 400 Gbps InfiniBand link per GPU (8 × 400);
//   Azure NDv2 (ND40rs_v2): "100-Gigabit InfiniBand EDR backend networking" (one link per VM);
//   GCP A3 Ultra / A4: "The eight CX7 NICs deliver a total network bandwidth of 3,200 Gbps" (RoCE);
//   OCI BM.GPU.H100.8 "8 x 2 x 200 Gbps RDMA" = 3,200; BM.GPU.A100-v2.8 "16 x 100 Gbps RDMA" = 1,600;
//     BM.GPU.L40S.4 "800 Gbps RDMA" (OCI's cluster network is RoCE);
//   CoreWeave HGX A100: "Each compute node is uplinked with 1.6Tbps".
TEST(ImportBundled, NetworksFromProviderPagesOf20261204) {
  const ImportBatch b = bundled_catalog();
  auto expect_net = [&](const std::string& id, InterNodeNetwork net, double bits_per_s) {
    const Offer* o = b.find(id);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->inter_node_network, net) << id;
    EXPECT_EQ(o->inter_node_bits_per_s, std::optional<double>(bits_per_s)) << id;
  };
  expect_net("azure/standard_nd96isr_h200_v5/eastus2", InterNodeNetwork::infiniband, 8 * 400e9);
  expect_net("azure/standard_nd40rs_v2/westeurope", InterNodeNetwork::infiniband, 100e9);
  expect_net("azure/nd96amsr a100 v4/", InterNodeNetwork::infiniband, 8 * 200e9);
  expect_net("gcp/a3-ultragpu-8g/us-central1", InterNodeNetwork::roce, 3200e9);
  expect_net("gcp/a4-highgpu-8g/us-central1", InterNodeNetwork::roce, 3200e9);
  expect_net("oci/bm.gpu.h100.8/global", InterNodeNetwork::roce, 8 * 2 * 200e9);
  expect_net("oci/bm.gpu.h100.8/", InterNodeNetwork::roce, 8 * 2 * 200e9);
  expect_net("oci/bm.gpu.h200.8/global", InterNodeNetwork::roce, 8 * 400e9);
  expect_net("oci/bm.gpu.a100-v2.8/global", InterNodeNetwork::roce, 16 * 100e9);
  expect_net("oci/bm.gpu.mi300x.8/global", InterNodeNetwork::roce, 8 * 400e9);
  expect_net("oci/bm.gpu.l40s.4/global", InterNodeNetwork::roce, 800e9);
  expect_net("coreweave/nvidia-a100/global", InterNodeNetwork::infiniband, 1.6e12);
  // Not sourced, so still unknown: OCI B200 (absent from the stored shapes page) and CoreWeave HGX H100.
  for (const char* id : {"oci/bm.gpu.b200.8/global", "coreweave/hgx-h100/global"}) {
    const Offer* o = b.find(id);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->inter_node_network, InterNodeNetwork::unknown) << id;
  }
}

// AWS rows from ewyluda (region ids), FSDL (no region) and Spare Cores take the [[providers.aws.networks]]
// facts of 2026-12-04 (data/providers.SOURCES.md). Values as the pages state them: EC2 User Guide network
// table "p3dn.24xlarge | 100 Gbps", "p4d.24xlarge | 4x100 Gbps", "p2.16xlarge | p3.16xlarge | 25 Gbps",
// "p2.8xlarge | p3.8xlarge | 10 Gbps"; p5-efa page "P5 and P5e ... up to 3,200 Gbps". EFA is AWS's Ethernet
// fabric, recorded as ethernet like the SkyPilot importer's set_aws_network.
TEST(ImportBundled, AwsNetworksFromEc2DocsOf20261204) {
  const ImportBatch b = bundled_catalog();
  auto expect_net = [&](const std::string& id, double bits_per_s) {
    const Offer* o = b.find(id);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->inter_node_network, InterNodeNetwork::ethernet) << id;
    EXPECT_EQ(o->inter_node_bits_per_s, std::optional<double>(bits_per_s)) << id;
  };
  expect_net("aws/p5.48xlarge/us-east-1", 3200e9);   // ewyluda
  expect_net("aws/p4d.24xlarge/us-east-1", 4 * 100e9);
  expect_net("aws/p4d.24xlarge/", 4 * 100e9);        // FSDL
  expect_net("aws/p3dn.24xlarge/", 100e9);
  expect_net("aws/p3.16xlarge/", 25e9);
  expect_net("aws/p3.8xlarge/", 10e9);
  // The SkyPilot importer's own EFA value is kept and agrees (3,200 Gb/s for p5.48xlarge).
  expect_net("aws/p5.48xlarge/us-east-1/use1-az2", 3200e9);
  // Not sourced from an AWS page here, so still unknown: p4de, p5en (ewyluda/FSDL rows) and the 1-GPU p5.4xlarge.
  for (const char* id : {"aws/p4de.24xlarge/", "aws/p5en.48xlarge/us-east-1", "aws/p5.4xlarge/us-east-1"}) {
    const Offer* o = b.find(id);
    ASSERT_NE(o, nullptr) << id;
    EXPECT_EQ(o->inter_node_network, InterNodeNetwork::unknown) << id;
  }
}

TEST(ImportBundled, SummaryCountsEveryIssueOnce) {
  const ImportBatch b = bundled_catalog();
  std::size_t total = 0;
  for (const ImportRuleCount& c : b.summary()) total += c.rejected + c.flagged;
  EXPECT_EQ(total, b.issues.size());
  // Known defects of the bundled data are all caught (PROVENANCE.md "Known data-quality quirks").
  auto count = [&](std::string_view rule) {
    for (const ImportRuleCount& c : b.summary())
      if (c.rule == rule) return c.rejected + c.flagged;
    return std::size_t{0};
  };
  EXPECT_EQ(count("bid_floor_price"), 4u);         // the 4 mithril rows
  EXPECT_EQ(count("spot_zero_means_none"), 67u);   // every vast row
  EXPECT_EQ(count("price_index"), 54u + 8u);       // one per ewyluda series + the 8 vast medians of 2026-10-10
  EXPECT_GE(count("cpu_row"), 17u + 40u + 75u);    // lambda + nebius + primeintellect CPU SKUs
  EXPECT_GT(count("memory_unit"), 0u);
}

TEST(ImportBundled, SameLambdaOfferFromTwoSourcesMerges) {
  // tests/data/import/lambda-quote.csv re-enters the SkyPilot row gpu_8x_h100_sxm5/us-east-1
  // ($23.92) as a user quote with an unknown date: one offer, two observations from two datasets.
  ImportBatch b = bundled_catalog();
  const std::size_t before = b.offers.size();
  merge_batch(b, import_file(std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/import/lambda-quote.csv"));
  EXPECT_EQ(b.offers.size(), before);  // no new offer
  const Offer* o = b.find("lambda/gpu_8x_h100_sxm5/us-east-1");
  ASSERT_NE(o, nullptr);
  ASSERT_EQ(o->prices.size(), 2u);
  std::set<std::string> datasets;
  for (const PriceObservation& p : o->prices) {
    EXPECT_DOUBLE_EQ(p.usd_per_hour, 23.92);
    EXPECT_EQ(p.kind, PriceKind::on_demand);
    datasets.insert(p.source.dataset);
  }
  // A user quote's dataset is its own `source` column, not the file name (issue 11: the same
  // quote imported from two file names must stay one observation).
  EXPECT_EQ(datasets, (std::set<std::string>{"skypilot-catalog/v8/lambda",
                                             "user:test fixture: SkyPilot lambda row re-entered as a user quote"}));
}

TEST(ImportBundled, LatestPriceOrdersByDateUnknownOldest) {
  Offer o;
  o.id = "x/y/z";
  o.prices.push_back({o.id, PriceKind::on_demand, 3.0, {"a", "l1", "2026-05-24"}, std::nullopt});
  o.prices.push_back({o.id, PriceKind::on_demand, 1.0, {"b", "l2", std::nullopt}, std::nullopt});
  o.prices.push_back({o.id, PriceKind::on_demand, 2.0, {"c", "l3", "2026-10-05"}, std::nullopt});
  o.prices.push_back({o.id, PriceKind::spot, 0.5, {"c", "l4", std::nullopt}, std::nullopt});
  ASSERT_NE(o.latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(o.latest_price(PriceKind::on_demand)->usd_per_hour, 2.0);
  EXPECT_DOUBLE_EQ(o.latest_price(PriceKind::spot)->usd_per_hour, 0.5);
  EXPECT_EQ(o.latest_price(PriceKind::reserved_1y), nullptr);
  EXPECT_FALSE(o.excluded_from_ranking());
  o.flags.push_back({"memory_unit", "corrected", false});
  EXPECT_FALSE(o.excluded_from_ranking());
  o.flags.push_back({"zero_price", "$0", true});
  EXPECT_TRUE(o.excluded_from_ranking());
}

}  // namespace
}  // namespace gpuplan
