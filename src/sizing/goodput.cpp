#include "sizing/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan {

GoodputEstimate estimate_goodput(const GoodputRequest& r) {
  GoodputEstimate e;
  const double work = std::max(0.0, r.work_seconds);
  e.wall_seconds = work;
  if (!(work > 0) || !std::isfinite(work)) return e;
  const double rate_per_s = std::max(0.0, r.failures_per_gpu_hour) * static_cast<double>(std::max<std::int64_t>(1, r.gpus)) / 3600.0;
  e.evaluation_seconds = work * std::max(0.0, r.evaluation_fraction);
  if (!(rate_per_s > 0)) {
    e.mtbf_seconds = std::numeric_limits<double>::infinity();
    e.wall_seconds = work + e.evaluation_seconds;
    e.goodput = work / e.wall_seconds;
    return e;
  }
  e.mtbf_seconds = 1.0 / rate_per_s;
  const double bw = std::max(1.0, r.checkpoint_write_bytes_per_s) * std::max(1, r.nodes);
  e.checkpoint_write_seconds = std::max(0.0, r.checkpoint_bytes) / bw;
  e.interval_seconds = std::sqrt(2.0 * e.checkpoint_write_seconds * e.mtbf_seconds);
  const double loss_per_failure = e.interval_seconds / 2.0 + std::max(0.0, r.restart_seconds);
  const double failure_share = loss_per_failure / e.mtbf_seconds;
  if (failure_share >= 1.0) {
    e.feasible = false;
    e.goodput = 0;
    e.wall_seconds = std::numeric_limits<double>::infinity();
    return e;
  }
  e.checkpoint_seconds = e.interval_seconds > 0 ? work * e.checkpoint_write_seconds / e.interval_seconds : 0;
  e.wall_seconds = (work + e.checkpoint_seconds + e.evaluation_seconds) / (1.0 - failure_share);
  e.expected_failures = e.wall_seconds / e.mtbf_seconds;
  e.lost_work_seconds = e.expected_failures * e.interval_seconds / 2.0;
  e.restart_seconds = e.expected_failures * std::max(0.0, r.restart_seconds);
  e.goodput = work / e.wall_seconds;
  return e;
}

GoodputEstimate fixed_goodput(double work_seconds, double goodput) {
  GoodputEstimate e;
  e.goodput = goodput;
  e.wall_seconds = goodput > 0 ? work_seconds / goodput : std::numeric_limits<double>::infinity();
  e.lost_work_seconds = e.wall_seconds - work_seconds;
  e.feasible = goodput > 0;
  return e;
}

}  // namespace gpuplan
