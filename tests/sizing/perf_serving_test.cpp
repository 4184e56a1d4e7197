// Serving throughput/latency (serving_perf.hpp): roofline hand calculations.
#include <gtest/gtest.h>

#include <cmath>

#include "model/presets.hpp"
#include "sizing/serving_perf.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

GpuSpec h100_like() {
  // NVIDIA H100 SXM datasheet: 989.4 TFLOPS dense BF16, 3.35 TB/s HBM3, NVLink 900 GB/s.
  GpuSpec g;
  g.name = "H100 SXM";
  g.vendor = "NVIDIA";
  g.architecture = "Hopper";
  g.memory_type = "HBM3";
  g.memory_bytes = 80e9;
  g.memory_bandwidth_bytes_per_s = 3.35e12;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::bf16)] = 989.4e12;
  g.dense_flops_per_s[static_cast<std::size_t>(Dtype::fp16)] = 989.4e12;
  g.gpu_link_bytes_per_s = 900e9;
  g.interconnect = "NVLink 4";
  g.pcie_gen = 5;
  return g;
}

TEST(PerfServing, KvBytesPerTokenMatchesTheFormula) {
  const ModelArch llama = load_preset("llama-2-7b");
  // 2 (K,V) · 32 layers · 32 kv heads · 128 · 2 bytes = 524,288 B per token (MHA).
  EXPECT_DOUBLE_EQ(decode_kv_bytes(llama, KvDtype::bf16, 1000), 524288.0 * 1000);
  EXPECT_DOUBLE_EQ(decode_kv_bytes(llama, KvDtype::fp8, 1000), 262144.0 * 1000);
  const ModelArch l3 = load_preset("llama-3.1-8b");
  // GQA: 8 kv heads → 2·32·8·128·2 = 131,072 B per token.
  EXPECT_DOUBLE_EQ(decode_kv_bytes(l3, KvDtype::bf16, 1), 131072.0);
  const ModelArch ds = load_preset("deepseek-v3");
  // MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) · 61 layers · 2 B = 70,272 B per token.
  EXPECT_DOUBLE_EQ(decode_kv_bytes(ds, KvDtype::bf16, 1), 576.0 * 61 * 2);
}

TEST(PerfServing, DecodeAtBatchOneIsWeightBandwidthBound) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-8b");
  ServingPerfRequest r;
  r.quant = WeightQuant::bf16;
  r.prompt_tokens = 512;
  r.output_tokens = 128;
  r.concurrency = 1;
  const PerfAssumptions a;
  const ServingEstimate e = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 20e9, a);
  // Weights read per step: all params except the input embedding table (gathered rows), 2 B each.
  const double weights = (static_cast<double>(arch.params.total()) - static_cast<double>(arch.params.embeddings)) * 2;
  const double kv = 131072.0 * (512 + 64);  // one sequence at mean context prompt + output/2
  EXPECT_NEAR(e.weights_bytes_per_step, weights, 1.0);
  EXPECT_NEAR(e.kv_bytes_per_step, kv, 1.0);
  // The step: the soft roofline of serving_perf.hpp, max + min·sqrt(min/max), of the read and the
  // math (one decode token plus the steady-state prefill share, 512/128 = 4 prompt tokens); at
  // batch 1 the math is a few % of the read, so it adds well under 1% to the bandwidth time.
  const double memory = (weights + kv) / (3.35e12 * a.decode_bw_efficiency_16bit);
  const double compute = e.decode_compute_seconds + e.prefill_seconds_per_step;
  ASSERT_LT(compute, 0.1 * memory);
  EXPECT_NEAR(e.step_seconds, memory + compute * std::sqrt(compute / memory), 1e-12);
  EXPECT_NEAR(e.step_seconds, memory, 0.01 * memory);
  EXPECT_FALSE(e.decode_compute_bound);
  EXPECT_NEAR(e.decode_tokens_per_s, 1.0 / e.step_seconds, 1e-9);
  // The only running sequence's steps carry no other prompt: its TPOT is the decode step alone.
  const double decode = e.decode_compute_seconds;
  EXPECT_NEAR(e.tpot_seconds, memory + decode * std::sqrt(decode / memory), 1e-12);
  // ~15 GB at ~2.5 TB/s: about 6 ms per token, i.e. ~160 tokens/s.
  EXPECT_GT(e.decode_tokens_per_s, 120);
  EXPECT_LT(e.decode_tokens_per_s, 220);
}

