// Driver-reported memory, NVLink domains, unified memory and the export-market rows (data/gpus.SOURCES.md,
// "Sources added 2026-12-01"). Expected values are the cited nvidia-smi totals and datasheet figures.
#include <gtest/gtest.h>

#include <string>

#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

const GpuCatalog& cat() { return GpuCatalog::bundled(); }

// MODAL-2797 / NCCL-1264: an "80 GB" H100 shows 81559MiB = 81559 · 2^20 = 85,520,809,984 bytes (7% above 80e9).
TEST(UsableMemory, H100ReportsMoreThanTheMarketedFigure) {
  const GpuSpec& h100 = cat().find("H100 SXM");
  ASSERT_TRUE(h100.usable_memory_bytes.has_value());
  EXPECT_DOUBLE_EQ(*h100.usable_memory_bytes, 85'520'809'984.0);
  EXPECT_DOUBLE_EQ(h100.fit_memory_bytes(), 85'520'809'984.0);
  EXPECT_DOUBLE_EQ(h100.memory_bytes, 80e9);
}

// A100 80GB 81920MiB (MODAL-2797), RTX 4090 24564MiB (RLINF-255), A800 81920MiB (DEXBOTIC-41).
TEST(UsableMemory, CitedDriverTotals) {
  EXPECT_DOUBLE_EQ(*cat().find("A100 SXM 80GB").usable_memory_bytes, 81920.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(*cat().find("RTX 4090").usable_memory_bytes, 24564.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(*cat().find("A800 SXM").usable_memory_bytes, 81920.0 * 1048576.0);
}

// H200 143771MiB (GPUPLAN-H200: this project's own H200), A40 46068MiB, RTX 6000 Ada 49140MiB and
// RTX 4000 Ada 20475MiB (THAMADA-SMI recorded nvidia-smi outputs): a "141 GB" H200 fits 150.76e9 bytes.
TEST(UsableMemory, MoreCitedDriverTotals) {
  EXPECT_DOUBLE_EQ(*cat().find("H200 SXM").usable_memory_bytes, 143771.0 * 1048576.0);
  EXPECT_GT(cat().find("H200 SXM").fit_memory_bytes(), 150e9);
  EXPECT_DOUBLE_EQ(*cat().find("A40").usable_memory_bytes, 46068.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(*cat().find("RTX 6000 Ada").usable_memory_bytes, 49140.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(*cat().find("RTX 4000 Ada").usable_memory_bytes, 20475.0 * 1048576.0);
}

// No published driver total: the fit falls back to the marketed capacity (never a guess).
TEST(UsableMemory, UnknownFallsBackToMarketedMemory) {
  const GpuSpec& a30 = cat().find("A30");
  EXPECT_FALSE(a30.usable_memory_bytes.has_value());
  EXPECT_DOUBLE_EQ(a30.fit_memory_bytes(), a30.memory_bytes);
}

// RTX 3090: NVLink 3 bridge joins 2 cards (datasheet), so 4-way TP crosses PCIe; HGX H100: 8 GPUs on NVSwitch;
// GB200 NVL72: 72; L40S: no link at all.
TEST(LinkDomain, BridgesSpanTwoGpus) {
  const GpuSpec& rtx3090 = cat().find("RTX 3090");
  EXPECT_EQ(rtx3090.nvlink_domain_gpus, 2);
  EXPECT_TRUE(rtx3090.gpu_link_spans(2));
  EXPECT_FALSE(rtx3090.gpu_link_spans(4));
  const GpuSpec& h100 = cat().find("H100 SXM");
  EXPECT_TRUE(h100.gpu_link_spans(8));
  EXPECT_FALSE(h100.gpu_link_spans(16));
  EXPECT_TRUE(cat().find("GB200").gpu_link_spans(72));
  EXPECT_FALSE(cat().find("L40S").gpu_link_spans(2));
}

// Every bridged row ("bridge" in the interconnect text, with a bandwidth) spans exactly 2 GPUs unless it says 4-way.
TEST(LinkDomain, EveryBridgeRowIsAPair) {
  for (const auto& g : cat().gpus()) {
    if (!g.has_gpu_link() || g.interconnect.find("bridge") == std::string::npos) continue;
    SCOPED_TRACE(g.name);
    EXPECT_FALSE(g.gpu_link_spans(3));
  }
}

// Export-market rows: H800 = H100 SXM compute with NVLink cut to 400 GB/s; H20 96 GB, 4.0 TB/s, 148 TFLOPS BF16
// dense, 900 GB/s NVLink (WIRA-H20); L20 48 GB, 864 GB/s, no NVLink; A800 PCIe = A100 PCIe with a 400 GB/s bridge.
TEST(ExportMarketRows, DatasheetFigures) {
  const GpuSpec& h800 = cat().find("H800");
  EXPECT_DOUBLE_EQ(h800.gpu_link_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(*h800.dense_flops(Dtype::bf16), 989.4e12);
  const GpuSpec& h20 = cat().find("H20");
  EXPECT_DOUBLE_EQ(h20.memory_bytes, 96e9);
  EXPECT_DOUBLE_EQ(h20.memory_bandwidth_bytes_per_s, 4000e9);
  EXPECT_DOUBLE_EQ(*h20.dense_flops(Dtype::bf16), 148e12);
  EXPECT_FALSE(h20.dense_flops(Dtype::fp32).has_value());
  EXPECT_TRUE(h20.gpu_link_spans(8));
  const GpuSpec& l20 = cat().find("L20");
  EXPECT_DOUBLE_EQ(l20.memory_bandwidth_bytes_per_s, 864e9);
  EXPECT_FALSE(l20.has_gpu_link());
  EXPECT_FALSE(l20.dense_flops(Dtype::bf16).has_value());  // not in any stored datasheet: unknown, not guessed
  const GpuSpec& a800p = cat().find("A800 PCIe");
  EXPECT_EQ(a800p.name, "NVIDIA A800 PCIe 80GB");
  EXPECT_TRUE(a800p.gpu_link_spans(2));
  EXPECT_FALSE(a800p.gpu_link_spans(4));
  // "H20" must not resolve to the H200 and vice versa.
  EXPECT_EQ(cat().find("H200").name, "NVIDIA H200 SXM");
}

// DGX Spark: one 128 GB LPDDR5x pool shared with the CPU at 273 GB/s; 1 PF FP4 sparse → 500 TFLOPS dense.
TEST(UnifiedMemory, DgxSpark) {
  const GpuSpec& spark = cat().find("DGX Spark");
  EXPECT_TRUE(spark.unified_memory);
  EXPECT_DOUBLE_EQ(spark.memory_bytes, 128e9);
  EXPECT_DOUBLE_EQ(spark.memory_bandwidth_bytes_per_s, 273e9);
  EXPECT_DOUBLE_EQ(*spark.dense_flops(Dtype::fp4), 500e12);
  EXPECT_EQ(cat().find("GB10").name, spark.name);
}

TEST(NewColumns, BadCellsAreErrors) {
  const std::string header =
      "name,vendor,memory_gb,memory_bw_gbps,interconnect_bw_gbps,usable_memory_mib,nvlink_domain_gpus,unified_memory\n";
  EXPECT_NO_THROW(GpuCatalog::parse_csv(header + "X,ACME,24,600,100,24564,2,no\n", "g.csv"));
  try {
    GpuCatalog::parse_csv(header + "X,ACME,24,600,0,24564,2,\n", "g.csv");
    FAIL() << "a link domain without a link";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("g.csv:2: column nvlink_domain_gpus"), std::string::npos) << e.what();
  }
  EXPECT_THROW(GpuCatalog::parse_csv(header + "X,ACME,24,600,100,-5,2,\n", "g.csv"), Error);
  EXPECT_THROW(GpuCatalog::parse_csv(header + "X,ACME,24,600,100,,2,maybe\n", "g.csv"), Error);
  // Old files without the new columns still load (--gpus-file written before 2026-12-01).
  const GpuCatalog old = GpuCatalog::parse_csv("name,vendor,memory_gb,memory_bw_gbps,interconnect_bw_gbps\nX,ACME,24,600,0\n", "o.csv");
  EXPECT_FALSE(old.gpus()[0].usable_memory_bytes.has_value());
}

}  // namespace
}  // namespace gpuplan
