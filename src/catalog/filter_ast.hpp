#pragma once
/// Catalog layer: the filter language's parse tree (filter.hpp), shared by the parser and
/// in-memory evaluator (filter.cpp) and the SQL compilers (filter_sql.hpp). Read-only outside
/// the parser: a Filter owns an immutable tree of these nodes.
#include <cstddef>
#include <memory>
#include <string>

#include "catalog/filter.hpp"

namespace gpuplan::detail {

enum class NodeKind { and_, or_, not_, compare, flag };
enum class CompareOp { eq, ne, lt, le, gt, ge, contains, not_contains };

enum class FieldId {
  provider, instance, region, zone, id, gpu, form, source, flag, link, net, memtype,
  gpus, vram, total_vram, bandwidth, link_bw, net_gbps, nodes, vcpus, ram, disk, price, price_per_gpu,
  observed, confirmed_at,
  spot, stale, confirmed, flagged, excluded, reserved,
};

struct FilterNode {
  NodeKind kind = NodeKind::flag;
  std::shared_ptr<const FilterNode> lhs;
  std::shared_ptr<const FilterNode> rhs;
  FieldId field = FieldId::spot;
  CompareOp op = CompareOp::eq;
  double number = 0;  ///< SI value for number fields
  std::string text;   ///< lower-cased value for text fields, the date for date fields
  std::size_t offset = 0;  ///< byte range of the node's token in the query (field, "not", "and"/"or")
  std::size_t length = 0;
};

/// Type of a field (text, number, date or boolean).
FilterFieldType field_type(FieldId id);
/// The operator as written in the language ("=", "!=", "~", ...).
std::string_view compare_op_text(CompareOp op);

}  // namespace gpuplan::detail
