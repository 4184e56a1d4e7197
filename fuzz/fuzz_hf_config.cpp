// Fuzz target: the Hugging Face config.json reader (model/hf_config.hpp) and the parameter
// count derived from an accepted config (model/param_count.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.hpp"
#include "model/hf_config.hpp"
#include "model/param_count.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = gpuplan::fuzz::as_text(data, size);
  gpuplan::fuzz::expect_user_error_only([&] {
    const gpuplan::ModelArch a = gpuplan::parse_hf_config_text(text, "config.json");
    (void)gpuplan::count_decoder_params(a);
  });
  return 0;
}
