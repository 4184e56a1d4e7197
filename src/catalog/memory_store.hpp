#pragma once
/// Catalog layer: an in-memory OfferStore with the semantics of store.hpp, for tests and for
/// one-shot runs that need no database. Calls are serialised by a mutex.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/store.hpp"

namespace gpuplan {

class GpuCatalog;

class MemoryOfferStore final : public OfferStore {
 public:
  /// `gpus` resolves the bandwidth/memtype fields and sort; nullptr → GpuCatalog::bundled().
  /// The catalog must outlive the store.
  explicit MemoryOfferStore(const GpuCatalog* gpus = nullptr);

  ImportResult import(const ImportBatch& batch) override;
  std::vector<Offer> query(const OfferQuery& q) override;
  std::optional<Offer> get(std::string_view id) override;
  std::vector<PriceObservation> history(std::string_view offer_id) override;
  StoreCounts counts() override;
  ImportResult preview_import(const ImportBatch& batch) override;
  bool seed_if_new(std::string_view seed_key, const std::function<ImportBatch()>& make_batch) override;
  int schema_version() override { return 0; }
  std::uint64_t revision() override;
  SnapshotCommit commit_snapshot(const SnapshotRecord& record, const ImportBatch* batch) override;
  std::optional<SnapshotRecord> last_snapshot(std::string_view source, std::string_view status) override;
  std::optional<std::string> first_accepted_with_hash(std::string_view source, std::string_view content_hash) override;
  std::vector<SnapshotRecord> snapshots(std::string_view source, std::size_t limit) override;

 private:
  std::vector<SnapshotRecord> snapshots_;  ///< in insertion order (id = index + 1)
  const GpuCatalog& gpus_;
  std::map<std::string, Offer, std::less<>> offers_;  ///< by id; prices kept oldest first
  std::optional<std::string> seed_key_;  ///< the mark seed_if_new sets
  std::uint64_t revision_ = 0;
  std::recursive_mutex mu_;  ///< seed_if_new and preview_import call import
};

}  // namespace gpuplan
