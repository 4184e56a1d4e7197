// Goodput model (sizing/goodput.hpp): hand calculations written beside each check.
#include <gtest/gtest.h>

#include <cmath>

#include "sizing/goodput.hpp"

namespace gpuplan {
namespace {

TEST(Goodput, DefaultRateIsLlama3Figure) {
  // Dubey et al. 2024 §3.3.4: 419 unexpected interruptions in 54 days on 16,384 GPUs.
  EXPECT_NEAR(kDefaultFailuresPerGpuHour, 419.0 / (54 * 24 * 16384.0), 1e-15);
  EXPECT_NEAR(kDefaultFailuresPerGpuHour, 1.973e-5, 1e-8);
}

TEST(Goodput, WorkedExample512Gpus) {
  // Header example: 512 GPUs on 64 nodes, 224 GB checkpoint, 1 GB/s per node, restart 600 s.
  GoodputRequest r;
  r.work_seconds = 30 * 86400.0;
  r.gpus = 512;
  r.nodes = 64;
  r.checkpoint_bytes = 224e9;
  r.checkpoint_write_bytes_per_s = 1e9;
  r.restart_seconds = 600;
  const GoodputEstimate e = estimate_goodput(r);
  const double mtbf = 3600.0 / (kDefaultFailuresPerGpuHour * 512);  // 356,323 s
  EXPECT_NEAR(e.mtbf_seconds, mtbf, 1e-6 * mtbf);
  EXPECT_NEAR(e.checkpoint_write_seconds, 3.5, 1e-12);             // 224e9 / 64e9
  EXPECT_NEAR(e.interval_seconds, std::sqrt(2 * 3.5 * mtbf), 1e-9);  // 1,579 s
  const double share = (e.interval_seconds / 2 + 600) / mtbf;
  const double wall = (r.work_seconds + r.work_seconds * 3.5 / e.interval_seconds) / (1 - share);
  EXPECT_NEAR(e.wall_seconds, wall, 1e-9 * wall);
  EXPECT_NEAR(e.goodput, 0.9939, 1e-4);
  // The terms add up to the wall time.
  EXPECT_NEAR(e.wall_seconds, r.work_seconds + e.overhead_seconds(), 1e-9 * wall);
  EXPECT_NEAR(e.expected_failures, wall / mtbf, 1e-9);
}

TEST(Goodput, GrowsWithClusterSize) {
  GoodputRequest r;
  r.work_seconds = 10 * 86400.0;
  r.checkpoint_bytes = 1e12;
  double previous = 1.0;
  for (std::int64_t gpus : {8, 512, 4096, 16384}) {
    r.gpus = gpus;
    r.nodes = static_cast<int>(gpus / 8);
    const double g = estimate_goodput(r).goodput;
    EXPECT_LT(g, previous) << gpus;
    previous = g;
  }
  // At 16,384 GPUs the MTBF is ~3.1 h (Llama 3 saw one interruption every ~3 h): restarts of
  // 10 min alone cost ≥ 600 / 11,100 s = 5%.
  EXPECT_LT(previous, 0.95);
}

TEST(Goodput, EvaluationIsItsOwnTermAndFixedOverride) {
  GoodputRequest r;
  r.work_seconds = 1000;
  r.failures_per_gpu_hour = 0;  // no failures: only evaluation
  r.evaluation_fraction = 0.05;
  const GoodputEstimate e = estimate_goodput(r);
  EXPECT_DOUBLE_EQ(e.evaluation_seconds, 50);
  EXPECT_DOUBLE_EQ(e.wall_seconds, 1050);
  const GoodputEstimate f = fixed_goodput(900, 0.9);
  EXPECT_NEAR(f.wall_seconds, 1000, 1e-9);
}

TEST(Goodput, InfeasibleWhenFailuresOutpaceRestarts) {
  GoodputRequest r;
  r.work_seconds = 1000;
  r.gpus = 1'000'000;
  r.failures_per_gpu_hour = 1e-3;  // MTBF 3.6 s < restart 600 s
  EXPECT_FALSE(estimate_goodput(r).feasible);
}

}  // namespace
}  // namespace gpuplan
