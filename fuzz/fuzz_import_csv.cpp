// Fuzz target: the CSV importers (catalog/importers.hpp). The first byte picks the format
// (generic, SkyPilot, FSDL cloud, FSDL serverless, ewyluda index); the rest is the file.
#include <cstddef>
#include <cstdint>

#include "catalog/importers.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using gpuplan::ImportFormat;
  static constexpr ImportFormat kFormats[] = {ImportFormat::generic_csv, ImportFormat::skypilot_vms_csv,
                                              ImportFormat::fsdl_cloud_gpus_csv, ImportFormat::fsdl_serverless_gpus_csv,
                                              ImportFormat::ewyluda_index_history_csv};
  const ImportFormat f = kFormats[data[0] % (sizeof kFormats / sizeof kFormats[0])];
  const std::string_view text = gpuplan::fuzz::as_text(data + 1, size - 1);
  gpuplan::ImportSource src;
  src.file = "fuzz.csv";
  src.dataset = "user:fuzz";
  src.provider = "lambda";
  gpuplan::fuzz::expect_user_error_only([&] {
    gpuplan::ImportBatch b = gpuplan::import_text(text, f, src);
    gpuplan::check_no_future_dates(b, "2026-01-01");
    (void)gpuplan::detect_import_format("fuzz.csv", text);
  });
  return 0;
}
