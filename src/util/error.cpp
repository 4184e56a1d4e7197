#include "util/error.hpp"

namespace gpuplan {
namespace {
std::string render(const std::string& where, const std::string& message, const std::string& expected) {
  std::string out;
  if (!where.empty()) out += where + ": ";
  out += message;
  if (!expected.empty()) out += " (expected: " + expected + ")";
  return out;
}
}  // namespace

Error::Error(ErrorKind kind, std::string where, std::string message, std::string expected)
    : std::runtime_error(render(where, message, expected)),
      kind_(kind),
      where_(std::move(where)),
      message_(std::move(message)),
      expected_(std::move(expected)) {}

void throw_invalid(std::string where, std::string message, std::string expected) {
  throw Error(ErrorKind::invalid_input, std::move(where), std::move(message), std::move(expected));
}
void throw_not_found(std::string where, std::string message, std::string expected) {
  throw Error(ErrorKind::not_found, std::move(where), std::move(message), std::move(expected));
}

int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input: return 2;
    case ErrorKind::not_found: return 3;
    case ErrorKind::conflict: return 4;
    case ErrorKind::unavailable: return 5;
    case ErrorKind::internal: return 70;
  }
  return 70;
}

int http_status(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input: return 400;
    case ErrorKind::not_found: return 404;
    case ErrorKind::conflict: return 409;
    case ErrorKind::unavailable: return 503;
    case ErrorKind::internal: return 500;
  }
  return 500;
}

std::string_view kind_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input: return "invalid_input";
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::conflict: return "conflict";
    case ErrorKind::unavailable: return "unavailable";
    case ErrorKind::internal: return "internal";
  }
  return "internal";
}

}  // namespace gpuplan
