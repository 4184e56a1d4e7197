// The HTML pages. Every page is a mustache template (web/templates/NAME.mustache) rendered into
// web/templates/layout.mustache, with the texts of one locale (web/locales/{en,fr,th}.json, under
// `t`) and the numbers of the api layer's use cases, formatted for that locale here. The language
// comes from the URL (/fr/..., /th/..., /en/...), else Accept-Language, else English; every page
// links to itself in the other languages. No CDN, no external font: one CSS and one JS file served
// from the binary.
#include "server/pages.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <kainjow/mustache.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <tuple>

#include "api/assistant.hpp"
#include "api/catalog_reads.hpp"
#include "api/context.hpp"
#include "api/estimate.hpp"
#include "api/plan.hpp"
#include "api/serving_reference.hpp"
#include "api/size.hpp"
#include "catalog/filter.hpp"
#include "model/model_source.hpp"
#include "model/presets.hpp"
#include "server/openapi.hpp"
#include "server/response_cache.hpp"
#include "server/server.hpp"
#include "util/calendar.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan::server {

using nlohmann::json;
namespace mst = kainjow::mustache;

namespace {

const std::vector<std::string> kLanguages = {"en", "fr", "th"};

// ---- locale formatting ----------------------------------------------------------------------

/// Groups digits: en/th "1,234.5", fr "1 234,5" (narrow no-break space, decimal comma).
std::string number(double v, int decimals, const std::string& lang) {
  if (!std::isfinite(v)) return "∞";
  std::string s = fmt::format("{:.{}f}", std::abs(v), decimals);
  std::string intpart = s.substr(0, s.find('.'));
  std::string frac = s.find('.') == std::string::npos ? "" : s.substr(s.find('.') + 1);
  const std::string sep = lang == "fr" ? "\u202f" : ",";
  std::string grouped;
  for (std::size_t i = 0; i < intpart.size(); ++i) {
    if (i > 0 && (intpart.size() - i) % 3 == 0) grouped += sep;
    grouped += intpart[i];
  }
  std::string out = (v < 0 ? "-" : "") + grouped;
  if (!frac.empty()) out += (lang == "fr" ? "," : ".") + frac;
  return out;
}

/// A count or rate as the locale groups it: 2e8 → en/th "200,000,000", fr "200 000 000" (narrow
/// no-break spaces); a fraction keeps up to 3 significant decimals ("0.5", fr "0,5").
std::string count_text(double v, const std::string& lang) {
  if (!std::isfinite(v)) return "∞";
  if (std::abs(v) >= 1e15 || std::floor(v) == v) return number(v, 0, lang);
  const int decimals = std::abs(v) >= 100 ? 0 : std::abs(v) >= 10 ? 1 : std::abs(v) >= 1 ? 2 : 3;
  std::string s = number(v, decimals, lang);
  const char dot = lang == "fr" ? ',' : '.';
  if (s.find(dot) != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == dot) s.pop_back();
  }
  return s;
}

std::string money(double usd, const std::string& lang, int small_decimals = 2) {
  const int dec = std::abs(usd) >= 100 ? 0 : std::abs(usd) >= 1 ? 2 : small_decimals;
  if (lang == "fr") return number(usd, dec, lang) + "\u00a0$";
  if (lang == "th") return "US$" + number(usd, dec, lang);
  return "$" + number(usd, dec, lang);
}

std::string money_opt(const json& v, const std::string& lang, const json& t) {
  return v.is_number() ? money(v.get<double>(), lang) : t.value("unknown", "unknown");
}

