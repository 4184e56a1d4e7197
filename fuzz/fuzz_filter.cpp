// Fuzz target: the offer filter language (catalog/filter.hpp). Each input is a filter; when it
// parses, its canonical form, its in-memory evaluation and its SQL (both dialects) are exercised, and the SQL
// is run against an in-memory SQLite store holding a few offers, so that no accepted filter can
// reach SQLite's limits ("parser stack overflow", too many terms).
//
// GPU names are matched against a five-row catalog cut from the bundled gpus.csv (header + the
// H100 SXM, H100 PCIe, A100 SXM 80GB, RTX 4090 and MI300X rows, aliases included), not all 99
// rows: every `gpu=` clause is matched up to four times per input (prepare, two SQL dialects,
// the store's query), and over the whole catalog that matching was a third of each execution
// (perf, 2026-12-01). The matching code and its branches are the same; only the table is shorter.
//
// Cost per input (perf, 2026-12-01 22:30 UTC, 40 s of fuzzing with -reload=0): SqliteOfferStore::query
// 55% (SQLite preparing the generated SQL 29%), Filter::parse 27% (it ran three times: here,
// OfferQuery::validate and query_sql; now twice), filter SQL compiled three times (now twice),
// ASan's allocator ~20% across all. libFuzzer's -reload (rereading a corpus folder of 8,000+
// files every second) was 13% of a run's samples: long runs may pass -reload=0.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "catalog/filter.hpp"
#include "catalog/filter_sql.hpp"
#include "catalog/sqlite_store.hpp"
#include "fuzz_common.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/embedded.hpp"

namespace {
const gpuplan::GpuCatalog& small_catalog() {
  static const gpuplan::GpuCatalog cat = [] {
    std::istringstream in{std::string(gpuplan::embedded_file_or_throw("gpus.csv"))};
    std::string line, text;
    std::getline(in, line);
    text = line + "\n";  // header
    for (const char* keep : {"NVIDIA H100 SXM,", "NVIDIA H100 PCIe,", "NVIDIA A100 SXM 80GB,",
                             "NVIDIA GeForce RTX 4090,", "AMD Instinct MI300X,"}) {
      std::istringstream rows{std::string(gpuplan::embedded_file_or_throw("gpus.csv"))};
      while (std::getline(rows, line))
        if (line.rfind(keep, 0) == 0) text += line + "\n";
    }
    return gpuplan::GpuCatalog::parse_csv(text, "gpus.csv (fuzz subset)");
  }();
  return cat;
}

gpuplan::Offer make_offer() {
  gpuplan::Offer o;
  o.id = "lambda/gpu_8x_h100_sxm5/us-east-1";
  o.provider = "lambda";
  o.instance_type = "gpu_8x_h100_sxm5";
  o.region = "us-east-1";
  o.gpu_name_raw = "H100 SXM5";
  o.gpu_name = "NVIDIA H100 SXM5 80GB";
  o.gpu_count = 8;
  o.gpu_memory_bytes = 80e9;
  o.prices.push_back(gpuplan::PriceObservation{o.id, gpuplan::PriceKind::on_demand, 23.92,
                                               gpuplan::SourceRef{"fuzz", "fuzz:1", std::string("2025-06-01")}, std::nullopt});
  return o;
}

gpuplan::SqliteOfferStore& store() {
  static std::unique_ptr<gpuplan::SqliteOfferStore> s = [] {
    auto st = std::make_unique<gpuplan::SqliteOfferStore>(":memory:", &small_catalog());
    gpuplan::ImportBatch b;
    b.offers.push_back(make_offer());
    st->import(b);
    return st;
  }();
  return *s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpuplan::Offer offer = make_offer();
  const std::string_view text = gpuplan::fuzz::as_text(data, size);
  gpuplan::fuzz::expect_user_error_only([&] {
    const gpuplan::Filter f = gpuplan::Filter::parse(text);
    (void)f.to_string();
    gpuplan::FilterContext ctx;
    ctx.now_date = "2025-07-01";
    ctx.gpus = &small_catalog();
    (void)f.prepare(ctx).evaluate(offer);
    // The SQLite dialect is compiled (and run) by store().query below, with this context's date
    // and catalog; compiling it here too was a third of the compile work for nothing checked twice.
    (void)gpuplan::compile_filter_sql(f, ctx, gpuplan::SqlDialect::postgresql);
    gpuplan::OfferQuery q;
    q.filter = std::string(text);
    q.now_date = "2025-07-01";
    (void)store().query(q);
  });
  return 0;
}
