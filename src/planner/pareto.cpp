#include "planner/pareto.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace gpuplan {

bool dominates(const CostTimePoint& p, const CostTimePoint& q) {
  return p.cost_usd <= q.cost_usd && p.time_seconds <= q.time_seconds &&
         (p.cost_usd < q.cost_usd || p.time_seconds < q.time_seconds);
}

std::vector<std::size_t> pareto_front_indices(std::span<const CostTimePoint> points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].cost_usd != points[b].cost_usd) return points[a].cost_usd < points[b].cost_usd;
    return points[a].time_seconds < points[b].time_seconds;
  });
  std::vector<std::size_t> front;
  double best_time = std::numeric_limits<double>::infinity();
  // Points of equal cost come sorted by time; within such a group only the fastest (and its exact
  // duplicates) survive.
  const CostTimePoint* last_kept = nullptr;
  for (std::size_t i : order) {
    const CostTimePoint& p = points[i];
    if (p.time_seconds < best_time) {
      front.push_back(i);
      best_time = p.time_seconds;
      last_kept = &p;
    } else if (last_kept && p.time_seconds == last_kept->time_seconds && p.cost_usd == last_kept->cost_usd) {
      front.push_back(i);  // exact duplicate of a kept point
    }
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace gpuplan
