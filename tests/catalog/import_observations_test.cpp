// Importers added for issue 9 part B, on small fixtures written in each source's field layout
// with invented values (not market data), plus the bundled ewyluda observation file:
//  - ewyluda daily observations (dated rows, medians, MIG slices, OCI per-GPU shapes);
//  - SkyPilot GCP split pricing (host row + accelerator-only row = one offer) and host memory in
//    the wrong unit;
//  - network facts from providers.toml applied to offers without a network.
#include <gtest/gtest.h>

#include <string>

#include "catalog/importers.hpp"
#include "catalog/providers.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

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

ImportSource source(std::string file) {
  ImportSource src;
  src.file = std::move(file);
  src.dataset = "test";
  return src;
}

constexpr std::string_view kObsHeader =
    "date,collected_at,source,provider,segment,pricing,gpu_model,sku,region,geo,gpu_count,usd_per_hour,"
    "usd_per_gpu_hour,sample_size\n";

TEST(ImportObservations, RowsAreDatedAndPricedPerInstance) {
  const std::string text = std::string(kObsHeader) +
      "2026-10-10,2026-10-10T12:33:53+00:00,aws,AWS,hyperscaler,on_demand,H100,p5.48xlarge,us-east-1,NA,8,40.0,5.0,1\n"
      "2026-10-10,2026-10-10T12:33:53+00:00,azure,Microsoft Azure,hyperscaler,spot,H100,Standard_ND96isr_H100_v5,"
      "eastus,NA,8,16.0,2.0,1\n";
  const ImportBatch b = import_ewyluda_observations_csv(text, source("obs.csv"));
  ASSERT_EQ(b.offers.size(), 2u);
  const Offer* aws = b.find("aws/p5.48xlarge/us-east-1");
  ASSERT_NE(aws, nullptr);
  EXPECT_EQ(aws->gpu_count, 8);
  EXPECT_EQ(aws->gpu_name, "NVIDIA H100 SXM");
  const PriceObservation* p = aws->latest_price(PriceKind::on_demand);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->usd_per_hour, 40.0);  // whole instance, not per GPU
  EXPECT_EQ(p->source.observed_at, "2026-10-10T12:33:53Z");
  const Offer* az = b.find("azure/standard_nd96isr_h100_v5/eastus");
  ASSERT_NE(az, nullptr);
  EXPECT_EQ(az->latest_price(PriceKind::on_demand), nullptr);
  ASSERT_NE(az->latest_price(PriceKind::spot), nullptr);
  EXPECT_DOUBLE_EQ(az->latest_price(PriceKind::spot)->usd_per_hour, 16.0);
}

