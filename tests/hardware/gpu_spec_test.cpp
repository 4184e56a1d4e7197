// Tests for the hardware catalog: parsing, unit conversion, tolerant lookup, errors.
// Expected numbers are datasheet figures written here, with the datasheet named.
#include "hardware/gpu_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "util/error.hpp"

namespace gpuplan {
namespace {

using ::testing::HasSubstr;

const GpuCatalog& cat() { return GpuCatalog::bundled(); }

// ---- unit conversion against datasheet numbers -------------------------------------------------

TEST(GpuSpecUnits, H100SxmMatchesNvidiaDatasheet) {
  // NVIDIA H100 Tensor Core GPU datasheet, SXM column: 80 GB HBM3, 3.35 TB/s, FP32 67 TFLOPS (66.9),
  // BF16 1,979 TFLOPS *with sparsity* -> dense = 1978.9 / 2 = 989.45 (table: 989.4),
  // FP8 3,958 sparse -> 1978.9 dense, NVLink 900 GB/s, 700 W.
  const GpuSpec& h = cat().find("NVIDIA H100 SXM");
  EXPECT_DOUBLE_EQ(h.memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(h.memory_bandwidth_bytes_per_s, 3.35e12);
  ASSERT_TRUE(h.dense_flops(Dtype::bf16));
  EXPECT_NEAR(*h.dense_flops(Dtype::bf16), 1978.9e12 / 2, 0.1e12);
  EXPECT_NEAR(*h.dense_flops(Dtype::fp8), 3957.8e12 / 2, 0.1e12);
  EXPECT_NEAR(*h.dense_flops(Dtype::fp32), 66.9e12, 1e9);
  EXPECT_DOUBLE_EQ(h.gpu_link_bytes_per_s, 900e9);
  EXPECT_EQ(h.tdp_watts, 700.0);
  EXPECT_EQ(h.pcie_gen, 5);
  EXPECT_TRUE(h.is_hbm());
  EXPECT_TRUE(h.has_gpu_link());
  EXPECT_FALSE(h.supports(Dtype::fp4));  // Hopper has no FP4 tensor path.
}

TEST(GpuSpecUnits, A100AndL4MatchDatasheets) {
  // NVIDIA A100 datasheet: 80GB SXM 2,039 GB/s; BF16 312 TFLOPS dense (624 sparse); TF32 156 dense.
  const GpuSpec& a = cat().find("NVIDIA A100 SXM 80GB");
  EXPECT_DOUBLE_EQ(a.memory_bandwidth_bytes_per_s, 2039e9);
  EXPECT_DOUBLE_EQ(*a.dense_flops(Dtype::bf16), 624e12 / 2);
  EXPECT_DOUBLE_EQ(*a.dense_flops(Dtype::tf32), 156e12);
  EXPECT_FALSE(a.supports(Dtype::fp8));  // Ampere has no FP8 tensor cores.
  // NVIDIA L4 datasheet: 24 GB GDDR6, 300 GB/s, FP8 485 TFLOPS sparse -> 242.5 dense, no NVLink.
  const GpuSpec& l4 = cat().find("NVIDIA L4");
  EXPECT_DOUBLE_EQ(l4.memory_bytes, 24e9);
  EXPECT_DOUBLE_EQ(*l4.dense_flops(Dtype::fp8), 485e12 / 2);
  EXPECT_FALSE(l4.is_hbm());
  EXPECT_FALSE(l4.has_gpu_link());
}

TEST(GpuSpecUnits, DtypeNames) {
  EXPECT_EQ(dtype_name(Dtype::bf16), "bf16");
  EXPECT_EQ(dtype_name(Dtype::int8), "int8");
  EXPECT_EQ(dtype_name(Dtype::fp4), "fp4");
}

TEST(GpuCatalogBundled, EveryRowHasMemorySourcesAndExplainedGaps) {
  ASSERT_GT(cat().gpus().size(), 30u);
  for (const auto& g : cat().gpus()) {
    EXPECT_GT(g.memory_bytes, 1e9) << g.name;
    EXPECT_FALSE(g.source_ids.empty()) << g.name;
    // A bandwidth is either a plausible number (> 10 GB/s) or missing with the gap recorded.
    if (auto bw = g.memory_bandwidth()) {
      EXPECT_GT(*bw, 1e10) << g.name;
    } else {
      EXPECT_THAT(g.uncertain_cells, HasSubstr("memory_bw_gbps")) << g.name;
    }
    // Tensor/matrix BF16 is at least the vector FP32 rate on every listed part (a smaller value
    // would mean a sparse/dense or unit mix-up in the row).
    if (g.dense_flops(Dtype::bf16) && g.dense_flops(Dtype::fp32)) {
      EXPECT_GE(*g.dense_flops(Dtype::bf16), *g.dense_flops(Dtype::fp32)) << g.name;
    }
  }
}

TEST(GpuCatalogBundled, IsParsedOnceAndSharesRows) {
  EXPECT_EQ(&GpuCatalog::bundled(), &GpuCatalog::bundled());
  EXPECT_EQ(&cat().find("h100"), &cat().find("NVIDIA H100 SXM"));
}

// ---- tolerant matching (cases from the issue) ---------------------------------------------------

struct MatchCase {
  const char* query;
  const char* expected;
};

class GpuTolerantMatch : public ::testing::TestWithParam<MatchCase> {};

TEST_P(GpuTolerantMatch, ResolvesToExpectedRow) {
  const GpuSpec* g = cat().try_find(GetParam().query);
  ASSERT_NE(g, nullptr) << GetParam().query;
  EXPECT_EQ(g->name, GetParam().expected) << GetParam().query;
}

INSTANTIATE_TEST_SUITE_P(
    IssueCases, GpuTolerantMatch,
    ::testing::Values(
        MatchCase{"h100", "NVIDIA H100 SXM"}, MatchCase{"H100", "NVIDIA H100 SXM"},
        MatchCase{"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"}, MatchCase{"NVIDIA-H100-80GB-HBM3", "NVIDIA H100 SXM"},
        MatchCase{"H100-SXM5-80GB", "NVIDIA H100 SXM"}, MatchCase{"H100-SXM", "NVIDIA H100 SXM"},
        MatchCase{"h100_sxm", "NVIDIA H100 SXM"}, MatchCase{"H100 PCIe", "NVIDIA H100 PCIe"},
        MatchCase{"H100-80G-PCIe", "NVIDIA H100 PCIe"}, MatchCase{"h100-pcie", "NVIDIA H100 PCIe"},
        MatchCase{"H100_NVL", "NVIDIA H100 NVL"}, MatchCase{"H100-NVL", "NVIDIA H100 NVL"},
        MatchCase{"H100-NVLINK", "NVIDIA H100 SXM"}, MatchCase{"A100", "NVIDIA A100 SXM 80GB"},
        MatchCase{"A100-80GB", "NVIDIA A100 SXM 80GB"}, MatchCase{"A100 (40 GB)", "NVIDIA A100 SXM 40GB"},
        MatchCase{"A100-40GB", "NVIDIA A100 SXM 40GB"}, MatchCase{"NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"},
        MatchCase{"V100-32GB", "NVIDIA V100 SXM2 32GB"}, MatchCase{"V100 (16 GB)", "NVIDIA V100 SXM2 16GB"},
        MatchCase{"A10G", "NVIDIA A10G"}, MatchCase{"a10", "NVIDIA A10"},
        MatchCase{"RTX6000-Ada", "NVIDIA RTX 6000 Ada"}, MatchCase{"NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada"},
        MatchCase{"GeForce RTX 4090", "NVIDIA GeForce RTX 4090"}, MatchCase{"RTX4090", "NVIDIA GeForce RTX 4090"},
        MatchCase{"AMD MI300X", "AMD Instinct MI300X"}, MatchCase{"mi300x", "AMD Instinct MI300X"},
        MatchCase{"L40S", "NVIDIA L40S"}, MatchCase{"L40", "NVIDIA L40"}, MatchCase{"GH200", "NVIDIA GH200 (Hopper GPU of superchip)"},
        MatchCase{"tpu-v5litepod", "Google TPU v5e"}));

TEST(GpuTolerantMatch, MemoryArgumentPicksVariant) {
  // A size given by the offer (bytes) overrides the default and a size in the name.
  EXPECT_EQ(cat().find("A100", 40e9).name, "NVIDIA A100 SXM 40GB");
  EXPECT_EQ(cat().find("A100", 80e9).name, "NVIDIA A100 SXM 80GB");
  // SkyPilot reports 81920 MiB = 85.9e9 bytes for an 80 GB part: within the 10% tolerance.
  EXPECT_EQ(cat().find("A100", 81920.0 * 1024 * 1024).name, "NVIDIA A100 SXM 80GB");
  EXPECT_EQ(cat().find("V100", 32e9).name, "NVIDIA V100 SXM2 32GB");
  EXPECT_EQ(cat().find("V100").name, "NVIDIA V100 SXM2 16GB");
  // vast.ai's H100 NVL offer is named "H100" with 95830 MiB (= 100.5e9 B): the size selects the
  // 94 GB NVL variant (6.5% off) over the 80 GB SXM default (25% off).
  EXPECT_EQ(cat().find("H100", 95830.0 * 1024 * 1024).name, "NVIDIA H100 NVL");
  // An exact-key row that matches the size is preferred over variants: A10 (24 GB), not A10G.
  EXPECT_EQ(cat().find("A10", 24e9).name, "NVIDIA A10");
  // A size no variant has is ignored (modded consumer card), the name still resolves.
  EXPECT_EQ(cat().find("RTX 4090 (48 GB mod)").name, "NVIDIA GeForce RTX 4090");
}

TEST(GpuNameKey, NormalisesSeparatorsVendorAndMemory) {
  auto k = normalize_gpu_name("NVIDIA H100 80GB HBM3");
  EXPECT_EQ(k.key, "h100");
  ASSERT_TRUE(k.memory_gb);
  EXPECT_DOUBLE_EQ(*k.memory_gb, 80);
  auto k2 = normalize_gpu_name("A100-80G-PCIe");
  EXPECT_EQ(k2.key, "a100pcie");
  EXPECT_EQ(k2.memory_gb, 80.0);
  auto k3 = normalize_gpu_name("Tesla V100 (16 GB)");
  EXPECT_EQ(k3.key, "v100");
  EXPECT_EQ(k3.memory_gb, 16.0);
  EXPECT_EQ(normalize_gpu_name("H100-SXM5").key, "h100sxm");
  EXPECT_EQ(normalize_gpu_name("GTX 1080").key, "gtx1080");  // a bare number is not a memory size
  EXPECT_FALSE(normalize_gpu_name("GTX 1080").memory_gb);
}

// ---- errors -------------------------------------------------------------------------------------

TEST(GpuLookupErrors, UnknownNameListsNearMatches) {
  EXPECT_EQ(cat().try_find("H1000"), nullptr);
  EXPECT_EQ(cat().try_find(""), nullptr);
  try {
    (void)cat().find("H10O SXM");
    FAIL() << "expected not_found";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
    EXPECT_THAT(e.what(), HasSubstr("H10O SXM"));
    EXPECT_THAT(e.expected(), HasSubstr("NVIDIA H100 SXM"));
  }
  auto near = cat().nearest_names("H10O SXM", 5);
  ASSERT_EQ(near.size(), 5u);
  EXPECT_EQ(near.front(), "NVIDIA H100 SXM");
}

const char* kHeader =
    "name,vendor,architecture,form_factor,memory_gb,memory_type,memory_bw_gbps,fp32_tflops,tf32_tflops,"
    "fp16_tflops,bf16_tflops,fp8_tflops,int8_tops,fp4_tflops,interconnect,interconnect_bw_gbps,pcie_gen,tdp_w,"
    "release_year,sparse_halved,source_ids,uncertain_cells,aliases\n";

TEST(GpuCsvParse, ParsesSmallTableWithUnitsAndAliases) {
  std::string csv = std::string(kHeader) +
                    "Test GPU X1,ACME,Arch,PCIe,24,GDDR6,600,30,,120.5,120.5,,,,none,0,4,150,2021,yes,SRC-1,,X1;Acme-X1\n";
  GpuCatalog c = GpuCatalog::parse_csv(csv, "t.csv");
  ASSERT_EQ(c.gpus().size(), 1u);
  const GpuSpec& g = c.gpus()[0];
  EXPECT_DOUBLE_EQ(g.memory_bytes, 24e9);
  EXPECT_DOUBLE_EQ(g.memory_bandwidth_bytes_per_s, 600e9);
  EXPECT_DOUBLE_EQ(*g.dense_flops(Dtype::bf16), 120.5e12);
  EXPECT_FALSE(g.dense_flops(Dtype::tf32));
  EXPECT_EQ(g.pcie_gen, 4);
  EXPECT_EQ(g.release_year, 2021);
  EXPECT_EQ(g.aliases, (std::vector<std::string>{"X1", "Acme-X1"}));
  EXPECT_EQ(c.try_find("acme x1"), &g);
  EXPECT_EQ(c.try_find("x1"), &g);
}

void expect_invalid(const std::string& row, const std::string& fragment) {
  std::string csv = std::string(kHeader) +
                    "Good,ACME,A,PCIe,24,GDDR6,600,30,,,,,,,none,0,4,150,2021,yes,S,,\n" + row + "\n";
  try {
    (void)GpuCatalog::parse_csv(csv, "gpus.csv");
    FAIL() << "expected invalid_input for: " << row;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_THAT(e.what(), HasSubstr(fragment)) << e.what();
  }
}

TEST(GpuCsvParse, MalformedCellsNameLineAndColumn) {
  // Data row 2 is on line 3 (line 1 is the header).
  expect_invalid("Bad,ACME,A,PCIe,lots,GDDR6,600,30,,,,,,,none,0,4,150,2021,yes,S,,", "gpus.csv:3: column memory_gb");
  expect_invalid("Bad,ACME,A,PCIe,24,GDDR6,-600,30,,,,,,,none,0,4,150,2021,yes,S,,",
                 "gpus.csv:3: column memory_bw_gbps");
  expect_invalid("Bad,ACME,A,PCIe,24,GDDR6,600,30,,-1,,,,,none,0,4,150,2021,yes,S,,", "gpus.csv:3: column fp16_tflops");
  expect_invalid("Bad,ACME,A,PCIe,24,GDDR6,600,30,,,,,,,none,0,4.5,150,2021,yes,S,,", "gpus.csv:3: column pcie_gen");
  expect_invalid("Bad,ACME,A,PCIe,24,GDDR6,600,30,,,,,,,none,0,N/A,150,2021,yes,S,,", "gpus.csv:3: column pcie_gen");
  expect_invalid("Bad,ACME,A,PCIe,,GDDR6,600,30,,,,,,,none,0,4,150,2021,yes,S,,", "gpus.csv:3: column memory_gb");
  expect_invalid(",ACME,A,PCIe,24,GDDR6,600,30,,,,,,,none,0,4,150,2021,yes,S,,", "gpus.csv:3: column name");
  expect_invalid("Good,ACME,A,PCIe,24,GDDR6,600,30,,,,,,,none,0,4,150,2021,yes,S,,", "duplicate");
  expect_invalid("Bad,ACME,A,PCIe,24,GDDR6,600,30,,,,,,,none,0,4,150,2021,yes,S,,--", "gpus.csv:3: column aliases");
  expect_invalid("Bad,ACME,A,PCIe,24", "gpus.csv:3");  // wrong cell count (CsvTable)
}

TEST(GpuCsvParse, HeaderOnlyIsAnError) {
  // A catalog with no GPU would make every "which GPU fits" answer empty: refuse it.
  EXPECT_THROW(GpuCatalog::parse_csv(kHeader, "empty.csv"), Error);
}

TEST(GpuCsvParse, MissingRequiredColumnIsAnError) {
  EXPECT_THROW((void)GpuCatalog::parse_csv("name,vendor\nX,Y\n", "gpus.csv"), Error);
}

TEST(GpuCsvParse, LoadFileMissingIsNotFound) {
  try {
    (void)GpuCatalog::load_file("/nonexistent/gpus.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
  }
}

TEST(GpuCsvParse, BundledFileInSourceTreeParses) {
  GpuCatalog c = GpuCatalog::load_file(std::string(GPUPLAN_SOURCE_DIR) + "/data/gpus.csv");
  EXPECT_EQ(c.gpus().size(), cat().gpus().size());
}

}  // namespace
}  // namespace gpuplan
