// Published catalogs of other projects: SkyPilot (skypilot-org/skypilot-catalog, one vms.csv
// per cloud, read with the catalog's SkyPilot importer) and gpuhunt (dstackai/gpuhunt, a
// `version` pointer per provider, then <version>/catalog.zip holding <provider>.csv).
#include <fmt/core.h>
#include <zip.h>

#include <memory>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

using namespace adapt;

constexpr const char* kSkyPilotUrl =
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/{}/vms.csv";

class SkyPilotSource final : public Source {
 public:
  explicit SkyPilotSource(const std::string& versioned_cloud) {
    const auto slash = versioned_cloud.find('/');
    cloud_ = versioned_cloud.substr(slash + 1);
    info_.name = "skypilot/" + cloud_;
    info_.description = "SkyPilot catalog " + versioned_cloud + "/vms.csv (published every 7 h)";
    info_.urls = {fmt::format(kSkyPilotUrl, versioned_cloud)};
    info_.parser_version = 1;
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    return {get_doc(ctx, info_.name, info_.urls.front(), "vms.csv")};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(0);
    ImportSource src = import_source(ctx, d, info_.name, cloud_ == "do" ? "digitalocean" : cloud_);
    ImportBatch b = import_skypilot_vms_csv(d.body, src);
    // The row was published in the catalog when we fetched it: that is its observed time.
    for (Offer& o : b.offers)
      for (PriceObservation& p : o.prices) p.source.observed_at = ctx.fetched_at;
    return b;
  }

 private:
  std::string cloud_;
  SourceInfo info_;
};

constexpr const char* kGpuhuntBase = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3/{}/";

/// Reads one member of a zip held in memory (libzip). Throws Error{invalid_input} at `where`.
std::string read_zip_member(const std::string& zip_bytes, const std::string& member, const std::string& where) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* srcz = zip_source_buffer_create(zip_bytes.data(), zip_bytes.size(), 0, &err);
  if (srcz == nullptr) throw Error(ErrorKind::internal, where, "zip_source_buffer_create failed");
  zip_t* za = zip_open_from_source(srcz, ZIP_RDONLY, &err);
  if (za == nullptr) {
    zip_source_free(srcz);
    const std::string msg = zip_error_strerror(&err);
    zip_error_fini(&err);
    throw Error(ErrorKind::invalid_input, where, "not a readable zip archive: " + msg, "gpuhunt's catalog.zip");
  }
  std::unique_ptr<zip_t, int (*)(zip_t*)> guard(za, zip_close);
  zip_stat_t st;
  if (zip_stat(za, member.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
    throw Error(ErrorKind::invalid_input, where, "catalog.zip has no member " + member,
                "a zip holding <provider>.csv");
  }
  if (st.size > (1ull << 30)) throw Error(ErrorKind::invalid_input, where, member + " is larger than 1 GiB");
  zip_file_t* f = zip_fopen(za, member.c_str(), 0);
  if (f == nullptr) throw Error(ErrorKind::invalid_input, where, "cannot open " + member + " in catalog.zip");
  std::string out(static_cast<std::size_t>(st.size), '\0');
  const zip_int64_t n = zip_fread(f, out.data(), st.size);
  zip_fclose(f);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size)
    throw Error(ErrorKind::invalid_input, where, member + " in catalog.zip is truncated or corrupt");
  return out;
}

class GpuhuntSource final : public Source {
 public:
  explicit GpuhuntSource(std::string provider) : provider_(std::move(provider)) {
    info_.name = "gpuhunt/" + provider_;
    info_.description = "gpuhunt published catalog v3/" + provider_ + " (hourly)";
    info_.urls = {fmt::format(kGpuhuntBase, provider_) + "version"};
    info_.parser_version = 1;
  }
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext& ctx) const override {
    FetchedDoc version = get_doc(ctx, info_.name, info_.urls.front(), "version");
    std::string v(import_detail::trim(version.body));
    if (v.empty() || v.size() > 64 || v.find_first_of("/?#\\ ") != std::string::npos)
      throw Error(ErrorKind::unavailable, version.url, "unexpected version pointer '" + v.substr(0, 64) + "'",
                  "a catalog version such as 20260819-1234");
    FetchedDoc zip = get_doc(ctx, info_.name, fmt::format(kGpuhuntBase, provider_) + v + "/catalog.zip", "catalog.zip");
    return {std::move(version), std::move(zip)};
  }
  ImportBatch parse(const std::vector<FetchedDoc>& docs, const SourceContext& ctx) const override {
    const FetchedDoc& d = docs.at(1);
    const std::string csv = read_zip_member(d.body, provider_ + ".csv", d.url);
    const std::string file = d.url + "!" + provider_ + ".csv";
    const CsvTable t = CsvTable::parse(csv, file);
    for (const char* c : {"instance_name", "location", "price", "cpu", "memory", "gpu_count", "gpu_name",
                          "gpu_memory", "spot"})
      (void)t.column(c);
    FetchedDoc as_csv{file, {}, {}};
    const ImportSource src = import_source(ctx, as_csv, info_.name);
    const std::string provider = import_detail::canonical_provider_id(provider_);
    ImportBatch batch;
    for (const CsvRow& row : t.rows()) {
      ++batch.rows_read;
      auto cell = [&](std::string_view c) { return t.cell(row, c); };
      const std::string where = t.where(row);
      const auto count = import_detail::cell_number(cell("gpu_count"), where, "gpu_count");
      if (!count || *count < 1) continue;  // CPU instance
      if (*count != static_cast<int>(*count)) {
        unmapped(batch, where, fmt::format("fractional GPU count {} not modelled; skipped", *count));
        continue;
      }
      Offer o;
      o.provider = provider;
      o.instance_type = cell("instance_name");
      o.region = cell("location");
      o.gpu_name_raw = cell("gpu_name");
      o.gpu_count = static_cast<int>(*count);
      o.vcpus = import_detail::cell_number(cell("cpu"), where, "cpu");
      if (auto m = import_detail::cell_number(cell("memory"), where, "memory")) o.ram_bytes = gb(*m);
      if (auto m = import_detail::cell_number(cell("gpu_memory"), where, "gpu_memory")) o.gpu_memory_bytes = gb(*m);
      if (o.instance_type.empty())
        throw Error(ErrorKind::invalid_input, where, "instance_name is empty", "the provider's instance name");
      o.id = import_detail::make_offer_id(o);
      resolve(o, {o.gpu_name_raw}, batch, src, where);
      const std::string spot = import_detail::lower(cell("spot"));
      if (spot != "true" && spot != "false")
        throw Error(ErrorKind::invalid_input, where, "spot is '" + cell("spot") + "'", "True or False");
      add_price(batch, o, spot == "true" ? PriceKind::spot : PriceKind::on_demand,
                import_detail::cell_price(cell("price"), where, "price"), ref(ctx, info_.name, where), where);
      import_detail::add_offer(batch, std::move(o));
    }
    return batch;
  }

 private:
  std::string provider_;
  SourceInfo info_;
};

}  // namespace

std::unique_ptr<Source> make_skypilot_source(const std::string& cloud) { return std::make_unique<SkyPilotSource>(cloud); }
std::unique_ptr<Source> make_gpuhunt_source(const std::string& provider) {
  return std::make_unique<GpuhuntSource>(provider);
}

}  // namespace gpuplan::fetch