/// "2026-11-30" → en "Nov 30, 2026", fr "30 nov. 2026", th "30 พ.ย. 2569" (Buddhist era).
std::string date_text(const std::string& iso, const std::string& lang, const json& t) {
  if (iso.size() < 10) return t.value("undated", "undated");
  const int y = std::atoi(iso.substr(0, 4).c_str()), m = std::atoi(iso.substr(5, 2).c_str()),
            d = std::atoi(iso.substr(8, 2).c_str());
  if (m < 1 || m > 12) return iso;
  static const char* en[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  static const char* fr[] = {"janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."};
  static const char* th[] = {"ม.ค.", "ก.พ.", "มี.ค.", "เม.ย.", "พ.ค.", "มิ.ย.", "ก.ค.", "ส.ค.", "ก.ย.", "ต.ค.", "พ.ย.", "ธ.ค."};
  if (lang == "fr") return fmt::format("{} {} {}", d, fr[m - 1], y);
  if (lang == "th") return fmt::format("{} {} {}", d, th[m - 1], y + 543);
  return fmt::format("{} {}, {}", en[m - 1], d, y);
}

std::string duration(double s, const std::string& lang, const json& t) {
  if (!std::isfinite(s)) return "∞";
  if (s < 2 * 3600) return number(s / 60, 0, lang) + " " + t.value("unit_min", "min");
  if (s < 2 * 86400) return number(s / 3600, 1, lang) + " " + t.value("unit_h", "h");
  return number(s / 86400, 1, lang) + " " + t.value("unit_d", "d");
}

/// Memory in decimal gigabytes with the locale's unit symbol: "GB" (en, th), "Go" (fr: gigaoctet).
std::string gb(double bytes, const std::string& lang) {
  return number(bytes / 1e9, 1, lang) + (lang == "fr" ? "\u00a0Go" : " GB");
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// A memory term's name ("kv_cache") as the page's language says it ("KV cache", "cache KV").
std::string term_label(const std::string& name, const json& t) { return t.value("term_" + name, name); }

/// An explain line's label: "memory.X" reads as the memory term X; any other term (e.g.
/// "cost.total_usd") reads through the key "explain_cost_total_usd"; the code itself when no key.
std::string explain_label(const std::string& term, const json& t) {
  if (term.rfind("memory.", 0) == 0) return term_label(term.substr(7), t);
  std::string key = "explain_" + term;
  std::replace(key.begin(), key.end(), '.', '_');
  return t.value(key, term);
}

/// The fixed words of the engine's explanation texts (a formula or a source of an explain line,
/// written in English around numbers, units, symbols, names and citations), each with the locale
/// key that says it in the page's language (web/locales/*.json "xp_..."). The engine names its own
/// models in words ("gpuplan memory model", "the offer’s listing, else the GPU datasheet"), never a
/// repository file (trial 10c: the CLI and the API showed "sizing/memory.hpp", "data/gpus.csv"). A French
/// or Thai page showed these texts with their English words stripped ("NVIDIA B200 (HGX) GPU,
/// 162.0 GB 10%", "/ data/gpus.csv": trial of issue 10, D7 and D9d); tests/e2e/web10_e2e_test.cpp.
struct ExplainPhrase {
  std::string_view english;
  std::string_view key;
};
constexpr ExplainPhrase kExplainPhrases[] = {
    {"the offer’s listing, else the GPU datasheet", "xp_offer_data_gpus_csv"},
    {"PyTorch caching-allocator slack (reserved − allocated) as a fraction of the per-step (dynamic) allocations", "xp_pytorch_allocator_slack_fraction"},
    {"PyTorch CUDA semantics", "xp_pytorch_cuda_semantics"},
    {"PyTorch DDP gradient buckets", "xp_pytorch_ddp_gradient_buckets"},
    {"share of communication hidden behind compute", "xp_share_of_communication_hidden_behind_compute"},
    {"measured on an H200", "xp_measured_on_an_h200"},
    {"16-bit logits + fp32 log-softmax + fp32 grad", "xp_16bit_logits_fp32_log_softmax_fp32_grad"},
    {"ring 2(n−1)/n · bytes", "xp_ring_2n_1_n_bytes"},
    // Trial 10c: the French page read "1,5 × DP volume", "Megatron-Bridge tableaux", "à porte MLP",
    // "ZeRO-3/FSDP rassemblement" and "…·jetons·bytes": these phrases keep the locale's word order.
    {"ZeRO-3 = 1.5 × DP volume", "xp_zero3_1_5_dp_volume"},
    {"Megatron-Bridge tables", "xp_megatron_bridge_tables"},
    {"gated MLP", "xp_gated_mlp"},
    {"ZeRO-3/FSDP gather", "xp_zero3_fsdp_gather"},
    {"bytes", "xp_bytes"},
    {"gpuplan goodput model:", "xp_sizing_goodput_hpp"},
    {"gpuplan cost model", "xp_planner_cost_cpp_price_job"},
    {"(gpuplan billing rule)", "xp_planner_cost_hpp_billed_seconds"},
    {"gpuplan spot model", "xp_planner_cost_hpp_spot_overhead"},
    {"gpuplan memory model", "xp_sizing_memory_hpp"},
    {"gpuplan’s H200 measurements", "xp_tests_data_h200_measurements_jsonl"},
    {"gpuplan FLOP model", "xp_flops_hpp"},
    {"gpuplan performance model", "xp_perf_hpp"},
    {"docs/sizing.md", "xp_docs_sizing_md"},
    {"docs/accuracy.md", "xp_docs_accuracy_md"},
    {"docs/performance-model.md", "xp_docs_performance_model_md"},
    {"gpuplan serving model", "xp_sizing_serving_perf_hpp_replicas_needed"},
    {"gpuplan serving search:", "xp_planner_cpp_search_serving"},
    {"assumption (start-up minutes input)", "xp_assumption_planrequest_startup_seconds"},
    {"--startup-minutes", "xp_startup_minutes"},
    {"startup_minutes", "xp_startup_minutes_2"},
    {"--egress-gb", "xp_egress_gb"},
    {"--eval-fraction", "xp_eval_fraction"},
    {"eval_fraction", "xp_eval_fraction_2"},
    {"--mfu replaces the modelled step time", "xp_mfu_replaces_the_modelled_step_time"},
    {"sum of the memory terms above", "xp_sum_of_the_memory_terms_above"},
    {"sum of the terms above", "xp_sum_of_the_terms_above"},
    {"work + the goodput terms above", "xp_work_the_goodput_terms_above"},
    {"the goodput terms above", "xp_the_goodput_terms_above"},
    {"billed on every instance", "xp_billed_on_every_instance"},
    {"provider billing terms", "xp_provider_billing_terms"},
    {"provider storage price", "xp_provider_storage_price"},
    {"provider egress price", "xp_provider_egress_price"},
    {"730 h per month", "xp_730_h_per_month"},
    {"storage price unknown: not counted", "xp_storage_price_unknown_not_counted"},
    {"egress price unknown: not counted", "xp_egress_price_unknown_not_counted"},
    {"compute + storage + egress + spot loss", "xp_compute_storage_egress_spot_loss"},
    {"weights + CUDA context + fragmentation", "xp_weights_cuda_context_fragmentation"},
    {"dataset + checkpoint", "xp_dataset_checkpoint"},
    {"(or the served weights)", "xp_or_the_served_weights"},
    {"the served weights", "xp_the_served_weights"},
    {"the LoRA adapter", "xp_the_lora_adapter"},
    {"(the frozen base is not downloaded)", "xp_frozen_base_not_downloaded"},
    {"generated outputs not counted (--egress-gb adds them)", "xp_generated_outputs_not_counted"},
    {"B per token id", "xp_b_per_token_id"},
    {"pre-tokenised dataset (Megatron-LM indexed dataset dtype: uint16 below 65,536 tokens in the vocabulary)",
     "xp_pretokenised_dataset"},
    {"checkpoint = weights + master weights + optimizer state", "xp_checkpoint_is_weights_master_optimizer"},
    {"free allowance", "xp_free_allowance"},
    {"seen", "xp_seen"},
    {"vocabulary", "xp_vocabulary"},
    {"the final weights", "xp_the_final_weights"},
    {"with the", "xp_with_the"},
    {"per GPU-hour", "xp_per_gpu_hour"},
    {"per instance-day", "xp_per_instance_day"},
    {"per GPU", "xp_per_gpu"},
    {"per token per layer", "xp_per_token_per_layer"},
    {"per layer per token", "xp_per_layer_per_token"},
    {"per step", "xp_per_step"},
    {"GB-month", "xp_gb_month"},
    {"per month", "xp_per_month"},
    {"per replica", "xp_per_replica"},
    {"per sequence", "xp_per_sequence"},
    {"per node", "xp_per_node"},
    {"per layer", "xp_per_layer"},
    {"per token", "xp_per_token"},
    {"per request", "xp_per_request"},
    {"per format", "xp_per_format"},
    {"per hour", "xp_per_hour"},
    {"per micro-batch", "xp_per_micro_batch"},
    {"per adapted matrix", "xp_per_adapted_matrix"},
    {"per ZeRO", "xp_per_zero"},
    {"per-step", "xp_per_step_2"},
    {"per-level", "xp_per_level"},
    {"per-GPU constant", "xp_per_gpu_constant"},
    {"micro-batches", "xp_micro_batches"},
    {"micro-batch", "xp_micro_batch"},
    {"in flight", "xp_in_flight"},
    {"on this GPU", "xp_on_this_gpu"},
    {"on the stage", "xp_on_the_stage"},
    {"of the adapters only", "xp_of_the_adapters_only"},
    {"over targeted matrices", "xp_over_targeted_matrices"},
    {"read+written", "xp_read_written"},
    {"of per-step allocations", "xp_of_per_step_allocations"},
    {"of workspace", "xp_of_workspace"},
    {"one layer recomputed", "xp_one_layer_recomputed"},
    {"full recompute", "xp_full_recompute"},
    {"busiest pipeline rank", "xp_busiest_pipeline_rank"},
    {"the mean rank", "xp_the_mean_rank"},
    {"output layer", "xp_output_layer"},
    {"bubble fraction", "xp_bubble_fraction"},
    {"no pipeline bubble", "xp_no_pipeline_bubble"},
    {"no pipeline transfers", "xp_no_pipeline_transfers"},
    {"no all-reduces", "xp_no_all_reduces"},
    {"no tensor-parallel communication", "xp_no_tensor_parallel_communication"},
    {"no gradient all-reduce", "xp_no_gradient_all_reduce"},
    {"no expert parallelism", "xp_no_expert_parallelism"},
    {"parameters not gathered", "xp_parameters_not_gathered"},
    {"ZeRO stage", "xp_zero_stage"},
    {"after the last backward: not overlapped", "xp_after_the_last_backward_not_overlapped"},
    {"backward of the last micro-batch", "xp_backward_of_the_last_micro_batch"},
    {"compute per micro-batch", "xp_compute_per_micro_batch"},
    {"communication hides behind up to", "xp_communication_hides_behind_up_to"},
    {"of the compute it overlaps; only the excess adds to the step", "xp_of_the_compute_it_overlaps_only_the_excess_adds_"},
    {"exposed comm", "xp_exposed_comm"},
    {"exposed", "xp_exposed"},
    {"GPU busy", "xp_gpu_busy"},
    {"LoRA adapters' gradients", "xp_lora_adapters_gradients"},
    {"adapter params", "xp_adapter_params"},
    {"frozen base", "xp_frozen_base"},
    {"linear params", "xp_linear_params"},
    {"embedding/head/norm params", "xp_embedding_head_norm_params"},
    {"embedding/norm params", "xp_embedding_norm_params"},
    {"QLoRA dequantised matrix", "xp_qlora_dequantised_matrix"},
    {"QLoRA de-quantisation", "xp_qlora_de_quantisation"},
    {"largest linear", "xp_largest_linear"},
    {"double quantisation", "xp_double_quantisation"},
    {"adamw state", "xp_adamw_state"},
    {"KV capacity", "xp_kv_capacity"},
    {"KV cache", "xp_kv_cache"},
    {"mean context", "xp_mean_context"},
    {"prompt tokens", "xp_prompt_tokens"},
    {"token budget", "xp_token_budget"},
    {"minus the running batch", "xp_minus_the_running_batch"},
    {"weights/KV read", "xp_weights_kv_read"},
    {"batch decode", "xp_batch_decode"},
    {"chunk compute", "xp_chunk_compute"},
    {"prefill chunk", "xp_prefill_chunk"},
    {"tokens/s aggregate", "xp_tokens_s_aggregate"},
    {"meets the default target", "xp_meets_the_default_target"},
    {"at batch", "xp_at_batch"},
    {"fixed cluster holds the load, then the latency target, then the fewest instances", "xp_fixed_cluster_holds_the_load_then_the_latency_ta"},
    {"failures per GPU-hour", "xp_failures_per_gpu_hour"},
    {"failure rate", "xp_failure_rate"},
    {"lost work", "xp_lost_work"},
    {"work with spot overhead", "xp_work_with_spot_overhead"},
    {"wall time", "xp_wall_time"},
    {"work time", "xp_work_time"},
    {"uninterrupted work", "xp_uninterrupted_work"},
    {"billed wall", "xp_billed_wall"},
    {"billed work", "xp_billed_work"},
    {"the offer's minimum", "xp_the_offer_s_minimum"},
    {"of them idle", "xp_of_them_idle"},
    {"no preemption, so no lost work, restart or checkpoint against one", "xp_no_preemption_so_no_lost_work_restart_or_checkpo"},
    {"preemptions per instance-day", "xp_preemptions_per_instance_day"},
    {"a rate of 0", "xp_a_rate_of_0"},
    {"Young/Daly overhead priced at the spot rate", "xp_young_daly_overhead_priced_at_the_spot_rate"},
    {"first order", "xp_first_order"},
    {"any instance's preemption stops a synchronous job", "xp_any_instance_s_preemption_stops_a_synchronous_jo"},
    {"cluster start, container and weights load before the first step", "xp_cluster_start_container_and_weights_load_before_"},
    {"global batch rounded from", "xp_global_batch_rounded_from"},
    {"to a multiple of DP × micro-batch", "xp_to_a_multiple_of_dp_micro_batch"},
    {"model FLOP", "xp_model_flop"},
    {"images per hour", "xp_images_per_hour"},
    {"VAE decode and text encoders not counted", "xp_vae_decode_and_text_encoders_not_counted"},
    {"independent images per GPU", "xp_independent_images_per_gpu"},
    {"data parallel", "xp_data_parallel"},
    {"text tokens", "xp_text_tokens"},
    {"is an uncalibrated assumption", "xp_is_an_uncalibrated_assumption"},
    {"compute-bound denoising", "xp_compute_bound_denoising"},
    {"steady state of continuous batching", "xp_steady_state_of_continuous_batching"},
    {"at the pool's steady rate", "xp_at_the_pools_steady_rate"},
    {"one output token: the steady-state step, not a time between tokens", "xp_one_output_token_steady_step"},
    {"at least one steady-state step of", "xp_at_least_one_steady_state_step"},
    {"at least the wave's prefill", "xp_at_least_the_waves_prefill"},
    {"sum over the steps of", "xp_sum_over_the_steps_of"},
    {"step rule of", "xp_step_rule_of"},
    {"requests per replica", "xp_requests_per_replica"},
    {"waves", "xp_waves"},
    {"requests finish per step and their successors' prompts are prefilled in the same steps", "xp_requests_finish_per_step_and_their_successors_pr"},
    {"Little's law", "xp_little_s_law"},
    {"time per request", "xp_time_per_request"},
    {"of the mixed decode + prefill step", "xp_of_the_mixed_decode_prefill_step"},
    {"of the steady-state decode + prefill step", "xp_of_the_steady_state_decode_prefill_step"},
    {"soft roofline", "xp_soft_roofline"},
    {"other slots", "xp_other_slots"},
    {"its own prompt: in the TTFT", "xp_its_own_prompt_in_the_ttft"},
    {"sustained", "xp_sustained"},
    {"fewest replicas whose mean queue wait is at most", "xp_fewest_replicas_whose_mean_queue_wait"},
    {"mean queue wait before the first token", "xp_mean_queue_wait_before_the_first_token"},
    {"each replica queueing its share", "xp_each_replica_queueing_its_share"},
    {"slots per replica", "xp_slots_per_replica"},
    {"fixed cluster; load needs", "xp_fixed_cluster_load_needs"},
    {"slot time", "xp_slot_time"},
    {"offered load", "xp_offered_load"},
    {"slots busy", "xp_slots_busy"},
    {"req/s per replica", "xp_req_s_per_replica"},
    {"for deterministic service", "xp_for_deterministic_service"},
    {"exact for", "xp_exact_for"},
    {"decode is memory-bound at small batch", "xp_decode_is_memory_bound_at_small_batch"},
    {"efficiency calibrated on", "xp_efficiency_calibrated_on"},
    {"calibrated on our H200 runs", "xp_calibrated_on_our_h200_runs"},
    {"calibrated on", "xp_calibrated_on"},
    {"eager PyTorch host time, hidden while the GPU is busy", "xp_eager_pytorch_host_time_hidden_while_the_gpu_is_"},
    {"caching-allocator slack", "xp_caching_allocator_slack"},
    {"as a fraction of the", "xp_as_a_fraction_of_the"},
    {"dynamic", "xp_dynamic"},
    {"allocations", "xp_allocations"},
    {"CUDA context + kernels", "xp_cuda_context_kernels"},
    {"CUDA semantics", "xp_cuda_semantics"},
    {"model training anatomy", "xp_model_training_anatomy"},
    {"cross-entropy over the vocabulary", "xp_cross_entropy_over_the_vocabulary"},
    {"generalised to", "xp_generalised_to"},
    {"the efficiency above is the FLOP-weighted one", "xp_the_efficiency_above_is_flop_weighted"},
    {"less compute per GPU on the mean rank", "xp_less_compute_per_gpu_on_the_mean_rank"},
    {"V·h GEMMs, fused cross-entropy", "xp_vh_gemms_fused_cross_entropy"},
    {"without the width factor", "xp_without_the_width_factor"},
    {"for the layers", "xp_for_the_layers"},
    {"the LM head", "xp_the_lm_head"},
    {"fused kernels", "xp_fused_kernels"},
    {"kernel efficiency", "xp_kernel_efficiency"},
    {"eager stack", "xp_eager_stack"},
    {"GPU generation", "xp_gpu_generation"},
    {"routed experts", "xp_routed_experts"},
    {"of the FLOPs", "xp_of_the_flops"},
    {"fixed dispatch time", "xp_fixed_dispatch_time"},
    {"PCIe collectives: NCCL bus bandwidth of 4 / 8 PCIe GPUs", "xp_pcie_collectives_nccl_bus_bandwidth"},
    {"Transformer Engine partial CUDA graphs", "xp_transformer_engine_partial_cuda_graphs"},
    {"full-iteration CUDA graph", "xp_full_iteration_cuda_graph"},
    {"Transformer Engine partial CUDA graphs asked: eager on a non-NVIDIA GPU", "xp_te_graphs_asked_eager_non_nvidia"},
    {"full-iteration CUDA graph asked: eager on a non-NVIDIA GPU", "xp_full_iteration_asked_eager_non_nvidia"},
    {"intra-node over Infinity Fabric, off-node share over the network", "xp_intra_node_over_infinity_fabric"},
    {"less the expert half of", "xp_less_the_expert_half_of"},
    {"expert gradients", "xp_expert_gradients"},
    {"edp 1, not reduced", "xp_edp1_not_reduced"},
    {"dense parameters per GPU over dp", "xp_dense_params_per_gpu_over_dp"},
    {"expert parameters over edp", "xp_expert_params_over_edp"},
    {"(gathers forward + backward + gradient reduce-scatter)", "xp_gathers_fwd_bwd_reduce_scatter"},
    {"(gathers forward + backward, frozen base)", "xp_gathers_fwd_bwd_frozen_base"},
    {"ZeRO-3: the gradients are reduce-scattered within the ZeRO-3 gather term", "xp_zero3_grads_in_gather"},
    {"2 all-reduces forward + 2 backward per layer", "xp_two_allreduces_fwd_two_bwd_per_layer"},
    {"kept of", "xp_kept_of"},
    {"per sequence read and written", "xp_per_sequence_read_and_written"},
    {"SSM state", "xp_ssm_state"},
    {"of the link", "xp_of_the_link"},
    {"of the network", "xp_of_the_network"},
    {"across nodes", "xp_across_nodes"},
    {"GPUs", "xp_gpus_plural"},
    {"the slower phase sets it", "xp_the_slower_phase_sets_it"},
    {"MoE layers", "xp_moe_layers"},
    {"all-to-alls", "xp_all_to_alls"},
    {"sent per GPU", "xp_sent_per_gpu"},
    {"off-node", "xp_off_node"},
    {"each all-to-all", "xp_each_all_to_all"},
    {"the on-node share over", "xp_the_on_node_share_over"},
    {"the off-node share over", "xp_the_off_node_share_over"},
    {"run together, the slower sets it", "xp_run_together_the_slower_sets_it"},
    {"load imbalance", "xp_load_imbalance"},
    {"network copies", "xp_network_copies"},
    {"NVLink copies", "xp_nvlink_copies"},
    {"experts sit on", "xp_experts_sit_on"},
    {"nodes on average", "xp_nodes_on_average"},
    {"asked, alltoall timed:", "xp_asked_alltoall_timed"},
    {"DeepEP/HybridEP run on NVIDIA GPUs only", "xp_deepep_hybridep_nvidia_only"},
    {"overlapped with compute", "xp_overlapped_with_compute"},
    {"the host launches one graph per step, no per-layer host time (and no MoE dispatch sync)", "xp_host_launches_one_graph_per_step"},
    {"ms per MoE layer per micro-batch", "xp_ms_per_moe_layer_per_micro_batch"},
    {"dispatcher", "xp_dispatcher"},
    {"element-wise update", "xp_element_wise_update"},
    {"all-reduces forward", "xp_all_reduces_forward"},
    {"ring all-reduce of", "xp_ring_all_reduce_of"},
    {"all-reduce of", "xp_all_reduce_of"},
    {"hierarchical, slower phase dominates", "xp_hierarchical_slower_phase_dominates"},
    {"dispatch/combine all-to-all", "xp_dispatch_combine_all_to_all"},
    {"intra-node over NVLink, off-node share over the network", "xp_intra_node_over_nvlink_off_node_share_over_the_n"},
    {"intra-node over PCIe, off-node share over the network", "xp_intra_node_over_pcie_off_node_share_over_the_net"},
    {"ZeRO-3 with dp = 1: one shard holds everything, nothing gathered", "xp_zero3_dp1_nothing_gathered"},
    {"experts' grads reduced over dp/ep only", "xp_experts_grads_reduced_over_dp_ep_only"},
    {"scatter/gather over TP ranks", "xp_scatter_gather_over_tp_ranks"},
    {"interleaved", "xp_interleaved"},
    {"slots last as long as the slowest stage", "xp_slots_last_as_long_as_the_slowest_stage"},
    {"puts the output layer and loss on the last stage", "xp_puts_the_output_layer_and_loss_on_the_last_stage"},
    {"weight bits", "xp_weight_bits"},
    {"activations of one prefill chunk", "xp_activations_of_one_prefill_chunk"},
    {"chunked prefill", "xp_chunked_prefill"},
    {"sampler logits", "xp_sampler_logits"},
    {"prefetch of gathered layers", "xp_prefetch_of_gathered_layers"},
    {"dequant buffer", "xp_dequant_buffer"},
    {"generated token", "xp_generated_token"},
    {"residual + max(attention, MLP) intermediates", "xp_residual_max_attention_mlp_intermediates"},
    {"logits/probabilities", "xp_logits_probabilities"},
    {"convolutions + projections", "xp_convolutions_projections"},
    {"above", "xp_above"},
    {"activations", "xp_activations"},
    {"adapters", "xp_adapters"},
    {"adapter", "xp_adapter"},
    {"after", "xp_after"},
    {"aggregate", "xp_aggregate"},
    {"all-reduces", "xp_all_reduces"},
    {"and", "xp_and"},
    {"any", "xp_any"},
    {"assumption", "xp_assumption"},
    {"backward", "xp_backward"},
    {"base", "xp_base"},
    {"batch", "xp_batch"},
    {"before", "xp_before"},
    {"billed", "xp_billed"},
    {"bits", "xp_bits"},
    {"bubble", "xp_bubble"},
    {"buckets", "xp_buckets"},
    {"busy", "xp_busy"},
    {"bwd", "xp_bwd"},
    {"fwd", "xp_fwd"},
    {"chunks", "xp_chunks"},
    {"chunk", "xp_chunk"},
    {"checkpoint", "xp_checkpoint"},
    {"checkpoints", "xp_checkpoints"},
    {"combine", "xp_combine"},
    {"communication", "xp_communication"},
    {"compute", "xp_compute"},
    {"concurrency", "xp_concurrency"},
    {"context", "xp_context"},
    {"cost", "xp_cost"},
    {"data", "xp_data"},
    {"decode", "xp_decode"},
    {"default", "xp_default"},
    {"efficiency", "xp_efficiency"},
    {"egress", "xp_egress"},
    {"engine", "xp_engine"},
    {"evaluations", "xp_evaluations"},
    {"every", "xp_every"},
    {"experts", "xp_experts"},
    {"failures", "xp_failures"},
    {"format", "xp_format"},
    {"forward", "xp_forward"},
    {"fraction", "xp_fraction"},
    {"fragmentation", "xp_fragmentation"},
    {"free", "xp_free"},
    {"gradients", "xp_gradients"},
    {"grad", "xp_grad"},
    {"head", "xp_head"},
    {"host", "xp_host"},
    {"images", "xp_images"},
    {"instance", "xp_instance"},
    {"instances", "xp_instances"},
    {"interval", "xp_interval"},
    {"intra", "xp_intra"},
    {"layers", "xp_layers"},
    {"layer", "xp_layer"},
    {"loss", "xp_loss"},
    {"margin", "xp_margin"},
    {"memory", "xp_memory"},
    {"memory-bound", "xp_memory_bound"},
    {"minimum", "xp_minimum"},
    {"network", "xp_network"},
    {"nodes", "xp_nodes"},
    {"node", "xp_node"},
    {"of", "xp_of"},
    {"on", "xp_on"},
    {"only", "xp_only"},
    {"optimizer", "xp_optimizer"},
    {"or", "xp_or"},
    {"output", "xp_output"},
    {"over", "xp_over"},
    {"overhead", "xp_overhead"},
    {"parameters", "xp_parameters"},
    {"params", "xp_params"},
    {"per", "xp_per"},
    {"pixels", "xp_pixels"},
    {"preemptions", "xp_preemptions"},
    {"prefill", "xp_prefill"},
    {"price", "xp_price"},
    {"prompt", "xp_prompt"},
    {"rank", "xp_rank"},
    {"recompute", "xp_recompute"},
    {"replicas", "xp_replicas"},
    {"replica", "xp_replica"},
    {"restarts", "xp_restarts"},
    {"ring", "xp_ring"},
    {"semantics", "xp_semantics"},
    {"sequences", "xp_sequences"},
    {"sequence", "xp_sequence"},
    {"stack", "xp_stack"},
    {"start-up", "xp_start_up"},
    {"states", "xp_states"},
    {"steps", "xp_steps"},
    {"step", "xp_step"},
    {"storage", "xp_storage"},
    {"stored", "xp_stored"},
    {"tables", "xp_tables"},
    {"term", "xp_term"},
    {"terms", "xp_terms"},
    {"then", "xp_then"},
    {"to", "xp_to"},
    {"tokens", "xp_tokens"},
    {"token", "xp_token"},
    {"update", "xp_update"},
    {"users", "xp_users"},
    {"usable", "xp_usable"},
    {"vocab", "xp_vocab"},
    {"vs", "xp_vs"},
    {"wall", "xp_wall"},
    {"weights", "xp_weights"},
    {"with", "xp_with"},
    {"work", "xp_work"},
    {"workspace", "xp_workspace"},
    {"training", "xp_training"},
    {"unknown", "xp_unknown"},
    {"for", "xp_for"},
    {"at", "xp_at"},
    {"in", "xp_in"},
    {"is", "xp_is"},
    {"see", "xp_see"},
    {"as in", "xp_as_in"},
    {"as", "xp_as"},
    {"not counted", "xp_not_counted"},
    {"largest", "xp_largest"},
    {"matrix", "xp_matrix"},
    {"mixed", "xp_mixed"},
    {"slower", "xp_slower"},
    {"load", "xp_load"},
    {"latency", "xp_latency"},
    {"target", "xp_target"},
    {"that", "xp_that"},
    {"final", "xp_final"},
    {"running", "xp_running"},
    {"month", "xp_month"},
    {"hour", "xp_hour"},
    {"text", "xp_text"},
    {"encoders", "xp_encoders"},
    {"conv/attention sum", "xp_conv_attention_sum"},
    {"denoising", "xp_denoising"},
    {"generation", "xp_generation"},
    {"independent", "xp_independent"},
    {"dispatch", "xp_dispatch"},
    {"reduced", "xp_reduced"},
    {"share", "xp_share"},
    {"phase", "xp_phase"},
    {"dominates", "xp_dominates"},
    {"hierarchical", "xp_hierarchical"},
    {"states per ZeRO", "xp_states_per_zero"},
    {"gradient", "xp_gradient"},
    {"overlap", "xp_overlap"},
    {"accuracy", "xp_accuracy"},
    {"quantisation", "xp_quantisation"},
    {"double", "xp_double"},
    {"adapted", "xp_adapted"},
    {"one", "xp_one"},
    {"up", "xp_up"},
    {"no", "xp_no"},
    {"not", "xp_not"},
    {"dataset", "xp_dataset"},
    {"startup", "xp_startup"},
    {"kernels", "xp_kernels"},
    {"kernel", "xp_kernel"},
    {"capacity", "xp_capacity"},
    {"cluster", "xp_cluster"},
    {"container", "xp_container"},
    {"budget", "xp_budget"},
    {"uncalibrated", "xp_uncalibrated"},
    {"calibrated", "xp_calibrated"},
    {"request", "xp_request"},
    {"requests", "xp_requests"},
    {"req/s", "xp_req_s"},
    {"state", "xp_state"},
    {"master", "xp_master"},
    {"time", "xp_time"},
    {"gathered", "xp_gathered"},
    {"gather", "xp_gather"},
    {"volume", "xp_volume"},
    {"intermediates", "xp_intermediates"},
    {"residual", "xp_residual"},
    {"mean", "xp_mean"},
    {"law", "xp_law"},
    {"routed", "xp_routed"},
    {"frozen", "xp_frozen"},
    {"linear", "xp_linear"},
    {"element-wise", "xp_element_wise"},
    {"order", "xp_order"},
    {"first", "xp_first"},
    {"last", "xp_last"},
    {"slack", "xp_slack"},
    {"matrices", "xp_matrices"},
    {"projections", "xp_projections"},
    {"convolutions", "xp_convolutions"},
    {"synchronous", "xp_synchronous"},
    {"job", "xp_job"},
    {"stops", "xp_stops"},
    {"preemption", "xp_preemption"},
    {"fixed", "xp_fixed"},
    {"written", "xp_written"},
    {"report", "xp_report"},
    {"generalised", "xp_generalised"},
    {"fewest", "xp_fewest"},
    {"finish", "xp_finish"},
    {"holds", "xp_holds"},
    {"meets", "xp_meets"},
    {"while", "xp_while"},
    {"their", "xp_their"},
    {"same", "xp_same"},
    {"are", "xp_are"},
    {"it", "xp_it"},
    {"adds", "xp_adds"},
    {"excess", "xp_excess"},
    {"hides", "xp_hides"},
    {"behind", "xp_behind"},
    {"overlaps", "xp_overlaps"},
    {"overlapped", "xp_overlapped"},
    {"too", "xp_too"},
    {"long", "xp_long"},
    {"slowest", "xp_slowest"},
    {"stage", "xp_stage"},
    {"slots", "xp_slots"},
    {"puts", "xp_puts"},
    {"account", "xp_account"},
    {"tensor-parallel", "xp_tensor_parallel"},
    {"parallelism", "xp_parallelism"},
    {"parallel", "xp_parallel"},
    {"transfers", "xp_transfers"},
    {"targeted", "xp_targeted"},
    {"vocabulary", "xp_vocabulary"},
    {"probabilities", "xp_probabilities"},
    {"active", "xp_active"},
    {"generated", "xp_generated"},
    {"served", "xp_served"},
    {"serving", "xp_serving"},
    {"lost", "xp_lost"},
    {"priced", "xp_priced"},
    {"rate", "xp_rate"},
    {"reserved", "xp_reserved"},
    {"allocated", "xp_allocated"},
    {"minutes", "xp_minutes"},
    {"search", "xp_search"},
    {"planner", "xp_planner"},
    {"model", "xp_model"},
    {"sizing", "xp_sizing"},
    {"measurements", "xp_measurements"},
    {"module", "xp_module"},
    {"out", "xp_out"},
    {"split", "xp_split"},
    {"offer", "xp_offer"},
    {"provider", "xp_provider"},
    {"billing", "xp_billing"},
    {"an", "xp_an"},
    {"this", "xp_this"},
    {"eval", "xp_eval"},
    {"comm", "xp_comm"},
    {"dequantised", "xp_dequantised"},
    {"de-quantisation", "xp_de_quantisation"},
    {"dequant", "xp_dequant"},
    {"buffer", "xp_buffer"},
    {"prefetch", "xp_prefetch"},
    {"prompts", "xp_prompts"},
    {"prefilled", "xp_prefilled"},
    {"successors'", "xp_successors"},
    {"continuous", "xp_continuous"},
    {"steady", "xp_steady"},
    {"sampler", "xp_sampler"},
    {"grads", "xp_grads"},
    {"norm", "xp_norm"},
    {"gated", "xp_gated"},
    {"anatomy", "xp_anatomy"},
    {"cache", "xp_cache"},
    {"bit", "xp_bit"},
    {"weight", "xp_weight"},
    {"ranks", "xp_ranks"},
    {"restart", "xp_restart"},
    {"seconds", "xp_seconds"},
    {"perf", "xp_perf"},
    {"and Megatron-Bridge the DeepSeek-V3 MTP module too", "xp_and_megatron_bridge_the_deepseek_v3_mtp_module_t"},
    {"% margin", "xp_margin_2"},
    // mem8: the start of backward against the last layer's recompute (sizing/memory.cpp).
    {"at the start of backward", "xp_at_the_start_of_backward"},
    {"at the last layer's recompute, logits kept by the training loop", "xp_at_the_last_layers_recompute_logits_kept"},
    {"output-layer gradient in the chunked output's backward", "xp_output_layer_gradient_in_chunked_output_backward"},
    {"not at the peak: rebuilt after the loss's backward freed the logits", "xp_not_at_the_peak_rebuilt_after_the_loss"},
    {"tokens/s and req/s follow these users, not each replica's full batch", "xp_follow_these_users_not_full_batch"},
    {"tokens/s and req/s follow this load, not each replica's capacity", "xp_follow_this_load_not_capacity"},
    {"would not hold the load on this cluster", "xp_would_not_hold_the_load_on_this_cluster"},
    {"the latency target is what needs", "xp_the_latency_target_is_what_needs"},
    {"missing the target", "xp_missing_the_target"},
    {"would need", "xp_would_need"},
    {"instead of", "xp_instead_of"},
    {"gives", "xp_gives"},
    {"misses", "xp_misses"},
    {"the given target", "xp_the_given_target"},
};

/// `text` (an explain line's formula or source as the engine writes it) in the locale `t`: each
/// phrase of kExplainPhrases standing as whole words (not inside a name such as work_seconds,
/// llama.cpp or goodput.wall_seconds) is replaced by its locale text, the longest phrase first;
/// everything else (numbers, units, symbols, names, citations, a word the table lacks) is kept as
/// written: no word is dropped.
std::string localise_explain(std::string_view text, const json& t) {
  // The phrases by their first byte, longest first.
  static const std::map<char, std::vector<const ExplainPhrase*>> by_first = [] {
    std::map<char, std::vector<const ExplainPhrase*>> m;
    for (const auto& p : kExplainPhrases) m[p.english.front()].push_back(&p);
    for (auto& [c, v] : m)
      std::stable_sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return a->english.size() > b->english.size(); });
    return m;
  }();
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (std::size_t i = 0; i < text.size();) {
    // An address is a name: kept as written ("…/public-cloud/billing" read "…/facturation").
    if (text.compare(i, 7, "http://") == 0 || text.compare(i, 8, "https://") == 0) {
      const std::size_t end = std::min(text.find_first_of(" ),;", i), text.size());
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    const auto candidates = by_first.find(text[i]);
    const bool at_start = i == 0 || !word_char(text[i - 1]) || !word_char(text[i]);
    const ExplainPhrase* hit = nullptr;
    if (at_start && candidates != by_first.end()) {
      for (const ExplainPhrase* p : candidates->second) {
        const std::size_t end = i + p->english.size();
        if (text.substr(i, p->english.size()) != p->english) continue;
        if (word_char(p->english.back()) && end < text.size() && word_char(text[end])) continue;  // "work" in "workspace"
        hit = p;
        break;
      }
    }
    if (hit != nullptr && t.contains(hit->key)) {
      out += t[hit->key].get<std::string>();
      i += hit->english.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

/// An explain line's formula or source as the page shows it: the engine's text in the page's
/// language (localise_explain); a price source ("price: on-demand") names the price kind.
/// French writes a decimal comma: "0.60 × 1.307e+15" → "0,60 × 1,307e+15" in a formula. Only a
/// number's own point: one between digits whose number starts the token (after a space, an
/// operator or a bracket; not inside a name such as "qwen2.5", "v0.3", "llama-3.1-8b" or a term
/// "serving.step_seconds") and is no dotted version ("25.11.01").
std::string decimal_commas(const std::string& text) {
  std::string out = text;
  auto digit = [&](std::size_t i) { return i < out.size() && std::isdigit(static_cast<unsigned char>(out[i])); };
  auto word = [&](std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    return std::isalnum(c) || c == '_' || c == '.';  // UTF-8 bytes (×, ≈) are not word characters
  };
  for (std::size_t i = 1; i + 1 < out.size(); ++i) {
    if (out[i] != '.' || !digit(i - 1) || !digit(i + 1)) continue;
    std::size_t start = i;
    while (start > 0 && digit(start - 1)) --start;
    bool in_name = false;
    if (start > 0) {
      const std::size_t before = start - 1;
      in_name = word(before) || (out[before] == '-' && before > 0 && std::isalnum(static_cast<unsigned char>(out[before - 1])));
    }
    std::size_t end = i + 1;
    while (digit(end)) ++end;
    const bool version = end + 1 < out.size() && out[end] == '.' && digit(end + 1);
    if (!in_name && !version) out[i] = ',';
    i = end;
  }
  return out;
}

std::string explain_text(const std::string& kind, const std::string& text, const std::string& lang, const json& t) {
  if (lang != "en" && kind == "source" && text.rfind("price: ", 0) == 0) {
    std::string k = "price_kind_" + text.substr(7);
    std::replace(k.begin(), k.end(), '-', '_');
    return t.value("explain_price", "") + t.value(k, text.substr(7));
  }
  std::string out = localise_explain(text, t);
  if (lang == "fr" && kind == "formula") out = decimal_commas(out);
  return out.empty() ? "—" : out;
}

/// The datasheet sources of the GPU `spec` as a visitor can follow them: each source id of its
/// catalog row (data/gpus.csv source_ids) with the address data/gpus.SOURCES.md gives for it
/// ("VULTR-B200 https://docs.vultr.com/..."); an id without an address as the id alone.
std::string gpu_sources_text(const GpuSpec& spec) {
  const std::optional<std::string_view> md = embedded_file("gpus.SOURCES.md");
  std::string out;
  std::size_t from = 0;
  while (from <= spec.source_ids.size()) {
    std::size_t end = spec.source_ids.find(';', from);
    if (end == std::string::npos) end = spec.source_ids.size();
    const std::string id = spec.source_ids.substr(from, end - from);
    from = end + 1;
    if (id.empty()) continue;
    std::string address;
    if (md) {  // its row: "| ID | what | where |" (or "| ID / OTHER | ...")
      for (const std::string& head : {"| " + id + " |", "| " + id + " /", "/ " + id + " |"}) {
        const std::size_t row = md->find(head);
        if (row == std::string_view::npos) continue;
        const std::string_view line = md->substr(row, md->find('\n', row) - row);
        const std::size_t last_cell = line.rfind('|', line.size() - 2);
        const std::size_t http = line.find("http", last_cell == std::string_view::npos ? 0 : last_cell);
        if (http != std::string_view::npos) address = std::string(line.substr(http, line.find_first_of(" |", http) - http));
        break;
      }
    }
    out += (out.empty() ? "" : ", ") + id + (address.empty() ? "" : " " + address);
  }
  return out;
}
/// A price kind ("on-demand", "spot", "reserved-1y", "reserved-3y") through "price_kind_on_demand", ...
std::string price_kind_label(const std::string& kind, const json& t) {
  std::string key = "price_kind_" + kind;
  std::replace(key.begin(), key.end(), '-', '_');
  return t.value(key, kind);
}

// ---- templates --------------------------------------------------------------------------------

/// `s` with every invalid UTF-8 sequence replaced by U+FFFD (nlohmann's replacing serializer):
/// a page echoes what the visitor typed (the assistant's sentence, form fields), and a page is
/// always valid UTF-8, whatever bytes the query string carried.
std::string valid_utf8(const std::string& s) {
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return s;
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

mst::data to_data(const json& j) {
  if (j.is_object()) {
    mst::data d{mst::data::type::object};
    for (const auto& [k, v] : j.items()) d.set(k, to_data(v));
    return d;
  }
  if (j.is_array()) {
    mst::data d{mst::data::type::list};
    for (const auto& v : j) d.push_back(to_data(v));
    return d;
  }
  if (j.is_boolean()) return mst::data(j.get<bool>());
  if (j.is_null()) return mst::data(false);
  if (j.is_string()) return mst::data(valid_utf8(j.get<std::string>()));
  return mst::data(j.dump());
}

std::string render_template(const std::string& name, const json& context) {
  thread_local std::map<std::string, std::unique_ptr<mst::mustache>> compiled;
  auto& t = compiled[name];
  if (!t) {
    const std::string_view text = web_file("templates/" + name + ".mustache");
    if (text.empty()) throw Error(ErrorKind::internal, "template", "no template " + name);
    t = std::make_unique<mst::mustache>(std::string(text));
    if (!t->is_valid()) throw Error(ErrorKind::internal, "template " + name, t->error_message());
  }
  mst::data data = to_data(context);
  data.set("plan_table", mst::partial{[] { return std::string(web_file("templates/plan_table.mustache")); }});
  return t->render(data);
}

const json& locale(const std::string& lang) {
  static std::map<std::string, json> cache;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(lang);
  if (it == cache.end()) it = cache.emplace(lang, json::parse(web_file("locales/" + lang + ".json"))).first;
  return it->second;
}

/// Replaces {name} in a locale text with vars[name].
std::string fill(std::string text, const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    const std::string key = "{" + k + "}";
    for (auto p = text.find(key); p != std::string::npos; p = text.find(key, p + v.size())) text.replace(p, key.size(), v);
  }
  return text;
}

/// A GPU's link as data/gpus.csv words it ("NVLink 3 bridge (2-GPU)", "NVLink 4 (export-limited)")
/// in the page's language: the English phrases of locale keys link_* are replaced by the page's
/// (a trial found them English on the fr and th workload pages); names (NVLink, PCIe) stay.
std::string gpu_link_label(std::string text, const json& t) {
  const json& en = locale("en");
  for (const char* key : {"link_bridge_2_4", "link_bridge_2gpu", "link_export_limited", "link_bandwidth_unsourced",
                          "link_to_grace"}) {
    const std::string from = en.value(key, ""), to = t.value(key, from);
    if (from.empty() || from == to) continue;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  }
  return text;
}

/// The locale's sentence `key` in the plural form of the count it agrees with (trial of issue 10:
/// "1 plans affichés"): `KEY_one` when the locale has it and the count named by `KEY_plural_by`
/// ("shown", "total"; default "count") is in CLDR's "one" category for the language (en: 1; fr: 0
/// and 1; th: no plural forms, never), else `KEY`. `counts` holds the counts by the names the sentence uses.
std::string plural_text(const json& t, const std::string& key, const std::string& lang,
                        const std::map<std::string, double>& counts) {
  const std::string by = t.value(key + "_plural_by", "count");
  const auto it = counts.find(by);
  if (it != counts.end() && t.contains(key + "_one")) {
    const double n = it->second;
    const bool one = lang == "en" ? n == 1 : lang == "fr" ? (n == 0 || n == 1) : false;
    if (one) return t[key + "_one"].get<std::string>();
  }
  return t.value(key, "");
}

/// The language of a request without a /en, /fr or /th prefix: Accept-Language (RFC 9110
/// §12.5.4) read as a list of language ranges with weights ("fr-CH, fr;q=0.9, th;q=0.95, *;q=0.1"):
/// the supported language with the highest weight wins (a range "fr-CH" matches "fr"; "*" any
/// language not named; q=0 refuses; ties go to the earlier range). English when none matches.
std::string pick_language(const httplib::Request& req) {
  const std::string al = req.get_header_value("Accept-Language");
  struct Weighted {
    double q = 0;
    std::size_t position = 0;  ///< index of the range in the header
  };
  std::map<std::string, Weighted> named;  // supported language -> its first range
  std::optional<Weighted> star;
  std::size_t position = 0;
  for (std::size_t start = 0; start <= al.size(); ++position) {
    const std::size_t comma = std::min(al.find(',', start), al.size());
    const std::string item = al.substr(start, comma - start);
    start = comma + 1;
    auto trimmed_lower = [](std::string x) {
      x.erase(std::remove_if(x.begin(), x.end(), [](unsigned char c) { return std::isspace(c); }), x.end());
      std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return x;
    };
    const std::string range = trimmed_lower(item.substr(0, item.find(';')));
    double q = 1;
    for (std::size_t semi = item.find(';'); semi != std::string::npos; semi = item.find(';', semi + 1)) {
      const std::string param = trimmed_lower(item.substr(semi + 1, item.find(';', semi + 1) - semi - 1));
      if (param.rfind("q=", 0) == 0) {
        const auto v = parse_decimal(param.substr(2));
        q = v && *v >= 0 && *v <= 1 ? *v : 0;  // a malformed weight counts as a refusal
      }
    }
    if (range.empty()) continue;
    if (range == "*") {
      if (!star) star = Weighted{q, position};
      continue;
    }
    const std::string primary = range.substr(0, range.find('-'));
    if (std::find(kLanguages.begin(), kLanguages.end(), primary) != kLanguages.end() && !named.count(primary))
      named[primary] = Weighted{q, position};
  }
  std::string lang = "en";
  std::optional<Weighted> best;
  for (const auto& l : kLanguages) {
    const std::optional<Weighted> w = named.count(l) ? std::optional<Weighted>(named[l]) : star;
    if (!w || w->q <= 0) continue;
    if (!best || w->q > best->q || (w->q == best->q && w->position < best->position)) {
      best = w;
      lang = l;
    }
  }
  return lang;
}

struct Page {
  std::string lang;
  std::string prefix;  ///< "/fr", "/th", "/en" or "" (chosen by Accept-Language)
  std::string path;    ///< without prefix
  const json& t;
  std::string query = {};  ///< "?k=v&..." as asked (re-encoded), or "": kept by the language links
};

/// The request's query string, re-encoded from its parameters ("" when none).
std::string query_of(const httplib::Request& req) {
  std::string q;
  for (const auto& [k, v] : req.params)
    q += (q.empty() ? "?" : "&") + httplib::detail::encode_query_param(k) + "=" + httplib::detail::encode_query_param(v);
  return q;
}

void send_page(httplib::Response& res, const Page& page, const std::string& name, json context, const std::string& title) {
  context["t"] = page.t;
  context["p"] = page.prefix;
  const std::string body = render_template(name, context);
  json links = json::array();
  for (const auto& l : kLanguages) {
    links.push_back({{"lang", l}, {"label", locale(l).value("language_name", l)}, {"href", "/" + l + page.path + page.query},  // a trial lost its filter switching language
                     {"current", l == page.lang}});
  }
  json layout = {{"t", page.t}, {"p", page.prefix}, {"lang", page.lang}, {"title", title}, {"body", body},
                 {"languages", links}};
  res.set_header("Content-Language", page.lang);
  res.set_header("Vary", "Accept-Language");
  res.set_content(render_template("layout", layout), "text/html; charset=utf-8");
}

// ---- charts (SVG drawn here) -----------------------------------------------------------------

/// A line chart of (date, usd_per_gpu_hour) points; undated points are not drawn. The x axis is
/// time (a point's x is its date's day count, so a gap of a year looks like one; a trial found the
/// points spaced evenly whatever their dates), the y axis USD per GPU-hour with labels at its top,
/// middle and bottom and a grid line at each. One price (or one value) is drawn in the middle of
/// a ±50% range; one date is labelled once.
std::string price_svg(const json& observations, const std::string& lang, const json& t) {
  struct Point {
    std::string date;
    long day;
    double usd;
  };
  std::vector<Point> pts;
  for (const auto& o : observations) {
    if (!o["observed_at"].is_string() || !o["usd_per_gpu_hour"].is_number()) continue;
    const std::string date = o["observed_at"].get<std::string>().substr(0, 10);
    const auto day = date_prefix_days_since_epoch(date);
    if (day) pts.push_back({date, *day, o["usd_per_gpu_hour"].get<double>()});
  }
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return std::tie(a.day, a.usd) < std::tie(b.day, b.usd); });
  if (pts.empty()) return "<p class=\"muted\">" + html_escape(t.value("no_dated_prices", "")) + "</p>";
  double lo = pts.front().usd, hi = lo;
  for (const auto& p : pts) lo = std::min(lo, p.usd), hi = std::max(hi, p.usd);
  if (hi - lo < 1e-9) {
    hi = lo > 0 ? lo * 1.5 : 1.0;
    lo = lo > 0 ? lo * 0.5 : 0.0;
  } else {  // 5% above and below, never below zero
    const double pad = 0.05 * (hi - lo);
    hi += pad;
    lo = std::max(0.0, lo - pad);
  }
  const double W = 560, H = 200, L = 64, B = 30, R = 10, T = 10;
  const long first = pts.front().day, last = pts.back().day;
  auto x = [&](const Point& p) {
    return last == first ? L + (W - L - R) / 2 : L + (W - L - R) * static_cast<double>(p.day - first) / static_cast<double>(last - first);
  };
  auto y = [&](double v) { return T + (H - B - T) * (1 - (v - lo) / (hi - lo)); };
  std::string path, dots, grid;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    path += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", x(pts[i]), y(pts[i].usd));
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{}{}{}</title></circle>", x(pts[i]), y(pts[i].usd),
                        date_text(pts[i].date, lang, t), t.value("label_separator", ": "), money(pts[i].usd, lang));
  }
  for (const double v : {hi, (hi + lo) / 2, lo}) {
    grid += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>"
                        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
                        L, y(v), W - R, y(v), L - 6, y(v) + 4, money(v, lang));
  }
  const std::string dates =
      first == last ? fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", x(pts.front()), H - 8,
                                  date_text(pts.front().date, lang, t))
                    : fmt::format("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", L, H - 8,
                                  date_text(pts.front().date, lang, t), W - R, H - 8, date_text(pts.back().date, lang, t));
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">{}"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>"
      "{}<path d=\"{}\" class=\"line\"/>{}</svg>",
      W, H, html_escape(t.value("price_history", "")), grid, L, H - B, W - R, H - B, L, T, L, H - B, dates, path, dots);
}

