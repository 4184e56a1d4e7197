#include "catalog/providers.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "catalog/import_detail.hpp"
#include "util/embedded.hpp"
#include "util/error.hpp"

namespace gpuplan {

namespace {

std::string where_of(const std::string& file, const toml::source_region& r) {
  return fmt::format("{}:{}:{}", file, r.begin.line, r.begin.column);
}

struct TermDef {
  std::string_view key;
  std::optional<double> BillingTerms::*member;
};

constexpr TermDef kTerms[] = {
    {"granularity_seconds", &BillingTerms::granularity_seconds},
    {"minimum_billed_seconds", &BillingTerms::minimum_billed_seconds},
    {"storage_usd_per_gb_month", &BillingTerms::storage_usd_per_gb_month},
    {"egress_usd_per_gb", &BillingTerms::egress_usd_per_gb},
    {"egress_free_gb_per_month", &BillingTerms::egress_free_gb_per_month},
    {"preemptions_per_day", &BillingTerms::preemptions_per_day},
};

std::string term_list() {
  std::string s;
  for (const TermDef& t : kTerms) {
    if (!s.empty()) s += ", ";
    s += t.key;
  }
  return s;
}

const toml::table& as_table(const toml::node& n, const std::string& file, const std::string& what) {
  const toml::table* t = n.as_table();
  if (t == nullptr) {
    throw Error(ErrorKind::invalid_input, where_of(file, n.source()), fmt::format("{} is not a table", what),
                fmt::format("a [{}] table", what));
  }
  return *t;
}

std::string string_value(const toml::table& t, std::string_view key, const std::string& file,
                         const std::string& context, bool required) {
  const toml::node* n = t.get(key);
  if (n == nullptr) {
    if (!required) return {};
    throw Error(ErrorKind::invalid_input, where_of(file, t.source()), fmt::format("{}: missing key '{}'", context, key),
                fmt::format("{} = \"...\"", key));
  }
  const auto v = n->value<std::string>();
  if (!n->is_string() || !v || v->empty()) {
    throw Error(ErrorKind::invalid_input, where_of(file, n->source()), fmt::format("{}: '{}' is not a string", context, key),
                fmt::format("{} = \"a non-empty string\"", key));
  }
  return *v;
}

NetworkFact parse_network(const toml::node& n, const std::string& file, const std::string& context) {
  const toml::table& t = as_table(n, file, context);
  for (const auto& [k, v] : t) {
    const std::string_view key = k.str();
    if (key != "instance_prefix" && key != "network" && key != "gbps_per_node" && key != "source" && key != "seen" &&
        key != "note") {
      throw Error(ErrorKind::invalid_input, where_of(file, k.source()), fmt::format("{}: unknown key '{}'", context, key),
                  "only instance_prefix, network, gbps_per_node, source, seen, note");
    }
  }
  NetworkFact f;
  f.instance_prefix = import_detail::lower(string_value(t, "instance_prefix", file, context, true));
  const std::string net = string_value(t, "network", file, context, true);
  if (net == "infiniband") {
    f.network = InterNodeNetwork::infiniband;
  } else if (net == "roce") {
    f.network = InterNodeNetwork::roce;
  } else if (net == "ethernet") {
    f.network = InterNodeNetwork::ethernet;
  } else {
    throw Error(ErrorKind::invalid_input, where_of(file, t.get("network")->source()),
                fmt::format("{}: network '{}' is not known", context, net), "infiniband, roce or ethernet");
  }
  const toml::node* g = t.get("gbps_per_node");
  if (g == nullptr || !(g->is_integer() || g->is_floating_point())) {
    throw Error(ErrorKind::invalid_input, where_of(file, g != nullptr ? g->source() : t.source()),
                fmt::format("{}: 'gbps_per_node' is missing or not a number", context), "gbps_per_node = <number > 0>");
  }
  const double gbps = g->is_integer() ? static_cast<double>(*g->value<int64_t>()) : *g->value<double>();
  if (!(gbps > 0)) {
    throw Error(ErrorKind::invalid_input, where_of(file, g->source()), fmt::format("{}: gbps_per_node {} is not positive", context, gbps),
                "gbps_per_node = <number > 0>");
  }
  f.bits_per_s = gbps * 1e9;
  const std::string source = string_value(t, "source", file, context, true);
  const std::string seen = string_value(t, "seen", file, context, true);
  if (!import_detail::is_iso_date(seen)) {
    throw Error(ErrorKind::invalid_input, where_of(file, t.get("seen")->source()),
                fmt::format("{}: seen '{}' is not a date", context, seen), "seen = \"YYYY-MM-DD\"");
  }
  const std::string note = string_value(t, "note", file, context, false);
  f.source = note.empty() ? fmt::format("{} (seen {})", source, seen) : fmt::format("{} (seen {}; {})", source, seen, note);
  return f;
}

ProviderInfo parse_provider(const std::string& id, const toml::table& t, const std::string& file) {
  const std::string context = "providers." + id;
  ProviderInfo p;
  p.id = id;
  for (const auto& [k, v] : t) {
    const std::string_view key = k.str();
    if (key != "name" && key != "url" && key != "billing" && key != "networks") {
      throw Error(ErrorKind::invalid_input, where_of(file, k.source()), fmt::format("{}: unknown key '{}'", context, key),
                  "only name, url, billing, networks");
    }
  }
  p.name = string_value(t, "name", file, context, true);
  p.url = string_value(t, "url", file, context, false);
  if (const toml::node* nets = t.get("networks")) {
    const toml::array* arr = nets->as_array();
    if (arr == nullptr) {
      throw Error(ErrorKind::invalid_input, where_of(file, nets->source()), context + ".networks is not an array of tables",
                  "[[providers." + id + ".networks]] tables");
    }
    for (const toml::node& n : *arr) p.networks.push_back(parse_network(n, file, context + ".networks"));
  }
  const toml::node* billing = t.get("billing");
  if (billing == nullptr) return p;
  for (const auto& [k, v] : as_table(*billing, file, context + ".billing")) {
    const std::string term(k.str());
    const std::string term_context = context + ".billing." + term;
    const TermDef* def = nullptr;
    for (const TermDef& d : kTerms)
      if (d.key == term) def = &d;
    if (def == nullptr) {
      throw Error(ErrorKind::invalid_input, where_of(file, k.source()), fmt::format("unknown billing term '{}'", term),
                  "one of " + term_list());
    }
    const toml::table& entry = as_table(v, file, term_context);
    for (const auto& [ek, ev] : entry) {
      const std::string_view ekey = ek.str();
      if (ekey != "value" && ekey != "source" && ekey != "seen" && ekey != "note") {
        throw Error(ErrorKind::invalid_input, where_of(file, ek.source()),
                    fmt::format("{}: unknown key '{}'", term_context, ekey), "only value, source, seen, note");
      }
    }
    const toml::node* value = entry.get("value");
    if (value == nullptr || !(value->is_integer() || value->is_floating_point())) {
      throw Error(ErrorKind::invalid_input, where_of(file, value != nullptr ? value->source() : entry.source()),
                  fmt::format("{}: 'value' is missing or not a number", term_context), "value = <number >= 0>");
    }
    const double number = value->is_integer() ? static_cast<double>(*value->value<int64_t>()) : *value->value<double>();
    if (!(number >= 0)) {
      throw Error(ErrorKind::invalid_input, where_of(file, value->source()),
                  fmt::format("{}: value {} is negative", term_context, number), "value = <number >= 0>");
    }
    const std::string source = string_value(entry, "source", file, term_context, true);
    const std::string seen = string_value(entry, "seen", file, term_context, true);
    if (!import_detail::is_iso_date(seen)) {
      throw Error(ErrorKind::invalid_input, where_of(file, entry.get("seen")->source()),
                  fmt::format("{}: seen '{}' is not a date", term_context, seen), "seen = \"YYYY-MM-DD\"");
    }
    const std::string note = string_value(entry, "note", file, term_context, false);
    p.billing.*(def->member) = number;
    p.billing.sources.push_back(note.empty() ? fmt::format("{}: {} (seen {})", term, source, seen)
                                             : fmt::format("{}: {} (seen {}; {})", term, source, seen, note));
  }
  return p;
}

}  // namespace

std::vector<ProviderInfo> parse_providers_toml(std::string_view text, const std::string& source) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw Error(ErrorKind::invalid_input, where_of(source, e.source()),
                fmt::format("malformed TOML: {}", e.description()), "valid TOML v1.0");
  }
  std::vector<ProviderInfo> out;
  for (const auto& [k, v] : doc) {
    if (k.str() != "providers") {
      throw Error(ErrorKind::invalid_input, where_of(source, k.source()), fmt::format("unknown top-level key '{}'", k.str()),
                  "only [providers.<id>] tables");
    }
  }
  const toml::node* providers = doc.get("providers");
  if (providers == nullptr) return out;
  for (const auto& [k, v] : as_table(*providers, source, "providers")) {
    const std::string id(k.str());
    if (id.empty() || id != import_detail::lower(id)) {
      throw Error(ErrorKind::invalid_input, where_of(source, k.source()), fmt::format("provider id '{}' is not lower-case", id),
                  "a lower-case provider id as in the offer catalog (aws, lambda, ...)");
    }
    out.push_back(parse_provider(id, as_table(v, source, "providers." + id), source));
  }
  std::sort(out.begin(), out.end(), [](const ProviderInfo& a, const ProviderInfo& b) { return a.id < b.id; });
  return out;
}

