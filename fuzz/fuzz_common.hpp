#pragma once
// Shared by the libFuzzer targets (fuzz/README.md). A target passes when the code under test
// either succeeds or throws gpuplan::Error of a user-facing kind (invalid_input, not_found,
// conflict, unavailable). Error{internal} (exit 70), any other exception, a crash, a hang or a
// sanitizer report is a finding: the target aborts so libFuzzer saves the input.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "util/error.hpp"

namespace gpuplan::fuzz {

template <typename F>
void expect_user_error_only(F&& f) {
  try {
    f();
  } catch (const gpuplan::Error& e) {
    if (e.kind() == gpuplan::ErrorKind::internal) {
      std::fprintf(stderr, "internal error: %s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
}

inline std::string_view as_text(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace gpuplan::fuzz
