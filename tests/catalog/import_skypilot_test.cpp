// SkyPilot vms.csv importer on the bundled files (data/offers/skypilot-catalog, PROVENANCE.md §1)
// and on small malformed inputs.
//
// Row counts were checked with a one-off Python script (csv.DictReader on each file):
//   lambda/vms.csv: 357 rows, 17 with an empty AcceleratorName (CPU SKUs);
//   aws/vms.p-family.csv: 223 rows, 9 with an empty Price (p5e.48xlarge), no duplicate
//     (InstanceType, Region, AvailabilityZone) key;
//   vast/vms.csv: 67 rows, all 67 with SpotPrice "0.00";
//   primeintellect/vms.csv: 190 rows, 75 CPU rows (empty name or count 0), 15 GPU rows with empty Price.
#include <gtest/gtest.h>

#include <string>

#include "catalog/importers.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

ImportBatch import_bundled(const std::string& provider_path) {
  ImportSource src;
  src.file = "data/offers/skypilot-catalog/" + provider_path;
  src.dataset = "skypilot-catalog/" + provider_path.substr(0, provider_path.rfind('/'));
  return import_skypilot_vms_csv(embedded_file_or_throw("offers/skypilot-catalog/" + provider_path), src);
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

std::string error_of(std::string_view text, const std::string& file = "x/mycloud/vms.csv") {
  ImportSource src;
  src.file = file;
  src.dataset = "test";
  try {
    import_skypilot_vms_csv(text, src);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ImportSkyPilot, ProviderFromPath) {
  EXPECT_EQ(skypilot_provider_from_path("data/offers/skypilot-catalog/v8/lambda/vms.csv"), "lambda");
  EXPECT_EQ(skypilot_provider_from_path("catalogs/v8/aws/vms.p-family.csv"), "aws");
  EXPECT_EQ(skypilot_provider_from_path("quotes.csv"), std::nullopt);
}

TEST(ImportSkyPilot, LambdaRowCountsAndCpuRowsSkipped) {
  const ImportBatch b = import_bundled("v8/lambda/vms.csv");
  EXPECT_EQ(b.rows_read, 357u);
  EXPECT_EQ(count_rule(b, "cpu_row", true), 17u);
  EXPECT_EQ(b.offers.size(), 357u - 17u);
}

TEST(ImportSkyPilot, AwsP5UsEast1MatchesProvenance) {
  // PROVENANCE.md: "AWS p5.48xlarge us-east-1 at $55.04"; line 149 of the excerpt is
  // p5.48xlarge,H100,8.0,192.0,2048.0,{... 'SizeInMiB': 81920 ...},55.04,19.253100,us-east-1,use1-az2
  const ImportBatch b = import_bundled("v8/aws/vms.p-family.csv");
  EXPECT_EQ(b.rows_read, 223u);
  const Offer* o = b.find("aws/p5.48xlarge/us-east-1/use1-az2");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->gpu_count, 8);
  EXPECT_EQ(o->gpu_name, "NVIDIA H100 SXM");
  ASSERT_TRUE(o->gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(*o->gpu_memory_bytes, 81920.0 * 1024 * 1024);  // MiB → bytes
  ASSERT_TRUE(o->ram_bytes);
  EXPECT_DOUBLE_EQ(*o->ram_bytes, 2048.0 * 1024 * 1024 * 1024);  // MemoryGiB
  const PriceObservation* od = o->latest_price(PriceKind::on_demand);
  ASSERT_NE(od, nullptr);
  EXPECT_DOUBLE_EQ(od->usd_per_hour, 55.04);
  EXPECT_EQ(od->source.observed_at, std::nullopt);  // SkyPilot rows carry no date: never invented
  EXPECT_EQ(od->source.locator, "data/offers/skypilot-catalog/v8/aws/vms.p-family.csv:149");
  const PriceObservation* spot = o->latest_price(PriceKind::spot);
  ASSERT_NE(spot, nullptr);
  EXPECT_DOUBLE_EQ(spot->usd_per_hour, 19.2531);
  // H100 SXM: NVLink inside the node; p5.48xlarge has EFA (3,200 Gbps, AWS P5 page).
  EXPECT_EQ(o->intra_node_link, IntraNodeLink::nvlink);
  EXPECT_EQ(o->form_factor, "SXM");
  EXPECT_EQ(o->inter_node_network, InterNodeNetwork::ethernet);
  ASSERT_TRUE(o->inter_node_bits_per_s);
  EXPECT_DOUBLE_EQ(*o->inter_node_bits_per_s, 3200e9);
  EXPECT_FALSE(o->excluded_from_ranking());
}

TEST(ImportSkyPilot, AwsP5eWithoutOnDemandPrice) {
  const ImportBatch b = import_bundled("v8/aws/vms.p-family.csv");
  // 9 p5e rows have no Price: 5 of them have no SpotPrice either (skipped), 4 are spot-only.
  EXPECT_EQ(count_rule(b, "no_price", true) + count_rule(b, "no_on_demand_price", false), 9u);
  EXPECT_EQ(count_rule(b, "no_on_demand_price", false), 4u);
  EXPECT_EQ(b.offers.size(), 223u - 5u);
  for (const Offer& o : b.offers) {
    if (has_flag(o, "no_on_demand_price")) {
      EXPECT_EQ(o.latest_price(PriceKind::on_demand), nullptr);
      EXPECT_NE(o.latest_price(PriceKind::spot), nullptr);
    }
  }
}

TEST(ImportSkyPilot, MithrilBidFloorIsFlaggedAndExcluded) {
  // PROVENANCE.md / skypilot PR #9156: Price == SpotPrice (1.0 / 8.0) is the bid floor.
  const ImportBatch b = import_bundled("v8/mithril/vms.csv");
  ASSERT_EQ(b.offers.size(), 4u);
  for (const Offer& o : b.offers) {
    EXPECT_TRUE(has_flag(o, "bid_floor_price")) << o.id;
    EXPECT_TRUE(o.excluded_from_ranking()) << o.id;
  }
  EXPECT_EQ(count_rule(b, "bid_floor_price", false), 4u);
}

TEST(ImportSkyPilot, ShadeformMemoryInGbIsCorrected) {
  // massedcompute_A6000x8: 'MemoryInfo': {'SizeInMiB': 48} — 48 is GB, not MiB.
  const ImportBatch b = import_bundled("v8/shadeform/vms.csv");
  const Offer* o = b.find("shadeform/massedcompute_a6000x8/kansascity-usa-1");
  ASSERT_NE(o, nullptr);
  ASSERT_TRUE(o->gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(*o->gpu_memory_bytes, 48e9);
  EXPECT_TRUE(has_flag(*o, "memory_unit"));
  EXPECT_FALSE(o->excluded_from_ranking());  // corrected, still rankable
  EXPECT_EQ(o->gpu_name, "NVIDIA RTX A6000");
}

TEST(ImportSkyPilot, PrimeIntellectTotalMemoryDividedPerGpu) {
  // lambdalabs__8xA100_80GB__240__1800: SizeInMiB 655360 for 8 GPUs = 81920 MiB each.
  const ImportBatch b = import_bundled("v8/primeintellect/vms.csv");
  EXPECT_EQ(b.rows_read, 190u);
  EXPECT_EQ(count_rule(b, "cpu_row", true), 75u);
  const Offer* o = b.find("primeintellect/lambdalabs__8xa100_80gb__240__1800/us/us-midwest-1");
  ASSERT_NE(o, nullptr);
  ASSERT_TRUE(o->gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(*o->gpu_memory_bytes, 655360.0 / 8 * 1024 * 1024);
  EXPECT_TRUE(has_flag(*o, "memory_unit"));
}

TEST(ImportSkyPilot, LambdaTotalEqualsPerGpuIsFlagged) {
  // gpu_8x_v100: SizeInMiB 16384 per GPU, TotalGpuMemoryInMiB 16384 (should be 8x).
  const ImportBatch b = import_bundled("v8/lambda/vms.csv");
  const Offer* o = b.find("lambda/gpu_8x_v100/europe-central-1");
  ASSERT_NE(o, nullptr);
  EXPECT_DOUBLE_EQ(*o->gpu_memory_bytes, 16384.0 * 1024 * 1024);
  EXPECT_TRUE(has_flag(*o, "memory_unit"));
  // gpu_1x_h100_pcie vs gpu_1x_h100_sxm5: the instance name decides the form factor.
  const Offer* pcie = b.find("lambda/gpu_1x_h100_pcie/europe-central-1");
  const Offer* sxm = b.find("lambda/gpu_1x_h100_sxm5/europe-central-1");
  ASSERT_NE(pcie, nullptr);
  ASSERT_NE(sxm, nullptr);
  EXPECT_EQ(pcie->form_factor, "PCIe");
  EXPECT_EQ(sxm->form_factor, "SXM");
  EXPECT_EQ(pcie->gpu_name, "NVIDIA H100 PCIe");
  EXPECT_EQ(sxm->gpu_name, "NVIDIA H100 SXM");
}

TEST(ImportSkyPilot, VastZeroSpotMeansNone) {
  const ImportBatch b = import_bundled("v8/vast/vms.csv");
  EXPECT_EQ(b.rows_read, 67u);
  EXPECT_EQ(count_rule(b, "spot_zero_means_none", false), 67u);
  for (const Offer& o : b.offers) {
    EXPECT_EQ(o.latest_price(PriceKind::spot), nullptr) << o.id;
    EXPECT_NE(o.latest_price(PriceKind::on_demand), nullptr) << o.id;
  }
  // 2x-H200-32-65536: SizeInMiB 287542 is the total of 2 GPUs (the H200 has 141 GB).
  const Offer* o = b.find("vast/2x-h200-32-65536/michigan, us, na");
  ASSERT_NE(o, nullptr);
  EXPECT_DOUBLE_EQ(*o->gpu_memory_bytes, 287542.0 / 2 * 1024 * 1024);
}

TEST(ImportSkyPilot, VerdaDoubledQuoteJsonAndPaperspaceBareName) {
  const ImportBatch v = import_bundled("v8/verda/vms.csv");
  const Offer* b300 = v.find("verda/1b300.30v/fin-03");
  ASSERT_NE(b300, nullptr);
  EXPECT_DOUBLE_EQ(*b300->gpu_memory_bytes, 268288.0 * 1024 * 1024);
  const ImportBatch p = import_bundled("v6/paperspace/vms.csv");
  const Offer* h100x8 = p.find("paperspace/h100x8/east coast (ny2)");
  ASSERT_NE(h100x8, nullptr);
  EXPECT_EQ(h100x8->gpu_count, 8);
  EXPECT_EQ(h100x8->gpu_memory_bytes, std::nullopt);  // bare name: no memory in GpuInfo
  EXPECT_DOUBLE_EQ(h100x8->latest_price(PriceKind::on_demand)->usd_per_hour, 47.60);
}

TEST(ImportSkyPilot, CrlfAndLfGiveTheSameOffers) {
  const std::string lf =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
      "a1,H100,8,32,256,20.5,r1,\"{'Gpus': [{'Name': 'H100', 'Manufacturer': None, 'Count': 8, 'MemoryInfo': "
      "{'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}\",\n";
  std::string crlf;
  for (char c : lf) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  ImportSource src;
  src.file = "t/mycloud/vms.csv";
  const ImportBatch a = import_skypilot_vms_csv(lf, src);
  const ImportBatch b = import_skypilot_vms_csv(crlf, src);
  ASSERT_EQ(a.offers.size(), 1u);
  ASSERT_EQ(b.offers.size(), 1u);
  EXPECT_EQ(a.offers[0].id, "mycloud/a1/r1");
  EXPECT_EQ(b.offers[0].id, a.offers[0].id);
  EXPECT_DOUBLE_EQ(*b.offers[0].gpu_memory_bytes, *a.offers[0].gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(b.offers[0].prices[0].usd_per_hour, 20.5);
}

TEST(ImportSkyPilot, MalformedInputNamesFileAndLine) {
  const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,SpotPrice\n";
  // Wrong cell count on line 3.
  EXPECT_NE(error_of(header + "a,H100,8,20.5,r1,\nb,H100,8,20.5\n").find("x/mycloud/vms.csv:3"), std::string::npos);
  // Non-numeric price on line 2: the message names the column and what was expected.
  const std::string bad_price = error_of(header + "a,H100,8,cheap,r1,\n");
  EXPECT_NE(bad_price.find("x/mycloud/vms.csv:2"), std::string::npos) << bad_price;
  EXPECT_NE(bad_price.find("Price"), std::string::npos) << bad_price;
  EXPECT_NE(bad_price.find("expected"), std::string::npos) << bad_price;
  // A fractional GPU count is not a count.
  EXPECT_NE(error_of(header + "a,H100,1.5,2,r1,\n").find("AcceleratorCount"), std::string::npos);
  // A broken GpuInfo dict.
  const std::string bad_info = error_of(
      "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo\n"
      "a,H100,8,20.5,r1,\"{'Gpus': [{'Name': 'H100'\"\n");
  EXPECT_NE(bad_info.find("x/mycloud/vms.csv:2"), std::string::npos) << bad_info;
  EXPECT_NE(bad_info.find("GpuInfo"), std::string::npos) << bad_info;
  // A missing required column.
  EXPECT_NE(error_of("InstanceType,AcceleratorName,Price,Region\na,H100,1,r1\n").find("AcceleratorCount"),
            std::string::npos);
  // No provider can be derived from the path.
  EXPECT_NE(error_of(header + "a,H100,8,20.5,r1,\n", "vms").find("provider"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
