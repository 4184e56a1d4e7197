#pragma once
/// The sizing-layer requests a plan is estimated with, built from a PlanRequest in one place so
/// the search (planner.cpp) and `--explain` (explain.cpp) cannot drift apart. Internal to the
/// planner layer.
#include <cstdint>

#include "model/model_arch.hpp"
#include "planner/plan_request.hpp"
#include "sizing/diffusion_perf.hpp"
#include "sizing/memory.hpp"
#include "sizing/perf.hpp"
#include "sizing/serving_perf.hpp"

namespace gpuplan::detail {

/// `modules`: Megatron-Core's selective recompute modules of this layout (RecomputeModules; the
/// request's --recompute-modules, or the set the search chose, Plan::recompute_modules).
TrainingMemoryRequest training_memory_request(const PlanRequest& r, const ParallelLayout& layout, Recompute rc,
                                              RecomputeModules modules);
TrainingStepRequest training_step_request(const PlanRequest& r, const ParallelLayout& layout, Recompute rc,
                                          RecomputeModules modules, std::int64_t global_batch_seqs);
/// Context = prompt + output tokens per sequence.
ServingMemoryRequest serving_memory_request(const PlanRequest& r, int tp, std::int64_t concurrency);
ServingPerfRequest serving_perf_request(const PlanRequest& r, int tp, std::int64_t concurrency);
/// The replicas' worth of load a service's `replicas` carry (tokens/s and req/s count these): a
/// --concurrency load of N users is N / batch replicas (Little's law), an --rps load rps / req/s per
/// replica, each at most `replicas` (a fixed cluster may hold more than the load needs). A batch
/// job (no load): `replicas`.
double serving_replicas_busy(const PlanRequest& r, const ServingEstimate& e, std::int64_t replicas);
/// The mean queue wait an --rps load may add before its first token, seconds: the TTFT target's
/// slack (effective target − TTFT), and at least a tenth of the TTFT (a plan at or past its target,
/// or with only --tpot-ms set, is not driven to many replicas by a wait far below its own TTFT).
/// 0 without --rps.
double serving_queue_wait_budget_seconds(const PlanRequest& r, const ServingEstimate& e);
/// The replicas whose capacity carries a service's load: replicas_needed (the rate and the users),
/// at least ceil(users / batch). 0 = the estimate serves nothing.
std::int64_t serving_replicas_for_capacity(const PlanRequest& r, const ServingEstimate& e);
/// The replicas a service's load needs: serving_replicas_for_capacity, and for an --rps load the
/// fewest whose mean queue wait (queue_wait_seconds, M/D/c per replica) stays within
/// serving_queue_wait_budget_seconds. A fixed cluster (--gpus / --nodes) or --max-nodes /
/// --max-gpus may hold fewer: the planner then runs what they hold, down to the capacity count,
/// and states the wait. 0 = the estimate serves nothing.
std::int64_t serving_replicas_needed(const PlanRequest& r, const ServingEstimate& e);
/// Classifier-free guidance (two denoiser passes per step) for UNet pipelines, not for FLUX-schnell.
DiffusionRequest diffusion_request(const PlanRequest& r, const ModelArch& arch, int gpus);

}  // namespace gpuplan::detail
