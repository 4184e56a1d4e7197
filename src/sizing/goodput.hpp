#pragma once
/// Sizing layer: goodput — the fraction of wall-clock time a long training job spends on useful
/// steps. A steady-state step model (perf.hpp) leaves out hardware failures, the checkpoints
/// written to survive them, and evaluation pauses; this model adds each as its own term.
///
/// Units: seconds, bytes, bytes/s, failures per GPU-hour. Pure functions, no allocation.
///
/// Terms (first-order model, each a field of GoodputEstimate):
///   failure rate      λ = failures per GPU-hour × GPUs; cluster MTBF M = 1 / λ (hours → s).
///                     Default rate from Llama 3 (Dubey et al. 2024, arXiv:2407.21783 §3.3.4):
///                     419 unexpected interruptions in a 54-day snapshot on up to 16,384 H100
///                     GPUs → 419 / (54 × 24 h × 16,384 GPUs) = 1.97e-5 per GPU-hour (one
///                     interruption every ~3 h at 16k GPUs; ~6,300 h MTBF for one 8-GPU node).
///                     The 466 total interruptions include 47 planned ones (upgrades,
///                     maintenance), not counted: a rented cluster's provider schedules those.
///   checkpoint write  C = checkpoint bytes / (nodes × checkpoint write bytes/s per node)
///                     (each node writes its shard in parallel).
///   interval          τ = sqrt(2 · C · M) (Young 1974, Commun. ACM 17(9), eq. 3;
///                     Daly 2006, Future Gener. Comput. Syst. 22(3) §3, first order).
///   checkpoint_seconds = work × C / τ                    (time spent writing checkpoints)
///   lost_work_seconds  = failures × τ / 2                 (work redone since the last checkpoint)
///   restart_seconds    = failures × restart seconds       (detect, replace the node, reload)
///   failures           = wall / M, wall = work + the above (solved in closed form below)
///   evaluation_seconds = work × evaluation fraction       (default 0: no published figure;
///                        the user states it with --eval-fraction)
///   goodput = work / wall.
/// Closed form: failures = wall / M and each costs τ/2 + R, so
///   wall = work + checkpoint_seconds + evaluation_seconds + (wall / M)(τ/2 + R)
///   ⇒ wall = (work + checkpoint_seconds + evaluation_seconds) / (1 − (τ/2 + R)/M),
/// valid while (τ/2 + R) < M; beyond that the job cannot make progress (feasible = false).
/// Worked example: 512 GPUs (64 nodes), 224 GB checkpoint (14B params × 16 B), 1 GB/s per node:
/// λ = 1.97e-5 × 512 = 1.01e-2 /h → M = 98.98 h = 356,323 s; C = 224e9 / 64e9 = 3.5 s;
/// τ = sqrt(2 × 3.5 × 356,400) = 1,579 s; share = (790 + 600) / 356,323 = 0.39%;
/// checkpoints C/τ = 0.22% → goodput ≈ 1 / (1.0022 / 0.9961) = 0.994.
#include <cstdint>

namespace gpuplan {

/// Llama 3 §3.3.4 (see above): unexpected interruptions per GPU-hour on H100 clusters.
inline constexpr double kDefaultFailuresPerGpuHour = 419.0 / (54.0 * 24.0 * 16384.0);

struct GoodputRequest {
  double work_seconds = 0;                 ///< steady-state time of the whole run (steps × step time)
  std::int64_t gpus = 1;                   ///< GPUs in the job
  int nodes = 1;                           ///< nodes writing checkpoint shards in parallel
  double checkpoint_bytes = 0;             ///< one full checkpoint (weights + optimizer state), bytes
  double checkpoint_write_bytes_per_s = 1e9;  ///< per node (1 GB/s: a network-disk write rate)
  double restart_seconds = 600;            ///< per failure: detect, replace, restart, reload (assumption)
  double failures_per_gpu_hour = kDefaultFailuresPerGpuHour;
  double evaluation_fraction = 0;          ///< evaluation pauses as a fraction of the work time
};

struct GoodputEstimate {
  bool feasible = true;             ///< false when failures come faster than a restart + half an interval
  double mtbf_seconds = 0;          ///< cluster mean time between failures
  double checkpoint_write_seconds = 0;  ///< C: one checkpoint
  double interval_seconds = 0;      ///< τ: checkpoint interval (Young/Daly)
  double expected_failures = 0;
  double checkpoint_seconds = 0;    ///< all checkpoint writes
  double lost_work_seconds = 0;     ///< redone work
  double restart_seconds = 0;       ///< all restarts
  double evaluation_seconds = 0;    ///< evaluation pauses
  double wall_seconds = 0;          ///< work + the four overheads
  double goodput = 1;               ///< work / wall
  double overhead_seconds() const { return checkpoint_seconds + lost_work_seconds + restart_seconds + evaluation_seconds; }
};

/// The goodput terms of a run (model above). Never throws; non-positive work gives goodput 1
/// and no overhead; checkpoint_bytes 0 means no checkpointing (failures then lose τ/2 = 0).
GoodputEstimate estimate_goodput(const GoodputRequest& request);

/// A fixed goodput fraction given by the user (--goodput): wall = work / goodput, the whole
/// overhead reported as one term (restart_seconds = 0, lost_work_seconds = wall − work).
GoodputEstimate fixed_goodput(double work_seconds, double goodput);

}  // namespace gpuplan