const std::vector<ProviderInfo>& bundled_providers() {
  static const std::vector<ProviderInfo> providers =
      parse_providers_toml(embedded_file_or_throw("providers.toml"), "data/providers.toml");
  return providers;
}

const ProviderInfo* find_provider(const std::vector<ProviderInfo>& providers, std::string_view id) {
  for (const ProviderInfo& p : providers)
    if (p.id == id) return &p;
  return nullptr;
}

BillingTerms effective_billing(const Offer& offer, const ProviderInfo* provider) {
  BillingTerms out;
  const BillingTerms& over = offer.billing_override;
  for (const TermDef& t : kTerms) {
    const std::optional<double>& o = over.*(t.member);
    if (o) {
      out.*(t.member) = o;
      for (const std::string& s : over.sources)
        if (s.rfind(std::string(t.key) + ":", 0) == 0) out.sources.push_back(s);
      continue;
    }
    if (provider == nullptr) continue;
    const std::optional<double>& d = provider->billing.*(t.member);
    if (!d) continue;
    out.*(t.member) = d;
    for (const std::string& s : provider->billing.sources)
      if (s.rfind(std::string(t.key) + ":", 0) == 0) out.sources.push_back(s);
  }
  return out;
}

const NetworkFact* find_network_fact(const Offer& offer, const std::vector<ProviderInfo>& providers) {
  const ProviderInfo* p = find_provider(providers, offer.provider);
  if (p == nullptr) return nullptr;
  const std::string instance = import_detail::lower(offer.instance_type);
  const NetworkFact* best = nullptr;
  for (const NetworkFact& f : p->networks) {
    if (instance.rfind(f.instance_prefix, 0) != 0) continue;
    if (best == nullptr || f.instance_prefix.size() > best->instance_prefix.size()) best = &f;
  }
  return best;
}

std::size_t apply_network_facts(std::vector<Offer>& offers, const std::vector<ProviderInfo>& providers) {
  std::size_t filled = 0;
  for (Offer& o : offers) {
    if (o.inter_node_network != InterNodeNetwork::unknown) continue;
    const NetworkFact* f = find_network_fact(o, providers);
    if (f == nullptr) continue;
    o.inter_node_network = f->network;
    o.inter_node_bits_per_s = f->bits_per_s;
    ++filled;
  }
  return filled;
}

}  // namespace gpuplan
