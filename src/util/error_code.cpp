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

const ErrorCode* error_code_of(const Error& e) noexcept {
  const auto* c = dynamic_cast<const ErrorCode*>(&e);
  return c != nullptr && !c->code.empty() ? c : nullptr;
}

namespace {
// Sorted; tests/server/locales_test.cpp checks each has error_<code> in web/locales/{en,fr,th}.json.
constexpr std::array<std::string_view, 48> kCodes = {
    "body_not_object",
    "both_given",
    "cli_only_field",
    "filter_clause_before",
    "filter_empty_value",
    "filter_gpu_name_empty",
    "filter_lone_bang",
    "filter_missing_clause",
    "filter_missing_value",
    "filter_needs_operator",
    "filter_not_a_date",
    "filter_not_a_number",
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
    "gpus_not_multiple_of_layout",
    "integer_out_of_range",
    "load_missing",
    "model_missing",
    "not_a_date",
    "not_boolean",
    "not_count",
    "not_duration",
    "not_integer",
    "not_number",
    "not_positive",
    "not_string",
    "parameter_twice",
    "requests_missing",
    "serve_not_training",
    "tokens_missing",
    "too_large",
    "tp_not_dividing_heads",
    "unknown_choice",
    "unknown_field",
    "unknown_gpu",
    "unknown_model",
};
static_assert(std::is_sorted(kCodes.begin(), kCodes.end()));
}  // namespace

std::span<const std::string_view> error_message_codes() noexcept { return kCodes; }

}  // namespace gpuplan
