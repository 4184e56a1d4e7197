#pragma once
/// Fetch layer, internal: the factory of each adapter (sources_*.cpp), used by all_sources().
#include <memory>
#include <string>
#include <vector>

#include "fetch/source.hpp"

namespace gpuplan::fetch {

std::unique_ptr<Source> make_aws_source();
/// AWS EC2 Capacity Blocks for ML (keyed: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; sources_aws.cpp).
std::unique_ptr<Source> make_aws_capacity_blocks_source();
std::unique_ptr<Source> make_azure_source();
std::unique_ptr<Source> make_runpod_source();
std::unique_ptr<Source> make_vast_source();
std::unique_ptr<Source> make_skypilot_source(const std::string& cloud);
std::unique_ptr<Source> make_gpuhunt_source(const std::string& provider);
std::unique_ptr<Source> make_vultr_source();
std::unique_ptr<Source> make_oci_source();
std::unique_ptr<Source> make_lambda_source();
std::unique_ptr<Source> make_scaleway_source();
std::unique_ptr<Source> make_ovh_source();
std::unique_ptr<Source> make_cudo_source();
/// Keyed sources of sources_keyed.cpp: gcp, verda, hyperstack and shadeform.
std::vector<std::unique_ptr<Source>> make_more_keyed_sources();

}  // namespace gpuplan::fetch
