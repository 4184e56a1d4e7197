// Bits per weight of the GGUF / MX block formats, from their block layouts (ggml-common.h; OCP MX v1.0).
#include <gtest/gtest.h>

#include "sizing/memory.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

// block_q4_0 { fp16 d; uint8 qs[16]; } = 18 bytes per 32 weights → 144 / 32 = 4.5 bits.
// block_q2_K { uint8 scales[16]; uint8 qs[64]; fp16 d; fp16 dmin; } = 84 bytes per 256 → 672 / 256 = 2.625 bits.
// MXFP4: 32 × 4-bit E2M1 + one 8-bit E8M0 scale → (128 + 8) / 32 = 4.25 bits.
TEST(QuantFormats, BitsPerWeightFromBlockLayouts) {
  EXPECT_DOUBLE_EQ(weight_quant_bits(WeightQuant::gguf_q4_0), 4.5);
  EXPECT_DOUBLE_EQ(weight_quant_bits(WeightQuant::gguf_q2_k), 2.625);
  EXPECT_DOUBLE_EQ(weight_quant_bits(WeightQuant::mxfp4), 4.25);
  EXPECT_DOUBLE_EQ(weight_quant_bits(WeightQuant::gguf_q8_0), 8.5);
}

// llama.cpp --cache-type-k q8_0 stores K in block_q8_0: 32 int8 + fp16 scale = 34 bytes per 32 values.
TEST(QuantFormats, Q8_0KvCacheIsExact) { EXPECT_DOUBLE_EQ(kv_dtype_bytes(KvDtype::q8_0), 34.0 / 32.0); }

TEST(QuantFormats, NamesParseAndRoundTrip) {
  EXPECT_EQ(parse_weight_quant("q4_0", "--quant"), WeightQuant::gguf_q4_0);
  EXPECT_EQ(parse_weight_quant("Q2_K", "--quant"), WeightQuant::gguf_q2_k);
  EXPECT_EQ(parse_weight_quant("mxfp4", "--quant"), WeightQuant::mxfp4);
  EXPECT_EQ(parse_kv_dtype("q8_0", "--kv-cache-dtype"), KvDtype::q8_0);
  for (auto q : {WeightQuant::gguf_q4_0, WeightQuant::gguf_q2_k, WeightQuant::mxfp4}) {
    EXPECT_EQ(parse_weight_quant(weight_quant_name(q), "--quant"), q);
  }
  EXPECT_EQ(kv_dtype_name(KvDtype::q8_0), "q8_0");
  EXPECT_THROW(parse_weight_quant("q3_k_xs", "--quant"), Error);
}

}  // namespace
}  // namespace gpuplan
