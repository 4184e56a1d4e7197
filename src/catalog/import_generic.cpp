// gpuplan's own user-quote format, CSV and JSON (docs/import-format.md).
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "catalog/import_detail.hpp"
#include "catalog/importers.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan {

using namespace import_detail;

namespace {

enum class FieldType { text, number };
struct FieldDef {
  std::string_view name;
  FieldType type;
  bool required;
};

// Keep in sync with docs/import-format.md.
constexpr FieldDef kFields[] = {
    {"provider", FieldType::text, true},
    {"instance_type", FieldType::text, true},
    {"region", FieldType::text, false},
    {"zone", FieldType::text, false},
    {"gpu", FieldType::text, true},
    {"gpu_count", FieldType::number, true},
    {"gpu_memory_gb", FieldType::number, false},
    {"vcpus", FieldType::number, false},
    {"ram_gb", FieldType::number, false},
    {"local_disk_gb", FieldType::number, false},
    {"price_kind", FieldType::text, true},
    {"usd_per_hour", FieldType::number, false},
    {"usd_per_gpu_hour", FieldType::number, false},
    {"observed_at", FieldType::text, true},
    {"source", FieldType::text, true},
    {"interconnect", FieldType::text, false},
    {"form_factor", FieldType::text, false},
    {"network", FieldType::text, false},
    {"network_gbps", FieldType::number, false},
    {"max_nodes", FieldType::number, false},
    {"confirmed_available_at", FieldType::text, false},
    {"billing_granularity_seconds", FieldType::number, false},
    {"billing_minimum_seconds", FieldType::number, false},
    {"storage_usd_per_gb_month", FieldType::number, false},
    {"egress_usd_per_gb", FieldType::number, false},
    {"egress_free_gb_per_month", FieldType::number, false},
    {"preemptions_per_day", FieldType::number, false},
    {"billing_source", FieldType::text, false},
    {"notes", FieldType::text, false},
};

const FieldDef* field_def(std::string_view name) {
  for (const FieldDef& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

std::string field_list() {
  std::string s;
  for (const FieldDef& f : kFields) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

/// One record: field name → cell text ("" = absent). `where_of(field)` names the place.
using Record = std::map<std::string, std::string, std::less<>>;

struct Place {
  std::string row_where;   ///< "file:line" or "file: /offers/3"
  std::string locator;     ///< file:line or file#/offers/3
  bool json = false;
  std::string where(std::string_view field) const {
    return json ? fmt::format("{}/{}", row_where, field) : row_where;
  }
};

std::string get(const Record& r, std::string_view key) {
  auto it = r.find(key);
  return it == r.end() ? std::string() : std::string(trim(it->second));
}

std::optional<double> number(const Record& r, std::string_view key, const Place& p) {
  return cell_number(get(r, key), p.where(key), key);
}

void require_nonneg(const std::optional<double>& v, std::string_view key, const Place& p) {
  if (v && *v < 0) {
    throw Error(ErrorKind::invalid_input, p.where(key), fmt::format("{} is negative", key), "a number >= 0");
  }
}

void import_record(const Record& r, const Place& p, const ImportSource& src, ImportBatch& batch) {
  ++batch.rows_read;
  for (const FieldDef& f : kFields) {
    if (f.required && get(r, f.name).empty() && f.name != "observed_at") {
      throw Error(ErrorKind::invalid_input, p.where(f.name), fmt::format("required field {} is empty", f.name),
                  "a value (see docs/import-format.md)");
    }
  }
  Offer o;
  o.provider = canonical_provider_id(get(r, "provider"));
  o.instance_type = get(r, "instance_type");
  o.region = get(r, "region");
  o.zone = get(r, "zone");
  o.gpu_name_raw = get(r, "gpu");
  const std::string count_text = get(r, "gpu_count");
  o.gpu_count = cell_count(count_text, p.where("gpu_count"), "gpu_count");
  if (o.gpu_count == 0) {
    throw Error(ErrorKind::invalid_input, p.where("gpu_count"), "gpu_count is 0", "a GPU count >= 1");
  }
  o.id = make_offer_id(o);

  const std::string kind_text = lower(get(r, "price_kind"));
  PriceKind kind = PriceKind::on_demand;
  bool kind_ok = false;
  for (PriceKind k : {PriceKind::on_demand, PriceKind::spot, PriceKind::reserved_1y, PriceKind::reserved_3y}) {
    if (kind_text == price_kind_name(k)) {
      kind = k;
      kind_ok = true;
    }
  }
  if (!kind_ok) {
    throw Error(ErrorKind::invalid_input, p.where("price_kind"), fmt::format("unknown price_kind '{}'", kind_text),
                "one of on-demand, spot, reserved-1y, reserved-3y");
  }
  const std::optional<double> per_hour = number(r, "usd_per_hour", p);
  const std::optional<double> per_gpu_hour = number(r, "usd_per_gpu_hour", p);
  if (per_hour.has_value() == per_gpu_hour.has_value()) {
    throw Error(ErrorKind::invalid_input, p.where("usd_per_hour"),
                "give exactly one of usd_per_hour (whole instance) and usd_per_gpu_hour",
                "one price: usd_per_hour or usd_per_gpu_hour");
  }
  require_nonneg(per_hour, "usd_per_hour", p);
  require_nonneg(per_gpu_hour, "usd_per_gpu_hour", p);
  const double usd_per_hour = per_hour ? *per_hour : *per_gpu_hour * o.gpu_count;

  std::optional<std::string> observed_at;
  const std::string date = get(r, "observed_at");
  if (!date.empty() && lower(date) != "unknown") {
    if (!is_iso_date(date)) {
      throw Error(ErrorKind::invalid_input, p.where("observed_at"), fmt::format("'{}' is not a date", date),
                  "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, or empty/unknown");
    }
    observed_at = date;
  }
  const std::string confirmed = get(r, "confirmed_available_at");
  if (!confirmed.empty()) {
    if (!is_iso_date(confirmed)) {
      throw Error(ErrorKind::invalid_input, p.where("confirmed_available_at"),
                  fmt::format("'{}' is not a date", confirmed), "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ");
    }
    o.confirmed_available_at = confirmed;
  }

  if (auto v = number(r, "gpu_memory_gb", p)) o.gpu_memory_bytes = *v * 1e9;
  if (auto v = number(r, "vcpus", p)) o.vcpus = *v;
  if (auto v = number(r, "ram_gb", p)) o.ram_bytes = *v * 1e9;
  if (auto v = number(r, "local_disk_gb", p)) o.local_disk_bytes = *v * 1e9;

  FormHint hint = form_hint({o.gpu_name_raw, o.instance_type});
  const std::string ff = lower(get(r, "form_factor"));
  if (!ff.empty()) {
    if (ff == "sxm") {
      hint.form_factor = "SXM";
    } else if (ff == "pcie") {
      hint.form_factor = "PCIe";
    } else if (ff == "oam") {
      hint.form_factor = "OAM";
    } else {
      throw Error(ErrorKind::invalid_input, p.where("form_factor"), fmt::format("unknown form_factor '{}'", ff),
                  "SXM, PCIe or OAM");
    }
  }
  const std::string ic = lower(get(r, "interconnect"));
  if (!ic.empty() && ic != "nvlink" && ic != "pcie" && ic != "unknown") {
    throw Error(ErrorKind::invalid_input, p.where("interconnect"), fmt::format("unknown interconnect '{}'", ic),
                "nvlink, pcie or unknown");
  }
  if (ic == "nvlink") hint.nvlink_named = true;
  resolve_gpu(o, {o.gpu_name_raw}, hint, batch, src, p.row_where);
  if (ic == "pcie") {
    o.intra_node_link = IntraNodeLink::pcie;
    o.intra_node_link_bytes_per_s.reset();
  }

  const std::string net = lower(get(r, "network"));
  if (net == "ethernet") {
    o.inter_node_network = InterNodeNetwork::ethernet;
  } else if (net == "roce") {
    o.inter_node_network = InterNodeNetwork::roce;
  } else if (net == "infiniband") {
    o.inter_node_network = InterNodeNetwork::infiniband;
  } else if (!net.empty() && net != "unknown") {
    throw Error(ErrorKind::invalid_input, p.where("network"), fmt::format("unknown network '{}'", net),
                "ethernet, roce, infiniband or unknown");
  }
  if (auto v = number(r, "network_gbps", p)) {
    require_nonneg(v, "network_gbps", p);
    o.inter_node_bits_per_s = *v * 1e9;
  }
  if (auto v = number(r, "max_nodes", p)) {
    if (*v < 1 || *v != std::floor(*v) || *v > 1e6) {
      throw Error(ErrorKind::invalid_input, p.where("max_nodes"), "max_nodes is not a whole number >= 1",
                  "a node count such as 16");
    }
    o.max_nodes = static_cast<int>(*v);
  }

  const std::string billing_source = get(r, "billing_source").empty() ? get(r, "source") : get(r, "billing_source");
  // Override sources are named by the BillingTerms field they set ("granularity_seconds: ...").
  auto billing = [&](std::string_view key, std::string_view term, std::optional<double>& into) {
    if (auto v = number(r, key, p)) {
      require_nonneg(v, key, p);
      into = *v;
      o.billing_override.sources.push_back(
          fmt::format("{}: {} ({})", term, billing_source, observed_at ? *observed_at : std::string("unknown")));
    }
  };
  BillingTerms& b = o.billing_override;
  billing("billing_granularity_seconds", "granularity_seconds", b.granularity_seconds);
  billing("billing_minimum_seconds", "minimum_billed_seconds", b.minimum_billed_seconds);
  billing("storage_usd_per_gb_month", "storage_usd_per_gb_month", b.storage_usd_per_gb_month);
  billing("egress_usd_per_gb", "egress_usd_per_gb", b.egress_usd_per_gb);
  billing("egress_free_gb_per_month", "egress_free_gb_per_month", b.egress_free_gb_per_month);
  billing("preemptions_per_day", "preemptions_per_day", b.preemptions_per_day);

  // The row's own source names the observation (not the file it came in): the same quote
  // imported from two files is one observation.
  const std::string dataset = src.dataset.rfind("user:", 0) == 0 ? "user:" + get(r, "source") : src.dataset;
  const SourceRef ref{dataset, fmt::format("{} ({})", get(r, "source"), p.locator), observed_at};
  add_checked_price(batch, o, kind, usd_per_hour, ref, p.row_where);
  add_offer(batch, std::move(o));
}

}  // namespace

ImportBatch import_generic_csv(std::string_view text, const ImportSource& src) {
  const CsvTable table = CsvTable::parse(text, src.file);
  for (const std::string& col : table.header()) {
    if (field_def(col) == nullptr) {
      throw Error(ErrorKind::invalid_input, src.file + ":1", fmt::format("unknown column '{}'", col),
                  "only columns " + field_list());
    }
  }
  for (const FieldDef& f : kFields) {
    if (f.required && !table.has_column(f.name)) {
      throw Error(ErrorKind::invalid_input, src.file + ":1", fmt::format("missing column '{}'", f.name),
                  "the required columns provider, instance_type, gpu, gpu_count, price_kind, observed_at, source "
                  "and usd_per_hour or usd_per_gpu_hour");
    }
  }
  if (!table.has_column("usd_per_hour") && !table.has_column("usd_per_gpu_hour")) {
    throw Error(ErrorKind::invalid_input, src.file + ":1", "no price column",
                "a usd_per_hour or usd_per_gpu_hour column");
  }
  ImportBatch batch;
  batch.dataset = src.dataset;
  for (const CsvRow& row : table.rows()) {
    Record rec;
    for (std::size_t i = 0; i < table.header().size(); ++i) rec[table.header()[i]] = row.fields[i];
    Place p{table.where(row), locator_line(src, row.line), false};
    import_record(rec, p, src, batch);
  }
  return batch;
}

ImportBatch import_generic_json(std::string_view text, const ImportSource& src) {
  const nlohmann::json doc = parse_json(text, src);
  const std::string top = src.file + ": /";
  if (!doc.is_object()) {
    throw Error(ErrorKind::invalid_input, top, "top level is not an object",
                "{\"format\": \"gpuplan-offers/1\", \"offers\": [ ... ]}");
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "format" && key != "offers") {
      throw Error(ErrorKind::invalid_input, top + key, fmt::format("unknown key '{}'", key), "only format and offers");
    }
  }
  if (doc.contains("format") && doc.at("format") != "gpuplan-offers/1") {
    throw Error(ErrorKind::invalid_input, top + "format", "unsupported format", "\"gpuplan-offers/1\"");
  }
  if (!doc.contains("offers") || !doc.at("offers").is_array()) {
    throw Error(ErrorKind::invalid_input, top + "offers", "missing or not a list", "\"offers\": [ {...}, ... ]");
  }
  ImportBatch batch;
  batch.dataset = src.dataset;
  const nlohmann::json& offers = doc.at("offers");
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const std::string pointer = fmt::format("/offers/{}", i);
    const nlohmann::json& o = offers[i];
    if (!o.is_object()) {
      throw Error(ErrorKind::invalid_input, src.file + ": " + pointer, "offer is not an object", "{\"provider\": ...}");
    }
    Record rec;
    for (const auto& [key, value] : o.items()) {
      const FieldDef* f = field_def(key);
      const std::string where = fmt::format("{}: {}/{}", src.file, pointer, key);
      if (f == nullptr) {
        throw Error(ErrorKind::invalid_input, where, fmt::format("unknown key '{}'", key), "only keys " + field_list());
      }
      if (value.is_null()) continue;
      if (f->type == FieldType::number) {
        if (!value.is_number()) throw Error(ErrorKind::invalid_input, where, "not a number", "a JSON number");
        rec[key] = value.dump();
      } else {
        if (!value.is_string()) throw Error(ErrorKind::invalid_input, where, "not a string", "a JSON string");
        rec[key] = value.get<std::string>();
      }
    }
    if (!o.contains("observed_at")) {
      throw Error(ErrorKind::invalid_input, src.file + ": " + pointer + "/observed_at", "missing key observed_at",
                  "the date the price was seen (YYYY-MM-DD), or \"unknown\"");
    }
    Place p{src.file + ": " + pointer, (src.locator_base.empty() ? src.file : src.locator_base) + "#" + pointer, true};
    import_record(rec, p, src, batch);
  }
  return batch;
}

}  // namespace gpuplan