/// Cost (x) against time (y) of the ranked plans; Pareto-front plans filled, #1 ringed.
std::string pareto_svg(const json& plans, const std::string& lang, const json& t) {
  if (plans.empty()) return "";
  double xmax = 0, ymax = 0;
  for (const auto& p : plans) {
    xmax = std::max(xmax, p["total_usd"].get<double>());
    ymax = std::max(ymax, p["time_seconds"].get<double>());
  }
  if (xmax <= 0 || ymax <= 0 || !std::isfinite(ymax)) return "";
  const double W = 560, H = 240, L = 50, B = 30;
  std::string dots;
  for (const auto& p : plans) {
    const double cx = L + (W - L - 10) * p["total_usd"].get<double>() / xmax;
    const double cy = 10 + (H - B - 10) * (1 - p["time_seconds"].get<double>() / ymax);
    const bool front = p["on_pareto_front"].get<bool>();
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" class=\"{}\"><title>#{} {} {}{}{}, {}</title></circle>", cx, cy,
                        p["rank"] == 1 ? 6 : 4, front ? "front" : "dominated", p["rank"].get<int>(),
                        html_escape(p["provider"].get<std::string>()), html_escape(p["gpu_name"].get<std::string>()),
                        t.value("label_separator", ": "),
                        money(p["total_usd"].get<double>(), lang), duration(p["time_seconds"].get<double>(), lang, t));
  }
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/><line x1=\"{}\" y1=\"10\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} → {}</text><text x=\"4\" y=\"14\">{} ↑ {}</text>{}</svg>",
      W, H, html_escape(t.value("pareto_title", "")), L, H - B, W, H - B, L, L, H - B, W, H - 8,
      html_escape(t.value("cost", "")), money(xmax, lang), html_escape(t.value("time", "")), duration(ymax, lang, t), dots);
}

