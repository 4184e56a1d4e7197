#pragma once
/// The one set of workload defaults and accepted spellings shared by `gpuplan size`, `plan`,
/// `estimate` and the JSON API (docs/planner.md "Defaults and vocabulary"). Every command takes
/// its defaults from here, so the same flags mean the same workload everywhere: with no --task
/// and no --seq, `size` and `plan` size the same LoRA run of 4096-token sequences.
///
/// Why these values: LoRA is what most teams renting GPUs run on an open model (the planner's
/// first question is usually "where do I fine-tune"); 4096 tokens is the native context of
/// Llama 2 and a common fine-tuning sequence length (Llama 3 pretrained at 8192); rank 16 on all
/// linear layers is the QLoRA paper's recommendation of adapting every linear layer (Dettmers et
/// al. 2023 §4) at a common rank; bf16 mixed precision with AdamW is the default of Megatron-LM,
/// torchtune and Hugging Face recipes for current GPUs. Serving: bf16 weights and KV cache.
///
/// The spellings each flag accepts are the parse_* tables of sizing/memory.hpp (one parser for
/// every command); the *_help strings below list them once for every command's --help.
#include <cstdint>
#include <string_view>

#include "sizing/memory.hpp"

namespace gpuplan::workload_defaults {

inline constexpr Task kTask = Task::lora;
inline constexpr std::int64_t kSeqLen = 4096;  ///< tokens per training sequence
inline constexpr int kMicroBatch = 1;          ///< sequences per micro-batch per GPU
inline constexpr TrainPrecision kPrecision = TrainPrecision::bf16_mixed;
inline constexpr Optimizer kOptimizer = Optimizer::adamw;
inline constexpr int kLoraRank = 16;
inline constexpr WeightQuant kQuant = WeightQuant::bf16;
inline constexpr KvDtype kKvDtype = KvDtype::bf16;

inline constexpr std::string_view kTrainTaskHelp = "pretrain, full, lora (default) or qlora";
inline constexpr std::string_view kPrecisionHelp =
    "bf16 (default; = bf16_mixed), bf16_pure, fp16 (= fp16_mixed), fp8 (= fp8_mixed), tf32, fp32";
inline constexpr std::string_view kOptimizerHelp = "adamw (default), adamw_8bit, sgd_momentum, adafactor, lion";
inline constexpr std::string_view kQuantHelp =
    "bf16 (default), fp16, fp8, int8, int4 (= awq, gptq), nf4, q4_k_m, q8_0, q4_0, q2_k, mxfp4 (gguf_ prefix optional)";
inline constexpr std::string_view kKvDtypeHelp = "bf16 (default), fp16, fp8, int8, int4, q8_0";
inline constexpr std::string_view kRecomputeHelp = "none, selective, full, op-selective";

/// A TrainingMemoryRequest with the defaults above (the rest are sizing/memory.hpp's).
inline TrainingMemoryRequest default_training_memory_request() {
  TrainingMemoryRequest t;
  t.task = kTask;
  t.seq_len = kSeqLen;
  t.layout.micro_batch = kMicroBatch;
  t.precision = kPrecision;
  t.optimizer = kOptimizer;
  t.lora_rank = kLoraRank;
  return t;
}

/// A ServingMemoryRequest with the defaults above.
inline ServingMemoryRequest default_serving_memory_request() {
  ServingMemoryRequest s;
  s.quant = kQuant;
  s.kv_dtype = kKvDtype;
  return s;
}

}  // namespace gpuplan::workload_defaults
