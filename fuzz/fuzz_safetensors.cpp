// Fuzz target: the safetensors header reader and the sharded-checkpoint index reader
// (model/safetensors.hpp). The first byte picks which; the rest is the file's first bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "model/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text = gpuplan::fuzz::as_text(data + 1, size - 1);
  gpuplan::fuzz::expect_user_error_only([&] {
    if (data[0] & 1)
      (void)gpuplan::parse_weight_index(text, "model.safetensors.index.json");
    else
      (void)gpuplan::parse_safetensors_header(text, "model.safetensors");
  });
  return 0;
}
