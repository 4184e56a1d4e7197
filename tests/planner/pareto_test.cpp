#include "planner/pareto.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpuplan {
namespace {

TEST(Pareto, HandMadeSet) {
  // (cost, time):  0:(10,100) 1:(20,50) 2:(15,120) 3:(30,40) 4:(25,60) 5:(10,100) duplicate of 0
  // 2 is dominated by 0 (cheaper and faster); 4 is dominated by 1 (20 < 25, 50 < 60).
  // Front: 0, 1, 3, 5.
  std::vector<CostTimePoint> pts = {{10, 100}, {20, 50}, {15, 120}, {30, 40}, {25, 60}, {10, 100}};
  EXPECT_EQ(pareto_front_indices(pts), (std::vector<std::size_t>{0, 1, 3, 5}));
}

TEST(Pareto, EqualCostKeepsFastestOnly) {
  // (5,10) dominates (5,20): same cost, faster.
  std::vector<CostTimePoint> pts = {{5, 20}, {5, 10}};
  EXPECT_EQ(pareto_front_indices(pts), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(dominates(pts[1], pts[0]));
  EXPECT_FALSE(dominates(pts[0], pts[0]));
}

TEST(Pareto, EmptyAndSingle) {
  EXPECT_TRUE(pareto_front_indices(std::vector<CostTimePoint>{}).empty());
  EXPECT_EQ(pareto_front_indices(std::vector<CostTimePoint>{{1, 1}}), (std::vector<std::size_t>{0}));
}

}  // namespace
}  // namespace gpuplan
