// Vultr, OCI, CUDO, Scaleway, OVHcloud and Lambda (keyed). Field layouts: docs/fetch.md.
#include <fmt/core.h>

#include "fetch/adapter.hpp"
#include "fetch/sources.hpp"
#include "util/error.hpp"

namespace gpuplan::fetch {

std::unique_ptr<Source> make_vultr_source() { return nullptr; }
std::unique_ptr<Source> make_oci_source() { return nullptr; }
std::unique_ptr<Source> make_cudo_source() { return nullptr; }
std::unique_ptr<Source> make_scaleway_source() { return nullptr; }
std::unique_ptr<Source> make_ovh_source() { return nullptr; }
std::unique_ptr<Source> make_lambda_source() { return nullptr; }

}  // namespace gpuplan::fetch