/// Memory terms as one stacked horizontal bar, with the capacity of the best-fitting GPU marked.
std::string memory_svg(const json& size, const std::string& lang, const json& t) {
  const json& terms = size["per_gpu"]["terms"];
  const double total = size["per_gpu"]["total_bytes"].get<double>();
  double scale = total;
  for (const auto& f : size["fits"]) scale = std::max(scale, f["capacity_bytes"].get<double>());
  if (scale <= 0) return "";
  static const char* colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  const double W = 560;
  std::string rects, legend;
  double x = 0;
  std::size_t i = 0;
  for (const auto& term : terms) {
    const double w = W * term["bytes"].get<double>() / scale;
    const char* c = colours[i % 10];
    const std::string label = html_escape(term_label(term["name"].get<std::string>(), t));
    rects += fmt::format("<rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"28\" fill=\"{}\"><title>{}{}{}</title></rect>", x, w, c,
                         label, t.value("label_separator", ": "), gb(term["bytes"].get<double>(), lang));
    legend += fmt::format("<span class=\"key\"><i style=\"background:{}\"></i>{} {}</span> ", c, label,
                          gb(term["bytes"].get<double>(), lang));
    x += w;
    ++i;
  }
  return fmt::format("<svg class=\"bar\" viewBox=\"0 0 {} 30\" role=\"img\">{}</svg><div class=\"legend\">{}</div>", W, rects, legend);
}

// ---- shared data -------------------------------------------------------------------------------

json model_options(const std::string& selected) {
  json a = json::array();
  for (const auto& p : list_presets()) a.push_back({{"name", p.short_name}, {"selected", p.short_name == selected}});
  return a;
}

json select_options(const std::vector<std::string>& values, const std::string& selected, const json* t = nullptr,
                    const std::string& label_prefix = {}) {
  json a = json::array();
  for (const auto& v : values)
    a.push_back({{"value", v}, {"label", t ? t->value(label_prefix + v, v) : v}, {"selected", v == selected}});
  return a;
}

/// A query parameter given twice (`/plan?model=a&model=b`) is refused as the API refuses it: 400
/// `parameter_twice` at the name written (`/q` for the offers filter), never one of the two picked.
void refuse_repeated_params(const httplib::Request& req) {
  std::string previous;
  for (const auto& [k, v] : req.params) {  // a multimap: equal names are adjacent
    if (k == previous)
      throw_invalid_coded("/" + k, "parameter_twice", {{"name", k}}, "query parameter \"" + k + "\" given twice", "each parameter once");
    previous = k;
  }
  if (req.has_param("q") && req.has_param("filter"))
    throw_invalid_coded("/filter", "parameter_twice", {{"name", "filter"}}, "query parameter \"filter\" given twice (as q and filter)",
                        "one of q and filter");
}

/// A page form's query string may hold only the request's fields (the /offers page already
/// refused the rest through api::read_query): a trial's /plan?budget_usd=300 was a 200 page that
/// silently planned without the budget. Error{invalid_input} `unknown_field` at "/NAME", listing
/// the known names, as the JSON API words it.
template <class In>
void refuse_unknown_params(const httplib::Request& req, std::span<const api::FieldDef<In>> table) {
  for (const auto& [k, v] : req.params) {
    const api::FieldDef<In>* d = nullptr;
    for (const auto& f : table)
      if (f.info.name == k) d = &f;
    if (!d || d->info.face == api::FieldFace::cli_only)
      throw_invalid_coded("/" + k, "unknown_field", {{"name", k}, {"known", api::detail::known_names(table, api::Face::api)}},
                          "unknown query parameter", "one of " + api::detail::known_names(table, api::Face::api));
  }
}

/// The quant form option a query's value selects: an alias ("awq", "gguf_q4_k_m") as the option
/// it plans as ("int4", "q4_k_m"), so resubmitting the form keeps it (trial53 #9: the select fell
/// back to the default and the next plan was 16-bit); a value no format has stays as typed.
std::string form_quant(const std::string& v) {
  if (v.empty()) return v;
  try {
    std::string name(weight_quant_name(parse_weight_quant(v, "quant")));
    return name.rfind("gguf_", 0) == 0 ? name.substr(5) : name;
  } catch (const Error&) {
    return v;
  }
}

/// Request fields from an HTML form's query string, typed by the request's field table.
template <class In>
json form_body(const httplib::Request& req, std::span<const api::FieldDef<In>> table, const std::string& lang) {
  json body = json::object();
  for (const auto& d : table) {
    if (d.info.face != api::FieldFace::both) continue;
    const std::string name(d.info.name);
    if (!req.has_param(name)) continue;
    std::string v = req.get_param_value(name);
    if (v.empty()) continue;
    // French writes a decimal with a comma, as the French page shows numbers ("50,5"; `ask` reads
    // it too): a number, count or duration of digits, one comma and digits reads as the decimal
    // (trial52 #8: "« 50,5 » n'est pas un nombre"). Any other comma stays and is refused as before.
    static const std::regex french_decimal(R"(-?\d+,\d+[a-z]?)");
    if (lang == "fr" && d.info.type != api::FieldType::string && d.info.type != api::FieldType::boolean &&
        std::regex_match(v, french_decimal))
      v[v.find(',')] = '.';
    body[name] = api::detail::parse_field_text_ranged(d, v, "/" + name);
  }
  return body;
}

/// A value an error quotes, written as the page's language writes numbers: "4.096e+09" → en/th
/// "4,096,000,000", fr "4 096 000 000"; "0.5" → fr "0,5". A text that is not wholly a decimal
/// number ("H100", "2026-12-01", "1:2") and a plain integer under 10,000 stay as they are, and so
/// does a fraction under 0.001 (count_text would round it away).
/// Past 15 digits a double has no more exact digits to group: a value in exponent or decimal form
/// is shown in scientific form with its shortest digits ("1e+30" → "1 × 10³⁰", fr "1,5 × 10²⁰"),
/// which the trial of issue 10 saw printed as "1,000,000,000,000,000,019,884,624,838,656"; a whole number written with every digit
/// (an integer field's "9007199254740993") is grouped as written, not through a double.
std::string localized_value(const std::string& v, const std::string& lang) {
  if (v.empty() || v.size() > 40) return v;
  for (const char c : v)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return v;
  double d = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc{} || end != v.data() + v.size() || !std::isfinite(d)) return v;
  if (std::abs(d) >= 1e15) {
    if (v.find_first_of(".eE") != std::string::npos) {
      // The shortest digits that read back as d ("1e+30"), as "1 × 10³⁰": never C's exponent form.
      char buf[40];
      const auto [last, err] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
      if (err != std::errc{}) return v;
      const std::string shortest(buf, last);
      const std::size_t e = shortest.find('e');
      std::string mantissa = shortest.substr(0, e);
      if (lang == "fr") std::replace(mantissa.begin(), mantissa.end(), '.', ',');
      static constexpr const char* kSuperscript[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
      std::string power;
      for (const char c : std::to_string(std::stoi(shortest.substr(e + 1)))) power += c == '-' ? "⁻" : kSuperscript[c - '0'];
      return mantissa + " × 10" + power;
    }
    const std::size_t first = v.front() == '-' || v.front() == '+' ? 1 : 0;
    const std::string sep = lang == "fr" ? "\u202f" : ",";
    std::string grouped = v.substr(0, first) == "-" ? "-" : "";
    for (std::size_t i = first; i < v.size(); ++i) {
      if (i > first && (v.size() - i) % 3 == 0) grouped += sep;
      grouped += v[i];
    }
    return grouped;
  }
  if (v.find_first_of(".eE") == std::string::npos && std::abs(d) < 10000) return v;
  if (d != 0 && std::abs(d) < 0.001) return v;
  return count_text(d, lang);
}

/// An explain line's value as the page's language writes numbers, never in C's exponent form (a
/// trial read "1.8e+11 bytes"): a whole number with every digit, grouped ("180,000,000,000", fr
/// "180 000 000 000"); another to 6 significant digits ("0.000431445").
std::string explain_value(double v, const std::string& lang) {
  if (!std::isfinite(v)) return "∞";
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e15 || a < 1e-4) return fmt::format("{:.4g}", v);  // beyond grouping: the exponent stays
  if (std::floor(v) == v) return number(v, 0, lang);           // a byte or step count: every digit
  const int digits = static_cast<int>(std::floor(std::log10(a))) + 1;
  const int decimals = std::clamp(6 - digits, 0, 9);
  const double rounded = std::round(v / std::pow(10.0, digits - 6)) * std::pow(10.0, digits - 6);
  std::string s = number(digits > 6 ? rounded : v, decimals, lang);
  const char dot = lang == "fr" ? ',' : '.';
  if (s.find(dot) != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == dot) s.pop_back();
  }
  return s;
}

/// A text problem as util/text_check.cpp describes it ("invalid UTF-8 (byte 0xff)", "bidirectional
/// control character U+202E"; a filter error's value `what`) in the page's language (web/locales
/// text_problem_<kind>, {byte} "0xff" or {code_point} "U+202E"); the French page said "(invalid
/// UTF-8 (byte 0xff))" inside its sentence (trial of issue 10). A text of no known form stays.
std::string text_problem_text(const std::string& what, const json& t) {
  static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
      {"NUL byte", "nul_byte"},
      {"control character", "control_character"},
      {"invalid UTF-8", "invalid_utf8"},
      {"truncated UTF-8 sequence", "truncated_utf8"},
      {"invalid UTF-8 sequence", "invalid_utf8_sequence"},
      {"overlong UTF-8 sequence", "overlong_utf8"},
      {"UTF-8 encoded surrogate", "utf8_surrogate"},
      {"UTF-8 beyond U+10FFFF", "utf8_beyond_max"},
      {"C1 control character", "c1_control_character"}};
  constexpr std::string_view kBidi = "bidirectional control character ";
  if (what.starts_with(kBidi))
    return fill(t.value("text_problem_bidi_control", what), {{"code_point", what.substr(kBidi.size())}});
  const std::size_t open = what.rfind(" (byte ");
  if (open == std::string::npos || !what.ends_with(")")) return what;
  const std::string kind = what.substr(0, open), byte = what.substr(open + 7, what.size() - open - 8);
  for (const auto& [english, key] : kKinds)
    if (kind == english) return fill(t.value("text_problem_" + std::string(key), what), {{"byte", byte}});
  return what;
}

/// The CLI's commands in an engine sentence as an English page names them (page_wording).
constexpr std::pair<std::string_view, std::string_view> kPageCommands[] = {
    {"`gpuplan models`", "/api/models"}, {"`gpuplan gpus`", "/api/gpus"},
    {"`gpuplan offers`", "the offers page"}, {"`gpuplan import FILE`", "an import (POST /api/import)"},
    {"`gpuplan import`", "an import (POST /api/import)"}, {"positional NAME", "name"}, {"FILTER", "offers filter"}};

/// An engine sentence in an English page's words, as api::api_wording gives it in the API's (issue
/// 10: "(--include-flagged ranks them together ...)", "(`gpuplan gpus`)" on /en/plan): a flag
/// becomes its form label in quotes ("“include flagged prices”", web/locales field_<name>), a
/// command the page or list that answers it, "--json" the JSON API. The French and Thai pages
/// word engine sentences by their codes instead (warning_text).
std::string page_wording(std::string_view text, const json& t, std::string_view lang = "en") {
  if (text.find("--") == std::string_view::npos && text.find('`') == std::string_view::npos &&
      text.find("positional NAME") == std::string_view::npos && text.find("FILTER") == std::string_view::npos)
    return std::string(text);
  // The language's quotation marks (French «\u202f…\u202f»), as ask_or quotes.
  const std::string open = lang == "fr" ? "«\u202f" : "“", close = lang == "fr" ? "\u202f»" : "”";
  const api::Wording words{[&t, open, close](const api::FieldInfo* f, std::string_view flag) {
                             std::string name = f ? std::string(f->name) : std::string(flag.substr(2));
                             std::replace(name.begin(), name.end(), '-', '_');
                             return open + t.value("field_" + name, name) + close;
                           },
                           kPageCommands, "the JSON API (/api/openapi.json)", "the offers page"};
  return api::reworded(text, words);
}

/// An error in the page's language and the page's form: the request field by its form label
/// ("Jetons : ..."), the sentence of its message code (web/locales error_<code>, util/error_code.hpp)
/// with the values it quotes, a field named in a value by its label too, a filter error's column.
/// Only an error without a code (none a form can cause, that we know of) falls back to the engine's
/// English sentence, introduced in the page's language.
std::string error_text(const Error& e, const std::string& lang, const json& t, bool with_label = true) {
  const std::string pointer = api::api_field_of(e);
  const std::string name = pointer.size() > 1 ? pointer.substr(1) : std::string();
  const std::string label = name.empty() ? std::string() : t.value("field_" + name, name);
  std::string text;
  const ErrorCode* c = error_code_of(e);
  if (c && t.contains("error_" + c->code)) {
    std::map<std::string, std::string> vars = c->values;
    for (auto& [k, v] : vars)
      v = k.ends_with("_field") ? t.value("field_" + v, v) : k == "what" ? text_problem_text(v, t) : localized_value(v, lang);
    std::map<std::string, double> counts;
    for (const auto& [k, v] : c->values) {
      if (const auto n = parse_decimal(v)) counts[k] = *n;  // decimal only: a value "0x10" counts as text
    }
    // A sentence that names its own field has a short form after the field's label (error_<code>_labelled:
    // "Offre : vide", not "Offre : offre est vide").
    const bool labelled = with_label && !label.empty() && t.contains("error_" + c->code + "_labelled");
    std::string key = "error_" + c->code + (labelled ? "_labelled" : "");
    // A duration that is not positive ("-3d") is not "a number": its own sentence, as the CLI's
    // "expected: a positive duration such as 72h" (trial52 #9).
    if (c->code == "not_positive" && c->values.contains("value") && !parse_decimal(c->values.at("value")) &&
        t.contains("error_not_positive_duration"))
      key = "error_not_positive_duration";
    text = fill(plural_text(t, key, lang, counts), vars);
    if (const auto* f = dynamic_cast<const FilterError*>(&e))
      text += fill(t.value("error_filter_column", ""), {{"column", number(static_cast<double>(f->offset() + 1), 0, lang)}});
  } else if (lang == "en") {
    text = page_wording(e.message(), t) +
           (e.expected().empty() ? "" : " (" + t.value("expected", "expected") + ": " + page_wording(e.expected(), t) + ")");
  } else {
    text = fill(t.value("error_uncoded", ""), {{"detail", e.message()}});
  }
  return (label.empty() || !with_label ? "" : label + t.value("label_separator", ": ")) + text;
}

