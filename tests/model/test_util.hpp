#pragma once
// Helpers shared by the model-layer tests.
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/error.hpp"

namespace gpuplan::testing {

inline std::string source_path(std::string_view rel) { return std::string(GPUPLAN_SOURCE_DIR) + "/" + std::string(rel); }

/// A fresh temporary folder per test (removed by the caller's TempDir destructor).
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(std::string_view name) {
    path = std::filesystem::temp_directory_path() / ("gpuplan_model_test_" + std::string(name) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, std::string_view bytes) const {
    const auto p = path / name;
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }
};

/// Runs f, expects a gpuplan::Error, returns it (fails the test when none is thrown).
template <class F>
Error expect_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected gpuplan::Error";
  return Error(ErrorKind::internal, "", "no error thrown");
}

}  // namespace gpuplan::testing