TEST(ImportObservations, MediansMigSlicesAndOciShapes) {
  const std::string text = std::string(kObsHeader) +
      "2026-10-10,2026-10-10T12:33:53+00:00,vast,Vast.ai,marketplace,on_demand,H100,median-offer,global,Global,1,"
      "2.0,2.0,7\n"
      "2026-10-10,2026-10-10T12:33:53+00:00,runpod,RunPod Secure Cloud,neocloud,on_demand,B300,"
      "NVIDIA B300 SXM6 AC MIG 1g.34gb,global,Global,1,0.5,0.5,1\n"
      "2026-10-10,2026-10-10T12:33:53+00:00,runpod,RunPod Community Cloud,marketplace,on_demand,H100,"
      "NVIDIA H100 80GB HBM3,global,Global,1,2.5,2.5,1\n"
      "2026-10-10,2026-10-10T12:33:53+00:00,runpod,RunPod Secure Cloud,neocloud,on_demand,H100,"
      "NVIDIA H100 80GB HBM3,global,Global,1,3.5,3.5,1\n"
      "2026-10-10,2026-10-10T12:33:53+00:00,oracle,Oracle Cloud,hyperscaler,on_demand,H100,BM.GPU.H100.8,global,"
      "Global,1,10.0,10.0,1\n";
  const ImportBatch b = import_ewyluda_observations_csv(text, source("obs.csv"));
  ASSERT_EQ(b.offers.size(), 5u);  // RunPod community and secure stay two offers
  const Offer* vast = b.find("vast/median-offer h100/global")  /* the GPU names a median (issue 11) */;
  ASSERT_NE(vast, nullptr);
  EXPECT_TRUE(has_flag(*vast, import_rule::kPriceIndex));
  EXPECT_TRUE(vast->excluded_from_ranking());
  const Offer* mig = b.find("runpod/nvidia b300 sxm6 ac mig 1g.34gb (secure)/global");
  ASSERT_NE(mig, nullptr);
  EXPECT_TRUE(mig->excluded_from_ranking());
  ASSERT_NE(b.find("runpod/nvidia h100 80gb hbm3 (community)/global"), nullptr);
  ASSERT_NE(b.find("runpod/nvidia h100 80gb hbm3 (secure)/global"), nullptr);
  const Offer* oci = b.find("oci/bm.gpu.h100.8/global");
  ASSERT_NE(oci, nullptr);
  EXPECT_EQ(oci->gpu_count, 8);
  EXPECT_DOUBLE_EQ(oci->latest_price(PriceKind::on_demand)->usd_per_hour, 80.0);  // $10 per GPU-hour x 8
  EXPECT_TRUE(has_flag(*oci, import_rule::kPerGpuRowScaled));
  EXPECT_FALSE(oci->excluded_from_ranking());
}

TEST(ImportObservations, BadRowsNameTheLine) {
  const std::string text = std::string(kObsHeader) +
      "2026-13-40,2026-10-10T12:33:53+00:00,aws,AWS,hyperscaler,on_demand,H100,p5.48xlarge,us-east-1,NA,8,40,5,1\n";
  try {
    import_ewyluda_observations_csv(text, source("obs.csv"));
    FAIL() << "a bad date must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("obs.csv:2"), std::string::npos) << e.what();
  }
}

TEST(ImportObservations, BundledFileIsDatedAndDetected) {
  const std::string_view text = embedded_file_or_throw("offers/ewyluda-gpu-price-index/observations-2026-10-10.csv");
  EXPECT_EQ(text.size(), 85319u);  // the upstream file's char count (PROVENANCE.md §6)
  EXPECT_EQ(detect_import_format("observations-2026-10-10.csv", text), ImportFormat::ewyluda_observations_csv);
  const ImportBatch b = import_ewyluda_observations_csv(text, source("obs.csv"));
  EXPECT_EQ(b.rows_read, 602u);
  for (const Offer& o : b.offers)
    for (const PriceObservation& p : o.prices) EXPECT_TRUE(p.source.observed_at.has_value()) << o.id;
  // 8 vast medians; 2 RunPod MIG rows.
  EXPECT_EQ(count_rule(b, import_rule::kPriceIndex, false), 8u);
  EXPECT_EQ(count_rule(b, import_rule::kPartialGpu, false), 2u);
}

// SkyPilot GCP layout: host rows without an accelerator and accelerator-only rows with an empty
// InstanceType (PROVENANCE.md §1). Prices invented: host 1.00 + 8 x A100 row 20.00 = 21.00.
constexpr std::string_view kGcp =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
    "a2-highgpu-8g,,,96,680,,1.00,0.40,us-central1,us-central1-a\n"
    ",A100,8,,,,20.00,6.00,us-central1,us-central1-a\n"
    ",T4,1,,,,0.35,0.10,us-central1,us-central1-a\n"
    "a3-highgpu-8g,,,208,1872,,2.00,,us-central1,us-central1-b\n"
    "n2-standard-8,,,8,32000,,0.40,0.10,us-central1,us-central1-a\n";