/// One engine warning in the page's language: English pages show the engine's own sentence (with
/// its numbers); French and Thai pages the locale's sentence for its code (`warn_CODE`), the
/// engine's English only for a code the locales do not know (tests/server/locales_test.cpp checks
/// that every planner code has one).
/// A warning with `values` (PlanWarning::values) has them filled in, written as the page's
/// language writes them: `_usd` as money, `ratio` and `_hours` with one decimal, `_days` and `nodes` as counts.
std::string warning_text(const std::string& code, const std::string& message, const std::string& lang, const json& t,
                         const json& values = json::object()) {
  if (lang == "en" || code.empty()) return lang == "en" ? page_wording(message, t) : message;
  std::map<std::string, std::string> vars;
  std::map<std::string, double> counts;  // for the sentence's plural form (plural_text)
  for (auto it = values.begin(); it != values.end(); ++it) {
    const std::string& k = it.key();
    std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    const std::optional<double> parsed = parse_decimal(v);  // decimal only, as every number read
    const bool numeric = parsed.has_value();
    const double n = parsed.value_or(0);
    if (numeric) counts[k] = n;
    if (numeric && k.ends_with("_usd")) v = money(n, lang);
    else if (numeric && k == "ratio") v = number(n, 1, lang);
    else if (numeric && (k.ends_with("_days") || k == "nodes")) v = number(n, 0, lang);
    else if (numeric && k.ends_with("_hours")) v = number(n, 1, lang);
    else if (k == "observed_at" || k == "confirmed_at") v = date_text(v, lang, t);
    vars[k] = v;
  }
  // A confirmation older than the price age limit has its own sentence (the code's is "never confirmed").
  const bool old_confirmation = code == "not_confirmed_available" && values.contains("confirmed_at");
  // A flag a locale sentence names ("(--task lora)") becomes its form label, as on the English
  // page (trial48: the French and Thai plan pages showed the CLI flag).
  // A warning with a "variant" value has its own sentence (warn_CODE_VARIANT: ranked_after_clean
  // when no plan is clean, trial53 #10).
  const std::string variant = values.contains("variant") && values["variant"].is_string() ? values["variant"].get<std::string>() : "";
  std::string key = "warn_" + code + (old_confirmation ? "_old" : "");
  if (!variant.empty() && t.contains(key + "_" + variant)) key += "_" + variant;
  const std::string sentence = t.contains(key) ? plural_text(t, key, lang, counts) : message;
  return page_wording(fill(sentence, vars), t, lang);
}

/// Warnings in plain words, with the code kept as a tooltip.
json warnings_view(const json& warnings, const std::string& lang, const json& t) {
  json a = json::array();
  for (const auto& w : warnings)
    a.push_back({{"code", w["code"]},
                 {"message", warning_text(w["code"].get<std::string>(), w["message"].get<std::string>(), lang, t,
                                          w.value("values", json::object()))}});
  return a;
}

/// The layout cell of a plan, as the CLI's table writes it (cli/plan_render.cpp layout_text) from
/// the same JSON: training "TP2 PP2 VP5 DP4 EP2 Z1 mb1 rc:full" (VP and ETP only when they split);
/// serving "TP2" (its replicas, batch, TTFT, TPOT and requests/s have their own columns: serving_cells); image generation "8 GPUs × 1
/// image" in the page's words. A math fallback ("fp32!": timed at the FP32 peak) follows, as in the CLI.
std::string layout_cell(const json& p, const json& t, const std::string& lang) {
  const json& l = p["layout"];
  const std::string math = p["math_fallback"].is_string() ? " " + p["math_fallback"].get<std::string>() + "!" : "";
  if (p.contains("step")) {
    // Megatron-Core's modules name the selective recompute they make up, as in the CLI.
    const auto modules = l.find("recompute_modules");
    const std::string rc = modules != l.end() && modules->is_string() ? modules->get<std::string>()
                                                                      : l["recompute"].get<std::string>();
    const int vp = l["virtual_stages"].get<int>();
    const int etp = l.contains("expert_tp") ? l["expert_tp"].get<int>() : 0;
    return fmt::format("TP{} PP{}{} DP{}{}{} Z{} mb{}{}", l["tp"].get<int>(), l["pp"].get<int>(),
                       vp > 1 ? fmt::format(" VP{}", vp) : "", l["dp"].get<int>(),
                       l["ep"].get<int>() > 1 ? fmt::format(" EP{}", l["ep"].get<int>()) : "",
                       etp > 0 && etp != l["tp"].get<int>() ? fmt::format(" ETP{}", etp) : "", l["zero_stage"].get<int>(),
                       l["micro_batch"].get<int>(), rc == "none" ? "" : " rc:" + rc) +
           math;
  }
  if (p.contains("serving")) return fmt::format("TP{}", l["tp"].get<int>()) + math;
  const double gpus = p["gpus_per_instance"].get<double>();
  if (gpus == 1) return t.value("layout_images_one", "1 GPU × 1 image") + math;
  return fill(t.value("layout_images", "{gpus} GPUs × 1 image"), {{"gpus", number(gpus, 0, lang)}}) + math;
}

/// Milliseconds as the page's language writes them: "412 ms", "8.3 ms" (fr "8,3 ms", no-break space as gb()).
std::string ms_text(double seconds, const std::string& lang) {
  const double ms = seconds * 1e3;
  return number(ms, ms < 10 ? 1 : 0, lang) + (lang == "fr" ? "\u00a0ms" : " ms");
}

json plans_view(const json& result, const std::string& lang, const json& t, const std::string& query) {
  json rows = json::array();
  for (const auto& p : result["plans"]) {
    json serving = nullptr;  // the serving columns (plan_json: replicas, serving.*, requests_per_s)
    if (p.contains("serving")) {
      const json& s = p["serving"];
      // A batch job runs at most its requests per replica at once (plan_json batch_job).
      const double batch = p.contains("batch_job") ? p["batch_job"]["peak_running_sequences"].get<double>()
                                                   : s["batch"].get<double>();
      serving = {{"replicas", number(p["replicas"].get<double>(), 0, lang)},
                 {"batch", number(batch, 0, lang)},
                 {"max_sequences", number(s["max_concurrent_sequences"].get<double>(), 0, lang)},
                 {"ttft", ms_text(s["ttft_seconds"].get<double>(), lang)},
                 {"tpot", s["tpot_seconds"].is_number() ? ms_text(s["tpot_seconds"].get<double>(), lang) : "—"},
                 {"rps", number(p["requests_per_s"].get<double>(), p["requests_per_s"].get<double>() < 10 ? 2 : 1, lang)},
                 {"meets_target", s["meets_latency_target"].get<bool>()}};
    }
    rows.push_back({{"rank", p["rank"]},
                    {"serving", serving},
                    {"recommended", p.value("recommended", false)},
                    {"provider", p["provider"]},
                    {"region", p["region"]},
                    {"instance", fmt::format("{} × {}", p["instance_type"].get<std::string>(), p["instances"].get<int>())},
                    {"gpus", fmt::format("{}×{}", p["gpus_per_instance"].get<int>(), p["gpu_name"].get<std::string>())},
                    {"layout", layout_cell(p, t, lang)},
                    {"memory", gb(p["per_gpu_memory_bytes"].get<double>(), lang) + " / " + gb(p["gpu_memory_capacity_bytes"].get<double>(), lang)},
                    {"time", duration(p["time_seconds"].get<double>(), lang, t)},
                    {"total", (p["cost"]["total_is_lower_bound"].get<bool>() ? "≥ " : "") + money(p["total_usd"].get<double>(), lang)},
                    {"price", money(p["cost"]["usd_per_hour"].get<double>(), lang) + t.value("per_hour", "/h")},
                    {"source", p["price_source"]["dataset"]},
                    // The last-seen date (the price's age counts from it), then "(first seen ...)" when
                    // a later fetch found the same price (trial9b D3).
                    {"observed", [&] {
                       const std::string first = p["price_source"]["observed_at"].get<std::string>();
                       const std::string last = p["price_source"].value("last_seen_at", first);
                       std::string text = date_text(last, lang, t);
                       if (first != "undated" && last != "undated" && first.substr(0, 10) != last.substr(0, 10))
                         text += " (" + fill(t.value("price_first_seen", "first seen {date}"), {{"date", date_text(first, lang, t)}}) + ")";
                       return text;
                     }()},
                    {"front", p["on_pareto_front"]},
                    {"warnings", warnings_view(p["warnings"], lang, t)},
                    {"has_warnings", !p["warnings"].empty()},
                    {"explain_href", query + "&explain=" + std::to_string(p["rank"].get<int>())}});
  }
  return rows;
}

