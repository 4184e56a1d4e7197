#pragma once
// Hand-made offers for the store and filter tests. The prices and dates are SYNTHETIC test
// inputs (not market data): they are chosen so each filter clause and sort key separates them.
// GPU canonical names are rows of data/gpus.csv.
#include <optional>
#include <string>
#include <vector>

#include "catalog/importers.hpp"
#include "catalog/offer.hpp"

namespace gpuplan::testing {

inline PriceObservation obs(PriceKind kind, double usd, std::optional<std::string> date,
                            std::string dataset = "test:fixture") {
  PriceObservation p;
  p.kind = kind;
  p.usd_per_hour = usd;
  p.source.dataset = std::move(dataset);
  p.source.locator = "tests/catalog/store_fixtures.hpp";
  p.source.observed_at = std::move(date);
  return p;
}

inline Offer base_offer(std::string id, std::string provider, std::string instance, std::string region,
                        std::string raw_gpu, std::optional<std::string> gpu, int count, std::optional<double> mem) {
  Offer o;
  o.id = std::move(id);
  o.provider = std::move(provider);
  o.instance_type = std::move(instance);
  o.region = std::move(region);
  o.gpu_name_raw = std::move(raw_gpu);
  o.gpu_name = std::move(gpu);
  o.gpu_count = count;
  o.gpu_memory_bytes = mem;
  return o;
}

/// Seven offers covering every field: see each comment.
inline std::vector<Offer> fixture_offers() {
  using K = PriceKind;
  std::vector<Offer> v;
  {  // A: 8x H100 SXM, NVLink + InfiniBand, dated on-demand (two), undated spot
    Offer o = base_offer("lambda/gpu_8x_h100_sxm5/us-east-1", "lambda", "gpu_8x_h100_sxm5", "us-east-1", "H100",
                         "NVIDIA H100 SXM", 8, 80e9);
    o.vcpus = 208;
    o.ram_bytes = 1800e9;
    o.local_disk_bytes = 24e12;
    o.intra_node_link = IntraNodeLink::nvlink;
    o.intra_node_link_bytes_per_s = 900e9;
    o.form_factor = "SXM";
    o.inter_node_network = InterNodeNetwork::infiniband;
    o.inter_node_bits_per_s = 3200e9;
    o.max_nodes = 4;
    o.prices = {obs(K::on_demand, 27.92, "2026-10-01"), obs(K::on_demand, 23.92, "2026-11-01"),
                obs(K::spot, 12.0, std::nullopt)};
    v.push_back(o);
  }
  {  // B: 8x A100 40GB, undated on-demand, dated spot, ethernet 400 Gb/s
    Offer o = base_offer("aws/p4d.24xlarge/us-east-1", "aws", "p4d.24xlarge", "us-east-1", "A100",
                         "NVIDIA A100 SXM 40GB", 8, 40e9);
    o.vcpus = 96;
    o.ram_bytes = 1152e9;
    o.intra_node_link = IntraNodeLink::nvlink;
    o.form_factor = "SXM";
    o.inter_node_network = InterNodeNetwork::ethernet;
    o.inter_node_bits_per_s = 400e9;
    o.prices = {obs(K::on_demand, 32.77, std::nullopt, "test:aws"), obs(K::spot, 9.8, "2026-11-20", "test:aws")};
    v.push_back(o);
  }
  {  // C: 1x RTX 4090, no region, old price (stale at 2026-11-30 with 30 days)
    Offer o = base_offer("vast/rtx4090", "vast", "1x RTX 4090", "", "RTX 4090", "NVIDIA GeForce RTX 4090", 1, 24e9);
    o.vcpus = 16;
    o.prices = {obs(K::on_demand, 0.35, "2026-09-01")};
    v.push_back(o);
  }
  {  // D: 1x H100 PCIe, confirmed available, fresh price, PCIe
    Offer o = base_offer("runpod/h100-pcie/eu-ro-1", "runpod", "h100-pcie", "eu-ro-1", "H100 PCIe",
                         "NVIDIA H100 PCIe", 1, 80e9);
    o.intra_node_link = IntraNodeLink::pcie;
    o.form_factor = "PCIe";
    o.confirmed_available_at = "2026-11-29";
    o.prices = {obs(K::on_demand, 2.39, "2026-11-29T10:00:00Z")};
    v.push_back(o);
  }
  {  // E: zero price, excluded by the zero_price flag
    Offer o = base_offer("mithril/h100/us-central", "mithril", "8x-h100", "us-central", "H100", "NVIDIA H100 SXM", 8,
                         80e9);
    o.flags = {QualityFlag{"zero_price", "price is $0", true}};
    o.prices = {obs(K::on_demand, 0.0, "2026-11-10"), obs(K::spot, 0.0, "2026-11-10")};
    v.push_back(o);
  }
  {  // F: unresolved GPU, unknown memory, excluded
    Offer o = base_offer("foo/mystery/x", "foo", "mystery", "x", "Mystery X1", std::nullopt, 2, std::nullopt);
    o.flags = {QualityFlag{"unresolved_gpu", "Mystery X1 is not in gpus.csv", true}};
    o.prices = {obs(K::on_demand, 5.0, "2026-11-15")};
    v.push_back(o);
  }
  {  // G: TPU v5e, flagged but not excluded, undated price, billing override
    Offer o = base_offer("gcp/tpu-v5e/us-west4", "gcp", "tpu-v5e", "us-west4", "tpu-v5e", "Google TPU v5e", 4, 16e9);
    o.flags = {QualityFlag{"memory_unit", "memory corrected from GiB", false}};
    o.billing_override.granularity_seconds = 60;
    o.billing_override.sources = {"granularity_seconds: test fixture"};
    o.prices = {obs(K::on_demand, 4.8, std::nullopt)};
    v.push_back(o);
  }
  for (Offer& o : v)
    for (PriceObservation& p : o.prices) p.offer_id = o.id;
  return v;
}

inline ImportBatch fixture_batch() {
  ImportBatch b;
  b.offers = fixture_offers();
  b.rows_read = b.offers.size();
  b.dataset = "test:fixture";
  return b;
}

}  // namespace gpuplan::testing
