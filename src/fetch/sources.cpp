#include "fetch/sources.hpp"

namespace gpuplan::fetch {

const std::vector<std::unique_ptr<Source>>& all_sources() {
  static const std::vector<std::unique_ptr<Source>> sources = [] {
    std::vector<std::unique_ptr<Source>> v;
    v.push_back(make_aws_source());
    v.push_back(make_azure_source());
    v.push_back(make_runpod_source());
    v.push_back(make_vast_source());
    // SkyPilot's published catalogs (skypilot-org/skypilot-catalog, schema v8), one per cloud.
    for (const char* cloud : {"v8/aws", "v8/azure", "v8/gcp", "v8/lambda", "v8/nebius", "v8/oci", "v8/runpod",
                              "v8/vast", "v8/cudo", "v8/do", "v8/hyperbolic", "v8/hyperstack", "v8/primeintellect",
                              "v8/shadeform", "v8/mithril", "v8/verda", "v9/fluidstack"})
      v.push_back(make_skypilot_source(cloud));
    // gpuhunt's published per-provider catalogs (v3).
    for (const char* p : {"aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "runpod", "verda", "cloudrift"})
      v.push_back(make_gpuhunt_source(p));
    for (auto* make : {make_vultr_source, make_oci_source, make_cudo_source, make_scaleway_source, make_ovh_source,
                       make_lambda_source}) {
      if (auto s = make()) v.push_back(std::move(s));
    }
    for (auto& s : make_more_keyed_sources()) v.push_back(std::move(s));
    v.push_back(make_aws_capacity_blocks_source());
    return v;
  }();
  return sources;
}

const Source* find_source(std::string_view name) {
  for (const auto& s : all_sources())
    if (s->info().name == name) return s.get();
  return nullptr;
}

}  // namespace gpuplan::fetch