/// The web address of an offer's price source, from its locator (catalog/offer.hpp):
/// "https://vast.ai/pricing (via ...)" -> the URL before the first space; a bundled dataset's
/// "owner/repo@COMMIT:path[:line | [excerpt]:line | #/json/pointer]" -> that file at that commit on
/// GitHub (with #L<line>); anything else (a user's file, no locator) -> none (the dataset name is
/// shown as text).
std::optional<std::string> source_href(std::string_view locator) {
  if (locator.rfind("https://", 0) == 0 || locator.rfind("http://", 0) == 0) {
    const std::size_t end = locator.find_first_of(" \t");
    return std::string(locator.substr(0, end));
  }
  const std::size_t at = locator.find('@');
  const std::size_t colon = locator.find(':', at == std::string_view::npos ? 0 : at);
  if (at == std::string_view::npos || colon == std::string_view::npos) return std::nullopt;
  const std::string_view repo = locator.substr(0, at);
  const std::string_view commit = locator.substr(at + 1, colon - at - 1);
  if (std::count(repo.begin(), repo.end(), '/') != 1 || commit.size() < 7 ||
      commit.find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return std::nullopt;
  std::string_view rest = locator.substr(colon + 1);
  std::string_view path = rest.substr(0, rest.find_first_of(":[#"));
  std::string line;
  // An excerpt's line numbers are the excerpt's, not the upstream file's: no line anchor then.
  if (const std::size_t last = rest.rfind(':'); rest.find('[') == std::string_view::npos && last != std::string_view::npos && last + 1 < rest.size() &&
                                               rest.find_first_not_of("0123456789", last + 1) == std::string_view::npos)
    line = std::string(rest.substr(last + 1));
  if (path.empty() || path.find_first_of(" \t\"'<>") != std::string_view::npos) return std::nullopt;
  return fmt::format("https://github.com/{}/blob/{}/{}{}", repo, commit, path, line.empty() ? "" : "#L" + line);
}

// ---- the pages ----------------------------------------------------------------------------------

/// The serving reference's numbers for the rule the /generative-ai page states.
std::map<std::string, std::string> serving_rule_vars(const std::string& lang) {
  const api::ServingReference ref;
  return {{"model", "Llama 3.1 8B"},
          {"prompt", number(static_cast<double>(ref.prompt_tokens), 0, lang)},
          {"output", number(static_cast<double>(ref.output_tokens), 0, lang)},
          {"max_batch", number(static_cast<double>(ref.max_batch), 0, lang)},
          {"min_batch", number(static_cast<double>(ref.min_useful_batch), 0, lang)}};
}

class Pages {
 public:
  Pages(const api::Context& ctx, bool can_import) : ctx_(ctx), can_import_(can_import) {}

  void index(const Page& pg, const httplib::Request&, httplib::Response& res) {
    const StoreCounts c = ctx_.store_counts();
    json ctx = {{"offers", number(static_cast<double>(c.offers), 0, pg.lang)},
                {"gpus", number(static_cast<double>(ctx_.gpus().gpus().size()), 0, pg.lang)},
                {"models", number(static_cast<double>(list_presets().size()), 0, pg.lang)}};
    send_page(res, pg, "index", ctx, pg.t.value("site_title", "gpuplan"));
  }

  void offers(const Page& pg, const httplib::Request& req, httplib::Response& res) {
    api::OffersInput in;
    in.limit = 300;
    // The page groups its own rows: by GPU (the form's `group=gpu` checkbox, or `group_by=gpu` as
    // in the API) or by provider (`group_by=provider`). The API's grouped answer has other rows, so
    // group_by is not passed on (a trial found /offers?group_by=gpu answered HTTP 500).
    const std::string group_by = req.has_param("group_by") ? req.get_param_value("group_by")
                                                           : (req.get_param_value("group") == "gpu" ? "gpu" : "");
    json ctx = {{"q", ""}, {"group", !group_by.empty()}, {"group_label", pg.t.value(group_by == "provider" ? "col_provider" : "col_gpu", "")}};
    try {
      refuse_repeated_params(req);
      if (!group_by.empty() && group_by != "gpu" && group_by != "provider")
        throw_invalid_coded("group_by", "unknown_choice", {{"value", group_by}, {"allowed", "gpu, provider"}},
                            "unknown grouping \"" + group_by + "\"", "gpu or provider");
      std::multimap<std::string, std::string> params;
      for (const auto& [k, v] : req.params)
        if (k != "group" && k != "group_by" && !(k == "q" && v.empty())) params.emplace(k == "q" ? "filter" : k, v);
      api::read_query(in, params, api::offers_fields());
      ctx["q"] = in.filter;
      ctx["sort_options"] = select_options({"price_per_gpu_hour", "price_per_vram_gb", "bandwidth", "price"}, in.sort, &pg.t, "sort_");
      const api::OffersOutput out = api::run_offers(in, ctx_);
      const json rows = api::to_json(out);
      json view = json::array();
      for (std::size_t row_index = 0; row_index < rows.size(); ++row_index) {
        const json& row_json = rows[row_index];
        // The zone, when the offer has one: offers of one instance type in several zones of a
        // region (AWS's use1-az6, use1-atl2-az1) have the same price and source, and the rows read
        // identical without it (trial of issue 10, D9c). The JSON row has no zone (the API's
        // document is the CLI's); the page reads it from the offer.
        const std::string& zone = row_index < out.rows.size() ? out.rows[row_index].offer.zone : std::string();
        // No price of the listed kind: the row shows the offer's price of another kind (a
        // reserved-only quote), marked with that kind (the term), with its source and date.
        const json& other = row_json["other_price"];
        const bool alt = other.is_object();
        const std::string alt_mark = alt ? " (" + other["price_kind"].get<std::string>() + ")" : "";
        json r = row_json;
        if (alt) {
          for (const char* k : {"usd_per_hour", "usd_per_gpu_hour", "source", "locator", "observed_at", "last_seen_at", "age_days"})
            r[k] = other[k];
          r["stale"] = other["freshness"] == "stale";
        }
        const std::string observed = r["observed_at"].is_string() ? r["observed_at"].get<std::string>() : "";
        std::string tier = "undated";
        if (!observed.empty()) tier = r["stale"] == true ? "stale" : "fresh";
        const std::string locator = r["locator"].is_string() ? r["locator"].get<std::string>() : "";
        json row = {{"id", r["id"]},
                    {"gpu", r["gpu_name"].is_string() ? r["gpu_name"] : r["gpu_name_raw"]},
                    {"count", r["gpu_count"]},
                    {"vram", r["gpu_memory_bytes"].is_number()
                                 ? number(r["gpu_memory_bytes"].get<double>() / 1e9, 0, pg.lang) +
                                       (r["gpu_memory_source"] == "datasheet" ? " (" + pg.t.value("vram_from_datasheet", "") + ")" : "")
                                 : pg.t.value("unknown", "")},
                    {"per_gpu", money_opt(r["usd_per_gpu_hour"], pg.lang, pg.t) + alt_mark},
                    {"per_gpu_sort", r["usd_per_gpu_hour"].is_number() ? fmt::format("{:.4f}", r["usd_per_gpu_hour"].get<double>()) : "1e9"},
                    {"per_hour", money_opt(r["usd_per_hour"], pg.lang, pg.t) + alt_mark},
                    {"provider", r["provider"]},
                    {"instance_type", r["instance_type"]},
                    {"region", r["region"].get<std::string>() + (zone.empty() ? "" : " (" + zone + ")")},
                    // The link as people write it (NVLink, PCIe); unknown in the page's language.
                    {"link", [&] {
                       const std::string l = r["intra_node_link"].is_string() ? r["intra_node_link"].get<std::string>() : "";
                       if (l == "nvlink") return std::string("NVLink");
                       if (l == "pcie") return std::string("PCIe");
                       return l.empty() || l == "unknown" ? pg.t.value("unknown", "") : l;
                     }()},
                    {"source", r["source"].is_string() ? r["source"] : json("")},
                    {"source_href", [&] {
                       const auto href = source_href(locator);
                       return href ? json(*href) : json(nullptr);
                     }()},
                    // First seen, then "→ last seen" when a later fetch found the same price (docs/fetch.md).
                    {"observed", [&] {
                       if (observed.empty()) return pg.t.value("undated", "undated");
                       std::string text = date_text(observed, pg.lang, pg.t);
                       const std::string last = r["last_seen_at"].is_string() ? r["last_seen_at"].get<std::string>() : "";
                       if (!last.empty() && last.substr(0, 10) != observed.substr(0, 10))
                         text += " \u2192 " + date_text(last, pg.lang, pg.t);
                       return text;
                     }()},
                    {"observed_sort", observed},
                    // Days between the price's date and today (the request's `today`): unknown when undated.
                    {"age", r["age_days"].is_number() ? number(r["age_days"].get<double>(), 0, pg.lang) : pg.t.value("unknown", "")},
                    {"age_sort", r["age_days"].is_number() ? std::to_string(r["age_days"].get<long long>()) : "1e9"},
                    {"tier", tier},
                    {"tier_text", pg.t.value("tier_" + tier, tier)},
                    {"history_href", pg.prefix + "/offers/history?id=" + httplib::detail::encode_query_param(r["id"].get<std::string>())}};
        view.push_back(row);
      }
      // Groups count every matching offer, not the rows shown (the page lists at most in.limit:
      // a trial saw "A100 SXM 40GB | 3 offers" where the catalog has 227). Their statistics are
      // the API's and the CLI's (group_offer_prices: ordered by median, flagged prices left out
      // unless include_flagged); the page computed its own min–max over flagged prices too, in
      // alphabetical order and without the median (trial50 #12).
      json gview = json::array();
      if (!group_by.empty()) {
        api::OffersInput every = in;
        every.limit = 0;
        every.group_by = group_by;
        const api::OffersOutput grouped = api::run_offers(every, ctx_);
        for (const OfferGroupStats& g : grouped.groups) {
          gview.push_back({{"gpu", g.key}, {"offers", g.offers},
                           {"median", g.median_usd_per_gpu_hour ? money(*g.median_usd_per_gpu_hour, pg.lang) : pg.t.value("unknown", "")},
                           {"range", g.min_usd_per_gpu_hour && g.max_usd_per_gpu_hour
                                         ? money(*g.min_usd_per_gpu_hour, pg.lang) + " – " + money(*g.max_usd_per_gpu_hour, pg.lang)
                                         : pg.t.value("unknown", "")}});
        }
      }
      ctx["rows"] = view;
      ctx["groups"] = gview;
      ctx["summary"] = fill(plural_text(pg.t, "offers_summary", pg.lang,
                                        {{"shown", static_cast<double>(view.size())}, {"total", static_cast<double>(out.counts.offers)}}),
                            {{"shown", number(static_cast<double>(view.size()), 0, pg.lang)},
                                                               {"total", number(static_cast<double>(out.counts.offers), 0, pg.lang)},
                                                               {"today", date_text(out.query.now_date, pg.lang, pg.t)}});
    } catch (const Error& e) {
      res.status = http_status(e.kind());
      ctx["error"] = error_text(e, pg.lang, pg.t);
    }
    send_page(res, pg, "offers", ctx, pg.t.value("nav_offers", ""));
  }

  void history(const Page& pg, const httplib::Request& req, httplib::Response& res) {
    json ctx;
    try {
      refuse_repeated_params(req);
      api::HistoryInput in;
      in.offer_id = req.get_param_value("id");
      const json h = api::history_to_json(api::run_history(in, ctx_));
      json rows = json::array();
      for (const auto& o : h["observations"]) {
        rows.push_back({{"observed", o["observed_at"].is_string() ? date_text(o["observed_at"].get<std::string>(), pg.lang, pg.t)
                                                                  : pg.t.value("undated", "")},
                        {"kind", price_kind_label(o["kind"].get<std::string>(), pg.t)},
                        {"per_hour", money(o["usd_per_hour"].get<double>(), pg.lang)},
                        {"per_gpu", money_opt(o["usd_per_gpu_hour"], pg.lang, pg.t)},
                        {"dataset", o["dataset"]},
                        {"locator", o["locator"]}});
      }
      ctx = {{"id", h["offer_id"]}, {"rows", rows}, {"chart", price_svg(h["observations"], pg.lang, pg.t)}};
    } catch (const Error& e) {
      res.status = http_status(e.kind());
      ctx["error"] = error_text(e, pg.lang, pg.t);
    }
    send_page(res, pg, "history", ctx, pg.t.value("price_history", ""));
  }

  void size(const Page& pg, const httplib::Request& req, httplib::Response& res) {
    const std::string model = req.has_param("model") ? req.get_param_value("model") : "llama-3.1-70b";
    const std::string task = req.has_param("task") ? req.get_param_value("task") : "qlora";
    json ctx = {{"models", model_options(model)},
                {"tasks", select_options({"pretrain", "full", "lora", "qlora", "serve"}, task, &pg.t, "task_")},
                {"gpus", req.get_param_value("gpus")},
                {"gpu", req.get_param_value("gpu")},
                {"seq", req.get_param_value("seq")},
                {"context", req.get_param_value("context")},
                {"concurrency", req.get_param_value("concurrency")}};
    try {
      refuse_repeated_params(req);
      refuse_unknown_params(req, api::size_fields());
      if (req.has_param("model")) {
        api::SizeInput in;
        const json body = form_body(req, api::size_fields(), pg.lang);
        api::read_fields(in, body, api::size_fields());
        const json out = api::to_json(api::run_size(in, ctx_));
        json terms = json::array();
        for (const auto& t : out["per_gpu"]["terms"])
          terms.push_back({{"name", term_label(t["name"].get<std::string>(), pg.t)}, {"gb", gb(t["bytes"].get<double>(), pg.lang)},
                           {"share", number(100 * t["share"].get<double>(), 1, pg.lang) + " %"}});
        json warnings = json::array();
        for (const auto& w : out["per_gpu"]["warnings"]) {
          const std::string code(api::sizing_warning_code(w.get<std::string>()));
          warnings.push_back(warning_text(code.empty() ? "" : "size_" + code, w.get<std::string>(), pg.lang, pg.t));
        }
        // No GPU holds it: say so, and which single change would make it fit (sized again).
        json alternatives = json::array();
        if (out["fits"].empty()) {
          for (const auto& a : api::size_alternatives(body, ctx_)) {
            const std::string value = a.value.is_string() ? a.value.get<std::string>() : number(a.value.get<double>(), 0, pg.lang);
            alternatives.push_back(
                {{"change", fill(pg.t.value("size_change_" + a.field, a.field + " = {value}"), {{"value", value}})},
                 {"fit", fill(pg.t.value("size_fits_on", ""), {{"count", std::to_string(a.fit["gpu_count"].get<int>())},
                                                               {"gpu", a.fit["gpu"].get<std::string>()},
                                                               {"per_gpu", gb(a.fit["per_gpu_bytes"].get<double>(), pg.lang)}})}});
          }
        }
        json fits = json::array();
        for (const auto& f : out["fits"])
          fits.push_back({{"gpu", f["gpu"]}, {"count", f["gpu_count"]}, {"per_gpu", gb(f["per_gpu_bytes"].get<double>(), pg.lang)},
                          {"capacity", gb(f["capacity_bytes"].get<double>(), pg.lang)},
                          {"headroom", number(100 * f["headroom_fraction"].get<double>(), 0, pg.lang) + " %"}});
        ctx["result"] = {{"model", out["model"]["name"]},
                         {"total", gb(out["per_gpu"]["total_bytes"].get<double>(), pg.lang)},
                         {"bar", memory_svg(out, pg.lang, pg.t)},
                         {"terms", terms},
                         {"fits", fits},
                         {"no_fit", fits.empty()},
                         {"alternatives", alternatives},
                         {"has_alternatives", !alternatives.empty()},
                         {"warnings", warnings},
                         {"assumption", pg.lang == "en" ? out["fit_assumption"].get<std::string>()
                                        : pg.t.value(in.task != "serve" ? "fit_assumption_training"
                                                     : out["fit_assumption"].get<std::string>().rfind("each replica is one GPU", 0) == 0
                                                         ? "fit_assumption_serving_whole"
                                                         : "fit_assumption_serving",
                                                     "")}};
        // Where the model's config comes from, as the API's model.source says it (trial10c D2).
        ctx["result"].update(model_origin_view(out["model"]["name"].get<std::string>()));
        // gpu=NAME: what one such GPU holds, as the CLI's last line and /api/size's limits say it
        // (trial56 #6: the page read gpu= but never answered the question).
        if (out.contains("limits") && out["limits"].is_object()) {
          const json& l = out["limits"];
          auto count_or_none = [&](const char* key, const char* unit_key) {
            const double v = l[key].get<double>();
            if (!(v >= 1)) return pg.t.value("size_limit_none", "none fits");
            const std::string n = number(v, 0, pg.lang);
            return unit_key ? fill(pg.t.value(unit_key, "{count}"), {{"count", n}}) : n;
          };
          const bool serving = l.contains("max_context_tokens");
          json vars = {{"gpu", l["gpu"]}, {"capacity", gb(l["capacity_bytes"].get<double>(), pg.lang)}};
          if (serving) {
            vars["at_concurrency"] = number(l["at_concurrency"].get<double>(), 0, pg.lang);
            vars["at_context"] = number(l["at_context_tokens"].get<double>(), 0, pg.lang);
            vars["max_context"] = count_or_none("max_context_tokens", "size_limit_tokens");
            vars["max_concurrency"] = count_or_none("max_concurrency", nullptr);
          } else {
            vars["at_micro_batch"] = number(l["at_micro_batch"].get<double>(), 0, pg.lang);
            vars["at_seq"] = number(l["at_seq_len"].get<double>(), 0, pg.lang);
            vars["max_seq"] = count_or_none("max_seq_len", "size_limit_tokens");
            vars["max_micro_batch"] = count_or_none("max_micro_batch", nullptr);
          }
          // Serving where the weights alone exceed the GPU: say so, as the CLI does (trial57 #10:
          // "none fits" twice, with no reason).
          double fixed = 0;
          for (const auto& term : out["per_gpu"]["terms"])
            if (term["name"] == "weights" || term["name"] == "cuda_context") fixed += term["bytes"].get<double>();
          const double margin = out["request"].value("margin", 0.0);
          const double usable = l["capacity_bytes"].get<double>() * (1.0 - margin);
          const bool weights_alone = serving && l["max_context_tokens"].get<double>() < 1 &&
                                     l["max_concurrency"].get<double>() < 1 && fixed > usable;
          if (weights_alone) {
            vars["fixed"] = gb(fixed, pg.lang);
            vars["usable"] = gb(usable, pg.lang);
          }
          ctx["result"]["limit"] = fill(pg.t.value(weights_alone ? "size_limit_weights_alone"
                                                   : serving     ? "size_limit_serving"
                                                                 : "size_limit_training",
                                                   ""),
                                        vars);
        }
        // Each number's explanation on demand (issue 10: "/size and /plan ... each number's
        // explanation"): a link asks for it (explain=1); with it, every term's formula and source.
        if (out.contains("explanation") && out["explanation"].is_array()) {
          json lines = json::array();
          for (const auto& l : out["explanation"])
            lines.push_back({{"term", term_label(l["name"].get<std::string>(), pg.t)},
                             {"code", l["name"]},
                             {"gb", gb(l["bytes"].get<double>(), pg.lang)},
                             {"formula", explain_text("formula", l["formula"].get<std::string>(), pg.lang, pg.t)},
                             {"source", explain_text("source", l["source"].get<std::string>(), pg.lang, pg.t)}});
          ctx["result"]["explain_lines"] = lines;
          ctx["result"]["has_explain"] = true;
        } else {
          std::string query = "?";
          for (const auto& [k, v] : body.items())
            query += (query.size() > 1 ? "&" : "") + k + "=" + httplib::detail::encode_query_param(api::field_value_text(v));
          ctx["result"]["explain_href"] = pg.prefix + "/size" + query + "&explain=1";
        }
      }
    } catch (const Error& e) {
      res.status = http_status(e.kind());
      ctx["error"] = error_text(e, pg.lang, pg.t);
    }
    send_page(res, pg, "size", ctx, pg.t.value("nav_size", ""));
  }

  void plan(const Page& pg, const httplib::Request& req, httplib::Response& res) {
    const std::string model = req.has_param("model") ? req.get_param_value("model") : "llama-3.1-70b";
    const std::string task = req.has_param("task") ? req.get_param_value("task") : "lora";
    json ctx = {{"models", model_options(model)},
                {"tasks", select_options({"pretrain", "full", "lora", "qlora", "serve", "images"}, task, &pg.t, "task_")},
                {"tokens", req.has_param("tokens") ? req.get_param_value("tokens") : "5e8"},
                {"quants", select_options({"", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "q4_k_m", "q8_0", "q4_0", "q2_k", "mxfp4"},
                                          form_quant(req.get_param_value("quant")))}};
    ctx["quants"][0]["label"] = pg.t.value("form_default", "default");
    // Serving's KV cache type and engine (trial50 #10: typed in the URL only, lost on resubmission).
    ctx["kv_dtypes"] = select_options({"", "bf16", "fp16", "fp8", "int8", "int4", "q8_0"}, req.get_param_value("kv_dtype"));
    ctx["kv_dtypes"][0]["label"] = pg.t.value("form_default", "default");
    ctx["engines"] = select_options({"", "vllm", "tensorrt-llm", "sglang", "llama.cpp"}, req.get_param_value("engine"));
    ctx["engines"][0]["label"] = pg.t.value("form_default", "default");
    // The training stack (trial54 #8: /plan?...&stack=megatron was planned so, but the form had no
    // stack field, so resubmitting it dropped the stack).
    ctx["stacks"] = select_options({"", "hf", "fsdp", "deepspeed", "megatron", "unsloth"}, req.get_param_value("stack"));
    ctx["stacks"][0]["label"] = pg.t.value("form_default", "default");
    // The form's other fields, echoed as typed (the JSON API's and the CLI's names: api/plan.cpp).
    for (const char* name : {"filter", "seq", "rps", "concurrency", "hours", "ttft_ms", "tpot_ms", "images", "deadline", "budget",
                             "prompt_tokens", "output_tokens", "requests", "gpus", "max_gpus", "tp"})
      ctx[name] = req.get_param_value(name);
    try {
      refuse_repeated_params(req);
      refuse_unknown_params(req, api::plan_fields());
      if (req.has_param("model")) {
        json body = form_body(req, api::plan_fields(), pg.lang);
        // The form keeps its training fields (tokens, stack) when the task changes to serving or
        // images, which do not read them: dropped here as the form's own values, not refused.
        if (task == "serve" || task == "images") {
          body.erase("tokens");
          body.erase("stack");
        }
        run_plan_view(pg, body, std::nullopt, ctx);
      }
    } catch (const Error& e) {
      res.status = http_status(e.kind());
      ctx["error"] = error_text(e, pg.lang, pg.t);
    }
    send_page(res, pg, "plan", ctx, pg.t.value("nav_plan", ""));
  }

  void assistant(const Page& pg, const httplib::Request& req, httplib::Response& res) {
    const std::string q = req.get_param_value("q");
    json ctx = {{"q", q}};
    std::optional<api::AskResult> read;
    try {
      refuse_repeated_params(req);
      if (!q.empty()) read = api::understand(q, ctx_.gpus(), ctx_.clock().today());
    } catch (const Error& e) {  // a number out of range: said on the page, in its language
      res.status = http_status(e.kind());
      ctx["error"] = error_text(e, pg.lang, pg.t);
    }
    if (read) {
      const api::AskResult& ask = *read;
      json fields = json::array();
      for (const auto& f : ask.fields) {
        std::string shown = f.value.is_string()    ? f.value.get<std::string>()
                            : f.value.is_boolean() ? pg.t.value(f.value.get<bool>() ? "bool_true" : "bool_false", "")
                                                   : locale_count(f.value, pg.lang);
        if (f.name == "task") shown = pg.t.value("task_" + shown, shown);  // "service (inférence)"
        if (f.name == "budget_usd") shown = money(f.value.get<double>(), pg.lang);
        if (f.name == "deadline_seconds" || f.name == "hours")
          shown = duration(f.value.get<double>() * (f.name == "hours" ? 3600.0 : 1.0), pg.lang, pg.t);
        if (f.name == "budget_eur") shown += " EUR";
        if (f.name == "budget_thb") shown += " THB";
        if (f.name == "tpot_ms" || f.name == "ttft_ms") shown += " ms";
        if (!f.mark.empty()) shown = f.mark + " " + shown;  // "≥", "≈", "≤" as the sentence said
        // The form posts to /plan, whose fields are the plan request's (AskResult::plan_body): a
        // budget in USD is `budget`, a deadline `deadline` as a duration (a trial's Compute button
        // sent budget_usd and deadline_seconds, which /plan ignored). A value the planner does not
        // use (a budget in EUR or THB) is shown, not posted.
        std::string form_name = f.name;
        std::string form_value = f.value.is_string() ? f.value.get<std::string>() : api::field_value_text(f.value);
        if (f.name == "budget_usd") form_name = "budget";
        if (f.name == "deadline_seconds") {
          form_name = "deadline";
          const double s = f.value.get<double>();
          form_value = std::fmod(s, 3600.0) == 0 ? fmt::format("{:.0f}h", s / 3600) : fmt::format("{:.0f}s", s);
        }
        fields.push_back({{"name", form_name}, {"posted", f.not_used.empty()}, {"label", pg.t.value("field_" + f.name, f.name)},
                          {"value", form_value},
                          {"shown", shown}, {"source", f.source},
                          {"note", f.not_used.empty() ? std::string() : pg.t.value("ask_not_used_" + f.not_used, f.not_used)}});
      }
      json missing = json::array();
      for (const auto& m : ask.missing) missing.push_back({{"name", m}, {"label", pg.t.value("field_" + m, m)}});
      json ambiguous = json::array();
      for (const auto& a : ask.ambiguous) ambiguous.push_back({{"text", ambiguous_text(a, pg.lang)}});
      if (ask.model_candidates) ambiguous.push_back({{"text", model_candidates_text(*ask.model_candidates, pg.lang)}});
      ctx["ambiguous"] = ambiguous;
      if (!ask.unread.empty()) ctx["unread"] = unread_text(ask.unread, pg.lang);
      ctx["understood"] = fields;
      ctx["missing"] = missing;
      ctx["has_missing"] = !missing.empty();
      ctx["asked"] = true;
      if (ask.missing.empty()) {
        try {
          json body = ask.plan_body();
          if (!body.contains("limit")) body["limit"] = 10;
          run_plan_view(pg, body, ask, ctx);
        } catch (const Error& e) {
          res.status = http_status(e.kind());
          ctx["error"] = error_text(e, pg.lang, pg.t);
        }
      }
    }
    send_page(res, pg, "assistant", ctx, pg.t.value("nav_assistant", ""));
  }

  void workload(const Page& pg, const std::string& which, httplib::Response& res) {
    const json& numbers = live_numbers();
    std::map<std::string, std::string> vars;
    for (const auto& [k, v] : numbers.items())
      vars[k] = v.is_number() ? (k.find("usd") != std::string::npos ? money(v.get<double>(), pg.lang) : gb(v.get<double>(), pg.lang)) : v.get<std::string>();
    json sections = json::array();
    for (const auto& key : {"what_matters", "scale", "provider", "typical", "buying", "mistakes", "terms", "reading", "faq"}) {
      const std::string title_key = which + "_" + key + "_title";
      const std::string text_key = which + "_" + key;
      std::string title = pg.t.value(title_key, pg.t.value(std::string("guide_") + key + "_title", ""));
      std::string text = pg.t.value(text_key, pg.t.value(std::string("guide_") + key, ""));
      if (text.empty()) continue;
      sections.push_back({{"title", fill(title, vars)}, {"text", fill(text, vars)}});
    }
    json ctx = {{"heading", pg.t.value(which + "_title", "")},
                {"intro", fill(pg.t.value(which + "_intro", ""), vars)},
                {"rows", comparison(pg, which)},
                {"sections", sections},
                {"serving", which == "generative_ai"},
                {"serving_rule", fill(pg.t.value("serving_rank_rule", ""), serving_rule_vars(pg.lang))}};
    send_page(res, pg, "workload", ctx, pg.t.value(which + "_title", ""));
  }

 private:
  void run_plan_view(const Page& pg, json body, std::optional<api::AskResult> ask, json& ctx) {
    api::PlanInput in;
    if (!body.contains("today")) body["today"] = ctx_.clock().today();
    api::read_fields(in, body, api::plan_fields());
    api::PlanOutput out = api::run_plan(in, ctx_);
    if (!can_import_) api::drop_import_suggestions(out);  // a read-only server: no import to suggest
    json result = api::to_json(out);
    if (result.contains("explain")) {  // one plan, every number with its formula
      json lines = json::array();
      for (const auto& l : result["explain"])
        lines.push_back({{"term", explain_label(l["term"].get<std::string>(), pg.t)}, {"code", l["term"]}, {"value", explain_value(l["value"].get<double>(), pg.lang)},
                         {"unit", [&] {  // "bytes" → "octets", "tokens/s" → "jetons/s" (unit_<unit>, '/' as "_per_")
                            std::string u = l["unit"].is_string() ? l["unit"].get<std::string>() : "";
                            std::string key = "unit_" + u;
                            for (std::size_t p = key.find('/'); p != std::string::npos; p = key.find('/')) key.replace(p, 1, "_per_");
                            return u.empty() ? u : pg.t.value(key, u);
                          }()},
                         {"formula", explain_text("formula", l["formula"].get<std::string>(), pg.lang, pg.t)},
                         {"source", [&] {
                            std::string source = explain_text("source", l["source"].get<std::string>(), pg.lang, pg.t);
                            // The GPU's memory from the datasheet: its sources, each with its address.
                            if (l["term"] == "gpu_memory_capacity_bytes" && result["plan"]["gpu_name"].is_string())
                              if (const GpuSpec* spec = ctx_.gpus().try_find(result["plan"]["gpu_name"].get<std::string>()))
                                if (const std::string sources = gpu_sources_text(*spec); !sources.empty())
                                  source += " (" + sources + ")";
                            return source;
                          }()}});
      ctx["explain_lines"] = lines;
      ctx["has_explain"] = true;
      result = {{"plans", json::array({result["plan"]})}, {"warnings", json::array()}, {"no_plan", nullptr},
                {"model", out.result.model_name}, {"plans_total", out.result.plans_total}};
      body.erase("explain");
    }
    std::string query = "?";
    for (const auto& [k, v] : body.items()) query += (query.size() > 1 ? "&" : "") + k + "=" + httplib::detail::encode_query_param(api::field_value_text(v));
    ctx["plans"] = plans_view(result, pg.lang, pg.t, pg.prefix + "/plan" + query);
    ctx["model_origin"] = model_origin_view(out.result.model_name);  // as on /size (web10c leftover)
    // Serving plans have their own columns (replicas, batch, TTFT, TPOT, requests/s).
    const bool serving = std::any_of(result["plans"].begin(), result["plans"].end(), [](const json& p) { return p.contains("serving"); });
    ctx["serving_plans"] = serving;
    ctx["plan_columns"] = serving ? 16 : 11;  // the warnings row: one empty cell, then the rest
    ctx["pareto"] = pareto_svg(result["plans"], pg.lang, pg.t);
    ctx["result_warnings"] = warnings_view(result["warnings"], pg.lang, pg.t);
    ctx["has_result"] = true;
    ctx["has_plans"] = !result["plans"].empty();
    {  // The rule that picked the plan marked R, in the page's language (recommend_<code>).
      const PlanResult& res = out.result;
      const PlanRequest defaults;  // the horizon, premium and tie tolerance are not request fields
      const std::string key = "recommend_" + res.recommendation_rule_code;
      std::string text = !res.recommendation_rule_code.empty() && pg.t.contains(key)
                             ? fill(pg.t[key].get<std::string>(),
                                    {{"days", number(defaults.recommend_horizon_seconds / 86400.0, 0, pg.lang)},
                                     {"premium", number(defaults.recommend_max_cost_premium * 100.0, 0, pg.lang)},
                                     {"tie", number(defaults.time_tie_tolerance * 100.0, 0, pg.lang)}})
                             : page_wording(res.recommendation_rule, pg.t);
      const bool none = res.recommendation_rule_code.rfind("none_", 0) == 0;
      if (res.recommendation_time_ties && !none)
        text += fill(pg.t.value("recommend_time_ties", ""), {{"tolerance", number(defaults.time_tie_tolerance * 100.0, 0, pg.lang)},
                                                             {"ratio", number(defaults.speedup_max_cost_ratio, 0, pg.lang)}});
      if (!res.recommendation_evidence.empty() && !none) text += pg.t.value("recommend_evidence_" + res.recommendation_evidence, "");
      ctx["recommendation"] = text;
    }
    // What "rc:<modules>" in the layouts means when the search chose them (trial42 D1; the CLI's
    // footer line, api::searched_recompute_modules_text): the first plan that has them.
    if (const RecomputeModules chosen = api::searched_recompute_modules(out.request, out.result.plans); chosen != 0) {
      const bool mla = has_module(chosen, RecomputeModule::mla_up_proj);
      ctx["recompute_note"] = fill(pg.t.value(mla ? "plan_recompute_modules_mla" : "plan_recompute_modules_moe", ""),
                                   {{"modules", recompute_modules_name(chosen)}});
    }
    // What the layout cell's abbreviations mean, only those shown (the CLI's footer line,
    // api::layout_legend_text; trial43: VP had no legend).
    if (const api::LayoutAbbreviations abbr = api::layout_abbreviations(out.result.plans); abbr.training) {
      const auto part = [&](bool on, const char* key) { return on ? pg.t.value(key, std::string()) : std::string(); };
      ctx["layout_legend"] =
          fill(pg.t.value("layout_legend", ""),
               {{"vp", part(abbr.vp, "layout_legend_vp")},
                {"ep", part(abbr.ep, "layout_legend_ep") + part(abbr.etp, "layout_legend_etp")},
                {"rc", abbr.rc ? pg.t.value(abbr.modules ? "layout_legend_rc_modules" : "layout_legend_rc", std::string())
                               : std::string()}});
    }
    if (!result["no_plan"].is_null() && out.result.no_plan) {
      const NoPlanWords words = no_plan_words(*out.result.no_plan, pg.lang);
      ctx["no_plan"] = words.reason;
      ctx["suggestions"] = words.suggestions;
      ctx["no_plan_code"] = out.result.no_plan->code;
    }
    ctx["plan_summary"] = fill(plural_text(pg.t, "plan_summary", pg.lang,
                                           {{"shown", static_cast<double>(result["plans"].size())},
                                            {"total", result["plans_total"].get<double>()}}),
                               {{"model", result["model"].get<std::string>()},
                                                               {"shown", std::to_string(result["plans"].size())},
                                                               {"total", std::to_string(result["plans_total"].get<int>())}});
    if (ask && (ask->budget_usd || ask->deadline_seconds)) {
      const auto within = api::first_plan_within(*ask, out.result);
      ctx["within"] = fill(pg.t.value(api::within_text_key(*ask, within.has_value()), ""),
                           {{"rank", within ? std::to_string(*within + 1) : ""}});
    }
  }

  /// Per-GPU comparison rows from the offers (cheapest on-demand $/GPU-h per GPU) and the specs.
  json comparison(const Page& pg, const std::string& which) {
    api::OffersInput in;
    if (which == "large_model_training") in.filter = "gpus>=8";
    const api::OffersOutput out = api::run_offers(in, ctx_);
    // The price a row quotes comes from the best evidence first, as the planner ranks prices:
    // tier 0 clean and dated within the stale limit, 1 clean but stale, 2 clean but undated;
    // flagged prices (a data-quality rule fired) are never quoted. Tiers above 0 say so.
    struct Best {
      int tier = 3;
      double usd = 1e18;
      int offers = 0;
      std::set<std::string> networks, billing;
      std::string offer_id, provider;   ///< the quoted price's offer (trial52 #7: no provider or date)
      std::optional<std::string> seen;  ///< the date its price was seen (nullopt: undated)
    };
    std::map<std::string, Best> best;
    for (const auto& r : out.rows) {
      if (!r.offer.gpu_name || !r.usd_per_gpu_hour || !r.price) continue;
      if (which == "large_model_training" && r.offer.inter_node_network == InterNodeNetwork::unknown) continue;
      Best& b = best[*r.offer.gpu_name];
      ++b.offers;
      if (!r.offer.flags.empty()) continue;
      const int tier = !r.price->seen_at() ? 2 : r.stale.value_or(true) ? 1 : 0;
      if (tier < b.tier || (tier == b.tier && *r.usd_per_gpu_hour < b.usd)) {
        b.tier = tier;
        b.usd = *r.usd_per_gpu_hour;
        b.offer_id = r.offer.id;
        b.provider = r.offer.provider;
        b.seen = r.price->seen_at();
      }
      b.networks.insert(r.offer.inter_node_network == InterNodeNetwork::unknown
                            ? pg.t.value("unknown", "unknown")
                            : std::string(inter_node_network_name(r.offer.inter_node_network)));
      if (r.billing.granularity_seconds) b.billing.insert(*r.billing.granularity_seconds >= 3600 ? "1 h" : *r.billing.granularity_seconds >= 60 ? "1 min" : "1 s");
    }
    // Serving (/generative-ai): each GPU's cost per million output tokens on the reference
    // workload (api/serving_reference.hpp). Rows rank by it, clean dated prices first, among the
    // GPUs that hold a useful batch; the others follow, without a cost per token.
    const bool serving = which == "generative_ai";
    const api::ServingReference ref;
    std::optional<ModelArch> ref_arch;
    if (serving) {
      ModelSource src;
      src.preset = ref.model;
      ref_arch = resolve_model(src);
    }
    struct Row {
      int group;  ///< serving: 0 = holds a useful batch, 1 = does not
      int tier;
      double key;
      json view;
    };
    std::vector<Row> rows;
    for (const auto& [name, b] : best) {
      if (b.tier > 2) continue;  // only flagged prices: nothing to quote
      const GpuSpec* g = nullptr;
      try {
        g = &ctx_.gpus().find(name);
      } catch (const Error&) {
        continue;
      }
      const auto bw = g->memory_bandwidth();
      const auto bf16 = g->dense_flops(Dtype::bf16);
      const auto fp8 = g->dense_flops(Dtype::fp8);
      const auto int8 = g->dense_flops(Dtype::int8);
      auto join = [](const std::set<std::string>& s) {
        std::string o;
        for (const auto& x : s) o += (o.empty() ? "" : ", ") + x;
        return o;
      };
      const double bw_per_usd = bw ? *bw / 1e12 / b.usd : 0;
      json v = {{"gpu", name},
                {"vram", number(g->memory_bytes / 1e9, 0, pg.lang)},
                {"bandwidth", bw ? number(*bw / 1e12, 2, pg.lang) : pg.t.value("unknown", "")},
                {"bf16", bf16 ? number(*bf16 / 1e12, 0, pg.lang) : pg.t.value("unknown", "")},
                {"fp8", fp8 ? number(*fp8 / 1e12, 0, pg.lang) : "—"},
                {"int8", int8 ? pg.t.value("yes", "yes") : "—"},
                {"link", g->has_gpu_link() ? gpu_link_label(g->interconnect, pg.t) : "PCIe"},
                {"network", join(b.networks)},
                {"usd", money(b.usd, pg.lang) + (b.tier == 0 ? std::string()
                                                 : " (" + pg.t.value(b.tier == 1 ? "tier_stale" : "tier_undated", "") + ")")},
                {"bw_per_usd", number(bw_per_usd, 2, pg.lang)},
                // Whose price it is and when it was seen, linked to that offer's price history.
                {"price_provider", b.provider},
                {"price_seen", b.seen ? date_text(b.seen->substr(0, 10), pg.lang, pg.t) : pg.t.value("tier_undated", "")},
                {"price_href", pg.prefix + "/offers/history?id=" + httplib::detail::encode_query_param(b.offer_id)},
                {"billing", b.billing.empty() ? pg.t.value("unknown", "") : join(b.billing)},
                {"offers", b.offers}};
      int group = 0;
      double key = b.usd;
      if (serving) {
        const std::optional<api::GpuServing> sv = api::serve_reference_on(*ref_arch, *g, ref);
        // < 0: no cost per token (figures unknown, or no useful batch fits).
        const double per_m = sv && sv->fits ? api::usd_per_million_output_tokens(b.usd, sv->output_tokens_per_s).value_or(-1) : -1;
        v["tokens_per_s"] = sv && sv->output_tokens_per_s > 0 ? number(sv->output_tokens_per_s, 0, pg.lang) : "—";
        v["batch"] = sv ? number(static_cast<double>(sv->batch), 0, pg.lang) : "—";
        v["usd_per_m"] = per_m >= 0 ? money(per_m, pg.lang, 3) : !sv ? pg.t.value("unknown", "") : pg.t.value("serving_too_small", "");
        group = per_m >= 0 ? 0 : 1;
        key = per_m >= 0 ? per_m : -bw_per_usd;
      }
      if (which == "training" && g->memory_bytes < 20e9) continue;
      rows.push_back({group, b.tier, key, v});
    }
    std::sort(rows.begin(), rows.end(),
              [](const Row& a, const Row& b) { return std::tie(a.group, a.tier, a.key) < std::tie(b.group, b.tier, b.key); });
    json a = json::array();
    for (std::size_t i = 0; i < rows.size() && i < 25; ++i) a.push_back(rows[i].view);
    return a;
  }

  /// Numbers the guides quote, computed by gpuplan itself once (the catalog is read-only here).
  const json& live_numbers() {
    std::call_once(numbers_once_, [this] {
      auto per_gpu = [this](json body) {
        api::SizeInput in;
        api::read_fields(in, body, api::size_fields());
        return api::to_json(api::run_size(in, ctx_))["per_gpu"]["total_bytes"].get<double>();
      };
      json n = json::object();
      try {
        // LoRA and QLoRA as they are run: with gradient checkpointing (recompute full), as in the
        // QLoRA paper's recipes (Dettmers et al. 2023) and PEFT's guides; without it, the
        // activations of 4096-token sequences alone exceed one GPU (gpuplan size says so).
        n["qlora_70b_bytes"] =
            per_gpu({{"model", "llama-3.1-70b"}, {"task", "qlora"}, {"seq", 4096}, {"recompute", "full"}});
        n["lora_8b_bytes"] = per_gpu({{"model", "llama-3.1-8b"}, {"task", "lora"}, {"seq", 4096}, {"recompute", "full"}});
        n["full_8b_bytes"] = per_gpu({{"model", "llama-3.1-8b"}, {"task", "full"}, {"seq", 4096}});
        n["full_70b_zero3_64_bytes"] =
            per_gpu({{"model", "llama-3.1-70b"}, {"task", "full"}, {"seq", 4096}, {"gpus", 64}, {"zero", 3}, {"recompute", "full"}});
        n["serve_8b_bytes"] = per_gpu({{"model", "llama-3.1-8b"}, {"task", "serve"}, {"context", 8192}, {"concurrency", 16}});
        n["serve_70b_fp8_bytes"] =
            per_gpu({{"model", "llama-3.1-70b"}, {"task", "serve"}, {"quant", "fp8"}, {"context", 8192}, {"concurrency", 16}});
      } catch (const Error&) {
      }
      numbers_ = n;
    });
    return numbers_;
  }

  const api::Context& ctx_;
  const bool can_import_;  ///< the server has an import route (a write token)
  std::once_flag numbers_once_;
  json numbers_;
};

}  // namespace

