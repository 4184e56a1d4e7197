// Keyed price sources registered without an adapter yet (docs/fetch.md "Not yet done"): listed by
// `gpuplan fetch --list` with the environment variables they will need, so `gpuplan fetch gcp`
// without the key says which variable is missing, and with it says plainly that no adapter
// exists yet (nothing is fetched or recorded). Their endpoints are the documented public APIs
// (shared notes, price-sources.md); their prices reach the store today through the keyless
// SkyPilot and gpuhunt catalogs named in each description.
#include <memory>
#include <vector>

#include "fetch/sources.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {
namespace {

class UnbuiltKeyedSource final : public Source {
 public:
  explicit UnbuiltKeyedSource(SourceInfo info) : info_(std::move(info)) {}
  const SourceInfo& info() const override { return info_; }
  std::vector<FetchedDoc> download(const SourceContext&) const override {
    throw Error(ErrorKind::unavailable, info_.name, "no adapter yet: " + info_.not_built);
  }
  ImportBatch parse(const std::vector<FetchedDoc>&, const SourceContext&) const override {
    throw Error(ErrorKind::unavailable, info_.name, "no adapter yet: " + info_.not_built);
  }

 private:
  SourceInfo info_;
};

std::unique_ptr<Source> unbuilt(std::string name, std::string description, std::string url,
                                std::vector<std::string> keys, std::string via) {
  SourceInfo i;
  i.name = std::move(name);
  i.description = std::move(description) + " (not built yet; today via " + via + ")";
  i.urls = {std::move(url)};
  i.key_env = std::move(keys);
  i.not_built = "the " + i.name + " adapter is not built yet; its prices come through " + via;
  return std::make_unique<UnbuiltKeyedSource>(std::move(i));
}

}  // namespace

std::vector<std::unique_ptr<Source>> make_unbuilt_keyed_sources() {
  std::vector<std::unique_ptr<Source>> v;
  v.push_back(unbuilt("gcp", "GCP Cloud Billing Catalog API (Compute Engine SKUs)",
                      "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus", {"GCP_BILLING_API_KEY"},
                      "skypilot/gcp and gpuhunt/gcp"));
  v.push_back(unbuilt("verda", "Verda (ex-DataCrunch) instance types (OAuth2 client credentials)",
                      "https://api.datacrunch.io/v1/instance-types", {"VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"},
                      "skypilot/verda and gpuhunt/verda"));
  v.push_back(unbuilt("hyperstack", "Hyperstack flavors, pricebook and stocks",
                      "https://infrahub-api.nexgencloud.com/v1/pricebook", {"HYPERSTACK_API_KEY"}, "skypilot/hyperstack"));
  v.push_back(unbuilt("shadeform", "Shadeform instance types (aggregator)", "https://api.shadeform.ai/v1/instances/types",
                      {"SHADEFORM_API_KEY"}, "skypilot/shadeform"));
  return v;
}

}  // namespace gpuplan::fetch