TEST(PerfServing, BatchingRaisesThroughputUntilComputeOrCapacityBinds) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-8b");
  ServingPerfRequest r;
  r.prompt_tokens = 1024;
  r.output_tokens = 256;
  const double capacity = 40e9;
  // Capacity: floor(40e9 / (131072 × 1280)) = floor(238.4) = 238 sequences.
  double previous_throughput = 0, previous_tpot = 0;
  for (std::int64_t c : {1, 8, 64, 238, 1000}) {
    r.concurrency = c;
    const ServingEstimate e = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), capacity, PerfAssumptions{});
    EXPECT_EQ(e.max_concurrent_sequences, 238);
    EXPECT_EQ(e.batch, std::min<std::int64_t>(c, 238));
    EXPECT_GE(e.decode_tokens_per_s, previous_throughput);
    EXPECT_GE(e.tpot_seconds, previous_tpot);
    previous_throughput = e.decode_tokens_per_s;
    previous_tpot = e.tpot_seconds;
  }
}

TEST(PerfServing, ComputeBoundAtHugeBatch) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-8b");
  ServingPerfRequest r;
  r.prompt_tokens = 64;
  r.output_tokens = 64;
  r.concurrency = 4096;
  const ServingEstimate e = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 1e12, PerfAssumptions{});
  EXPECT_TRUE(e.decode_compute_bound);
  // Compute roof: 989e12 FLOP/s × decode_compute_efficiency ÷ (≥ 2 × 7.4e9 FLOP/token).
  EXPECT_LT(e.decode_tokens_per_s, 989.4e12 * PerfAssumptions{}.decode_compute_efficiency / (2 * 7.4e9));
}

TEST(PerfServing, TensorParallelAndQuantisationSpeedUpDecode) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-70b");
  ServingPerfRequest r;
  r.concurrency = 1;
  r.tp = 4;
  const ServingEstimate tp4 = estimate_serving(arch, r, make_cluster(gpu, 4, 1, 0), 100e9, PerfAssumptions{});
  r.tp = 8;
  const ServingEstimate tp8 = estimate_serving(arch, r, make_cluster(gpu, 8, 1, 0), 100e9, PerfAssumptions{});
  EXPECT_NEAR(tp8.decode_memory_seconds, tp4.decode_memory_seconds / 2, 1e-12);  // bandwidth adds up
  r.quant = WeightQuant::int4;
  const ServingEstimate q4 = estimate_serving(arch, r, make_cluster(gpu, 8, 1, 0), 100e9, PerfAssumptions{});
  EXPECT_LT(q4.tpot_seconds, tp8.tpot_seconds);
}

TEST(PerfServing, PrefillIsComputeBound) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-8b");
  ServingPerfRequest r;
  r.prompt_tokens = 4096;
  const PerfAssumptions a;
  const ServingEstimate e = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 20e9, a);
  // vLLM's profile: two 2048-token chunks, each compute-bound at its prefill efficiency.
  const double eff = engine_profile(ServingEngine::vllm, a).prefill_efficiency_16bit;
  EXPECT_NEAR(e.ttft_seconds, prefill_flops(arch, 4096) / (989.4e12 * eff), 1e-9);
  // llama.cpp: its calibrated efficiency (PerfAssumptions), 512-token micro-batches.
  r.engine = ServingEngine::llama_cpp;
  const ServingEstimate l = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 20e9, a);
  EXPECT_NEAR(l.ttft_seconds, prefill_flops(arch, 4096) / (989.4e12 * a.prefill_efficiency_16bit), 1e-9);
  EXPECT_NEAR(e.prefill_tokens_per_s, 4096 / e.ttft_seconds, 1e-6);
}

TEST(PerfServing, ReplicasAndRequestsPerSecond) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-8b");
  ServingPerfRequest r;
  r.concurrency = 32;
  const ServingEstimate e = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 20e9, PerfAssumptions{});
  // Continuous batching (vLLM): every step yields one token per running sequence; the prefill
  // of successors is inside the step time, so requests/s = batch / (output × tpot).
  EXPECT_NEAR(e.requests_per_s_per_replica, 32.0 / (128 * e.step_seconds), 1e-9);
  // Without it (llama.cpp), one wave per batch: ttft + (output − 1) × tpot.
  ServingPerfRequest rl = r;
  rl.engine = ServingEngine::llama_cpp;
  const ServingEstimate l = estimate_serving(arch, rl, make_cluster(gpu, 1, 1, 0), 20e9, PerfAssumptions{});
  EXPECT_NEAR(l.requests_per_s_per_replica, 32.0 / (l.ttft_seconds + 127 * l.tpot_seconds), 1e-9);
  // TTFT: every prompt of the wave is prefilled before its first decode step (32 × P prompt tokens).
  EXPECT_NEAR(l.ttft_seconds, std::max(l.ttft_prompt_seconds, 128 * l.prefill_seconds_per_step), 1e-12);
  const double rps = e.requests_per_s_per_replica;
  EXPECT_EQ(replicas_needed(e, 2.5 * rps, 0), 3);
  EXPECT_EQ(replicas_needed(e, 0.1 * rps, 0), 1);
  EXPECT_EQ(replicas_needed(e, 0, 3 * e.max_concurrent_sequences + 1), 4);
  const auto lines = explain_serving(arch, r, make_cluster(gpu, 1, 1, 0), 20e9, PerfAssumptions{});
  ASSERT_EQ(lines.back().term, "requests_per_s_per_replica");
  EXPECT_DOUBLE_EQ(lines.back().value, e.requests_per_s_per_replica);
}

