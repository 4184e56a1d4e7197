// The filter's SQL compiler (filter_sql.hpp), moved out of filter.cpp and made per dialect.
#include "catalog/filter_sql.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "catalog/filter_ast.hpp"
#include "hardware/gpu_spec.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using detail::CompareOp;
using detail::FieldId;
using detail::FilterNode;
using detail::NodeKind;

/// Column expression of a field (both dialects read the same names, see filter_sql.hpp).
/// NULL means unknown.
std::string_view column_sql(FieldId f) {
  switch (f) {
    case FieldId::provider: return "NULLIF(o.provider, '')";
    case FieldId::instance: return "NULLIF(o.instance_type, '')";
    case FieldId::region: return "NULLIF(o.region, '')";
    case FieldId::zone: return "NULLIF(o.zone, '')";
    case FieldId::id: return "NULLIF(o.id, '')";
    case FieldId::form: return "NULLIF(o.form_factor, '')";
    case FieldId::source: return "NULLIF(lp.dataset, '')";
    case FieldId::link: return "NULLIF(o.intra_node_link, 'unknown')";
    case FieldId::net: return "NULLIF(o.inter_node_network, 'unknown')";
    case FieldId::memtype: return "(SELECT s.memtype FROM gpuplan_specs s WHERE s.name = o.gpu_name)";
    case FieldId::gpus: return "o.gpu_count";
    // the offer's memory per GPU, else its GPU model's (filter.cpp evaluates the same)
    case FieldId::vram:
    case FieldId::total_vram: {
      static const std::string vram =
          "COALESCE(o.gpu_memory_bytes, (SELECT s.memory_bytes FROM gpuplan_specs s WHERE s.name = o.gpu_name))";
      static const std::string total_vram = "(" + vram + " * o.gpu_count)";
      return f == FieldId::vram ? vram : total_vram;
    }
    case FieldId::bandwidth:
      return "(SELECT s.memory_bandwidth_bytes_per_s FROM gpuplan_specs s WHERE s.name = o.gpu_name)";
    case FieldId::link_bw: return "o.intra_node_link_bytes_per_s";
    case FieldId::net_gbps: return "o.inter_node_bits_per_s";
    case FieldId::nodes: return "o.max_nodes";
    case FieldId::vcpus: return "o.vcpus";
    case FieldId::ram: return "o.ram_bytes";
    case FieldId::disk: return "o.local_disk_bytes";
    case FieldId::price: return "lp.usd_per_hour";
    case FieldId::price_per_gpu: return "(lp.usd_per_hour / NULLIF(o.gpu_count, 0))";
    case FieldId::observed: return "substr(lp.observed_at, 1, 10)";
    case FieldId::confirmed_at: return "substr(o.confirmed_available_at, 1, 10)";
    default: return "NULL";
  }
}

class Compiler {
 public:
  Compiler(const FilterContext& ctx, SqlDialect d, int first_param, const FilterNode* assume_true)
      : ctx_(ctx), d_(d), next_(first_param), gpus_(ctx.gpus ? *ctx.gpus : GpuCatalog::bundled()),
        assume_true_(assume_true) {}

  SqlWhere run(const FilterNode* root) {
    if (root == nullptr)
      out_.sql = pg() ? "TRUE" : "1";
    else
      node(*root);
    return std::move(out_);
  }

 private:
  bool pg() const { return d_ == SqlDialect::postgresql; }

  /// Appends a placeholder for `v` and records it.
  void param(SqlValue v) {
    if (pg()) {
      const bool number = std::holds_alternative<double>(v);
      out_.sql += fmt::format("${}::{}", next_++, number ? "float8" : "text");
    } else {
      out_.sql += fmt::format("?{}", next_++);  // numbered, so a statement can reuse the clause's values
    }
    out_.params.push_back(std::move(v));
  }
  void sql(std::string_view s) { out_.sql += s; }
  std::string_view contains_fn() const { return pg() ? "strpos" : "instr"; }
  std::string_view excludes_true() const { return pg() ? "f.excludes" : "f.excludes = 1"; }
  std::string_view null_bool() const { return pg() ? "CAST(NULL AS boolean)" : "NULL"; }
  /// Collation for date comparisons: byte order, as the in-memory string compare.
  std::string_view date_collate() const { return pg() ? " COLLATE \"C\"" : ""; }

  /// The operands of a chain of `or` nodes, left to right.
  static void flatten_or(const FilterNode& n, std::vector<const FilterNode*>& out) {
    if (n.kind == NodeKind::or_) {
      flatten_or(*n.lhs, out);
      flatten_or(*n.rhs, out);
    } else {
      out.push_back(&n);
    }
  }
  /// True for `FIELD = VALUE` on a plain column (not gpu or flag, which expand differently).
  static bool plain_equality(const FilterNode& n) {
    if (n.kind != NodeKind::compare || n.op != CompareOp::eq) return false;
    if (n.field == FieldId::gpu || n.field == FieldId::flag) return false;
    return detail::field_type(n.field) != FilterFieldType::boolean;
  }

