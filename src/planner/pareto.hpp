#pragma once
/// Planner layer: the cost/time Pareto front of a set of plans.
#include <cstddef>
#include <span>
#include <vector>

namespace gpuplan {

/// One plan reduced to the two things users trade off.
struct CostTimePoint {
  double cost_usd = 0;
  double time_seconds = 0;
};

/// Indices (ascending) of the points no other point dominates. A point p dominates q when
/// p.cost ≤ q.cost and p.time ≤ q.time and at least one is strictly smaller. Exact duplicates do
/// not dominate each other (both are kept). O(n log n): sort by (cost, time), sweep keeping the
/// best time seen so far.
std::vector<std::size_t> pareto_front_indices(std::span<const CostTimePoint> points);

/// True when p dominates q (definition above).
bool dominates(const CostTimePoint& p, const CostTimePoint& q);

}  // namespace gpuplan