TEST(PerfServing, QueueWaitIsTheMDcWaitOfTheSlots) {
  // A hand-made estimate: batch B, a replica finishing mu requests per second, so each request
  // holds one of its B slots for B / mu seconds.
  ServingEstimate e;
  e.batch = 1;
  e.max_concurrent_sequences = 1;
  e.requests_per_s_per_replica = 2.0;  // service 0.5 s
  // M/D/1 (Pollaczek–Khinchine): W = rho / (2 mu (1 − rho)); at 1.5 req/s rho = 0.75:
  // 0.75 / (2 × 2 × 0.25) = 0.75 s.
  EXPECT_NEAR(queue_wait_seconds(e, 1, 1.5), 0.75, 1e-12);
  // Two replicas of one slot: each queues half the arrivals, M/D/1 at rho = 0.375:
  // 0.375 / (2 × 2 × 0.625) = 0.15 s.
  EXPECT_NEAR(queue_wait_seconds(e, 2, 1.5), 0.15, 1e-12);
  // One replica of two slots (M/D/2), a = 1.5 × 1 s = 1.5 Erlang (each request holds a slot 2 / 2 =
  // 1 s), rho = 0.75. Erlang B(2, a) = (a²/2) / (1 + a + a²/2); Erlang C = B / (1 − rho (1 − B));
  // M/M/2 wait = C × 1 / (2 − 1.5); M/D/2 half of it.
  e.batch = 2;
  e.max_concurrent_sequences = 2;
  const double a = 1.5, b = (a * a / 2) / (1 + a + a * a / 2), c = b / (1 - 0.75 * (1 - b));
  EXPECT_NEAR(queue_wait_seconds(e, 1, 1.5), 0.5 * c * 1.0 / (2 - a), 1e-12);
  e.batch = 1;
  e.max_concurrent_sequences = 1;
  // At or past the capacity the queue grows without bound; no rate, no wait.
  EXPECT_TRUE(std::isinf(queue_wait_seconds(e, 1, 2.0)));
  EXPECT_EQ(queue_wait_seconds(e, 3, 0.0), 0.0);
  // A batch of 64 per replica: 64 slots each held 64 / mu seconds. At 99.8% of two replicas'
  // capacity the wait is far above one request's service; one more replica brings it under 1 s.
  e.batch = 64;
  e.max_concurrent_sequences = 64;
  e.requests_per_s_per_replica = 16.0;  // service 4 s
  const double rate = 0.998 * 2 * 16.0;
  EXPECT_EQ(replicas_needed(e, rate, 0), 2);
  EXPECT_GT(queue_wait_seconds(e, 2, rate), 4.0);
  EXPECT_LT(queue_wait_seconds(e, 3, rate), 1e-3);
  EXPECT_EQ(replicas_for_queue_wait(e, rate, 1.0, 2), 3);
  // A rate far below the capacity keeps replicas_needed's count.
  EXPECT_EQ(replicas_for_queue_wait(e, 10.0, 0.01, 1), 1);
  EXPECT_LT(queue_wait_seconds(e, 1, 10.0), 1e-3);  // 64 slots at 62.5%: Erlang C ≈ 1e-4
}

TEST(PerfServing, NoKvRoomMeansNoService) {
  const GpuSpec gpu = h100_like();
  const ModelArch arch = load_preset("llama-3.1-8b");
  ServingPerfRequest r;
  const ServingEstimate e = estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 1e6, PerfAssumptions{});
  EXPECT_EQ(e.max_concurrent_sequences, 0);
  EXPECT_EQ(e.decode_tokens_per_s, 0.0);
  EXPECT_EQ(replicas_needed(e, 1.0, 1), 0);
  r.output_tokens = 0;
  EXPECT_THROW(estimate_serving(arch, r, make_cluster(gpu, 1, 1, 0), 1e9, PerfAssumptions{}), Error);
}

