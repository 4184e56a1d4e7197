#include "catalog/filter.hpp"

#include "catalog/filter_ast.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>

#include "hardware/gpu_spec.hpp"
#include "util/calendar.hpp"
#include "util/text_check.hpp"

namespace gpuplan {

namespace {

using detail::CompareOp;
using detail::FieldId;
using detail::FilterNode;
using detail::NodeKind;
using NodePtr = std::shared_ptr<const FilterNode>;

enum class UnitKind { none, bytes, gpu_memory_bytes, bytes_per_s, bits_per_s, usd_per_hour, count };

struct Unit {
  std::string_view suffix;
  double factor;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const std::vector<Unit> kBytesUnits = {{"", 1e9},          {"MB", 1e6},          {"GB", 1e9},
                                       {"TB", 1e12},       {"MiB", kGiB / 1024}, {"GiB", kGiB},
                                       {"TiB", kGiB * 1024}};
// GPU memory (vram, total_vram) is compared in the unit it is stated in: vendors and clouds write
// it as "80 GB", which is a binary capacity (H100 SXM: 80 GiB of HBM3, 79.6 GiB = 85.5e9 bytes
// visible to CUDA), and offers store that figure as 80e9 bytes. Reading `80GiB` as 85.9e9 bytes
// would drop every "80 GB" H100 from `vram>=80GiB` (issue 11), so for these two fields the binary
// suffixes name the same stated size as their decimal namesakes: 80GiB = 80GB (docs/filter-language.md).
const std::vector<Unit> kGpuMemoryUnits = {{"", 1e9},   {"MB", 1e6},  {"GB", 1e9},  {"TB", 1e12},
                                           {"MiB", 1e6}, {"GiB", 1e9}, {"TiB", 1e12}};
const std::vector<Unit> kBytesPerSUnits = {{"", 1e9},        {"MB/s", 1e6},          {"GB/s", 1e9},
                                           {"TB/s", 1e12},   {"MiB/s", kGiB / 1024}, {"GiB/s", kGiB},
                                           {"TiB/s", kGiB * 1024}};
const std::vector<Unit> kBitsPerSUnits = {{"", 1e9},     {"Mb/s", 1e6}, {"Gb/s", 1e9},  {"Tb/s", 1e12}, {"Mbps", 1e6},
                                          {"Gbps", 1e9}, {"Tbps", 1e12}, {"MB/s", 8e6}, {"GB/s", 8e9}};
const std::vector<Unit> kPlainUnits = {{"", 1}};

const std::vector<Unit>& units_of(UnitKind k) {
  switch (k) {
    case UnitKind::bytes: return kBytesUnits;
    case UnitKind::gpu_memory_bytes: return kGpuMemoryUnits;
    case UnitKind::bytes_per_s: return kBytesPerSUnits;
    case UnitKind::bits_per_s: return kBitsPerSUnits;
    default: return kPlainUnits;
  }
}

struct FieldDef {
  std::string_view name;
  FieldId id;
  FilterFieldType type;
  UnitKind unit_kind;
  std::string_view unit;
  std::string_view example;
  std::string_view description;
  std::vector<std::string_view> allowed;  ///< closed value set for text fields; empty = free text
};

const std::vector<FieldDef>& field_defs() {
  using T = FilterFieldType;
  using U = UnitKind;
  static const std::vector<FieldDef> defs = {
      {"provider", FieldId::provider, T::text, U::none, "", "provider=lambda", "provider id", {}},
      {"instance", FieldId::instance, T::text, U::none, "", "instance~8x", "provider SKU (instance type)", {}},
      {"region", FieldId::region, T::text, U::none, "", "region~us-", "region; unknown when the source has none", {}},
      {"zone", FieldId::zone, T::text, U::none, "", "zone=us-east-1a", "availability zone", {}},
      {"id", FieldId::id, T::text, U::none, "", "id~lambda/", "offer id provider/instance/region[/zone]", {}},
      {"gpu", FieldId::gpu, T::text, U::none, "", "gpu=H100",
       "GPU model: = matches the canonical name tolerantly (hardware catalog) or the raw name; ~ substring", {}},
      {"form", FieldId::form, T::text, U::none, "", "form=sxm", "GPU form factor of the offer (sxm, pcie)", {}},
      {"source", FieldId::source, T::text, U::none, "", "source~skypilot", "dataset of the latest price of the query's kind", {}},
      {"flag", FieldId::flag, T::text, U::none, "", "flag=zero_price", "a data-quality rule raised on the offer", {}},
      {"link", FieldId::link, T::text, U::none, "", "link=nvlink", "GPU-to-GPU link inside the instance",
       {"nvlink", "pcie"}},
      {"net", FieldId::net, T::text, U::none, "", "net=infiniband", "network between nodes",
       {"ethernet", "roce", "infiniband"}},
      {"memtype", FieldId::memtype, T::text, U::none, "", "memtype=hbm", "GPU memory family from the spec (hbm, gddr)", {}},
      {"gpus", FieldId::gpus, T::number, U::count, "count", "gpus>=8", "GPUs per instance", {}},
      {"vram", FieldId::vram, T::number, U::gpu_memory_bytes, "GB; MB GB TB MiB GiB TiB", "vram>=80GB", "memory per GPU", {}},
      {"total_vram", FieldId::total_vram, T::number, U::gpu_memory_bytes, "GB; MB GB TB MiB GiB TiB", "total_vram>=640",
       "memory of all GPUs of the instance", {}},
      {"bandwidth", FieldId::bandwidth, T::number, U::bytes_per_s, "GB/s; MB/s GB/s TB/s GiB/s TiB/s",
       "bandwidth>=3.35TB/s", "GPU memory bandwidth from the hardware spec", {}},
      {"link_bw", FieldId::link_bw, T::number, U::bytes_per_s, "GB/s; MB/s GB/s TB/s GiB/s TiB/s", "link_bw>=900GB/s",
       "GPU-to-GPU link bandwidth per GPU, bidirectional", {}},
      {"net_gbps", FieldId::net_gbps, T::number, U::bits_per_s, "Gb/s; Mb/s Gb/s Tb/s Gbps GB/s", "net_gbps>=400Gb/s",
       "network bandwidth per node", {}},
      {"nodes", FieldId::nodes, T::number, U::count, "count", "nodes>=2", "nodes offered together (max)", {}},
      {"vcpus", FieldId::vcpus, T::number, U::count, "count", "vcpus>=32", "virtual CPUs per instance", {}},
      {"ram", FieldId::ram, T::number, U::bytes, "GB; MB GB TB MiB GiB TiB", "ram>=512GB", "host memory per instance", {}},
      {"disk", FieldId::disk, T::number, U::bytes, "GB; MB GB TB MiB GiB TiB", "disk>=1TB", "local disk per instance", {}},
      {"price", FieldId::price, T::number, U::usd_per_hour, "USD/h", "price<=30",
       "latest price of the query's kind, whole instance", {}},
      {"price_per_gpu", FieldId::price_per_gpu, T::number, U::usd_per_hour, "USD/h", "price_per_gpu<=2.5",
       "latest price of the query's kind per GPU", {}},
      {"gpu_price", FieldId::price_per_gpu, T::number, U::usd_per_hour, "USD/h", "gpu_price<=2.5",
       "alias of price_per_gpu", {}},
      {"observed", FieldId::observed, T::date, U::none, "YYYY-MM-DD", "observed>=2025-01-01",
       "date of the latest price of the query's kind", {}},
      {"confirmed_at", FieldId::confirmed_at, T::date, U::none, "YYYY-MM-DD", "confirmed_at>=2025-06-01",
       "date availability was confirmed", {}},
      {"spot", FieldId::spot, T::boolean, U::none, "", "spot", "the offer has a spot price", {}},
      {"stale", FieldId::stale, T::boolean, U::none, "", "not stale",
       "latest price older than the threshold (unknown when undated)", {}},
      {"confirmed", FieldId::confirmed, T::boolean, U::none, "", "confirmed", "availability confirmed at a date", {}},
      {"flagged", FieldId::flagged, T::boolean, U::none, "", "not flagged", "has any data-quality flag", {}},
      {"excluded", FieldId::excluded, T::boolean, U::none, "", "excluded", "has a flag that excludes it from ranking", {}},
      {"reserved", FieldId::reserved, T::boolean, U::none, "", "reserved",
       "the offer has a reserved or committed price (reserved-1w, -1m, -3m, -6m, -1y, -3y; list them with --price-kind)", {}},
  };
  return defs;
}

const FieldDef* find_field(std::string_view name) {
  for (const auto& d : field_defs())
    if (d.name == name) return &d;
  return nullptr;
}

const FieldDef& def_of(FieldId id) {
  for (const auto& d : field_defs())
    if (d.id == id) return d;
  throw Error(ErrorKind::internal, "filter", "no field definition");
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool iequals(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

std::string_view op_text(CompareOp op) {
  switch (op) {
    case CompareOp::eq: return "=";
    case CompareOp::ne: return "!=";
    case CompareOp::lt: return "<";
    case CompareOp::le: return "<=";
    case CompareOp::gt: return ">";
    case CompareOp::ge: return ">=";
    case CompareOp::contains: return "~";
    case CompareOp::not_contains: return "!~";
  }
  return "=";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// ---------------------------------------------------------------------------------------------
// Lexer

enum class TokKind { word, quoted, op, lparen, rparen, end };

struct Token {
  TokKind kind = TokKind::end;
  std::string text;  ///< unescaped for quoted strings
  std::size_t offset = 0;
  std::size_t length = 0;
};

bool is_special(char c) {
  return c == '(' || c == ')' || c == '=' || c == '!' || c == '<' || c == '>' || c == '~' || c == '"' ||
         c == '\'' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::vector<Token> lex(std::string_view q) {
  // Control characters (and bytes that are not UTF-8, bidirectional controls: the import's rule,
  // util/text_check.hpp) are refused at their byte offset: `offers $'gpu=H100\x01'` was read
  // as gpu=H100, the byte silently ignored (trial11).
  if (const auto pr = find_text_problem(q, /*allow_newlines=*/true))
    throw FilterError(q, pr->offset, pr->length, pr->what, "printable UTF-8 text (a filter holds no control character)",
                      "filter_bad_character", {{"what", pr->what}});
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < q.size()) {
    char c = q[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.offset = i;
    if (c == '(' || c == ')') {
      t.kind = c == '(' ? TokKind::lparen : TokKind::rparen;
      t.text = std::string(1, c);
      t.length = 1;
      ++i;
    } else if (c == '"' || c == '\'') {
      t.kind = TokKind::quoted;
      std::size_t j = i + 1;
      bool closed = false;
      while (j < q.size()) {
        if (q[j] == '\\' && j + 1 < q.size()) {
          t.text += q[j + 1];
          j += 2;
          continue;
        }
        if (q[j] == c) {
          closed = true;
          break;
        }
        t.text += q[j++];
      }
      if (!closed)
        throw FilterError(q, i, q.size() - i, "unterminated quoted string", std::string("a closing ") + c,
                          "filter_unterminated_quote", {{"quote", std::string(1, c)}});
      t.length = j + 1 - i;
      i = j + 1;
    } else if (c == '=' || c == '!' || c == '<' || c == '>' || c == '~') {
      t.kind = TokKind::op;
      std::size_t len = 1;
      if (i + 1 < q.size() && (c == '!' || c == '<' || c == '>') && (q[i + 1] == '=' || (c == '!' && q[i + 1] == '~')))
        len = 2;
      t.text = std::string(q.substr(i, len));
      if (t.text == "!")
        throw FilterError(q, i, 1, "\"!\" alone is not an operator", "!= or !~ (write `not FIELD` to negate)",
                          "filter_lone_bang", {});
      t.length = len;
      i += len;
    } else {
      t.kind = TokKind::word;
      std::size_t j = i;
      while (j < q.size() && !is_special(q[j])) ++j;
      t.text = std::string(q.substr(i, j - i));
      t.length = j - i;
      i = j;
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = TokKind::end;
  end.offset = q.size();
  end.length = 1;
  out.push_back(end);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parser

std::string type_ops(FilterFieldType t) {
  switch (t) {
    case FilterFieldType::text: return "=, !=, ~ or !~";
    case FilterFieldType::number:
    case FilterFieldType::date: return "=, !=, <, <=, > or >=";
    case FilterFieldType::boolean: return "";
  }
  return "";
}

std::string unit_list(UnitKind k) {
  std::string out;
  for (const auto& u : units_of(k)) {
    if (u.suffix.empty()) continue;
    if (!out.empty()) out += ", ";
    out += u.suffix;
  }
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view q) : q_(q), toks_(lex(q)) {}

  NodePtr parse() {
    if (peek().kind == TokKind::end) return nullptr;
    NodePtr e = parse_or();
    check_tree_depth(e);
    const Token& t = peek();
    if (t.kind == TokKind::rparen)
      fail(t, "unbalanced parenthesis: \")\" without \"(\"", "a clause or the end of the query", "filter_unbalanced_close");
    if (t.kind != TokKind::end)
      fail(t, "unexpected \"" + t.text + "\"", "a clause, \"and\", \"or\" or the end of the query", "filter_unexpected",
           {{"token", t.text}});
    return e;
  }

 private:
  const Token& peek() const { return toks_[pos_]; }
  const Token& next() { return toks_[pos_++]; }
  bool is_keyword(const Token& t, std::string_view kw) const { return t.kind == TokKind::word && iequals(t.text, kw); }

  [[noreturn]] void fail(const Token& t, const std::string& problem, std::string expected, const char* code,
                         std::map<std::string, std::string> values = {}) const {
    throw FilterError(q_, t.offset, t.length, problem, std::move(expected), code, std::move(values));
  }

  static NodePtr make(NodeKind k, NodePtr a, NodePtr b, const Token& at) {
    auto n = std::make_shared<FilterNode>();
    n->kind = k;
    n->lhs = std::move(a);
    n->rhs = std::move(b);
    n->offset = at.offset;
    n->length = at.length;
    return n;
  }

  /// A chain `a op b op c ...` as a balanced tree (and/or are associative, also in Kleene
  /// logic), so a long list costs log2(n) levels of nesting, not n. Up to three operands the
  /// tree is the left-nested one ((a op b) op c).
  static NodePtr balanced(NodeKind k, const std::vector<NodePtr>& items, const std::vector<Token>& ops,
                          std::size_t from, std::size_t to) {
    if (to - from == 1) return items[from];
    const std::size_t mid = from + (to - from + 1) / 2;
    return make(k, balanced(k, items, ops, from, mid), balanced(k, items, ops, mid, to), ops[mid - 1]);
  }

  /// Guards the recursive descent: each "(" and "not" is one level.
  struct NestingGuard {
    NestingGuard(Parser& p, const Token& t) : p_(p) {
      if (++p_.nesting_ > kMaxFilterNesting)
        p_.fail(t, fmt::format("filter nests too deeply: more than {} levels of parentheses and \"not\"",
                               kMaxFilterNesting),
                fmt::format("at most {} nested parentheses / not (write long lists as a or b or c, not as nested groups)",
                            kMaxFilterNesting),
                "filter_too_deep", {{"max", std::to_string(kMaxFilterNesting)}});
    }
    ~NestingGuard() { --p_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;
    Parser& p_;
  };

  /// The tree's depth bounds the SQL's nesting (SQLite's parser stack holds about 100 levels).
  void check_tree_depth(const NodePtr& root) const {
    const FilterNode* deepest = nullptr;
    std::size_t max_depth = 0;
    std::function<void(const FilterNode*, std::size_t)> walk = [&](const FilterNode* n, std::size_t d) {
      if (n == nullptr) return;
      if (d > max_depth) {
        max_depth = d;
        deepest = n;
      }
      walk(n->lhs.get(), d + 1);
      walk(n->rhs.get(), d + 1);
    };
    walk(root.get(), 1);
    if (max_depth > kMaxFilterTreeDepth && deepest != nullptr) {
      Token at;
      at.offset = deepest->offset;
      at.length = deepest->length;
      fail(at, fmt::format("filter nests too deeply: {} levels of and/or/not/parentheses", max_depth),
           fmt::format("at most {} levels (flatter groups, or fewer clauses)", kMaxFilterTreeDepth), "filter_too_deep",
           {{"max", std::to_string(kMaxFilterTreeDepth)}});
    }
  }

  NodePtr parse_or() {
    std::vector<NodePtr> items{parse_and()};
    std::vector<Token> ops;
    while (is_keyword(peek(), "or")) {
      ops.push_back(next());
      items.push_back(parse_and());
    }
    return balanced(NodeKind::or_, items, ops, 0, items.size());
  }

  bool starts_unary(const Token& t) const {
    return (t.kind == TokKind::word && !iequals(t.text, "or") && !iequals(t.text, "and")) || t.kind == TokKind::lparen ||
           t.kind == TokKind::quoted;
  }

  NodePtr parse_and() {
    std::vector<NodePtr> items{parse_unary()};
    std::vector<Token> ops;
    for (;;) {
      if (is_keyword(peek(), "and")) {
        ops.push_back(next());
        items.push_back(parse_unary());
      } else if (starts_unary(peek())) {
        ops.push_back(peek());  // juxtaposition: the next clause stands for the "and"
        items.push_back(parse_unary());
      } else {
        return balanced(NodeKind::and_, items, ops, 0, items.size());
      }
    }
  }

  NodePtr parse_unary() {
    if (is_keyword(peek(), "not")) {
      const Token& t = next();
      NestingGuard guard(*this, t);
      return make(NodeKind::not_, parse_unary(), nullptr, t);
    }
    return parse_primary();
  }

  NodePtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokKind::lparen: {
        const Token& open = next();
        NestingGuard guard(*this, open);
        NodePtr e = parse_or();
        const Token& close = peek();
        if (close.kind == TokKind::rparen) {
          next();
          return e;
        }
        if (close.kind == TokKind::end) fail(open, "unbalanced parenthesis: \"(\" is never closed", "\")\"", "filter_unclosed_paren");
        fail(close, "unexpected \"" + close.text + "\"", "\")\", \"and\", \"or\" or another clause", "filter_unexpected",
             {{"token", close.text}});
      }
      case TokKind::rparen:
        fail(t, "unbalanced parenthesis: \")\" without \"(\"", "a clause such as gpu=H100", "filter_unbalanced_close");
      case TokKind::op:
        fail(t, "operator \"" + t.text + "\" without a field", "a field name before it, e.g. price" + t.text + "3",
             "filter_operator_without_field", {{"op", t.text}});
      case TokKind::quoted:
        fail(t, "a quoted string cannot be a field name", "a field name, e.g. gpu=\"RTX 4090\"", "filter_quoted_field_name");
      case TokKind::end: {
        const Token& prev = toks_[pos_ > 0 ? pos_ - 1 : 0];
        fail(t, pos_ > 0 ? "missing clause after \"" + prev.text + "\"" : "missing clause", "a clause such as gpu=H100",
             "filter_missing_clause", {{"after", pos_ > 0 ? prev.text : std::string()}});
      }
      case TokKind::word: break;
    }
    if (is_keyword(t, "and") || is_keyword(t, "or"))
      fail(t, "\"" + t.text + "\" needs a clause before it", "a clause such as gpu=H100", "filter_clause_before",
           {{"token", t.text}});
    return parse_clause();
  }

  [[noreturn]] void unknown_field(const Token& t) const {
    std::vector<std::pair<std::size_t, std::string_view>> near;
    const std::string name = lower(t.text);
    for (const auto& d : field_defs()) {
      // The edit distance is at least the length difference: skip the O(n·m) table when it cannot be <= 2.
      const std::size_t len_diff = name.size() > d.name.size() ? name.size() - d.name.size() : d.name.size() - name.size();
      const std::size_t dist = len_diff > 2 ? len_diff : edit_distance(name, d.name);
      bool prefix = name.size() >= 2 && d.name.substr(0, name.size()) == name;
      if (dist <= 2 || prefix) near.emplace_back(prefix ? 0 : dist, d.name);
    }
    std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string expected = "a field name", such;
    if (!near.empty()) {
      for (std::size_t i = 0; i < near.size() && i < 3; ++i) such += (i ? ", " : "") + std::string(near[i].second);
      expected += " such as " + such;
    }
    expected += " (all fields: gpuplan offers --help-fields)";
    std::string all;
    for (const auto& d : field_defs()) all += (all.empty() ? "" : ", ") + std::string(d.name);
    fail(t, "unknown field \"" + t.text + "\"", expected, "filter_unknown_field",
         {{"name", t.text}, {"near", such.empty() ? all : such}, {"all", all}});
  }

  NodePtr parse_clause() {
    const Token& ft = next();
    if (++clauses_ > kMaxFilterClauses)
      fail(ft, fmt::format("filter has more than {} clauses", kMaxFilterClauses),
           fmt::format("at most {} clauses (narrow with fewer, broader clauses such as gpu~H100)", kMaxFilterClauses),
           "filter_too_many_clauses", {{"max", std::to_string(kMaxFilterClauses)}});
    const FieldDef* def = find_field(lower(ft.text));
    if (def == nullptr) unknown_field(ft);
    auto n = std::make_shared<FilterNode>();
    n->field = def->id;
    n->offset = ft.offset;
    n->length = ft.length;
    const Token& ot = peek();
    if (ot.kind != TokKind::op) {
      if (def->type != FilterFieldType::boolean)
        fail(ft, "field " + std::string(def->name) + " needs an operator and a value", "e.g. " + std::string(def->example),
             "filter_needs_operator", {{"field", std::string(def->name)}, {"example", std::string(def->example)}});
      n->kind = NodeKind::flag;
      return n;
    }
    next();
    if (def->type == FilterFieldType::boolean)
      fail(ot, "operator \"" + ot.text + "\" does not apply to boolean field " + std::string(def->name),
           std::string(def->name) + " alone, or not " + std::string(def->name), "filter_operator_on_boolean",
           {{"op", ot.text}, {"field", std::string(def->name)}});
    static const std::array<std::pair<std::string_view, CompareOp>, 8> ops = {{{"=", CompareOp::eq},
                                                                                {"!=", CompareOp::ne},
                                                                                {"<", CompareOp::lt},
                                                                                {"<=", CompareOp::le},
                                                                                {">", CompareOp::gt},
                                                                                {">=", CompareOp::ge},
                                                                                {"~", CompareOp::contains},
                                                                                {"!~", CompareOp::not_contains}}};
    for (const auto& [text, op] : ops)
      if (text == ot.text) n->op = op;
    const bool ordering = n->op == CompareOp::lt || n->op == CompareOp::le || n->op == CompareOp::gt || n->op == CompareOp::ge;
    const bool substring = n->op == CompareOp::contains || n->op == CompareOp::not_contains;
    const bool closed_set = !def->allowed.empty();
    if ((def->type == FilterFieldType::text && ordering) ||
        ((def->type == FilterFieldType::number || def->type == FilterFieldType::date) && substring) ||
        (closed_set && substring)) {
      std::string allowed = closed_set ? "= or !=" : type_ops(def->type);
      fail(ot, "operator \"" + ot.text + "\" does not apply to " + std::string(filter_field_type_name(def->type)) +
                   " field " + std::string(def->name),
           allowed, "filter_operator_not_for_field", {{"op", ot.text}, {"field", std::string(def->name)}, {"allowed", allowed}});
    }
    const Token& vt = peek();
    if (vt.kind != TokKind::word && vt.kind != TokKind::quoted) {
      Token at = vt;
      if (vt.kind == TokKind::end) at.offset = q_.size();
      fail(at, "missing value after " + std::string(def->name) + ot.text, "a value, e.g. " + std::string(def->example),
           "filter_missing_value", {{"field", std::string(def->name)}, {"op", ot.text}, {"example", std::string(def->example)}});
    }
    next();
    if (is_keyword(vt, "and") || is_keyword(vt, "or") || is_keyword(vt, "not"))
      fail(vt, "missing value after " + std::string(def->name) + ot.text, "a value, e.g. " + std::string(def->example),
           "filter_missing_value", {{"field", std::string(def->name)}, {"op", ot.text}, {"example", std::string(def->example)}});
    switch (def->type) {
      case FilterFieldType::text: {
        n->text = lower(vt.text);
        if (closed_set && std::find(def->allowed.begin(), def->allowed.end(), n->text) == def->allowed.end()) {
          std::string list;
          for (auto a : def->allowed) list += (list.empty() ? "" : ", ") + std::string(a);
          fail(vt, "unknown " + std::string(def->name) + " \"" + vt.text + "\"", "one of " + list, "filter_unknown_value",
               {{"field", std::string(def->name)}, {"value", vt.text}, {"allowed", list}});
        }
        if (def->id == FieldId::gpu && norm_gpu_name(vt.text).empty())
          fail(vt, "GPU name \"" + vt.text + "\" has no letters or digits", "a GPU name such as H100", "filter_gpu_name_empty",
               {{"value", vt.text}});
        if (n->text.empty())
          fail(vt, "empty value", "a non-empty value, e.g. " + std::string(def->example), "filter_empty_value",
               {{"field", std::string(def->name)}, {"example", std::string(def->example)}});
        break;
      }
      case FilterFieldType::date: {
        if (!is_calendar_date(vt.text))
          fail(vt, "\"" + vt.text + "\" is not a date", "a date YYYY-MM-DD, e.g. " + std::string(def->example), "filter_not_a_date",
               {{"value", vt.text}, {"example", std::string(def->example)}});
        if (before_earliest_date(vt.text))
          fail(vt, "\"" + vt.text + "\" is before " + std::string(kEarliestDate) + ", the earliest date accepted",
               "a date from " + std::string(kEarliestDate) + " on (no cloud GPU offer is older)", "date_before_earliest",
               {{"value", vt.text}, {"earliest", std::string(kEarliestDate)}});
        n->text = vt.text;
        break;
      }
      case FilterFieldType::number: n->number = parse_number(*def, vt); break;
      case FilterFieldType::boolean: break;
    }
    n->kind = NodeKind::compare;
    return n;
  }

  double parse_number(const FieldDef& def, const Token& vt) const {
    const std::string& s = vt.text;
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
        ((s[i + 1] >= '0' && s[i + 1] <= '9') || ((s[i + 1] == '-' || s[i + 1] == '+') && i + 2 < s.size()))) {
      std::size_t j = i + 1;
      if (s[j] == '-' || s[j] == '+') ++j;
      if (j < s.size() && s[j] >= '0' && s[j] <= '9') {
        i = j;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      }
    }
    const std::size_t start = (s[0] == '+') ? 1 : 0;
    double value = 0;
    auto res = std::from_chars(s.data() + start, s.data() + i, value);
    const std::string unit_desc = def.unit.empty() ? "" : " in " + std::string(def.unit);
    // A number written right but beyond a double (`price<1e400`; trial 10 read "is not a number").
    if (i > start && res.ec == std::errc::result_out_of_range && res.ptr == s.data() + i)
      fail(vt, "\"" + s + "\" is out of range", "a finite number" + unit_desc + ", e.g. " + std::string(def.example),
           "filter_number_out_of_range", {{"value", s}, {"field", std::string(def.name)}, {"example", std::string(def.example)}});
    if (i == start || res.ec != std::errc() || res.ptr != s.data() + i || !std::isfinite(value))
      fail(vt, "\"" + s + "\" is not a number", "a number" + unit_desc + ", e.g. " + std::string(def.example), "filter_not_a_number",
           {{"value", s}, {"field", std::string(def.name)}, {"example", std::string(def.example)}});
    const std::string_view suffix = std::string_view(s).substr(i);
    for (const auto& u : units_of(def.unit_kind)) {
      if (u.suffix != suffix) continue;
      // Every numeric field is a size, a count, a rate or a price: none is negative, and counts
      // are whole (issue 11: `vram>=-80GB` and `gpus>=8.5` were accepted).
      if (value < 0)
        fail(vt, "\"" + s + "\" is negative", "a number >= 0" + unit_desc + ", e.g. " + std::string(def.example),
             "filter_negative_value", {{"value", s}, {"field", std::string(def.name)}, {"example", std::string(def.example)}});
      if (def.unit_kind == UnitKind::count && value != std::floor(value))
        fail(vt, "\"" + s + "\" is not a whole number", "a whole count, e.g. " + std::string(def.example),
             "filter_not_a_whole_number",
             {{"value", s}, {"field", std::string(def.name)}, {"example", std::string(def.example)}});
      return value * u.factor;
    }
    Token at = vt;
    at.offset = vt.offset + i;
    at.length = suffix.size();
    std::string units = unit_list(def.unit_kind);
    if (units.empty())
      fail(at, "unknown unit \"" + std::string(suffix) + "\" for " + std::string(def.name),
           "a plain number (" + std::string(def.unit) + ")", "filter_unknown_unit",
           {{"unit", std::string(suffix)}, {"field", std::string(def.name)}, {"allowed", std::string(def.unit)}});
    fail(at, "unknown unit \"" + std::string(suffix) + "\" for " + std::string(def.name),
         units + " (a bare number is " + std::string(def.unit.substr(0, def.unit.find(';'))) + ")", "filter_unknown_unit",
         {{"unit", std::string(suffix)}, {"field", std::string(def.name)}, {"allowed", units}});
  }

  std::string_view q_;
  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  std::size_t nesting_ = 0;  ///< open "(" and "not" around the current token
  std::size_t clauses_ = 0;
};

// ---------------------------------------------------------------------------------------------
// In-memory evaluation

using Tri = std::optional<bool>;

Tri tri_and(Tri a, Tri b) {
  if (a == false || b == false) return false;
  if (a == true && b == true) return true;
  return std::nullopt;
}
Tri tri_or(Tri a, Tri b) {
  if (a == true || b == true) return true;
  if (a == false && b == false) return false;
  return std::nullopt;
}
Tri tri_not(Tri a) {
  if (!a) return std::nullopt;
  return !*a;
}

template <typename V>
Tri compare_values(const V& a, CompareOp op, const V& b) {
  switch (op) {
    case CompareOp::eq: return a == b;
    case CompareOp::ne: return a != b;
    case CompareOp::lt: return a < b;
    case CompareOp::le: return a <= b;
    case CompareOp::gt: return a > b;
    case CompareOp::ge: return a >= b;
    default: return std::nullopt;
  }
}

Tri compare_text(const std::optional<std::string>& value, CompareOp op, const std::string& want) {
  if (!value) return std::nullopt;
  const std::string v = lower(*value);
  switch (op) {
    case CompareOp::eq: return v == want;
    case CompareOp::ne: return v != want;
    case CompareOp::contains: return v.find(want) != std::string::npos;
    case CompareOp::not_contains: return v.find(want) == std::string::npos;
    default: return std::nullopt;
  }
}

std::optional<std::string> non_empty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string_view filter_field_type_name(FilterFieldType t) noexcept {
  switch (t) {
    case FilterFieldType::text: return "text";
    case FilterFieldType::number: return "number";
    case FilterFieldType::boolean: return "boolean";
    case FilterFieldType::date: return "date";
  }
  return "text";
}

const std::vector<FilterFieldInfo>& filter_fields() {
  static const std::vector<FilterFieldInfo> out = [] {
    std::vector<FilterFieldInfo> v;
    for (const auto& d : field_defs()) v.push_back({d.name, d.type, d.unit, d.example, d.description});
    return v;
  }();
  return out;
}

namespace {
/// Code points echoed from the user's text in an error: a longer filter or token is cut (a trial
/// found a 10,000-parenthesis filter echoed whole by the CLI and the API).
constexpr std::size_t kEchoCodePoints = 80;

/// Byte offset of each code point of `s` (and s.size() at the end).
std::vector<std::size_t> code_point_starts(std::string_view s) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
  at.push_back(s.size());
  return at;
}

/// `problem` with each quoted part ("...") longer than kEchoCodePoints cut to that many + "…".
std::string clip_quoted(const std::string& problem) {
  std::string out;
  std::size_t i = 0;
  while (i < problem.size()) {
    const std::size_t open = problem.find('"', i);
    const std::size_t close = open == std::string::npos ? std::string::npos : problem.find('"', open + 1);
    if (close == std::string::npos) break;
    out.append(problem, i, open + 1 - i);
    const std::string_view inner = std::string_view(problem).substr(open + 1, close - open - 1);
    const auto cps = code_point_starts(inner);
    if (cps.size() - 1 > kEchoCodePoints) {
      out.append(inner.substr(0, cps[kEchoCodePoints]));
      out += "…";
    } else {
      out.append(inner);
    }
    out += '"';
    i = close + 1;
  }
  out.append(problem, std::min(i, problem.size()));
  return out;
}

/// The problem, the query on one line and a caret under the token. A query longer than
/// kEchoCodePoints is shown as a window of that many code points around the token, "…" where cut.
std::string render_filter_error(std::string_view query, std::size_t offset, std::size_t length,
                                const std::string& problem) {
  // Each character the terminal must not receive (a control, a bidirectional control, a byte
  // that is not UTF-8: util/text_check.hpp) is shown as U+FFFD, the caret kept under it.
  std::string line;
  for (std::size_t i = 0; i < query.size();) {
    const auto pr = find_text_problem(query.substr(i), /*allow_newlines=*/true);
    if (!pr) {
      line += query.substr(i);
      break;
    }
    const std::size_t at = i + pr->offset;
    line += query.substr(i, at - i);
    line += "\xEF\xBF\xBD";
    if (at < offset) offset = offset + 3 - pr->length;
    else if (at < offset + length) length = length + 3 - pr->length;
    i = at + pr->length;
  }
  for (char& c : line)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  const auto cps = code_point_starts(line);
  const std::size_t n = cps.size() - 1;  // code points in the line
  std::size_t col = 0;  // code points before the token
  while (col < n && cps[col] < offset) ++col;
  std::size_t width = 0;
  while (col + width < n && cps[col + width] < offset + length) ++width;
  if (width == 0) width = 1;
  std::size_t first = 0;
  if (n > kEchoCodePoints) first = col > kEchoCodePoints / 4 ? std::min(col - kEchoCodePoints / 4, n - kEchoCodePoints) : 0;
  const std::size_t last = std::min(n, first + kEchoCodePoints);
  std::string shown = (first > 0 ? "…" : "") + line.substr(cps[first], cps[last] - cps[first]) + (last < n ? "…" : "");
  const std::size_t caret_col = col - std::min(col, first) + (first > 0 ? 1 : 0);
  width = std::max<std::size_t>(1, std::min(width, kEchoCodePoints + 1 - std::min(caret_col, kEchoCodePoints)));
  return clip_quoted(problem) + "\n  " + shown + "\n  " + std::string(caret_col, ' ') + std::string(width, '^');
}
}  // namespace

FilterError::FilterError(std::string_view query, std::size_t offset, std::size_t length, const std::string& problem,
                         std::string expected, std::string message_code, std::map<std::string, std::string> message_values)
    : Error(ErrorKind::invalid_input, "filter:" + std::to_string(offset + 1),
            render_filter_error(query, offset, length, problem), std::move(expected)),
      ErrorCode(std::move(message_code), std::move(message_values)),
      offset_(offset),
      length_(length) {}

Filter Filter::parse(std::string_view text) {
  if (text.size() > kMaxFilterBytes)
    throw FilterError(text.substr(0, 80), 0, 1, fmt::format("filter is {} bytes long", text.size()),
                      fmt::format("at most {} bytes", kMaxFilterBytes), "filter_too_long",
                      {{"bytes", std::to_string(text.size())}, {"max", std::to_string(kMaxFilterBytes)}});
  Filter f;
  f.text_ = std::string(text);
  f.root_ = Parser(text).parse();
  return f;
}

namespace {
std::string node_to_string(const FilterNode& n) {
  switch (n.kind) {
    case NodeKind::and_: return "(" + node_to_string(*n.lhs) + " and " + node_to_string(*n.rhs) + ")";
    case NodeKind::or_: return "(" + node_to_string(*n.lhs) + " or " + node_to_string(*n.rhs) + ")";
    case NodeKind::not_: return "(not " + node_to_string(*n.lhs) + ")";
    case NodeKind::flag: return std::string(def_of(n.field).name);
    case NodeKind::compare: {
      const FieldDef& d = def_of(n.field);
      std::string v = d.type == FilterFieldType::number ? fmt::format("{}", n.number) : "\"" + n.text + "\"";
      return "(" + std::string(d.name) + " " + std::string(op_text(n.op)) + " " + v + ")";
    }
  }
  return "";
}

void collect_gpu_nodes(const FilterNode* n, std::vector<const FilterNode*>& out) {
  if (n == nullptr) return;
  if (n->kind == NodeKind::compare && n->field == FieldId::gpu) out.push_back(n);
  collect_gpu_nodes(n->lhs.get(), out);
  collect_gpu_nodes(n->rhs.get(), out);
}

const GpuCatalog& catalog_of(const FilterContext& ctx) { return ctx.gpus ? *ctx.gpus : GpuCatalog::bundled(); }
}  // namespace

namespace {
bool class_fact_node(const detail::FilterNode* n) {
  using detail::FieldId;
  using detail::NodeKind;
  if (n == nullptr) return true;
  if (n->kind == NodeKind::and_ || n->kind == NodeKind::or_ || n->kind == NodeKind::not_)
    return class_fact_node(n->lhs.get()) && class_fact_node(n->rhs.get());
  switch (n->field) {
    case FieldId::provider: case FieldId::instance: case FieldId::region: case FieldId::zone: case FieldId::gpu: case FieldId::form: case FieldId::flag: case FieldId::link:
    case FieldId::net: case FieldId::memtype: case FieldId::gpus: case FieldId::vram: case FieldId::total_vram:
    case FieldId::bandwidth: case FieldId::link_bw: case FieldId::net_gbps: case FieldId::nodes:
    case FieldId::confirmed: case FieldId::flagged: case FieldId::excluded:
      return true;
    default:
      return false;
  }
}
}  // namespace

bool Filter::reads_only_plan_class_facts() const { return class_fact_node(root_.get()); }

std::string Filter::to_string() const { return root_ ? node_to_string(*root_) : ""; }

PreparedFilter Filter::prepare(const FilterContext& ctx) const {
  PreparedFilter p;
  p.root_ = root_;
  p.ctx_ = ctx;
  const GpuCatalog& cat = catalog_of(ctx);
  for (const GpuSpec& s : cat.gpus()) p.specs_.emplace(s.name, &s);
  std::vector<const FilterNode*> gpu_nodes;
  collect_gpu_nodes(root_.get(), gpu_nodes);
  for (const FilterNode* n : gpu_nodes)
    if (n->op == CompareOp::eq || n->op == CompareOp::ne) p.gpu_names_[n] = gpu_names_matching(cat, n->text);
  return p;
}

std::optional<bool> PreparedFilter::evaluate(const Offer& offer) const {
  if (!root_) return true;
  const PriceObservation* latest = offer.latest_price(ctx_.price_kind);
  const GpuSpec* spec = nullptr;
  if (offer.gpu_name) {
    auto it = specs_.find(*offer.gpu_name);
    if (it != specs_.end()) spec = it->second;
  }
  // Memory per GPU: the offer's own figure, else its resolved GPU model's datasheet memory (the
  // planner sizes on that spec too); unknown only when neither is known.
  auto vram_bytes = [&]() -> std::optional<double> {
    if (offer.gpu_memory_bytes) return offer.gpu_memory_bytes;
    return spec ? std::optional<double>(spec->memory_bytes) : std::nullopt;
  };
  std::function<Tri(const FilterNode&)> eval = [&](const FilterNode& n) -> Tri {
    switch (n.kind) {
      case NodeKind::and_: return tri_and(eval(*n.lhs), eval(*n.rhs));
      case NodeKind::or_: return tri_or(eval(*n.lhs), eval(*n.rhs));
      case NodeKind::not_: return tri_not(eval(*n.lhs));
      case NodeKind::flag:
        switch (n.field) {
          case FieldId::spot:
            return std::any_of(offer.prices.begin(), offer.prices.end(),
                               [](const PriceObservation& p) { return p.kind == PriceKind::spot; });
          case FieldId::stale: return is_stale(offer, ctx_.price_kind, ctx_.now_date, ctx_.stale_after_days);
          case FieldId::confirmed: return offer.confirmed_available_at.has_value();
          case FieldId::flagged: return !offer.flags.empty();
          case FieldId::excluded: return offer.excluded_from_ranking();
          case FieldId::reserved:
            return std::any_of(offer.prices.begin(), offer.prices.end(),
                               [](const PriceObservation& p) { return is_reserved(p.kind); });
          default: return std::nullopt;
        }
      case NodeKind::compare: break;
    }
    auto num = [&](std::optional<double> v) -> Tri {
      if (!v) return std::nullopt;
      return compare_values(*v, n.op, n.number);
    };
    auto date = [&](const std::optional<std::string>& v) -> Tri {
      if (!v) return std::nullopt;
      return compare_values(v->substr(0, 10), n.op, n.text);
    };
    switch (n.field) {
      case FieldId::provider: return compare_text(non_empty(offer.provider), n.op, n.text);
      case FieldId::instance: return compare_text(non_empty(offer.instance_type), n.op, n.text);
      case FieldId::region: return compare_text(non_empty(offer.region), n.op, n.text);
      case FieldId::zone: return compare_text(non_empty(offer.zone), n.op, n.text);
      case FieldId::id: return compare_text(non_empty(offer.id), n.op, n.text);
      case FieldId::form: return compare_text(non_empty(offer.form_factor), n.op, n.text);
      case FieldId::source:
        return compare_text(latest ? non_empty(latest->source.dataset) : std::nullopt, n.op, n.text);
      case FieldId::link:
        return compare_text(offer.intra_node_link == IntraNodeLink::unknown
                                ? std::nullopt
                                : std::optional<std::string>(intra_node_link_name(offer.intra_node_link)),
                            n.op, n.text);
      case FieldId::net:
        return compare_text(offer.inter_node_network == InterNodeNetwork::unknown
                                ? std::nullopt
                                : std::optional<std::string>(inter_node_network_name(offer.inter_node_network)),
                            n.op, n.text);
      case FieldId::memtype:
        return compare_text(spec ? std::optional<std::string>(memory_family(*spec)) : std::nullopt, n.op, n.text);
      case FieldId::flag: {
        const bool want_match = n.op == CompareOp::eq || n.op == CompareOp::contains;
        const CompareOp base = (n.op == CompareOp::eq || n.op == CompareOp::ne) ? CompareOp::eq : CompareOp::contains;
        bool any = std::any_of(offer.flags.begin(), offer.flags.end(),
                               [&](const QualityFlag& f) { return compare_text(f.rule, base, n.text) == true; });
        return want_match ? any : !any;
      }
      case FieldId::gpu: {
        bool hit = false;
        if (n.op == CompareOp::eq || n.op == CompareOp::ne) {
          const auto& names = gpu_names_.at(&n);
          hit = (offer.gpu_name && std::find(names.begin(), names.end(), *offer.gpu_name) != names.end()) ||
                norm_gpu_name(offer.gpu_name_raw) == norm_gpu_name(n.text);
        } else {
          const std::string q = norm_gpu_name(n.text);
          hit = norm_gpu_name(offer.gpu_name.value_or("")).find(q) != std::string::npos ||
                norm_gpu_name(offer.gpu_name_raw).find(q) != std::string::npos;
        }
        return (n.op == CompareOp::eq || n.op == CompareOp::contains) ? hit : !hit;
      }
      case FieldId::gpus: return num(static_cast<double>(offer.gpu_count));
      case FieldId::vram: return num(vram_bytes());
      case FieldId::total_vram: {
        const std::optional<double> per_gpu = vram_bytes();
        return num(per_gpu ? std::optional<double>(*per_gpu * offer.gpu_count) : std::nullopt);
      }
      case FieldId::bandwidth:
        return num(spec && spec->memory_bandwidth_bytes_per_s > 0
                       ? std::optional<double>(spec->memory_bandwidth_bytes_per_s)
                       : std::nullopt);
      case FieldId::link_bw: return num(offer.intra_node_link_bytes_per_s);
      case FieldId::net_gbps: return num(offer.inter_node_bits_per_s);
      case FieldId::nodes:
        return num(offer.max_nodes ? std::optional<double>(*offer.max_nodes) : std::nullopt);
      case FieldId::vcpus: return num(offer.vcpus);
      case FieldId::ram: return num(offer.ram_bytes);
      case FieldId::disk: return num(offer.local_disk_bytes);
      case FieldId::price: return num(latest ? std::optional<double>(latest->usd_per_hour) : std::nullopt);
      case FieldId::price_per_gpu:
        return num(latest && offer.gpu_count != 0
                       ? std::optional<double>(latest->usd_per_hour / offer.gpu_count)
                       : std::nullopt);
      case FieldId::observed: return date(latest ? latest->source.observed_at : std::nullopt);
      case FieldId::confirmed_at: return date(offer.confirmed_available_at);
      default: return std::nullopt;
    }
  };
  return eval(*root_);
}

namespace detail {
FilterFieldType field_type(FieldId id) { return def_of(id).type; }
std::string_view compare_op_text(CompareOp op) { return op_text(op); }
}  // namespace detail

// ---------------------------------------------------------------------------------------------

std::string norm_gpu_name(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out += c;
  }
  return out;
}

namespace {
/// norm_gpu_name(s) == q without building the normalised string (gpu_names_matching compares the
/// value with every catalog name and alias, once per gpu= clause and per compilation).
bool norm_equals(std::string_view s, std::string_view q) {
  std::size_t i = 0;
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) continue;
    if (i == q.size() || q[i] != c) return false;
    ++i;
  }
  return i == q.size();
}
}  // namespace

std::vector<std::string> gpu_names_matching(const GpuCatalog& gpus, std::string_view value) {
  std::vector<std::string> out;
  const std::string q = norm_gpu_name(value);
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  if (const GpuSpec* s = gpus.try_find(value)) add(s->name);
  for (const GpuSpec& s : gpus.gpus()) {
    bool hit = norm_equals(s.name, q);
    if (!hit && s.name.size() > s.vendor.size() && s.name.compare(0, s.vendor.size(), s.vendor) == 0)
      hit = norm_equals(std::string_view(s.name).substr(s.vendor.size()), q);
    for (const auto& a : s.aliases) hit = hit || norm_equals(a, q);
    if (hit) add(s.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string memory_family(const GpuSpec& spec) {
  const std::string t = lower(spec.memory_type);
  if (t.rfind("hbm", 0) == 0) return "hbm";
  if (t.rfind("gddr", 0) == 0) return "gddr";
  return t;
}

std::optional<long> days_since_epoch(std::string_view iso) { return date_prefix_days_since_epoch(iso); }

std::optional<bool> is_stale(const Offer& offer, PriceKind kind, std::string_view now_date, double stale_after_days) {
  const PriceObservation* p = offer.latest_price(kind);
  if (p == nullptr || !p->seen_at() || now_date.empty()) return std::nullopt;
  auto seen = days_since_epoch(*p->seen_at());
  auto now = days_since_epoch(now_date);
  if (!seen || !now) return std::nullopt;
  return static_cast<double>(*now - *seen) > stale_after_days;
}

}  // namespace gpuplan
