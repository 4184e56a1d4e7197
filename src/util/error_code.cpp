#include "util/error_code.hpp"

#include <algorithm>
#include <array>

namespace gpuplan {

void throw_invalid_coded(std::string where, std::string code, std::map<std::string, std::string> values, std::string message,
                         std::string expected) {
  throw CodedError(ErrorKind::invalid_input, std::move(where), std::move(message), std::move(expected), std::move(code),
                   std::move(values));
}

void throw_not_found_coded(std::string where, std::string code, std::map<std::string, std::string> values,
                           std::string message, std::string expected) {
  throw CodedError(ErrorKind::not_found, std::move(where), std::move(message), std::move(expected), std::move(code),
                   std::move(values));
}

void rethrow_at(const Error& e, std::string where) {
  if (const ErrorCode* c = error_code_of(e))
    throw CodedError(e.kind(), std::move(where), e.message(), e.expected(), c->code, c->values);
  throw Error(e.kind(), std::move(where), e.message(), e.expected());
}

const ErrorCode* error_code_of(const Error& e) noexcept {
  const auto* c = dynamic_cast<const ErrorCode*>(&e);
  return c != nullptr && !c->code.empty() ? c : nullptr;
}

namespace {
// Sorted; tests/server/locales_test.cpp checks each has error_<code> in web/locales/{en,fr,th}.json.
constexpr std::array<std::string_view, 144> kCodes = {
    "ambiguous_model",
    "body_empty",
    "body_not_object",
    "both_given",
    "cli_only_field",
    "cluster_size_missing",
    "count_not_exact",
    "cuda_graph_needs_megatron",
    "date_before_earliest",
    "ep_not_dividing_dp",
    "ep_not_dividing_experts",
    "ep_on_dense_model",
    "ep_option_without_ep",
    "estimate_training_only",
    "expert_grid_not_dividing",
    "expert_grid_not_dividing_gpus",
    "expert_tp_on_dense_model",
    "field_not_for_task",
    "filter_bad_character",
    "filter_clause_before",
    "filter_empty_value",
    "filter_gpu_name_empty",
    "filter_lone_bang",
    "filter_missing_clause",
    "filter_missing_value",
    "filter_needs_operator",
    "filter_negative_value",
    "filter_not_a_date",
    "filter_not_a_number",
    "filter_not_a_whole_number",
    "filter_number_out_of_range",
    "filter_operator_not_for_field",
    "filter_operator_on_boolean",
    "filter_operator_without_field",
    "filter_quoted_field_name",
    "filter_too_deep",
    "filter_too_long",
    "filter_too_many_clauses",
    "filter_unbalanced_close",
    "filter_unclosed_paren",
    "filter_unexpected",
    "filter_unknown_field",
    "filter_unknown_unit",
    "filter_unknown_value",
    "filter_unterminated_quote",
    "fresh_above_stale",
    "global_batch_exceeds_tokens",
    "gpu_missing",
    "gpus_nodes_not_rentable",
    "gpus_not_equal_layout",
    "gpus_not_multiple_of_layout",
    "gpus_not_multiple_of_node",
    "gpus_not_multiple_of_offered_nodes",
    "gpus_not_multiple_of_pins",
    "gpus_not_split_over_nodes",
    "gpus_split_not_rentable",
    "grads_16bit_needs_megatron",
    "heads_not_dividing_hidden",
    "hidden_not_multiple_of_head_dim",
    "http_bad_request",
    "http_internal_error",
    "http_method_not_allowed",
    "http_not_found",
    "http_not_implemented",
    "http_payload_too_large",
    "http_read_only",
    "http_unauthorized",
    "http_uri_too_long",
    "image_side_not_multiple_of_16",
    "image_side_too_small",
    "import_refused",
    "integer_far_out_of_range",
    "integer_out_of_range",
    "json_duplicate_key",
    "json_malformed",
    "json_number_out_of_range",
    "json_text_not_clean",
    "json_too_deep",
    "json_unreadable",
    "kv_heads_not_dividing_heads",
    "kv_tokens_too_large",
    "layout_training_only",
    "load_missing",
    "lora_targets_missing",
    "model_missing",
    "model_sources_conflict",
    "moe_dispatcher_needs_megatron",
    "moe_option_on_dense_model",
    "negative",
    "network_speed_missing",
    "not_a_date",
    "not_boolean",
    "not_count",
    "not_decoder_model",
    "not_diffusion_model",
    "not_duration",
    "not_file_name",
    "not_integer",
    "not_number",
    "not_positive",
    "not_string",
    "number_out_of_range",
    "offload_params_needs_zero3",
    "parameter_twice",
    "path_not_percent_encoded",
    "plan_does_not_exist",
    "pp_exceeds_layers",
    "pp_layers_count",
    "pp_layers_needs_pp",
    "pp_layers_sum",
    "qlora_needs_16_bit",
    "query_not_percent_encoded",
    "query_text_not_clean",
    "question_budget_too_large",
    "question_number_out_of_range",
    "question_value_not_positive",
    "recompute_module_not_in_model",
    "recompute_module_not_modelled",
    "recompute_modules_needs_megatron",
    "recompute_modules_needs_selective",
    "requests_missing",
    "seq_micro_batch_too_large",
    "serve_not_training",
    "serving_only_field",
    "shape_exceeds_params",
    "shape_needs_params",
    "stack_layout_unsupported",
    "text_not_clean",
    "today_before_observations",
    "tokens_below_one_sequence",
    "tokens_missing",
    "too_large",
    "tp_comm_overlap_unsupported",
    "tp_exceeds_node",
    "tp_kv_heads_mismatch",
    "tp_not_dividing_heads",
    "training_option_only",
    "unknown_choice",
    "unknown_field",
    "unknown_gpu",
    "unknown_model",
    "unknown_model_name_too_long",
    "unknown_model_no_near",
    "unknown_offer",
};
static_assert(std::is_sorted(kCodes.begin(), kCodes.end()));
}  // namespace

std::span<const std::string_view> error_message_codes() noexcept { return kCodes; }

}  // namespace gpuplan