  void or_chain(const FilterNode& n) {
    std::vector<const FilterNode*> items;
    flatten_or(n, items);
    // Group the plain equalities by field (first appearance order); a group of two or more
    // becomes one IN list. OR is commutative and associative in Kleene logic, so the order of
    // the disjuncts does not change the result.
    std::vector<std::vector<const FilterNode*>> groups;
    for (const FilterNode* it : items) {
      if (plain_equality(*it)) {
        bool placed = false;
        for (auto& g : groups)
          if (plain_equality(*g.front()) && g.front()->field == it->field) {
            g.push_back(it);
            placed = true;
            break;
          }
        if (placed) continue;
      }
      groups.push_back({it});
    }
    sql("(");
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (i) sql(" OR ");
      const auto& g = groups[i];
      if (g.size() == 1) {
        node(*g.front());
        continue;
      }
      const FieldId f = g.front()->field;
      const FilterFieldType t = detail::field_type(f);
      const std::string col(column_sql(f));
      if (t == FilterFieldType::text)
        sql("(lower(" + col + ") IN (");
      else if (t == FilterFieldType::date)
        sql("(" + col + std::string(date_collate()) + " IN (");
      else
        sql("(" + col + " IN (");
      for (std::size_t k = 0; k < g.size(); ++k) {
        if (k) sql(", ");
        if (t == FilterFieldType::number)
          param(g[k]->number);
        else
          param(g[k]->text);
      }
      sql("))");
    }
    sql(")");
  }

  void node(const FilterNode& n) {
    if (&n == assume_true_) {
      sql(pg() ? "TRUE" : "1");
      return;
    }
    switch (n.kind) {
      case NodeKind::or_: or_chain(n); return;
      case NodeKind::and_:
        sql("(");
        node(*n.lhs);
        sql(" AND ");
        node(*n.rhs);
        sql(")");
        return;
      case NodeKind::not_:
        sql("(NOT ");
        node(*n.lhs);
        sql(")");
        return;
      case NodeKind::flag: flag(n); return;
      case NodeKind::compare: compare(n); return;
    }
  }

  void flag(const FilterNode& n) {
    switch (n.field) {
      case FieldId::spot:
        sql("EXISTS (SELECT 1 FROM latest_prices x WHERE x.offer_id = o.id AND x.kind = ");
        param(std::string(price_kind_name(PriceKind::spot)));
        sql(")");
        return;
      case FieldId::stale:
        if (ctx_.now_date.empty()) {
          sql(null_bool());
          return;
        }
        if (pg()) {
          // date - date is whole days, as days_since_epoch differences.
          sql("((CAST(");
          param(ctx_.now_date.substr(0, 10));
          sql(" AS date) - CAST(substr(lp.last_seen_at, 1, 10) AS date)) > ");
          param(ctx_.stale_after_days);
          sql(")");
        } else {
          sql("((julianday(");
          param(ctx_.now_date.substr(0, 10));
          sql(") - julianday(substr(lp.last_seen_at, 1, 10))) > ");
          param(ctx_.stale_after_days);
          sql(")");
        }
        return;
      case FieldId::reserved: {
        sql("EXISTS (SELECT 1 FROM latest_prices x WHERE x.offer_id = o.id AND x.kind IN (");
        bool first = true;
        for (PriceKind k : kPriceKinds) {
          if (!is_reserved(k)) continue;
          if (!first) sql(", ");
          first = false;
          param(std::string(price_kind_name(k)));
        }
        sql("))");
        return;
      }
      case FieldId::confirmed: sql("(o.confirmed_available_at IS NOT NULL)"); return;
      case FieldId::flagged: sql("EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id)"); return;
      case FieldId::excluded:
        sql("EXISTS (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND ");
        sql(excludes_true());
        sql(")");
        return;
      default: sql(null_bool()); return;
    }
  }

  void compare(const FilterNode& n) {
    const FilterFieldType type = detail::field_type(n.field);
    const bool positive = n.op == CompareOp::eq || n.op == CompareOp::contains;
    const bool equality = n.op == CompareOp::eq || n.op == CompareOp::ne;
    const std::string fn(contains_fn());
    if (n.field == FieldId::gpu) {
      sql(positive ? "(" : "(NOT (");
      if (equality) {
        const auto names = gpu_names_matching(gpus_, n.text);
        if (!names.empty()) {
          sql("COALESCE(o.gpu_name, '') IN (");
          for (std::size_t i = 0; i < names.size(); ++i) {
            if (i) sql(", ");
            param(names[i]);
          }
          sql(") OR ");
        }
        sql("gpuplan_norm(o.gpu_name_raw) = ");
        param(norm_gpu_name(n.text));
      } else {
        sql(fn + "(gpuplan_norm(COALESCE(o.gpu_name, '')), ");
        param(norm_gpu_name(n.text));
        sql(") > 0 OR " + fn + "(gpuplan_norm(o.gpu_name_raw), ");
        param(norm_gpu_name(n.text));
        sql(") > 0");
      }
      sql(positive ? ")" : "))");
      return;
    }
    if (n.field == FieldId::flag) {
      sql(positive ? "EXISTS" : "NOT EXISTS");
      if (equality) {
        sql(" (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND lower(f.rule) = ");
        param(n.text);
        sql(")");
      } else {
        sql(" (SELECT 1 FROM flags f WHERE f.offer_id = o.id AND " + fn + "(lower(f.rule), ");
        param(n.text);
        sql(") > 0)");
      }
      return;
    }
    const std::string col(column_sql(n.field));
    switch (type) {
      case FilterFieldType::text:
        switch (n.op) {
          case CompareOp::eq: sql("(lower(" + col + ") = "); break;
          case CompareOp::ne: sql("(lower(" + col + ") <> "); break;
          case CompareOp::contains: sql("(" + fn + "(lower(" + col + "), "); break;
          case CompareOp::not_contains: sql("(" + fn + "(lower(" + col + "), "); break;
          default: throw Error(ErrorKind::internal, "filter", "ordering operator on a text field");
        }
        param(n.text);
        if (n.op == CompareOp::contains) sql(") > 0");
        if (n.op == CompareOp::not_contains) sql(") = 0");
        sql(")");
        return;
      case FilterFieldType::number:
      case FilterFieldType::date: {
        const std::string_view op = n.op == CompareOp::ne ? "<>" : detail::compare_op_text(n.op);
        sql("(" + col);
        if (type == FilterFieldType::date) sql(date_collate());
        sql(" " + std::string(op) + " ");
        if (type == FilterFieldType::number)
          param(n.number);
        else
          param(n.text);
        sql(")");
        return;
      }
      case FilterFieldType::boolean: throw Error(ErrorKind::internal, "filter", "boolean field compared");
    }
  }

  const FilterContext& ctx_;
  SqlDialect d_;
  int next_;
  const GpuCatalog& gpus_;
  const FilterNode* assume_true_;
  SqlWhere out_;
};

}  // namespace

