// Fuzz target: the JSON importers (catalog/importers.hpp). The first byte picks the format
// (generic gpuplan-offers/1, tardellirs offerings, gpuhunt TPU pricing); the rest is the file.
#include <cstddef>
#include <cstdint>

#include "catalog/importers.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using gpuplan::ImportFormat;
  static constexpr ImportFormat kFormats[] = {ImportFormat::generic_json, ImportFormat::tardellirs_offerings_json,
                                              ImportFormat::gpuhunt_tpu_pricing_json};
  const ImportFormat f = kFormats[data[0] % (sizeof kFormats / sizeof kFormats[0])];
  const std::string_view text = gpuplan::fuzz::as_text(data + 1, size - 1);
  gpuplan::ImportSource src;
  src.file = "fuzz.json";
  src.dataset = "user:fuzz";
  gpuplan::fuzz::expect_user_error_only([&] {
    gpuplan::ImportBatch b = gpuplan::import_text(text, f, src);
    gpuplan::check_no_future_dates(b, "2026-01-01");
  });
  gpuplan::fuzz::expect_user_error_only([&] { (void)gpuplan::detect_import_format("fuzz.json", text); });
  return 0;
}
