#include "planner/plan_inputs.hpp"

#include <cmath>

namespace gpuplan::detail {

TrainingMemoryRequest training_memory_request(const PlanRequest& r, const ParallelLayout& layout, Recompute rc,
                                              RecomputeModules modules) {
  TrainingMemoryRequest m;
  // The stack's memory behaviour (--stack: activation profile, fp32 gradient partition or
  // accumulation, chunked cross-entropy, offloaded checkpoints); the layout, the recompute mode
  // and the optimizer are the search's and the request's, set below.
  if (r.stack) apply_stack_defaults(*r.stack, m);
  m.task = r.task;
  m.precision = r.precision;
  m.optimizer = r.optimizer;
  m.seq_len = r.seq_len;
  m.layout = layout;
  m.recompute = rc;
  m.recompute_modules = modules;
  m.lora_rank = r.lora_rank;
  m.pipeline_stage_layers = r.pipeline_stage_layers;
  if (r.grads_16bit) m.fp32_grad_accumulation = false;
  return m;
}

TrainingStepRequest training_step_request(const PlanRequest& r, const ParallelLayout& layout, Recompute rc,
                                          RecomputeModules modules, std::int64_t global_batch_seqs) {
  TrainingStepRequest s;
  s.precision = r.precision;
  s.seq_len = r.seq_len;
  s.global_batch_seqs = global_batch_seqs;
  s.layout = layout;
  s.recompute = rc;
  s.recompute_modules = modules;
  s.task = r.task;
  s.lora_rank = r.lora_rank;
  s.optimizer = r.optimizer;
  if (r.stack) s.stack = *r.stack;
  s.ep_overlap_with_compute = r.ep_overlap;
  s.tp_comm_overlap = r.tp_comm_overlap;
  s.grad_reduce_fp32 = r.stack == TrainingStack::megatron && !r.grads_16bit;
  s.pipeline_stage_layers = r.pipeline_stage_layers;
  s.moe_load_imbalance = r.moe_load_imbalance;
  s.moe_dispatcher = r.moe_dispatcher.value_or(MoeDispatcher::alltoall);
  s.cuda_graph = r.cuda_graph.value_or(CudaGraphImpl::none);
  return s;
}

ServingMemoryRequest serving_memory_request(const PlanRequest& r, int tp, std::int64_t concurrency) {
  ServingMemoryRequest m;
  m.quant = r.quant;
  m.kv_dtype = r.kv_dtype;
  m.context_tokens = r.prompt_tokens + r.output_tokens;
  m.concurrency = concurrency;
  m.tp = tp;
  return m;
}

double serving_replicas_busy(const PlanRequest& r, const ServingEstimate& e, std::int64_t replicas) {
  double busy = static_cast<double>(replicas);
  if (r.workload != PlanWorkload::serving) return busy;
  if (r.concurrency && e.batch > 0) busy = std::min(busy, static_cast<double>(*r.concurrency) / static_cast<double>(e.batch));
  if (r.requests_per_s && e.requests_per_s_per_replica > 0) busy = std::min(busy, *r.requests_per_s / e.requests_per_s_per_replica);
  return busy;
}

double serving_queue_wait_budget_seconds(const PlanRequest& r, const ServingEstimate& e) {
  if (r.workload != PlanWorkload::serving || !r.requests_per_s) return 0.0;
  const double slack = r.effective_ttft_seconds() - e.ttft_seconds;
  return std::isfinite(slack) ? std::max(slack, 0.1 * e.ttft_seconds) : 0.1 * e.ttft_seconds;
}

std::int64_t serving_replicas_for_capacity(const PlanRequest& r, const ServingEstimate& e) {
  std::int64_t n = replicas_needed(e, r.requests_per_s.value_or(0), r.concurrency.value_or(0));
  if (n > 0 && r.concurrency && e.batch > 0) n = std::max(n, (*r.concurrency + e.batch - 1) / e.batch);
  return n;
}

std::int64_t serving_replicas_needed(const PlanRequest& r, const ServingEstimate& e) {
  std::int64_t n = serving_replicas_for_capacity(r, e);
  if (n > 0 && r.workload == PlanWorkload::serving && r.requests_per_s)
    n = replicas_for_queue_wait(e, *r.requests_per_s, serving_queue_wait_budget_seconds(r, e), n);
  return n;
}

ServingPerfRequest serving_perf_request(const PlanRequest& r, int tp, std::int64_t concurrency) {
  ServingPerfRequest sp;
  sp.quant = r.quant;
  sp.kv_dtype = r.kv_dtype;
  sp.prompt_tokens = r.prompt_tokens;
  sp.output_tokens = r.output_tokens;
  sp.tp = tp;
  sp.concurrency = concurrency;
  sp.engine = r.engine;
  return sp;
}

DiffusionRequest diffusion_request(const PlanRequest& r, const ModelArch& arch, int gpus) {
  DiffusionRequest d;
  d.width_px = r.image_width;
  d.height_px = r.image_height;
  d.steps = r.denoising_steps;
  d.classifier_free_guidance = arch.diffusion && arch.diffusion->class_name != "FluxTransformer2DModel";
  d.gpus = gpus;
  return d;
}

}  // namespace gpuplan::detail