TEST(ImportGcpSplit, HostAndGpuRowsBecomeOneOffer) {
  const ImportBatch b = import_skypilot_vms_csv(kGcp, source("x/gcp/vms.csv"));
  ASSERT_EQ(b.offers.size(), 1u);
  const Offer& o = b.offers[0];
  EXPECT_EQ(o.id, "gcp/a2-highgpu-8g/us-central1/us-central1-a");
  EXPECT_EQ(o.gpu_count, 8);
  ASSERT_TRUE(o.gpu_name.has_value());
  // trial9d D1: a2-highgpu is the A100 40GB (SkyPilot's bare "A100"; the 80 GB is "A100-80GB"),
  // not the catalog's first A100 (the 80 GB SXM).
  EXPECT_EQ(*o.gpu_name, "NVIDIA A100 SXM 40GB");
  EXPECT_DOUBLE_EQ(o.latest_price(PriceKind::on_demand)->usd_per_hour, 21.0);  // 1.00 + 20.00
  EXPECT_DOUBLE_EQ(o.latest_price(PriceKind::spot)->usd_per_hour, 6.4);        // 0.40 + 6.00
  EXPECT_TRUE(has_flag(o, import_rule::kSplitPriceCombined));
  // a3 host without an H100 row, and the T4 row without a host: rejected, never a GPU-only offer.
  EXPECT_EQ(count_rule(b, import_rule::kSplitPriceUnmatched, true), 2u);
  // n2-standard-8 is a CPU host.
  EXPECT_EQ(count_rule(b, import_rule::kCpuRow, true), 1u);
}

TEST(ImportGcpSplit, TheA2UltraIsTheA100Of80GB) {
  // Invented prices; SkyPilot's "A100-80GB" on a2-ultragpu (Google: A2 Ultra = A100 80GB).
  constexpr std::string_view text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
      "a2-ultragpu-1g,,,12,170,,0.80,0.20,us-central1,us-central1-a\n"
      ",A100-80GB,1,,,,4.00,1.50,us-central1,us-central1-a\n";
  const ImportBatch b = import_skypilot_vms_csv(text, source("x/gcp/vms.csv"));
  ASSERT_EQ(b.offers.size(), 1u);
  ASSERT_TRUE(b.offers[0].gpu_name.has_value());
  EXPECT_NE(b.offers[0].gpu_name->find("A100"), std::string::npos);
  EXPECT_NE(b.offers[0].gpu_name->find("80GB"), std::string::npos) << *b.offers[0].gpu_name;
}

TEST(ImportGcpSplit, HostMemoryInTheWrongUnitIsFlaggedAndUnknown) {
  constexpr std::string_view text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
      "g2-standard-8,L4,1,8,32768,,0.85,,us-east1\n"   // 32768 "GiB" for 8 vCPUs = 4096 GiB/vCPU: MiB written as GiB
      "g2-standard-16,L4,1,16,64,,1.00,,us-east1\n";   // 4 GiB per vCPU: fine
  const ImportBatch b = import_skypilot_vms_csv(text, source("x/mycloud/vms.csv"));
  ASSERT_EQ(b.offers.size(), 2u);
  const Offer* bad = b.find("mycloud/g2-standard-8/us-east1");
  ASSERT_NE(bad, nullptr);
  EXPECT_TRUE(has_flag(*bad, import_rule::kHostMemoryUnit));
  EXPECT_FALSE(bad->ram_bytes.has_value());
  EXPECT_FALSE(bad->excluded_from_ranking());
  const Offer* ok = b.find("mycloud/g2-standard-16/us-east1");
  ASSERT_NE(ok, nullptr);
  EXPECT_FALSE(has_flag(*ok, import_rule::kHostMemoryUnit));
  EXPECT_DOUBLE_EQ(*ok->ram_bytes, 64.0 * 1024 * 1024 * 1024);
}