// simulate_batch_job, hand-stepped. Each step costs roofline(1 s weights, 0) = 1 s (all other
// terms 0), so the job's seconds = its steps.
ServingEstimate unit_step_estimate(std::int64_t batch, std::int64_t budget) {
  ServingEstimate e;
  e.batch = batch;
  e.step_token_budget = budget;
  e.weights_memory_seconds = 1.0;
  e.requests_per_s_per_replica = 0.5;
  e.continuous_batching = true;
  return e;
}

TEST(SimulateBatchJob, ShortPromptsRunInWavesOfTheBatch) {
  // B = 2, 3 requests, P = 1, O = 4, budget 100: step 0 prefills both prompts (first tokens),
  // steps 1–3 decode them; step 4 admits the third, steps 5–7 decode it: ceil(3/2) waves × 4 = 8.
  const BatchJobTiming t = simulate_batch_job(unit_step_estimate(2, 100), 3, 1, 4);
  EXPECT_EQ(t.steps, 8);
  EXPECT_DOUBLE_EQ(t.seconds, 8.0);
  EXPECT_EQ(t.prefill_steps, 2);
  EXPECT_EQ(t.simulated_requests, 3);
  EXPECT_DOUBLE_EQ(t.steady_state_seconds, 3 / 0.5);
}

TEST(SimulateBatchJob, ChunkedPrefillStaggersTheBatch) {
  // B = 2, 4 requests, P = 4, O = 3, budget 4 (room = max(4 − d, 1)):
  // s0: admit 2; c = 4 finishes prompt 1 (decodes s1, s2).  s1: d = 1, c = 3 of prompt 2.
  // s2: c = 1 finishes prompt 2 (to s4); prompt 1 done.     s3: admit 3, c = 3.
  // s4: c = 1 finishes 3 (to s6); 2 done.                    s5: admit 4, c = 3.
  // s6: c = 1 finishes 4 (to s8); 3 done.  s7: d = 1.  s8: 4 done → 9 steps, 7 with prompts,
  // d = 0,1,1,1,1,1,1,1,1.
  const BatchJobTiming t = simulate_batch_job(unit_step_estimate(2, 4), 4, 4, 3);
  EXPECT_EQ(t.steps, 9);
  EXPECT_DOUBLE_EQ(t.seconds, 9.0);
  EXPECT_EQ(t.prefill_steps, 7);
  EXPECT_NEAR(t.mean_decode_batch, 8.0 / 9.0, 1e-12);
}

TEST(SimulateBatchJob, LongJobsAreASimulatedPrefixTimesTheirShare) {
  // B = 2, P = 1, O = 4, budget 100: waves of 2 requests in 4 steps (above). The cap is
  // floor(400000 steps / (4 + ceil(2 × 1 / 100) = 5 steps per wave)) = 80000 waves = 160000
  // requests; a job of 1e6 requests is that prefix scaled: 80000 waves × 4 s × 1e6 / 160000.
  const ServingEstimate e = unit_step_estimate(2, 100);
  EXPECT_EQ(batch_job_simulated_requests(e, 1'000'000, 1, 4), 160000);
  EXPECT_EQ(batch_job_simulated_requests(e, 3, 1, 4), 3);  // short jobs are simulated whole
  const BatchJobTiming whole = simulate_batch_job(e, 1'000'000, 1, 4);
  EXPECT_EQ(whole.simulated_requests, 160000);
  EXPECT_DOUBLE_EQ(whole.seconds, 80000.0 * 4.0 * 1e6 / 160000.0);
  // The planner times 1, 2, 4 … instances from one simulation of the prefix: the same numbers.
  const BatchJobTiming prefix = simulate_batch_job(e, 160000, 1, 4);
  for (const std::int64_t requests : {std::int64_t{160000}, std::int64_t{500000}, std::int64_t{1'000'000}}) {
    const BatchJobTiming scaled = batch_job_scaled(prefix, e, requests);
    const BatchJobTiming direct = simulate_batch_job(e, requests, 1, 4);
    EXPECT_DOUBLE_EQ(scaled.seconds, direct.seconds) << requests;
    EXPECT_DOUBLE_EQ(scaled.steady_state_seconds, direct.steady_state_seconds) << requests;
    EXPECT_EQ(scaled.steps, direct.steps) << requests;
  }
}

TEST(SimulateBatchJob, RejectsEmptyJobs) {
  EXPECT_THROW((void)simulate_batch_job(unit_step_estimate(2, 4), 0, 4, 3), Error);
  EXPECT_THROW((void)simulate_batch_job(unit_step_estimate(0, 4), 4, 4, 3), Error);
}

}  // namespace
}  // namespace gpuplan
