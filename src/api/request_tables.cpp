// The list of every request's field table (fields.hpp request_tables()): one place that names
// them all, for error mapping, the OpenAPI document and the tests.
#include "api/catalog_reads.hpp"
#include "api/estimate.hpp"
#include "api/fields.hpp"
#include "api/plan.hpp"
#include "api/size.hpp"

namespace gpuplan::api {

namespace {
template <class In>
std::vector<FieldInfo> infos(std::span<const FieldDef<In>> defs) {
  std::vector<FieldInfo> out;
  for (const auto& d : defs) out.push_back(d.info);
  return out;
}
}  // namespace

const std::vector<RequestTable>& request_tables() {
  static const std::vector<RequestTable> tables = {
      {"size", infos(size_fields())},     {"plan", infos(plan_fields())},     {"offers", infos(offers_fields())}, {"history", infos(history_fields())},
      {"gpus", infos(gpus_fields())},     {"models", infos(models_fields())}, {"estimate", infos(estimate_fields())},
  };
  return tables;
}

}  // namespace gpuplan::api