Offer priced(std::string provider, std::string gpu, int count, double usd_per_hour) {
  Offer o;
  o.provider = provider;
  o.instance_type = "x";
  o.id = provider + "/x/";
  o.gpu_name = gpu;
  o.gpu_name_raw = gpu;
  o.gpu_count = count;
  PriceObservation p;
  p.usd_per_hour = usd_per_hour;
  p.source.dataset = "test";
  o.prices.push_back(p);
  return o;
}

TEST(PriceOutliers, APriceUnderAThirdOfEveryOtherProviderIsExcluded) {
  ImportBatch b;
  b.offers.push_back(priced("a", "NVIDIA H100 SXM", 1, 0.50));   // 0.50 < 2.00 / 3 = 0.667: outlier
  b.offers.push_back(priced("b", "NVIDIA H100 SXM", 8, 16.0));   // $2.00 per GPU-hour
  b.offers.push_back(priced("c", "NVIDIA H100 SXM", 1, 3.00));
  b.offers.push_back(priced("d", "NVIDIA L4", 1, 0.10));          // one other provider only: not judged
  b.offers.push_back(priced("e", "NVIDIA L4", 1, 0.80));
  EXPECT_EQ(flag_price_outliers(b), 1u);
  EXPECT_TRUE(b.offers[0].excluded_from_ranking());
  EXPECT_TRUE(has_flag(b.offers[0], import_rule::kPriceOutlier));
  for (std::size_t i = 1; i < b.offers.size(); ++i) EXPECT_FALSE(b.offers[i].excluded_from_ranking()) << i;
  // 0.70 is above a third of 2.00: a cheap seller, not an outlier.
  ImportBatch c;
  c.offers.push_back(priced("a", "NVIDIA H100 SXM", 1, 0.70));
  c.offers.push_back(priced("b", "NVIDIA H100 SXM", 1, 2.00));
  c.offers.push_back(priced("c", "NVIDIA H100 SXM", 1, 3.00));
  EXPECT_EQ(flag_price_outliers(c), 0u);
}

TEST(NetworkFacts, ParsedAppliedAndNeverReplaceTheSource) {
  const std::vector<ProviderInfo> providers = parse_providers_toml(R"(
[providers.azure]
name = "Azure"
[[providers.azure.networks]]
instance_prefix = "Standard_ND96isr_H100_v5"
network = "infiniband"
gbps_per_node = 3200
source = "https://example.invalid/nd-h100-v5"
seen = "2026-12-01"
[[providers.azure.networks]]
instance_prefix = "standard_nd96"
network = "ethernet"
gbps_per_node = 100
source = "https://example.invalid/nd"
seen = "2026-12-01"
)",
                                                                  "test.toml");
  std::vector<Offer> offers(3);
  offers[0].provider = "azure";
  offers[0].instance_type = "Standard_ND96isr_H100_v5";
  offers[1].provider = "azure";
  offers[1].instance_type = "Standard_ND96isr_H100_v5";
  offers[1].inter_node_network = InterNodeNetwork::roce;  // from the offer's own source: kept
  offers[2].provider = "aws";
  offers[2].instance_type = "Standard_ND96isr_H100_v5";  // another provider: no fact
  EXPECT_EQ(apply_network_facts(offers, providers), 1u);
  EXPECT_EQ(offers[0].inter_node_network, InterNodeNetwork::infiniband);  // longest prefix wins
  EXPECT_DOUBLE_EQ(*offers[0].inter_node_bits_per_s, 3200e9);
  EXPECT_EQ(offers[1].inter_node_network, InterNodeNetwork::roce);
  EXPECT_EQ(offers[2].inter_node_network, InterNodeNetwork::unknown);

  EXPECT_THROW(parse_providers_toml(R"(
[providers.azure]
name = "Azure"
[[providers.azure.networks]]
instance_prefix = "x"
network = "token-ring"
gbps_per_node = 1
source = "s"
seen = "2026-12-01"
)",
                                    "bad.toml"),
               Error);
}

}  // namespace
}  // namespace gpuplan
