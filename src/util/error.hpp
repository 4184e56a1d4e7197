#pragma once
/// gpuplan's one error vocabulary (STYLE.md §7).
///
/// Every failure caused by bad input or IO is thrown as gpuplan::Error. It carries
///  - kind:     what sort of failure (maps once to an exit code and an HTTP status),
///  - where:    the place it was found: "file:line:col", "file:line", a JSON pointer
///              ("offers.json: /offers/0/gpu"), a model file's dotted field path
///              ("config.json: text_config.num_attention_heads"), a CLI flag ("--micro-batch"), ...
///  - expected: what would have been accepted ("a positive integer", "one of bf16, fp16").
/// what() renders "where: message (expected: ...)" on one line.
///
/// Outcomes that are normal answers ("does not fit", "no offer matches") are values,
/// not exceptions (STYLE.md §8). Bugs are asserts.
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuplan {

enum class ErrorKind {
  invalid_input,  ///< malformed file, bad flag value, contradictory options  -> exit 2, HTTP 400
  not_found,      ///< unknown GPU, model, preset, offer, file                -> exit 3, HTTP 404
  conflict,       ///< state conflict (e.g. database schema newer than binary) -> exit 4, HTTP 409
  unavailable,    ///< a resource cannot be reached (database locked, ...)     -> exit 5, HTTP 503
  internal,       ///< a bug surfaced as an error                              -> exit 70, HTTP 500
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string where, std::string message, std::string expected = {});

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& where() const noexcept { return where_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& expected() const noexcept { return expected_; }

 private:
  ErrorKind kind_;
  std::string where_;
  std::string message_;
  std::string expected_;
};

/// Shorthands for the common kinds.
[[noreturn]] void throw_invalid(std::string where, std::string message, std::string expected = {});
[[noreturn]] void throw_not_found(std::string where, std::string message, std::string expected = {});

/// Process exit code for an error kind (documented in README "Exit codes").
int exit_code(ErrorKind kind) noexcept;
/// HTTP status for an error kind (400/404/409/503/500).
int http_status(ErrorKind kind) noexcept;
/// Stable lower-case name of the kind ("invalid_input", ...), used in JSON error bodies.
std::string_view kind_name(ErrorKind kind) noexcept;

}  // namespace gpuplan