const json& locale_texts(const std::string& lang) {
  return locale(std::find(kLanguages.begin(), kLanguages.end(), lang) != kLanguages.end() ? lang : "en");
}

std::string fill_text(std::string text, const std::map<std::string, std::string>& vars) { return fill(std::move(text), vars); }

std::string locale_money(double usd, const std::string& lang) { return money(usd, lang); }
std::string locale_duration(double seconds, const std::string& lang) { return duration(seconds, lang, locale_texts(lang)); }
std::string locale_count(double v, const std::string& lang) { return count_text(v, lang); }
std::string locale_count(const json& v, const std::string& lang) {
  if (!v.is_number_integer()) return count_text(v.get<double>(), lang);
  const std::string digits = v.dump();  // every digit of a 64-bit integer, a '-' before
  const std::size_t start = digits[0] == '-' ? 1 : 0;
  const std::string sep = lang == "fr" ? "\u202f" : ",";
  std::string out = digits.substr(0, start);
  for (std::size_t i = start; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += sep;
    out += digits[i];
  }
  return out;
}
json model_origin_view(const std::string& model_name) {
  const PresetInfo* preset = find_preset(model_name);
  if (!preset) return json::object();
  json v = {{"hf_id", preset->hf_id}, {"hf_url", preset->hf_url}};
  // The link is the address, the revision shown beside it.
  v["config_url"] = preset->config_url;
  if (!preset->config_revision.empty()) v["config_revision"] = preset->config_revision;
  return v;
}

