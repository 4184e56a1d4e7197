// Fuzz target: the JSON API's request readers (src/api). Byte 0 picks the request; the rest is
//   even selectors: a POST body (size, plan, estimate) read as the server reads it, through
//     util/text_check parse_json_strict then api::read_fields into the request's input struct;
//   odd selectors: a query string "k=v&k=v" (offers, gpus, models) through api::read_query.
// Every error must be a user-facing gpuplan::Error whose field api_field_of() can name (the
// server turns it into {code, message, field}); anything else is a finding (fuzz_common.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "api/catalog_reads.hpp"
#include "api/estimate.hpp"
#include "api/fields.hpp"
#include "api/plan.hpp"
#include "api/size.hpp"
#include "fuzz_common.hpp"
#include "util/text_check.hpp"

namespace {

template <class In>
void body(std::string_view text, std::span<const gpuplan::api::FieldDef<In>> table) {
  In in;
  gpuplan::api::read_fields(in, gpuplan::parse_json_strict(text, "body"), table);
}

template <class In>
void query(std::string_view text, std::span<const gpuplan::api::FieldDef<In>> table) {
  std::multimap<std::string, std::string> params;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('&', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(start, end - start);
    const std::size_t eq = pair.find('=');
    params.emplace(std::string(pair.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
    start = end + 1;
  }
  In in;
  gpuplan::api::read_query(in, params, table);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  namespace api = gpuplan::api;
  const std::string_view text = gpuplan::fuzz::as_text(data + 1, size - 1);
  gpuplan::fuzz::expect_user_error_only([&] {
    try {
      switch (data[0] % 6) {
        case 0: body(text, api::size_fields()); break;
        case 1: query(text, api::offers_fields()); break;
        case 2: body(text, api::plan_fields()); break;
        case 3: query(text, api::gpus_fields()); break;
        case 4: body(text, api::estimate_fields()); break;
        default: query(text, api::models_fields()); break;
      }
    } catch (const gpuplan::Error& e) {
      (void)api::api_field_of(e);  // the server's error mapping must not fail either
      throw;
    }
  });
  return 0;
}
