#pragma once
/// Errors a front end words itself (issue 10): a stable message code and the values it quotes.
///
/// gpuplan::Error's message is one English sentence for the CLI. An error that a web page (or an
/// API client) must show in its own language also carries ErrorCode: `code` names the sentence
/// (web/locales error_<code> in en/fr/th) and `values` the words and numbers it quotes, by name,
/// as text. A value whose name ends in "_field" is a request field's JSON name ("dataset_tokens"):
/// each front end writes it in its own form (the CLI's flag "--dataset-tokens", the API's pointer
/// "/dataset_tokens", a page's field name). Every code is listed in error_message_codes() (a test
/// checks each has its sentence in every locale).
///
/// CodedError is an Error with an ErrorCode; FilterError (catalog/filter.hpp) is one as well.
/// error_code_of(e) finds the code of any of them (nullptr when the error has none).
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gpuplan {

struct ErrorCode {
  ErrorCode() = default;
  ErrorCode(std::string c, std::map<std::string, std::string> v) : code(std::move(c)), values(std::move(v)) {}
  virtual ~ErrorCode() = default;
  ErrorCode(const ErrorCode&) = default;
  ErrorCode& operator=(const ErrorCode&) = default;
  std::string code;                            ///< "not_positive", "unknown_model", ... ("" = none)
  std::map<std::string, std::string> values;  ///< quoted values by name, as text
};

class CodedError : public Error, public ErrorCode {
 public:
  CodedError(ErrorKind kind, std::string where, std::string message, std::string expected, std::string message_code,
             std::map<std::string, std::string> message_values)
      : Error(kind, std::move(where), std::move(message), std::move(expected)),
        ErrorCode(std::move(message_code), std::move(message_values)) {}
};

/// Throws CodedError{invalid_input}.
[[noreturn]] void throw_invalid_coded(std::string where, std::string code, std::map<std::string, std::string> values,
                                      std::string message, std::string expected = {});
/// Throws CodedError{not_found}.
[[noreturn]] void throw_not_found_coded(std::string where, std::string code, std::map<std::string, std::string> values,
                                        std::string message, std::string expected = {});

/// Throws `e` again at another place (`where`), keeping its kind, message, expected and its code
/// and values when it has them (a CodedError stays one).
[[noreturn]] void rethrow_at(const Error& e, std::string where);

/// The code an error carries, or nullptr.
const ErrorCode* error_code_of(const Error& e) noexcept;

/// Every message code gpuplan throws (sorted), for the locale check.
std::span<const std::string_view> error_message_codes() noexcept;

}  // namespace gpuplan