namespace {
/// "A, B and C" in `lang`: `items` joined by commas, the last by `last` (the locale's ask_and or
/// ask_or), each in the language's quotation marks when `quote` (“…”; French «\u202f…\u202f»).
std::string word_list(const std::vector<std::string>& items, const std::string& lang, const std::string& last, bool quote) {
  const std::string open = !quote ? "" : lang == "fr" ? "«\u202f" : "“", close = !quote ? "" : lang == "fr" ? "\u202f»" : "”";
  std::string list;
  for (std::size_t i = 0; i < items.size(); ++i)
    list += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + open + items[i] + close;
  return list;
}
}  // namespace

std::string ambiguous_text(const api::AmbiguousField& field, const std::string& lang) {
  const json& t = locale(lang);
  const std::string readings = word_list(field.readings, lang, t.value("ask_and", " and "), true);
  return fill(t.value("ask_ambiguous", ""), {{"field", t.value("field_" + field.name, field.name)}, {"readings", readings}});
}

std::string model_candidates_text(const api::ModelCandidates& c, const std::string& lang) {
  const json& t = locale(lang);
  return fill(t.value("ask_model_candidates", ""), {{"words", word_list({c.words}, lang, "", true)},
                                                    {"candidates", word_list(c.presets, lang, t.value("ask_or", " or "), false)}});
}

std::string unread_text(const std::vector<std::string>& words, const std::string& lang) {
  if (words.empty()) return {};
  const json& t = locale(lang);
  return fill(t.value("ask_unread", ""), {{"words", word_list(words, lang, t.value("ask_and", " and "), true)}});
}

std::vector<std::string> warning_lines(const json& warnings, const std::string& lang) {
  std::vector<std::string> out;
  // English: the engine's sentence as `gpuplan plan` prints it, flags and commands included (the
  // pages' wording of them, page_wording, is for the web: trial10d saw `ask` print "“include
  // flagged prices”" and "/api/gpus" in a terminal). French and Thai: the locale's sentences.
  if (lang == "en") {
    for (const json& w : warnings) out.push_back("[" + w["code"].get<std::string>() + "] " + w["message"].get<std::string>());
    return out;
  }
  for (const json& w : warnings_view(warnings, lang, locale(lang)))
    out.push_back("[" + w["code"].get<std::string>() + "] " + w["message"].get<std::string>());
  return out;
}

NoPlanWords no_plan_words(const NoPlanReason& np, const std::string& lang) {
  const json& t = locale_texts(lang);
  // Worded by the reason's and each suggestion's code (web/locales no_plan_*, suggest_*), the
  // numbers from np.values; the engine's English sentence only where a code has no key.
  auto value = [&](const char* name) {
    const auto it = np.values.find(name);
    return it == np.values.end() ? 0.0 : it->second;
  };
  const std::map<std::string, std::string> vars = {
      {"smallest", gb(np.smallest_per_gpu_bytes, lang)},
      {"largest", gb(np.largest_gpu_bytes, lang)},
      {"usable", gb(np.largest_gpu_bytes * (1.0 - value("margin")), lang)},
      {"margin", number(value("margin") * 100.0, 0, lang)},
      {"max_nodes", number(value("max_nodes"), 0, lang)},
      {"deadline", duration(value("deadline_seconds_needed"), lang, t)},
      {"budget", money(value("budget_usd_needed"), lang, 0)},
      {"factor", number(value("gpu_factor"), 1, lang)},
      {"nodes", number(value("nodes_needed"), 0, lang)},
      {"instance", np.fastest ? np.fastest->instance_type : std::string()},
      {"tokens", number(value("tokens_max"), 0, lang)},
      {"tokens_for_budget", number(value("tokens_max_for_budget"), 0, lang)},
      {"ttft_ms", number(value("ttft_ms_needed"), 0, lang)},
      {"tpot_ms", number(value("tpot_ms_needed"), 0, lang)},
      {"ttft_ms_lowest", number(value("ttft_ms_lowest"), 0, lang)},
      {"tpot_ms_lowest", number(value("tpot_ms_lowest"), 0, lang)},
      {"startup_minutes", number(value("startup_minutes"), 0, lang)},
      {"startup_cost", money(value("startup_usd"), lang)},
      {"startup_instances", number(value("startup_instances"), 0, lang)},
      {"gpus", number(value("gpus"), 0, lang)},
      {"replicas_held", number(value("replicas_held"), 0, lang)},
      {"replicas_needed", number(value("replicas_needed"), 0, lang)},
      {"tp", number(value("tp"), 0, lang)},
      {"gpus_needed", number(value("gpus_needed"), 0, lang)},
      {"preemptions_per_day", number(value("preemptions_per_day"), 1, lang)},
      {"global_batch_seqs", number(value("global_batch_seqs"), 0, lang)},
      {"dp_min", number(value("dp_min"), 0, lang)},
      {"seq_tokens", number(value("seq_tokens"), 0, lang)},
      {"max_context_tokens", number(value("max_context_tokens"), 0, lang)},
      {"mtbf", duration(value("mtbf_hours") * 3600.0, lang, t)},
      {"restart", duration(value("restart_seconds"), lang, t)},
      {"checkpoint_write", duration(value("checkpoint_write_seconds"), lang, t)}};
  NoPlanWords out;
  const std::string reason_key = "no_plan_" + np.code;
  out.reason = !np.code.empty() && t.contains(reason_key) ? fill(t[reason_key].get<std::string>(), vars) : page_wording(np.reason, t);
  for (std::size_t i = 0; i < np.suggestions.size(); ++i) {
    const std::string key = i < np.suggestion_codes.size() ? "suggest_" + np.suggestion_codes[i] : std::string();
    out.suggestions.push_back(!key.empty() && t.contains(key) ? fill(t[key].get<std::string>(), vars) : page_wording(np.suggestions[i], t));
  }
  return out;
}

void RouteMethods::add(const std::string& pattern, std::string allow) { routes_.emplace_back(std::regex(pattern), std::move(allow)); }

std::optional<std::string> RouteMethods::allow_for(const std::string& path) const {
  for (const auto& [pattern, allow] : routes_)
    if (std::regex_match(path, pattern)) return allow;
  return std::nullopt;
}

/// The language of a page request, its link prefix ("/fr"; "/en" when chosen by Accept-Language)
/// and the path after the language segment: for the error pages of any path.
struct PageLanguage {
  std::string lang, prefix, path;
};
PageLanguage page_language_of(const httplib::Request& req) {
  std::string prefix, path = req.path;
  for (const auto& l : kLanguages) {
    const std::string p = "/" + l;
    if (req.path == p || req.path.rfind(p + "/", 0) == 0) {
      prefix = p;
      path = req.path.substr(p.size());
    }
  }
  const std::string lang = prefix.empty() ? pick_language(req) : prefix.substr(1);
  return {lang, prefix.empty() ? "/" + lang : prefix, path};
}

void send_method_not_allowed(const httplib::Request& req, httplib::Response& res, const std::string& allow) {
  // A page route answers a page in its language, as its 404 and 400 do (POST /fr/plan answered
  // English JSON: trial10b D8); the API and clients asking for JSON keep the JSON error.
  const bool api_path = req.path == "/api" || req.path.rfind("/api/", 0) == 0;
  const std::string accept = req.get_header_value("Accept");
  const bool wants_json = accept.find("application/json") != std::string::npos && accept.find("text/html") == std::string::npos;
  if (!api_path && !wants_json) {
    const auto [lang, prefix, path] = page_language_of(req);
    const Page pg{lang, prefix, path, locale(lang)};
    const std::string title = pg.t.value("method_not_allowed_title", "");
    const std::string text =
        fill(pg.t.value("error_http_method_not_allowed", ""), {{"method", req.method}, {"path", req.path}, {"allow", allow}});
    send_page(res, pg, "bad_request", {{"error", text}, {"path", path}, {"title", title}}, title);
    res.status = 405;
    res.set_header("Allow", allow);
    return;
  }
  res.status = 405;
  res.set_header("Allow", allow);
  const json body = {{"code", "method_not_allowed"},
                     {"message", req.method + " is not allowed on " + req.path},
                     {"field", ""},
                     {"expected", allow},
                     {"message_code", "http_method_not_allowed"},
                     {"values", {{"method", req.method}, {"path", req.path}, {"allow", allow}}}};
  res.set_content(dump_json(body) + "\n", "application/json");
}

void add_method_not_allowed(httplib::Server& http, const std::string& pattern, bool takes_post, RouteMethods& methods) {
  const std::string allow = takes_post ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
  methods.add(pattern, allow);
  auto refuse = [allow](const httplib::Request& req, httplib::Response& res) { send_method_not_allowed(req, res, allow); };
  // OPTIONS (RFC 9110 §9.3.7): 204 with the methods the route takes, no body.
  http.Options(pattern, [allow](const httplib::Request&, httplib::Response& res) {
    res.status = 204;
    res.set_header("Allow", allow);
  });
  if (takes_post) http.Get(pattern, refuse);
  else http.Post(pattern, refuse);
  http.Put(pattern, refuse);
  http.Patch(pattern, refuse);
  http.Delete(pattern, refuse);
}

void send_bad_query_page(const std::string& lang, const std::string& prefix, const std::string& path, const Error& e,
                         httplib::Response& res);

void send_not_found_page(const httplib::Request& req, httplib::Response& res) {
  const auto [lang, prefix, path] = page_language_of(req);
  // A path that is not valid percent-encoding ("/fr/off%zzers") is a bad request, as the API's
  // path_not_percent_encoded, not a missing page (trial of issue 10); the links lead home.
  try {
    check_path_percent_encoding(req.target, "/path");
  } catch (const Error& e) {
    send_bad_query_page(lang, prefix.empty() ? "/" + lang : prefix, "", e, res);
    return;
  }
  const Page pg{lang, prefix, path, locale(lang)};
  send_page(res, pg, "not_found", json::object(), pg.t.value("not_found_title", ""));
  res.status = 404;
}

/// 400 "bad request" page in the page's language for a query string the pages do not read (a
/// parameter that is not valid percent-encoding): the error's sentence names the parameter; the
/// page shows none of the query's text (its language links and its retry link drop the query).
void send_bad_query_page(const std::string& lang, const std::string& prefix, const std::string& path, const Error& e,
                         httplib::Response& res) {
  const Page pg{lang, prefix, path, locale(lang)};
  send_page(res, pg, "bad_request", {{"error", error_text(e, lang, pg.t, false)}, {"path", path}},
            pg.t.value("bad_request_title", ""));
  res.status = 400;
}

/// A comparison page's route. It takes no query parameters: any is refused as the form pages
/// refuse an unknown one (trial50 #21: /generative-ai?sort=foo was a 200 page that ignored it).
std::function<void(const Page&, const httplib::Request&, httplib::Response&)> workload_route(std::shared_ptr<Pages> pages,
                                                                                                std::string which) {
  return [pages, which](const Page& p, const httplib::Request& q, httplib::Response& r) {
    if (!q.params.empty()) {
      const std::string k = q.params.begin()->first;
      try {
        throw_invalid_coded("/" + k, "unknown_field", {{"name", k}, {"known", "—"}},
                            "unknown query parameter", "no query parameters on this page");
      } catch (const Error& e) {
        send_bad_query_page(p.lang, p.prefix, p.path, e, r);
        return;
      }
    }
    pages->workload(p, which, r);
  };
}

void add_pages(httplib::Server& http, const api::Context& ctx, RouteMethods& methods, bool can_import) {
  auto pages = std::make_shared<Pages>(ctx, can_import);
  using Handler = std::function<void(const Page&, const httplib::Request&, httplib::Response&)>;
  std::vector<std::pair<std::string, Handler>> routes = {
      {"/", [pages](const Page& p, const httplib::Request& q, httplib::Response& r) { pages->index(p, q, r); }},
      {"/offers", [pages](const Page& p, const httplib::Request& q, httplib::Response& r) { pages->offers(p, q, r); }},
      {"/offers/history", [pages](const Page& p, const httplib::Request& q, httplib::Response& r) { pages->history(p, q, r); }},
      {"/size", [pages](const Page& p, const httplib::Request& q, httplib::Response& r) { pages->size(p, q, r); }},
      {"/plan", [pages](const Page& p, const httplib::Request& q, httplib::Response& r) { pages->plan(p, q, r); }},
      {"/assistant", [pages](const Page& p, const httplib::Request& q, httplib::Response& r) { pages->assistant(p, q, r); }},
      {"/training", workload_route(pages, "training")},
      {"/generative-ai", workload_route(pages, "generative_ai")},
      {"/large-model-training", workload_route(pages, "large_model_training")},
  };
  // Rendered pages by (language, URL with its query) on the same data version and day
  // (ResponseCache): a page is a pure function of those.
  auto cache = std::make_shared<ResponseCache>(512);
  for (const auto& route_entry : routes) {
    const std::string& path = route_entry.first;
    const auto& handler = route_entry.second;  // named, not a structured binding: clang 14 cannot capture those
    for (const std::string prefix : {"", "/en", "/fr", "/th"}) {
      const std::string route = prefix + (prefix.empty() || path != "/" ? path : "");
      const std::string page_path = path;
      add_method_not_allowed(http, prefix.empty() || path != "/" ? route : prefix + "/?", false, methods);
      http.Get(prefix.empty() || path != "/" ? route : prefix + "/?",
               [handler, prefix, page_path, cache, &ctx](const httplib::Request& req, httplib::Response& res) {
                 const std::string lang = prefix.empty() ? pick_language(req) : prefix.substr(1);
                 try {  // before the cache: leniently decoded, ?q=%zz and ?q=%25zz were one key
                   check_query_percent_encoding(req.target);
                 } catch (const Error& e) {
                   send_bad_query_page(lang, prefix.empty() ? "/" + lang : prefix, page_path == "/" ? "" : page_path, e, res);
                   return;
                 }
                 std::string url = lang + "\x1f" + req.path;
                 for (const auto& [k, v] : req.params) url += "\n" + k + "=" + v;
                 const std::string key = ResponseCache::key(ctx, url);
                 if (auto hit = cache->get(key)) {
                   res.set_header("Content-Language", hit->content_language);
                   res.set_header("Vary", "Accept-Language");
                   res.set_content(hit->body, hit->content_type);
                   return;
                 }
                 const Page pg{lang, prefix.empty() ? "/" + lang : prefix, page_path == "/" ? "" : page_path, locale(lang),
                               query_of(req)};
                 try {
                   handler(pg, req, res);
                   if (res.status == -1 || res.status == 200) {
                     cache->put(key, CachedResponse{res.body, res.get_header_value("Content-Type"), "", lang});
                   }
                 } catch (const Error& e) {
                   res.status = http_status(e.kind());
                   res.set_content("<!doctype html><title>gpuplan</title><p>" + html_escape(e.message()) + "</p>", "text/html; charset=utf-8");
                 }
               });
    }
  }
  const auto content_type = [](const std::string& file) {
    return file.ends_with(".js") ? "application/javascript" : file.ends_with(".svg") ? "image/svg+xml" : "text/css";
  };
  for (const std::string file : {"app.js", "app.css", "favicon.svg"}) {
    add_method_not_allowed(http, "/static/" + file, false, methods);
    http.Get("/static/" + file, [file, content_type](const httplib::Request&, httplib::Response& res) {
      const std::string_view bytes = web_file("static/" + file);
      res.set_header("Cache-Control", "max-age=3600");
      res.set_content(std::string(bytes), content_type(file));
    });
  }
  // Browsers ask for /favicon.ico whatever the page links (trial 9: a 404 in every server log):
  // the same icon, as SVG (every browser the pages target reads an SVG icon).
  add_method_not_allowed(http, "/favicon.ico", false, methods);
  http.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "max-age=86400");
    res.set_content(std::string(web_file("static/favicon.svg")), "image/svg+xml");
  });
}

}  // namespace gpuplan::server