SqlWhere compile_filter_sql(const Filter& filter, const FilterContext& ctx, SqlDialect dialect, int first_param,
                            const FilterNode* assume_true) {
  return Compiler(ctx, dialect, first_param, assume_true).run(filter.root());
}

namespace {
void conjuncts(const FilterNode* n, std::vector<const FilterNode*>& out) {
  if (n == nullptr) return;
  if (n->kind == NodeKind::and_) {
    conjuncts(n->lhs.get(), out);
    conjuncts(n->rhs.get(), out);
  } else {
    out.push_back(n);
  }
}
void disjuncts(const FilterNode* n, std::vector<const FilterNode*>& out) {
  if (n->kind == NodeKind::or_) {
    disjuncts(n->lhs.get(), out);
    disjuncts(n->rhs.get(), out);
  } else {
    out.push_back(n);
  }
}
}  // namespace

std::optional<IndexCandidates> index_candidates(const Filter& filter, const GpuCatalog& gpus) {
  std::vector<const FilterNode*> ands;
  conjuncts(filter.root(), ands);
  for (const FieldId field : {FieldId::gpu, FieldId::provider}) {
    for (const FilterNode* c : ands) {
      std::vector<const FilterNode*> ors;
      disjuncts(c, ors);
      const bool all_eq = std::all_of(ors.begin(), ors.end(), [&](const FilterNode* n) {
        return n->kind == NodeKind::compare && n->field == field && n->op == CompareOp::eq;
      });
      if (!all_eq) continue;
      // An empty value matches differently (NULLIF): no walk for it.
      if (std::any_of(ors.begin(), ors.end(), [](const FilterNode* n) { return n->text.empty(); })) continue;
      IndexCandidates out;
      out.conjunct = c;
      auto add = [&](const char* column, std::string value) {
        std::pair<std::string, std::string> k{column, std::move(value)};
        if (std::find(out.keys.begin(), out.keys.end(), k) == out.keys.end()) out.keys.push_back(std::move(k));
      };
      for (const FilterNode* n : ors) {
        if (field == FieldId::gpu) {
          // Compiler::compare: COALESCE(gpu_name, '') IN names(X) OR gpuplan_norm(gpu_name_raw) = norm(X).
          for (std::string& name : gpu_names_matching(gpus, n->text)) add("gpu_name", std::move(name));
          add("gpu_norm", norm_gpu_name(n->text));
        } else {
          add("provider", n->text);  // lower(NULLIF(provider, '')) = X (the text is lower-cased)
        }
      }
      return out;
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, double>> gpu_count_bounds(const Filter& filter) {
  std::vector<const FilterNode*> ands;
  conjuncts(filter.root(), ands);
  std::vector<std::pair<std::string, double>> out;
  for (const FilterNode* c : ands) {
    if (c->kind != NodeKind::compare || c->field != FieldId::gpus) continue;
    switch (c->op) {  // Compiler::compare's numeric operators
      case CompareOp::eq:
      case CompareOp::lt:
      case CompareOp::le:
      case CompareOp::gt:
      case CompareOp::ge: out.emplace_back(std::string(detail::compare_op_text(c->op)), c->number); break;
      case CompareOp::ne: out.emplace_back("<>", c->number); break;
      default: break;
    }
  }
  return out;
}

}  // namespace gpuplan
