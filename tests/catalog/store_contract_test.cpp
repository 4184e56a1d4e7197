// The OfferStore contract (store.hpp), run on every implementation with the same cases.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "catalog/ingest.hpp"
#include "catalog/memory_store.hpp"
#include "catalog/pg_store.hpp"
#include "catalog/sqlite_store.hpp"
#include "hardware/gpu_spec.hpp"
#include "pg_test_db.hpp"
#include "store_fixtures.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

using testing::fixture_batch;
using testing::obs;
using testing::fixture_offers;

struct MemoryFactory {
  std::unique_ptr<OfferStore> make() { return std::make_unique<MemoryOfferStore>(); }
};
struct SqliteFactory {
  std::unique_ptr<OfferStore> make() { return std::make_unique<SqliteOfferStore>(":memory:"); }
};
/// A fresh database per test on the test PostgreSQL (nullptr → the test skips).
struct PgFactory {
  testing::PgTestDb db;
  std::unique_ptr<OfferStore> make() {
    if (!db.available()) return nullptr;
    return std::make_unique<PgOfferStore>(db.url(), GpuCatalog::bundled());
  }
};

template <typename F>
class StoreContract : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!store_) {
      if (testing::pg_required()) FAIL() << "GPUPLAN_TEST_PG_REQUIRED=1 but " << testing::kPgSkipMessage;
      GTEST_SKIP() << testing::kPgSkipMessage;
    }
  }
  F factory_;
  std::unique_ptr<OfferStore> store_ = factory_.make();
};
using Factories = ::testing::Types<MemoryFactory, SqliteFactory, PgFactory>;
TYPED_TEST_SUITE(StoreContract, Factories);

std::vector<std::string> ids(const std::vector<Offer>& v) {
  std::vector<std::string> out;
  for (const auto& o : v) out.push_back(o.id);
  return out;
}

TYPED_TEST(StoreContract, ImportCountsOffersAndObservations) {
  ImportResult r = this->store_->import(fixture_batch());
  EXPECT_EQ(r.offers_added, 7u);
  EXPECT_EQ(r.offers_updated, 0u);
  // A 3 + B 2 + C 1 + D 1 + E 2 + F 1 + G 1 = 11 observations in the fixture.
  EXPECT_EQ(r.observations_added, 11u);
  StoreCounts c = this->store_->counts();
  EXPECT_EQ(c.offers, 7u);
  EXPECT_EQ(c.observations, 11u);
  EXPECT_EQ(c.excluded_offers, 2u);  // E (zero_price) and F (unresolved_gpu)
}

TYPED_TEST(StoreContract, SnapshotLogImportsAnAcceptedContentOnce) {
  SnapshotRecord rec;
  rec.source = "src";
  rec.url = "http://x/a";
  rec.urls = {"http://x/a", "http://x/b"};
  rec.fetched_at = "2026-12-01T00:00:00Z";
  rec.content_hash = "sha256:aa";
  rec.parser_version = 1;
  rec.status = "accepted";
  rec.offers = 7;
  const ImportBatch batch = fixture_batch();
  SnapshotCommit first = this->store_->commit_snapshot(rec, &batch);
  EXPECT_FALSE(first.already_accepted);
  EXPECT_EQ(first.import.observations_added, 11u);
  EXPECT_EQ(first.record.observations_added, 11u);
  // The same content again (another process, a later time): recorded, nothing imported.
  rec.fetched_at = "2026-12-01T06:00:00Z";
  rec.detail = "7 rows read, 7 offers; gates passed";  // what the second fetch would have said
  SnapshotCommit second = this->store_->commit_snapshot(rec, &batch);
  EXPECT_TRUE(second.already_accepted);
  EXPECT_EQ(second.record.status, "unchanged");
  EXPECT_EQ(second.record.detail, kAlreadyAcceptedDetail);  // not "gates passed"
  rec.detail.clear();
  EXPECT_EQ(this->store_->counts().observations, 11u);
  // A rejected snapshot is recorded without its batch.
  rec.fetched_at = "2026-12-01T12:00:00Z";
  rec.content_hash = "sha256:bb";
  rec.status = "rejected";
  rec.detail = "gate failed";
  this->store_->commit_snapshot(rec, nullptr);
  EXPECT_EQ(this->store_->last_snapshot("src", "accepted")->fetched_at, "2026-12-01T00:00:00Z");
  EXPECT_EQ(this->store_->last_snapshot("src", "rejected")->detail, "gate failed");
  EXPECT_EQ(this->store_->first_accepted_with_hash("src", "sha256:aa"), "2026-12-01T00:00:00Z");
  EXPECT_FALSE(this->store_->first_accepted_with_hash("src", "sha256:bb"));
  // Unchanged means "as the LAST accepted snapshot": content aa again after an accepted bb is
  // accepted (a price back at an earlier value, issue 9 trial D1), and then aa is unchanged.
  rec.fetched_at = "2026-12-02T00:00:00Z";
  rec.status = "accepted";
  rec.detail.clear();
  EXPECT_FALSE(this->store_->commit_snapshot(rec, nullptr).already_accepted);  // bb
  rec.fetched_at = "2026-12-02T06:00:00Z";
  rec.content_hash = "sha256:aa";
  const SnapshotCommit back = this->store_->commit_snapshot(rec, nullptr);
  EXPECT_FALSE(back.already_accepted);
  EXPECT_EQ(back.record.status, "accepted");
  rec.fetched_at = "2026-12-02T12:00:00Z";
  EXPECT_TRUE(this->store_->commit_snapshot(rec, nullptr).already_accepted);
  EXPECT_EQ(this->store_->last_snapshot("src", "accepted")->fetched_at, "2026-12-02T06:00:00Z");
  // The same content read by a newer parser is accepted again (it may hold prices the older
  // parser did not read), then unchanged for that parser.
  rec.fetched_at = "2026-12-03T00:00:00Z";
  rec.parser_version = 2;
  const SnapshotCommit reread = this->store_->commit_snapshot(rec, nullptr);
  EXPECT_FALSE(reread.already_accepted);
  EXPECT_EQ(reread.record.status, "accepted");
  rec.fetched_at = "2026-12-03T06:00:00Z";
  EXPECT_TRUE(this->store_->commit_snapshot(rec, nullptr).already_accepted);
  const auto all = this->store_->snapshots("", 10);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all[5].status, "rejected");
  EXPECT_EQ(all[0].status, "unchanged");  // newest first
  EXPECT_EQ(all[1].parser_version, 2);
  EXPECT_EQ(all[7].urls, (std::vector<std::string>{"http://x/a", "http://x/b"}));
  EXPECT_EQ(this->store_->snapshots("other", 10).size(), 0u);
}

TYPED_TEST(StoreContract, AStoredIdWithOtherHardwareIsRefusedAndNothingIsWritten) {
  // Issue 11: two machines under one provider/instance/region are an error, not a merge (the
  // second's price would become the first's). Issue 12: every store keeps that rule; PostgreSQL
  // used to overwrite the stored GPU model and count on conflict.
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  ImportBatch other;
  Offer o = fixture_offers().front();  // A: lambda 8x H100 SXM
  o.gpu_name_raw = "A100";
  o.gpu_name = "NVIDIA A100 SXM 80GB";
  o.gpu_count = 4;
  o.prices = {obs(PriceKind::on_demand, 5.16, "2026-11-02", "test:other")};
  for (PriceObservation& p : o.prices) p.offer_id = o.id;
  other.offers = {o};
  other.rows_read = 1;
  other.dataset = "test:other";
  for (const bool preview : {true, false}) {
    try {
      if (preview) this->store_->preview_import(other);
      else this->store_->import(other);
      ADD_FAILURE() << "an id stored as 8 x H100 was accepted as 4 x A100 (preview " << preview << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be two machines"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(this->store_->counts().observations, before.observations);
  const auto stored = this->store_->get(o.id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->gpu_count, 8);
  EXPECT_EQ(stored->gpu_name.value_or(""), "NVIDIA H100 SXM");
}

TYPED_TEST(StoreContract, ReimportingTheSameSnapshotAddsNothing) {
  this->store_->import(fixture_batch());
  ImportResult r = this->store_->import(fixture_batch());
  EXPECT_EQ(r.offers_added, 0u);
  EXPECT_EQ(r.offers_updated, 0u);
  EXPECT_EQ(r.offers_unchanged, 7u);
  EXPECT_EQ(r.observations_added, 0u);
  EXPECT_EQ(r.observations_already_known, 11u);
  EXPECT_EQ(this->store_->counts().observations, 11u);
}

TYPED_TEST(StoreContract, ReimportWithNewPriceKeepsHistoryAndUpdatesFacts) {
  this->store_->import(fixture_batch());
  ImportBatch next = fixture_batch();
  Offer& a = next.offers[0];
  a.vcpus = 224;  // a changed fact
  a.prices = {obs(PriceKind::on_demand, 21.0, "2026-11-25")};
  a.prices[0].offer_id = a.id;
  ImportResult r = this->store_->import(next);
  EXPECT_EQ(r.offers_updated, 1u);
  EXPECT_EQ(r.offers_unchanged, 6u);
  EXPECT_EQ(r.observations_added, 1u);
  auto h = this->store_->history(a.id);
  ASSERT_EQ(h.size(), 4u);  // 3 old + 1 new, none lost
  // Oldest first, undated first: spot(undated), 2026-10-01, 2026-11-01, 2026-11-25.
  EXPECT_FALSE(h[0].source.observed_at.has_value());
  EXPECT_EQ(*h[1].source.observed_at, "2026-10-01");
  EXPECT_EQ(*h[3].source.observed_at, "2026-11-25");
  auto got = this->store_->get(a.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->vcpus, 224);
  ASSERT_NE(got->latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(got->latest_price(PriceKind::on_demand)->usd_per_hour, 21.0);
}

TYPED_TEST(StoreContract, SamePriceAtANewDateIsANewObservation) {
  this->store_->import(fixture_batch());
  ImportBatch next;
  Offer c = fixture_batch().offers[2];
  c.prices = {obs(PriceKind::on_demand, 0.35, "2026-11-30")};
  next.offers = {c};
  EXPECT_EQ(this->store_->import(next).observations_added, 1u);
  EXPECT_EQ(this->store_->history(c.id).size(), 2u);
}

TYPED_TEST(StoreContract, InvalidBatchWritesNothing) {
  this->store_->import(fixture_batch());
  ImportBatch bad = fixture_batch();
  bad.offers[0].prices.push_back(obs(PriceKind::on_demand, 1.0, "2026-11-30"));
  bad.offers[0].prices.back().offer_id = bad.offers[0].id;
  bad.offers[5].prices[0].offer_id = "someone/else";  // inconsistent: the whole batch is refused
  EXPECT_THROW(this->store_->import(bad), Error);
  EXPECT_EQ(this->store_->counts().observations, 11u);
  EXPECT_EQ(this->store_->history(bad.offers[0].id).size(), 3u);
}

TYPED_TEST(StoreContract, DuplicateIdInOneBatchIsRefused) {
  ImportBatch b = fixture_batch();
  b.offers.push_back(b.offers[0]);
  try {
    this->store_->import(b);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_EQ(e.where(), "import: lambda/gpu_8x_h100_sxm5/us-east-1");
  }
  EXPECT_EQ(this->store_->counts().offers, 0u);
}

TYPED_TEST(StoreContract, QueryDropsExcludedUnlessAsked) {
  this->store_->import(fixture_batch());
  OfferQuery q;
  q.sort = "price";
  auto v = this->store_->query(q);
  // On-demand instance prices: C 0.35, D 2.39, G 4.8, A 23.92 (latest), B 32.77. E, F excluded.
  EXPECT_EQ(ids(v), (std::vector<std::string>{"vast/rtx4090", "runpod/h100-pcie/eu-ro-1", "gcp/tpu-v5e/us-west4",
                                              "lambda/gpu_8x_h100_sxm5/us-east-1", "aws/p4d.24xlarge/us-east-1"}));
  q.include_excluded = true;
  EXPECT_EQ(this->store_->query(q).size(), 7u);
}

TYPED_TEST(StoreContract, SortPerGpuHourWithLimit) {
  this->store_->import(fixture_batch());
  OfferQuery q;  // default sort price_per_gpu_hour
  q.limit = 3;
  // Per GPU: C 0.35, G 4.8/4 = 1.2, D 2.39, A 23.92/8 = 2.99, B 32.77/8 = 4.096.
  EXPECT_EQ(ids(this->store_->query(q)),
            (std::vector<std::string>{"vast/rtx4090", "gcp/tpu-v5e/us-west4", "runpod/h100-pcie/eu-ro-1"}));
}

// evidence_first (what `gpuplan offers` asks unless --include-flagged): clean dated prices,
// then stale, undated and flagged ones, each by the sort key; offers without a price last. Five
// synthetic 1-GPU offers, today 2026-12-01, stale limit 30 days (earliest clean date 2026-11-01):
//   clean   $3.00 observed 2026-11-01 (30 days: not stale)
//   stale   $1.00 observed 2026-10-31 (31 days)
//   undated $0.50 no date
//   flagged $0.20 observed 2026-11-30, below_market_index (not excluding)
//   future  $0.10 observed 2026-12-05: after today, no evidence on that day, ranked undated
//   none    no on-demand price (only spot)
TYPED_TEST(StoreContract, EvidenceFirstListsCleanDatedPricesFirst) {
  using K = PriceKind;
  ImportBatch b;
  auto one = [&](const std::string& id, std::optional<PriceObservation> p) {
    Offer o = testing::base_offer(id, "p", id, "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
    if (p) o.prices.push_back(*p);
    b.offers.push_back(o);
    return &b.offers.back();
  };
  one("clean", obs(K::on_demand, 3.00, "2026-11-01"));
  one("stale", obs(K::on_demand, 1.00, "2026-10-31"));
  one("undated", obs(K::on_demand, 0.50, std::nullopt));
  one("flagged", obs(K::on_demand, 0.20, "2026-11-30"))->flags.push_back({"below_market_index", "test", false});
  one("future", obs(K::on_demand, 0.10, "2026-12-05"));
  one("none", obs(K::spot, 0.05, "2026-11-30"));
  this->store_->import(b);
  OfferQuery q;
  q.now_date = "2026-12-01";
  q.stale_after_days = 30;
  EXPECT_EQ(ids(this->store_->query(q)),
            (std::vector<std::string>{"future", "flagged", "undated", "stale", "clean", "none"}));
  q.evidence_first = true;
  const std::vector<std::string> expected = {"clean", "stale", "future", "undated", "flagged", "none"};
  for (auto sort : {kSortPricePerGpuHour, kSortPrice, kSortPricePerVramGb}) {
    q.sort = std::string(sort);
    q.limit.reset();
    EXPECT_EQ(ids(this->store_->query(q)), expected) << sort;
    // A first page stops inside the tiers (one walk per tier on the SQL stores).
    for (std::size_t n = 1; n <= expected.size(); ++n) {
      q.limit = n;
      EXPECT_EQ(ids(this->store_->query(q)), std::vector<std::string>(expected.begin(), expected.begin() + n))
          << sort << " limit " << n;
    }
  }
  // With the stale limit raised to 31 days the 2026-10-31 price is clean and cheaper.
  q.sort = std::string(kSortPricePerGpuHour);
  q.limit.reset();
  q.stale_after_days = 31;
  EXPECT_EQ(ids(this->store_->query(q)),
            (std::vector<std::string>{"stale", "clean", "future", "undated", "flagged", "none"}));
  // A filter with index keys (gpu=) walks the same tiers.
  q.filter = "gpu=H100";
  q.limit = 2;
  EXPECT_EQ(ids(this->store_->query(q)), (std::vector<std::string>{"stale", "clean"}));
}

TYPED_TEST(StoreContract, SortPerVramGbAndBandwidth) {
  this->store_->import(fixture_batch());
  OfferQuery q;
  q.sort = "price_per_vram_gb";
  // USD/h per GB: C 0.35/24 = 0.0146, D 2.39/80 = 0.0299, A 23.92/640 = 0.0374,
  // G 4.8/64 = 0.075, B 32.77/320 = 0.1024.
  EXPECT_EQ(ids(this->store_->query(q)),
            (std::vector<std::string>{"vast/rtx4090", "runpod/h100-pcie/eu-ro-1", "lambda/gpu_8x_h100_sxm5/us-east-1",
                                      "gcp/tpu-v5e/us-west4", "aws/p4d.24xlarge/us-east-1"}));
  q.sort = "bandwidth";
  auto v = this->store_->query(q);
  ASSERT_EQ(v.size(), 5u);
  // Highest spec memory bandwidth first: H100 SXM (3.35 TB/s, data/gpus.csv) leads.
  EXPECT_EQ(v[0].id, "lambda/gpu_8x_h100_sxm5/us-east-1");
}

TYPED_TEST(StoreContract, SpotPricesSortAndUnknownLast) {
  this->store_->import(fixture_batch());
  OfferQuery q;
  q.price_kind = PriceKind::spot;
  q.sort = "price";
  auto v = this->store_->query(q);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].id, "aws/p4d.24xlarge/us-east-1");         // spot 9.8
  EXPECT_EQ(v[1].id, "lambda/gpu_8x_h100_sxm5/us-east-1");  // spot 12
  // C, D, G have no spot price: last, by id.
  EXPECT_EQ(v[2].id, "gcp/tpu-v5e/us-west4");
  EXPECT_EQ(v[3].id, "runpod/h100-pcie/eu-ro-1");
  EXPECT_EQ(v[4].id, "vast/rtx4090");
}

TYPED_TEST(StoreContract, QueryReturnsFullOffers) {
  this->store_->import(fixture_batch());
  OfferQuery q;
  q.filter = "provider=gcp";
  q.include_excluded = true;
  auto v = this->store_->query(q);
  ASSERT_EQ(v.size(), 1u);
  const Offer& g = v[0];
  EXPECT_EQ(g.gpu_name, "Google TPU v5e");
  ASSERT_EQ(g.flags.size(), 1u);
  EXPECT_EQ(g.flags[0].rule, "memory_unit");
  EXPECT_FALSE(g.flags[0].excludes);
  EXPECT_EQ(g.billing_override.granularity_seconds, 60);
  EXPECT_EQ(g.billing_override.sources, (std::vector<std::string>{"granularity_seconds: test fixture"}));
  ASSERT_EQ(g.prices.size(), 1u);
  EXPECT_EQ(g.prices[0].source.locator, "tests/catalog/store_fixtures.hpp");
  EXPECT_EQ(g.prices[0].offer_id, g.id);
}

TYPED_TEST(StoreContract, GetAndHistoryOfUnknownId) {
  this->store_->import(fixture_batch());
  EXPECT_FALSE(this->store_->get("nope/nope").has_value());
  EXPECT_TRUE(this->store_->history("nope/nope").empty());
  auto a = this->store_->get("lambda/gpu_8x_h100_sxm5/us-east-1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->intra_node_link, IntraNodeLink::nvlink);
  EXPECT_EQ(a->inter_node_network, InterNodeNetwork::infiniband);
  EXPECT_EQ(a->max_nodes, 4);
  EXPECT_EQ(a->prices.size(), 3u);
}

// A later import that does not state a fact (a price quote without network or node columns)
// keeps what the store holds (keep_known_facts), in every store: counted unchanged, the network,
// node limits and vCPUs read back as first stored; a fact it states replaces the stored one.
TYPED_TEST(StoreContract, AnImportThatDoesNotStateAFactKeepsTheStoredOne) {
  auto batch_of = [](Offer o, double usd, const char* date) {
    o.prices = {obs(PriceKind::on_demand, usd, date)};
    ImportBatch b;
    b.offers = {std::move(o)};
    b.rows_read = 1;
    b.dataset = "test:fixture";
    return b;
  };
  Offer full = testing::base_offer("examplecloud/h100-8x/r", "examplecloud", "h100-8x", "r", "H100",
                                   "NVIDIA H100 SXM", 8, 80e9);
  full.inter_node_network = InterNodeNetwork::infiniband;
  full.inter_node_bits_per_s = 3200e9;
  full.max_nodes = 16;
  full.min_nodes = 2;
  full.vcpus = 192;
  this->store_->import(batch_of(full, 24.0, "2026-11-02"));
  Offer quote = testing::base_offer("examplecloud/h100-8x/r", "examplecloud", "h100-8x", "r", "H100",
                                    "NVIDIA H100 SXM", 8, 80e9);
  ASSERT_EQ(quote.inter_node_network, InterNodeNetwork::unknown);  // the quote states none of them
  ASSERT_FALSE(quote.max_nodes || quote.min_nodes || quote.vcpus || quote.inter_node_bits_per_s);
  const ImportBatch quoted = batch_of(quote, 22.0, "2026-11-20");
  const ImportResult preview = this->store_->preview_import(quoted);
  EXPECT_EQ(preview.offers_unchanged, 1u);
  EXPECT_EQ(preview.offers_updated, 0u);
  const ImportResult r = this->store_->import(quoted);
  EXPECT_EQ(r.offers_unchanged, 1u);
  EXPECT_EQ(r.offers_updated, 0u);
  EXPECT_EQ(r.observations_added, 1u);
  auto got = this->store_->get("examplecloud/h100-8x/r");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->inter_node_network, InterNodeNetwork::infiniband);
  EXPECT_EQ(got->inter_node_bits_per_s, 3200e9);
  EXPECT_EQ(got->max_nodes, 16);
  EXPECT_EQ(got->min_nodes, 2);
  EXPECT_EQ(got->vcpus, 192);
  EXPECT_EQ(got->prices.size(), 2u);
  // Stated facts replace: the network as ethernet, 400 Gbit/s; max_nodes not stated stays 16.
  quote.inter_node_network = InterNodeNetwork::ethernet;
  quote.inter_node_bits_per_s = 400e9;
  const ImportResult r2 = this->store_->import(batch_of(quote, 23.0, "2026-11-25"));
  EXPECT_EQ(r2.offers_updated, 1u);
  got = this->store_->get("examplecloud/h100-8x/r");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->inter_node_network, InterNodeNetwork::ethernet);
  EXPECT_EQ(got->inter_node_bits_per_s, 400e9);
  EXPECT_EQ(got->max_nodes, 16);
}

// Offer::min_nodes (issue 9: reserved clusters sold as >= N nodes) is stored, read back by get()
// and query(), and a changed minimum is a changed offer (counted updated, the new value read).
TYPED_TEST(StoreContract, MinNodesRoundTripsAndAChangeIsAnUpdate) {
  auto batch_with = [](std::optional<int> min_nodes) {
    ImportBatch b;
    Offer o = testing::base_offer("examplecloud/h100-cluster/r", "examplecloud", "h100-cluster", "r", "H100",
                                  "NVIDIA H100 SXM", 8, 80e9);
    o.inter_node_network = InterNodeNetwork::infiniband;
    o.max_nodes = 16;
    o.min_nodes = min_nodes;
    o.prices = {obs(PriceKind::reserved_1m, 16.0, "2026-11-02")};
    b.offers = {o};
    b.rows_read = 1;
    b.dataset = "test:fixture";
    return b;
  };
  this->store_->import(batch_with(4));
  auto a = this->store_->get("examplecloud/h100-cluster/r");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->min_nodes, 4);
  EXPECT_EQ(a->max_nodes, 16);
  OfferQuery q;
  q.price_kind = PriceKind::reserved_1m;
  q.filter = "provider=examplecloud";
  auto v = this->store_->query(q);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].min_nodes, 4);
  const ImportResult r = this->store_->import(batch_with(2));
  EXPECT_EQ(r.offers_updated, 1u);
  EXPECT_EQ(this->store_->get("examplecloud/h100-cluster/r")->min_nodes, 2);
  // An import that does not state a minimum keeps the stored one (keep_known_facts: one source
  // never erases what another stored); a stated minimum of 1 is "no minimum".
  this->store_->import(batch_with(std::nullopt));
  EXPECT_EQ(this->store_->get("examplecloud/h100-cluster/r")->min_nodes, 2);
  this->store_->import(batch_with(1));
  EXPECT_EQ(this->store_->get("examplecloud/h100-cluster/r")->min_nodes, 1);
}

TYPED_TEST(StoreContract, InvalidQueryIsAnError) {
  OfferQuery q;
  q.sort = "cheapest";
  EXPECT_THROW(this->store_->query(q), Error);
  q = OfferQuery{};
  q.limit = 0;
  EXPECT_THROW(this->store_->query(q), Error);
  q = OfferQuery{};
  q.filter = "gpu=";
  EXPECT_THROW(this->store_->query(q), FilterError);
}

TYPED_TEST(StoreContract, StalenessUsesTheInjectedDate) {
  this->store_->import(fixture_batch());
  OfferQuery q;
  q.now_date = "2026-11-30";
  q.filter = "stale";
  // C's price is from 2026-09-01: 90 days > 30. A (11-01, 29 days) and D (11-29) are fresh;
  // B and G have undated on-demand prices: unknown, so neither stale nor `not stale`.
  EXPECT_EQ(ids(this->store_->query(q)), (std::vector<std::string>{"vast/rtx4090"}));
  q.filter = "not stale";
  q.sort = "price";
  EXPECT_EQ(ids(this->store_->query(q)),
            (std::vector<std::string>{"runpod/h100-pcie/eu-ro-1", "lambda/gpu_8x_h100_sxm5/us-east-1"}));
  q.now_date = "2026-12-01";  // A is now 30 days old: not strictly older than 30
  EXPECT_EQ(this->store_->query(q).size(), 2u);
  q.now_date = "2026-12-02";
  EXPECT_EQ(ids(this->store_->query(q)), (std::vector<std::string>{"runpod/h100-pcie/eu-ro-1"}));
}

TYPED_TEST(StoreContract, QueryReturnsOnlyTheLatestPriceOfEachKindUnlessAsked) {
  this->store_->import(fixture_batch());
  ImportBatch next;
  Offer a = fixture_batch().offers[0];
  a.prices = {obs(PriceKind::on_demand, 22.5, "2026-11-20")};
  next.offers = {a};
  this->store_->import(next);
  OfferQuery q;
  q.filter = "id=lambda/gpu_8x_h100_sxm5/us-east-1";
  auto v = this->store_->query(q);
  ASSERT_EQ(v.size(), 1u);
  // A's history: on-demand 2026-10-01, 2026-11-01, 2026-11-20 and one undated spot price.
  // By default: the latest of each kind only, oldest first (the undated spot first).
  ASSERT_EQ(v[0].prices.size(), 2u);
  EXPECT_EQ(v[0].prices[0].kind, PriceKind::spot);
  EXPECT_EQ(v[0].prices[1].source.observed_at, "2026-11-20");
  EXPECT_DOUBLE_EQ(v[0].prices[1].usd_per_hour, 22.5);
  q.all_observations = true;
  v = this->store_->query(q);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].prices.size(), 4u);
  EXPECT_EQ(this->store_->get(a.id)->prices.size(), 4u);  // get() always has the history
}

TYPED_TEST(StoreContract, PreviewReportsButWritesNothing) {
  this->store_->import(fixture_batch());
  ImportBatch next = fixture_batch();
  next.offers[0].vcpus = 224;
  next.offers[0].prices.push_back(obs(PriceKind::on_demand, 21.0, "2026-11-25"));
  ImportResult r = this->store_->preview_import(next);
  EXPECT_EQ(r.offers_updated, 1u);
  EXPECT_EQ(r.observations_added, 1u);
  EXPECT_EQ(this->store_->counts().observations, 11u);
  EXPECT_NE(this->store_->get(next.offers[0].id)->vcpus, 224);
}

TYPED_TEST(StoreContract, SeedsOnce) {
  int calls = 0;
  auto make = [&] {
    ++calls;
    return fixture_batch();
  };
  EXPECT_TRUE(this->store_->seed_if_new("bundled sha256:1", make));
  EXPECT_FALSE(this->store_->seed_if_new("bundled sha256:1", make));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(this->store_->counts().offers, 7u);
}

// A store seeded by an older gpuplan (another bundled catalog, another key) takes the new
// bundle once: its new offer and new observation arrive, what was stored stays, and the new
// key is then the mark. (Found in a new-user trial: default stores kept the catalog of the
// gpuplan that created them, so README's offer counts and new prices never showed.)
TYPED_TEST(StoreContract, SeedsAgainWhenTheBundledCatalogChanged) {
  ASSERT_TRUE(this->store_->seed_if_new("bundled sha256:old", [] { return fixture_batch(); }));
  const StoreCounts before = this->store_->counts();
  ImportBatch newer = fixture_batch();
  Offer extra = newer.offers.front();
  extra.id += "-new";
  extra.instance_type += "-new";
  for (PriceObservation& p : extra.prices) p.offer_id = extra.id;
  newer.offers.push_back(extra);
  PriceObservation p = newer.offers.front().prices.front();
  p.usd_per_hour += 1.0;
  p.source.observed_at = "2026-11-30";
  newer.offers.front().prices.push_back(p);
  int calls = 0;
  auto make = [&] {
    ++calls;
    return newer;
  };
  EXPECT_TRUE(this->store_->seed_if_new("bundled sha256:new", make));
  EXPECT_FALSE(this->store_->seed_if_new("bundled sha256:new", make));
  EXPECT_EQ(calls, 1);
  const StoreCounts after = this->store_->counts();
  EXPECT_EQ(after.offers, before.offers + 1);
  // the extra offer's observations, plus the one later price; the old ones are not repeated
  EXPECT_EQ(after.observations, before.observations + extra.prices.size() + 1);
  EXPECT_EQ(this->store_->history(newer.offers.front().id).back().usd_per_hour, p.usd_per_hour);
}

TYPED_TEST(StoreContract, IngestRefusesFutureDatesAndWritesNothing) {
  ImportBatch b = fixture_batch();
  b.offers[0].prices.push_back(obs(PriceKind::on_demand, 20.0, "2026-12-05"));
  EXPECT_THROW(ingest(*this->store_, b, IngestOptions{"2026-11-30", false}), Error);
  EXPECT_EQ(this->store_->counts().offers, 0u);
}

TYPED_TEST(StoreContract, IngestChecksAUserFileAgainstTheStoredMarketIndex) {
  // A market-index pseudo-offer already in the store (as the bundled ewyluda series would be),
  // then a user file without index rows: the gate still compares against the stored index.
  Offer index = testing::base_offer("index:test/h100", "index:test", "H100", "", "H100", "NVIDIA H100 SXM", 1, 80e9);
  index.flags.push_back(QualityFlag{"price_index", "a market index, not an offer", true});
  index.prices = {obs(PriceKind::on_demand, 2.0, "2026-11-01")};
  ImportBatch first;
  first.offers = {index};
  this->store_->import(first);
  // 0.80 USD per GPU-hour < 50% of the 2.00 index: flagged, not excluded.
  Offer cheap = testing::base_offer("x/cheap/r", "x", "cheap", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
  cheap.prices = {obs(PriceKind::on_demand, 0.80, "2026-11-20")};
  ImportBatch user;
  user.offers = {cheap};
  ingest(*this->store_, user, IngestOptions{"2026-11-30", false});
  auto got = this->store_->get("x/cheap/r");
  ASSERT_TRUE(got);
  ASSERT_EQ(got->flags.size(), 1u);
  EXPECT_EQ(got->flags[0].rule, import_rule::kBelowMarketIndex);
  EXPECT_FALSE(got->flags[0].excludes);
}

TYPED_TEST(StoreContract, FetchedSnapshotsPassTheSameGatesAsImports) {
  // The fetchers' write (ingest_snapshot) runs the store-wide gates: a stored market index
  // flags a fetched offer under half of it, and a future date refuses the snapshot whole.
  Offer index = testing::base_offer("index:test/h100", "index:test", "H100", "", "H100", "NVIDIA H100 SXM", 1, 80e9);
  index.flags.push_back(QualityFlag{"price_index", "a market index, not an offer", true});
  index.prices = {obs(PriceKind::on_demand, 2.0, "2026-11-01")};
  ImportBatch first;
  first.offers = {index};
  this->store_->import(first);
  SnapshotRecord rec;
  rec.source = "src";
  rec.url = "http://x/a";
  rec.urls = {rec.url};
  rec.fetched_at = "2026-11-30T00:00:00Z";
  rec.content_hash = "sha256:cc";
  rec.parser_version = 1;
  rec.status = "accepted";
  // 0.80 USD per GPU-hour < 50% of the 2.00 index: flagged, not excluded.
  Offer cheap = testing::base_offer("x/cheap/r", "x", "cheap", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
  cheap.prices = {obs(PriceKind::on_demand, 0.80, "2026-11-20")};
  ImportBatch fetched;
  fetched.offers = {cheap};
  SnapshotCommit c = ingest_snapshot(*this->store_, rec, &fetched, "2026-11-30");
  EXPECT_EQ(c.record.observations_added, 1u);
  auto got = this->store_->get("x/cheap/r");
  ASSERT_TRUE(got);
  ASSERT_EQ(got->flags.size(), 1u);
  EXPECT_EQ(got->flags[0].rule, import_rule::kBelowMarketIndex);
  // A price dated after the fetch date: an error, no snapshot row and no offer written.
  Offer future = testing::base_offer("x/future/r", "x", "future", "r", "H100", "NVIDIA H100 SXM", 1, 80e9);
  future.prices = {obs(PriceKind::on_demand, 3.0, "2026-12-05")};
  ImportBatch bad;
  bad.offers = {future};
  rec.content_hash = "sha256:dd";
  EXPECT_THROW(ingest_snapshot(*this->store_, rec, &bad, "2026-11-30"), Error);
  EXPECT_FALSE(this->store_->get("x/future/r"));
  EXPECT_EQ(this->store_->snapshots("src", 10).size(), 1u);
}

// The latest price a query reads (filter, sort, returned observation) follows the newest
// observation across imports: an older date imported later does not replace it, an undated one
// never does, a newer date does, and a snapshot with a new price at the same date replaces it
// (ties go to the later record). Prices and dates are SYNTHETIC test inputs. Each step states
// the expected latest price by hand and checks query() against it and against get()'s history.
TYPED_TEST(StoreContract, LatestPriceFollowsTheNewestObservationAcrossImports) {
  OfferStore& store = *this->store_;
  auto offer = [](const std::string& id, int gpus, std::vector<PriceObservation> prices) {
    Offer o = testing::base_offer(id, "p", id, "r", "H100", "NVIDIA H100 SXM", gpus, 80e9);
    o.prices = std::move(prices);
    for (auto& p : o.prices) p.offer_id = o.id;
    return o;
  };
  auto import_one = [&](const Offer& o) {
    ImportBatch b;
    b.offers = {o};
    store.import(b);
  };
  using K = PriceKind;
  // Checks the price query() returns for `id` (on-demand), and that it is get()'s latest.
  auto latest = [&](const std::string& id) -> double {
    OfferQuery q;
    q.filter = "id=" + id;
    const auto v = store.query(q);
    EXPECT_EQ(v.size(), 1u) << id;
    if (v.size() != 1) return -1;
    const PriceObservation* p = v[0].latest_price(K::on_demand);
    const auto full = store.get(id);
    EXPECT_TRUE(full && full->latest_price(K::on_demand));
    if (!p || !full || !full->latest_price(K::on_demand)) return -1;
    EXPECT_DOUBLE_EQ(p->usd_per_hour, full->latest_price(K::on_demand)->usd_per_hour) << id;
    EXPECT_EQ(p->source.observed_at, full->latest_price(K::on_demand)->source.observed_at) << id;
    return p->usd_per_hour;
  };
  auto by_price = [&](const std::string& filter) {
    OfferQuery q;
    q.filter = filter;
    q.sort = "price";
    return ids(store.query(q));
  };

  import_one(offer("p/x", 1, {obs(K::on_demand, 3.00, "2026-11-01")}));
  import_one(offer("p/y", 1, {obs(K::on_demand, 2.50, "2026-11-01")}));
  EXPECT_DOUBLE_EQ(latest("p/x"), 3.00);
  // Out of order: an OLDER date imported later is history, not the latest price.
  import_one(offer("p/x", 1, {obs(K::on_demand, 1.00, "2026-10-01")}));
  EXPECT_DOUBLE_EQ(latest("p/x"), 3.00);
  EXPECT_EQ(by_price(""), (std::vector<std::string>{"p/y", "p/x"}));
  EXPECT_EQ(by_price("price<=2"), std::vector<std::string>{});
  // An undated price counts as oldest: it never replaces a dated one.
  import_one(offer("p/x", 1, {obs(K::on_demand, 0.50, std::nullopt)}));
  EXPECT_DOUBLE_EQ(latest("p/x"), 3.00);
  // A newer date replaces it (one batch holding an older and a newer date, newer listed first).
  import_one(offer("p/x", 1, {obs(K::on_demand, 2.00, "2026-11-20"), obs(K::on_demand, 2.90, "2026-11-05")}));
  EXPECT_DOUBLE_EQ(latest("p/x"), 2.00);
  EXPECT_EQ(by_price(""), (std::vector<std::string>{"p/x", "p/y"}));
  EXPECT_EQ(by_price("price<=2"), std::vector<std::string>{"p/x"});
  EXPECT_EQ(store.history("p/x").size(), 5u);  // nothing lost
  // A snapshot replacing a price: same observed date, new price, later record → the latest.
  SnapshotRecord rec;
  rec.source = "src";
  rec.url = "http://x/a";
  rec.urls = {rec.url};
  rec.fetched_at = "2026-11-21T00:00:00Z";
  rec.content_hash = "sha256:01";
  rec.parser_version = 1;
  rec.status = "accepted";
  ImportBatch snap;
  snap.offers = {offer("p/x", 1, {obs(K::on_demand, 2.20, "2026-11-20", "fetch:src")}),
                 offer("p/y", 1, {obs(K::on_demand, 1.50, "2026-11-21T00:00:00Z", "fetch:src")})};
  store.commit_snapshot(rec, &snap);
  EXPECT_DOUBLE_EQ(latest("p/x"), 2.20);
  EXPECT_DOUBLE_EQ(latest("p/y"), 1.50);
  EXPECT_EQ(by_price(""), (std::vector<std::string>{"p/y", "p/x"}));
  EXPECT_EQ(by_price("source=fetch:src and price<2"), std::vector<std::string>{"p/y"});
  // Re-importing an old identical observation adds nothing and changes nothing.
  import_one(offer("p/x", 1, {obs(K::on_demand, 3.00, "2026-11-01")}));
  EXPECT_DOUBLE_EQ(latest("p/x"), 2.20);
  // Other kinds are kept apart: a spot price does not move the on-demand latest.
  import_one(offer("p/x", 1, {obs(K::spot, 0.90, "2026-11-30")}));
  EXPECT_DOUBLE_EQ(latest("p/x"), 2.20);
  OfferQuery spot;
  spot.price_kind = K::spot;
  spot.sort = "price";
  const auto s = store.query(spot);
  ASSERT_EQ(s.size(), 2u);  // p/y has no spot price: sorted last (unknown key)
  EXPECT_EQ(s[0].id, "p/x");
  ASSERT_NE(s[0].latest_price(K::spot), nullptr);
  EXPECT_DOUBLE_EQ(s[0].latest_price(K::spot)->usd_per_hour, 0.90);
  EXPECT_EQ(s[1].id, "p/y");
  EXPECT_EQ(by_price("spot"), std::vector<std::string>{"p/x"});
}

// A limited query whose first rows have a price and whose last have none (unknown key, sorted
// last) returns both, in one order, and the limit counts both.
TYPED_TEST(StoreContract, LimitSpansPricedAndUnpricedOffers) {
  this->store_->import(fixture_batch());
  OfferQuery q;
  q.price_kind = PriceKind::spot;
  q.sort = "price";
  // Spot prices: A 12.0 (undated), B 9.8; C, D, G have none (E, F excluded).
  q.limit = 4;
  EXPECT_EQ(ids(this->store_->query(q)),
            (std::vector<std::string>{"aws/p4d.24xlarge/us-east-1", "lambda/gpu_8x_h100_sxm5/us-east-1",
                                      "gcp/tpu-v5e/us-west4", "runpod/h100-pcie/eu-ro-1"}));
  q.limit = 1;
  EXPECT_EQ(ids(this->store_->query(q)), std::vector<std::string>{"aws/p4d.24xlarge/us-east-1"});
  q.limit.reset();
  q.sort = std::string(kSortPricePerGpuHour);
  EXPECT_EQ(this->store_->query(q).size(), 5u);
}

// `gpu=X` as a top-level conjunct is answered by one walk per GPU model (resolved name, or the
// normalised raw name of an unresolved offer), merged: the same offers, once each, in the same
// order as the clause evaluated on every offer. Prices are SYNTHETIC test inputs.
TYPED_TEST(StoreContract, GpuFilterFirstPagesMergeEveryModelOnce) {
  auto offer = [](const std::string& id, const std::string& raw, std::optional<std::string> gpu, int n, double usd) {
    Offer o = testing::base_offer(id, "p", id, "r", raw, std::move(gpu), n, 80e9);
    o.prices = {obs(PriceKind::on_demand, usd, "2026-11-01")};
    o.prices[0].offer_id = o.id;
    return o;
  };
  ImportBatch b;
  b.offers = {offer("p/h100-8x", "H100 SXM5", "NVIDIA H100 SXM", 8, 24.0),  // 3.00 per GPU
              offer("p/h100-raw", "H100", std::nullopt, 1, 2.50),            // unresolved: matched by its raw name
              offer("p/h100-both", "H100", "NVIDIA H100 SXM", 1, 2.80),      // matched by name AND raw name
              offer("p/a100", "A100", "NVIDIA A100 SXM 40GB", 1, 1.20),
              offer("p/rtx4090", "RTX 4090", "NVIDIA GeForce RTX 4090", 1, 0.30)};
  this->store_->import(b);
  auto run = [&](const std::string& filter, std::optional<std::size_t> limit) {
    OfferQuery q;
    q.filter = filter;
    q.limit = limit;
    return ids(this->store_->query(q));
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(run("gpu=H100", std::nullopt), (V{"p/h100-raw", "p/h100-both", "p/h100-8x"}));
  EXPECT_EQ(run("gpu=H100", 2), (V{"p/h100-raw", "p/h100-both"}));
  EXPECT_EQ(run("gpu=H100 gpus>=8", 50), (V{"p/h100-8x"}));
  EXPECT_EQ(run("gpu=H100 or gpu=A100", 3), (V{"p/a100", "p/h100-raw", "p/h100-both"}));
  EXPECT_EQ(run("gpu=H100 or gpu=h100", 10), (V{"p/h100-raw", "p/h100-both", "p/h100-8x"}));
  EXPECT_EQ(run("gpu=B200", 10), V{});
  EXPECT_EQ(run("not gpu=H100", 10), (V{"p/rtx4090", "p/a100"}));
  // `provider=` (compared lower-cased) and or-lists of it take the same per-value walks.
  ImportBatch more;
  more.offers = {offer("o/h100", "H100", "NVIDIA H100 SXM", 1, 2.60)};
  more.offers[0].provider = "Other";
  this->store_->import(more);
  EXPECT_EQ(run("provider=other", 10), V{"o/h100"});
  EXPECT_EQ(run("provider=other or provider=p", 3), (V{"p/rtx4090", "p/a100", "p/h100-raw"}));
  EXPECT_EQ(run("gpu=H100 provider=other", 10), V{"o/h100"});
  EXPECT_EQ(run("gpu=H100", 3), (V{"p/h100-raw", "o/h100", "p/h100-both"}));
  OfferQuery by_price;
  by_price.filter = "gpu=H100 or provider=other";  // not a single-field list: the plain walk
  by_price.sort = "price";
  EXPECT_EQ(ids(this->store_->query(by_price)), (V{"p/h100-raw", "o/h100", "p/h100-both", "p/h100-8x"}));
  by_price.filter = "gpu=H100";
  by_price.limit = 2;
  EXPECT_EQ(ids(this->store_->query(by_price)), (V{"p/h100-raw", "o/h100"}));
}


TYPED_TEST(StoreContract, MemoryFloorKeepsTheSameOffersInEveryStore) {
  // OfferQuery::memory_floor (the planner's read, issue 7): an offer passes when listed per-GPU
  // memory × gpu_count × nodes × slack ≥ cluster_bytes, nodes = max_nodes (unknown: the assumed
  // count) for multi-node jobs on offers with a known network, else 1; unknown memory passes.
  // Fixture memory per node: A 8 × 80 GB = 640 GB (InfiniBand, max 4 nodes), B 8 × 40 = 320 GB
  // (Ethernet, max unknown), C 24 GB, D 80 GB, G 4 × 16 = 64 GB (no network); E 640 GB and F
  // unknown memory are excluded from rankings.
  this->store_->import(fixture_batch());
  using V = std::vector<std::string>;
  auto run = [&](double cluster_bytes, bool multi_node, int assumed, double slack, bool include_excluded) {
    OfferQuery q;
    q.sort = "price";
    q.include_excluded = include_excluded;
    q.memory_floor = OfferMemoryFloor{cluster_bytes, multi_node, assumed, slack};
    return ids(this->store_->query(q));
  };
  // One node, 200 GB: A (640) and B (320); C 24, D 80, G 64 are below.
  EXPECT_EQ(run(200e9, false, 1, 1.0, false), (V{"lambda/gpu_8x_h100_sxm5/us-east-1", "aws/p4d.24xlarge/us-east-1"}));
  // The same with excluded offers: E (640 GB) passes, F (unknown memory) always passes.
  // Prices: F 5.0, A 23.92, B 32.77, E 0 (zero_price) — ids compared as a set.
  V with_excluded = run(200e9, false, 1, 1.0, true);
  std::sort(with_excluded.begin(), with_excluded.end());
  EXPECT_EQ(with_excluded, (V{"aws/p4d.24xlarge/us-east-1", "foo/mystery/x", "lambda/gpu_8x_h100_sxm5/us-east-1",
                              "mithril/h100/us-central"}));
  // Multi-node, 3000 GB, 16 nodes assumed: A holds 4 × 640 = 2560 (< 3000), B 16 × 320 = 5120.
  EXPECT_EQ(run(3000e9, true, 16, 1.0, false), V{"aws/p4d.24xlarge/us-east-1"});
  // Slack 1.25: A's 2560 × 1.25 = 3200 ≥ 3000 passes too.
  EXPECT_EQ(run(3000e9, true, 16, 1.25, false), (V{"lambda/gpu_8x_h100_sxm5/us-east-1", "aws/p4d.24xlarge/us-east-1"}));
  // Single-node job at 70 GB: D's 80 GB passes, G's 64 GB and C's 24 GB do not.
  EXPECT_EQ(run(70e9, false, 1, 1.0, false),
            (V{"runpod/h100-pcie/eu-ro-1", "lambda/gpu_8x_h100_sxm5/us-east-1", "aws/p4d.24xlarge/us-east-1"}));
  // The offers read under a floor carry their latest prices and flags as without one.
  OfferQuery q;
  q.filter = "id=lambda/gpu_8x_h100_sxm5/us-east-1";
  q.memory_floor = OfferMemoryFloor{200e9, false, 1, 1.0};
  const auto v = this->store_->query(q);
  ASSERT_EQ(v.size(), 1u);
  ASSERT_NE(v[0].latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(v[0].latest_price(PriceKind::on_demand)->usd_per_hour, 23.92);
  EXPECT_EQ(v[0].prices.size(), 2u);  // the latest on-demand and the undated spot
  q.filter = "id=gcp/tpu-v5e/us-west4";
  q.memory_floor = OfferMemoryFloor{60e9, false, 1, 1.0};
  const auto g = this->store_->query(q);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].flags.size(), 1u);  // memory_unit
  // With a limit: refused (the planner reads every match).
  q.limit = 5;
  EXPECT_THROW(this->store_->query(q), Error);
}

// The planner's bounded read (issue 12, OfferQuery::cheapest_per_plan_class). One generated plan
// class of 40 offers (the same 8x H100 machine in one place listed under 40 ids, as copies of a
// feed; SYNTHETIC prices 10 + i USD/h, c05 priced as c04), 8 cheaper offers of the same class on
// stale prices (2024, 1 + i USD/h) and 3 cheaper ones with a price-questioning flag (another
// class: flags are class facts).
ImportBatch generated_class_batch() {
  using testing::base_offer;
  ImportBatch b;
  auto machine = [](std::string id) {
    Offer o = base_offer(std::move(id), "gen", "gen.8xh100", "r1", "H100", "NVIDIA H100 SXM", 8, 80e9);
    o.intra_node_link = IntraNodeLink::nvlink;
    return o;
  };
  for (int i = 0; i < 40; ++i) {
    Offer o = machine(fmt::format("gen/clean/c{:02d}", i));
    o.prices = {obs(PriceKind::on_demand, i == 5 ? 14.0 : 10.0 + i, "2026-11-20")};
    b.offers.push_back(o);
  }
  for (int i = 0; i < 8; ++i) {
    Offer o = machine(fmt::format("gen/stale/s{:02d}", i));
    o.prices = {obs(PriceKind::on_demand, 1.0 + i, "2024-01-01")};
    b.offers.push_back(o);
  }
  for (int i = 0; i < 3; ++i) {
    Offer o = machine(fmt::format("gen/flagged/f{:02d}", i));
    o.flags.push_back(QualityFlag{"below_market_index", "synthetic", false});
    o.prices = {obs(PriceKind::on_demand, 0.5 + i, "2026-11-20")};
    b.offers.push_back(o);
  }
  return b;
}

/// Runs `check` on each of the store's bounded-read plans: the index walks (a database store
/// set to walk at any size) and the scan of a small store (kBoundedReadScanMaxRows); once for
/// the memory store.
template <typename F>
void on_each_read_plan(OfferStore* store, F check) {
  auto* sqlite = dynamic_cast<SqliteOfferStore*>(store);
  auto* pg = dynamic_cast<PgOfferStore*>(store);
  if (sqlite) sqlite->set_bounded_read_scan_max_rows(0);
  if (pg) pg->set_bounded_read_scan_max_rows(0);
  {
    SCOPED_TRACE(sqlite || pg ? "index walks" : "memory");
    check();
  }
  if (sqlite) sqlite->set_bounded_read_scan_max_rows(kBoundedReadScanMaxRows);
  if (pg) pg->set_bounded_read_scan_max_rows(kBoundedReadScanMaxRows);
  if (sqlite || pg) {
    SCOPED_TRACE("scan of a small store");
    check();
  }
}

std::vector<std::string> sorted_ids(const std::vector<Offer>& v) {
  std::vector<std::string> out = ids(v);
  std::sort(out.begin(), out.end());
  return out;
}

TYPED_TEST(StoreContract, BoundedReadKeepsTheCheapestOfEachPlanClassAndEvidence) {
  this->store_->import(generated_class_batch());
  on_each_read_plan(this->store_.get(), [&] {
  OfferQuery q;
  q.now_date = "2026-12-01";  // 2026-11-20 is clean at 30 days, 2024-01-01 stale
  q.cheapest_per_plan_class = 5;
  const std::vector<Offer> got = this->store_->query(q);
  // Clean: the 5 cheapest (10..14) and c05, tied with the 5th at 14. Stale: the 5 cheapest
  // (1..5): cheaper stale offers do not push the clean ones out. Flagged: its own class, all 3.
  const std::vector<std::string> want = {"gen/clean/c00", "gen/clean/c01", "gen/clean/c02", "gen/clean/c03",
                                         "gen/clean/c04", "gen/clean/c05", "gen/flagged/f00", "gen/flagged/f01",
                                         "gen/flagged/f02", "gen/stale/s00", "gen/stale/s01", "gen/stale/s02",
                                         "gen/stale/s03", "gen/stale/s04"};
  EXPECT_EQ(sorted_ids(got), want);
  // In the order of the unbounded query, latest prices as it returns them.
  OfferQuery all = q;
  all.cheapest_per_plan_class.reset();
  std::vector<Offer> every = this->store_->query(all);
  ASSERT_EQ(every.size(), 51u);
  std::erase_if(every, [&](const Offer& o) { return !std::binary_search(want.begin(), want.end(), o.id); });
  EXPECT_EQ(ids(got), ids(every));
  ASSERT_EQ(got.size(), every.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].prices.size(), 1u) << got[i].id;
    EXPECT_EQ(got[i].prices[0].usd_per_hour, every[i].prices[0].usd_per_hour);
  }
  });
}

TYPED_TEST(StoreContract, BoundedReadAppliesTheFilterInsideTheWalk) {
  this->store_->import(generated_class_batch());
  on_each_read_plan(this->store_.get(), [&] {
  OfferQuery q;
  q.now_date = "2026-12-01";
  q.cheapest_per_plan_class = 5;
  // A per-offer clause: c01 is left out before counting, so the 5 cheapest clean ones are c00,
  // c02, c03, c04 and c05 (tied at 14), and c06 (16) is still not read.
  q.filter = "id!=gen/clean/c01 and not flagged and price>=9";
  EXPECT_EQ(sorted_ids(this->store_->query(q)),
            (std::vector<std::string>{"gen/clean/c00", "gen/clean/c02", "gen/clean/c03", "gen/clean/c04",
                                      "gen/clean/c05"}));
  // A clause on class facts decides for the whole class.
  q.filter = "gpus>=16";
  EXPECT_TRUE(this->store_->query(q).empty());
  q.filter = "flagged";
  EXPECT_EQ(this->store_->query(q).size(), 3u);
  q.filter = "region=r2";
  EXPECT_TRUE(this->store_->query(q).empty());
  // Without --today every dated price is clean-dated: 5 of the 48 unflagged (1..5 are stale
  // ones, now ranked as clean) and the 3 flagged.
  q.filter.clear();
  q.now_date.clear();
  EXPECT_EQ(sorted_ids(this->store_->query(q)),
            (std::vector<std::string>{"gen/flagged/f00", "gen/flagged/f01", "gen/flagged/f02", "gen/stale/s00",
                                      "gen/stale/s01", "gen/stale/s02", "gen/stale/s03", "gen/stale/s04"}));
  // A bound of 0 and a bound with a limit are refused.
  q.cheapest_per_plan_class = 0;
  EXPECT_THROW(this->store_->query(q), Error);
  q.cheapest_per_plan_class = 5;
  q.limit = 3;
  EXPECT_THROW(this->store_->query(q), Error);
  });
}

TYPED_TEST(StoreContract, BoundedReadFollowsAnOfferThatChangesClass) {
  // The class is rewritten with the offer's facts: a re-import that flags c00 moves it out of
  // the clean class (c05's tie partner c04 stays the 5th; c06 is not needed).
  ImportBatch b = generated_class_batch();
  this->store_->import(b);
  ImportBatch again;
  Offer c00 = b.offers[0];
  c00.flags.push_back(QualityFlag{"below_market_index", "synthetic", false});
  again.offers.push_back(c00);
  this->store_->import(again);
  OfferQuery q;
  q.now_date = "2026-12-01";
  q.cheapest_per_plan_class = 5;
  q.filter = "not flagged and price>=9";
  on_each_read_plan(this->store_.get(), [&] {
    EXPECT_EQ(sorted_ids(this->store_->query(q)),
              (std::vector<std::string>{"gen/clean/c01", "gen/clean/c02", "gen/clean/c03", "gen/clean/c04",
                                        "gen/clean/c05"}));
  });
}

// Streamed imports (issue 11, ingest_file): a file written chunk by chunk into ONE import
// (OfferStore::begin_import). Small chunks (100 rows) so that a few hundred rows cross chunk
// boundaries (PostgreSQL imports row by row: kept short). The rows are synthetic quotes of the bundled GPU "H100 SXM" (data/gpus.csv).
std::string stream_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}
constexpr const char* kStreamHeader =
    "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source,vcpus\n";
/// Row i: offer acme/node-<i>/r1, 8 x H100 SXM, on-demand $20/h on 2025-06-01, no vcpus.
std::string stream_row(int i) { return "acme,node-" + std::to_string(i) + ",r1,H100 SXM,8,on-demand,20,2025-06-01,quote,\n"; }
constexpr std::size_t kChunk = 100;

TYPED_TEST(StoreContract, StreamedImportWithAnErrorOnTheLastRowWritesNothing) {
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  const std::uint64_t revision = this->store_->revision();
  std::string text = kStreamHeader;
  for (int i = 0; i < 250; ++i) text += stream_row(i);  // lines 2..251: chunks written first
  // Line 252: a price that is not a number (a row error in the importer, after 250 rows).
  const std::string bad_row = stream_file("stream-bad-row.csv", text + "acme,last,r1,H100 SXM,8,on-demand,abc,2025-06-01,quote,\n");
  // Line 252 dated after "today" (a gate of ingest, run on the last chunk).
  const std::string future =
      stream_file("stream-future.csv", text + "acme,last,r1,H100 SXM,8,on-demand,21,2030-01-01,quote,\n");
  for (const std::string& path : {bad_row, future}) {
    try {
      ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
      ADD_FAILURE() << "accepted " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
      EXPECT_NE(std::string(e.what()).find(path + ":252"), std::string::npos) << e.what();
    }
    EXPECT_EQ(this->store_->counts().offers, before.offers) << path;
    EXPECT_EQ(this->store_->counts().observations, before.observations) << path;
    EXPECT_FALSE(this->store_->get("acme/node-0/r1")) << path;
    EXPECT_EQ(this->store_->revision(), revision) << path;
  }
}

TYPED_TEST(StoreContract, StreamedImportRefusesAnIdRepeatedAcrossChunksWithOtherHardware) {
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  std::string text = kStreamHeader;
  for (int i = 0; i < 150; ++i) text += stream_row(i);  // node-0 is line 2, 8 x H100 SXM
  text += "acme,node-0,r1,A100 SXM4 80GB,4,on-demand,5.16,2025-06-02,quote,\n";  // line 152, chunk 2
  const std::string path = stream_file("stream-two-machines.csv", text);
  try {
    ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
    ADD_FAILURE() << "one id accepted as 8 x H100 and 4 x A100";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("cannot be two machines"), std::string::npos) << w;
    EXPECT_EQ(w.rfind(path + ":152: ", 0), 0u) << w;             // the row refused, as the error's place
    EXPECT_NE(w.find("at " + path + ":2:"), std::string::npos) << w;  // the earlier row it contradicts
  }
  EXPECT_EQ(this->store_->counts().offers, before.offers);
  EXPECT_EQ(this->store_->counts().observations, before.observations);
}

// ingest_file parses on its own thread while the store writes earlier chunks: the error the
// user sees must still be the first one in the file, as a row-by-row import would report it.
// Here chunk 2 (line 152) contradicts line 2's hardware (a store-side error) and chunk 4
// (line 352) has a price that is not a number (a parse error, read while chunk 2 is written).
TYPED_TEST(StoreContract, StreamedImportReportsTheFirstErrorInFileOrder) {
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  std::string text = kStreamHeader;
  for (int i = 0; i < 150; ++i) text += stream_row(i);                             // lines 2..151
  text += "acme,node-0,r1,A100 SXM4 80GB,4,on-demand,5.16,2025-06-02,quote,\n";   // line 152
  for (int i = 150; i < 349; ++i) text += stream_row(i);                           // lines 153..351
  text += "acme,last,r1,H100 SXM,8,on-demand,abc,2025-06-01,quote,\n";            // line 352
  for (int i = 349; i < 500; ++i) text += stream_row(i);
  const std::string path = stream_file("stream-two-errors.csv", text);
  for (int attempt = 0; attempt < 5; ++attempt) {  // the threads' timing differs per run
    try {
      ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
      ADD_FAILURE() << "accepted " << path;
    } catch (const Error& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find(path + ":152"), std::string::npos) << w;
      EXPECT_EQ(w.find(path + ":352"), std::string::npos) << w;
    }
    EXPECT_EQ(this->store_->counts().offers, before.offers);
    EXPECT_EQ(this->store_->counts().observations, before.observations);
  }
  // Without line 152, the parse error of line 352 is the one reported.
  std::string second = kStreamHeader;
  for (int i = 0; i < 349; ++i) second += stream_row(i);
  second += "acme,last,r1,H100 SXM,8,on-demand,abc,2025-06-01,quote,\n";            // line 351
  const std::string path2 = stream_file("stream-parse-error.csv", second);
  try {
    ingest_file(*this->store_, path2, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
    ADD_FAILURE() << "accepted " << path2;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path2 + ":351"), std::string::npos) << e.what();
  }
  EXPECT_EQ(this->store_->counts().offers, before.offers);
}

TYPED_TEST(StoreContract, StreamedImportMergesAcrossChunksAsOneBatch) {
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  // Chunk 1 (rows 0..99): node-0..node-99 at $20 on 2025-06-01. Chunk 2 (rows 100..199): the
  // same offers again; even j: the identical quote (one observation), odd j: $21 on 2025-06-02
  // with vcpus 64 (a second observation, and a fact chunk 1 did not give).
  std::string text = kStreamHeader;
  for (int i = 0; i < 100; ++i) text += stream_row(i);
  for (int j = 0; j < 100; ++j) {
    if (j % 2 == 0) text += stream_row(j);
    else text += "acme,node-" + std::to_string(j) + ",r1,H100 SXM,8,on-demand,21,2025-06-02,quote,64\n";
  }
  const std::string path = stream_file("stream-merge.csv", text);
  const FileImport r = ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
  EXPECT_EQ(r.rows_read, 200u);
  EXPECT_EQ(r.offers, 100u);
  EXPECT_EQ(r.result.offers_added, 100u);
  EXPECT_EQ(r.result.offers_updated + r.result.offers_unchanged, 0u);
  EXPECT_EQ(r.result.observations_added, 150u);  // 100 + 50 new prices; the 50 repeats are one each
  EXPECT_EQ(r.result.observations_already_known, 0u);
  EXPECT_EQ(this->store_->counts().offers, before.offers + 100);
  EXPECT_EQ(this->store_->counts().observations, before.observations + 150);
  const auto even = this->store_->get("acme/node-0/r1");
  ASSERT_TRUE(even);
  EXPECT_EQ(even->prices.size(), 1u);
  EXPECT_FALSE(even->vcpus);
  const auto odd = this->store_->get("acme/node-99/r1");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->prices.size(), 2u);
  EXPECT_EQ(odd->vcpus.value_or(0), 64);
  OfferQuery q;
  q.filter = "id=acme/node-99/r1";
  const auto latest = this->store_->query(q);
  ASSERT_EQ(latest.size(), 1u);
  ASSERT_NE(latest[0].latest_price(PriceKind::on_demand), nullptr);
  EXPECT_DOUBLE_EQ(latest[0].latest_price(PriceKind::on_demand)->usd_per_hour, 21);
  // Again: nothing new; every offer unchanged.
  const FileImport again = ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
  EXPECT_EQ(again.result.offers_unchanged, 100u);
  EXPECT_EQ(again.result.observations_added, 0u);
  EXPECT_EQ(this->store_->counts().observations, before.observations + 150);
  // A dry run reads the file whole and writes nothing.
  const FileImport dry = ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", true}, kChunk);
  EXPECT_EQ(dry.offers, 100u);
  EXPECT_EQ(dry.result.offers_unchanged, 100u);
  EXPECT_EQ(dry.result.observations_added, 0u);
}

// New-user trial (robust11, #16): two different prices for one offer, price kind and observed_at
// in ONE file were both stored, and the later row silently became the price. Contradictory
// evidence: the file is refused at the later row, naming the earlier row and both prices
// (here across a chunk boundary: line 2 in chunk 1, line 152 in chunk 2), and nothing is written.
TYPED_TEST(StoreContract, StreamedImportRefusesTwoPricesForOneQuoteInOneFile) {
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  const std::uint64_t revision = this->store_->revision();
  std::string text = kStreamHeader;
  for (int i = 0; i < 150; ++i) text += stream_row(i);  // node-0: line 2, $20/h on 2025-06-01
  text += "acme,node-0,r1,H100 SXM,8,on-demand,25,2025-06-01,quote,\n";  // line 152: $25/h, same day
  const std::string path = stream_file("stream-two-prices.csv", text);
  for (const bool dry_run : {false, true}) {
    try {
      ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", dry_run}, kChunk);
      ADD_FAILURE() << "two prices for one quote accepted, dry_run " << dry_run;
    } catch (const Error& e) {
      const std::string w = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << w;
      EXPECT_EQ(w.rfind(path + ":152: ", 0), 0u) << w;  // the later row
      EXPECT_NE(w.find("acme/node-0/r1 on-demand observed_at 2025-06-01"), std::string::npos) << w;
      EXPECT_NE(w.find("25 USD/h here and 20 USD/h at " + path + ":2 "), std::string::npos) << w;
    }
  }
  EXPECT_EQ(this->store_->counts().offers, before.offers);
  EXPECT_EQ(this->store_->counts().observations, before.observations);
  EXPECT_FALSE(this->store_->get("acme/node-0/r1"));
  EXPECT_EQ(this->store_->revision(), revision);
}

TYPED_TEST(StoreContract, StreamedImportKeepsOneQuoteFromTwoSourcesAndOneOfferOnTwoDays) {
  // Not contradictions: the same price for one offer, kind and day from two sources (two
  // observations: the import identity includes the source), and another price on another day.
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  std::string text = kStreamHeader;
  for (int i = 0; i < 150; ++i) text += stream_row(i);
  text += "acme,node-0,r1,H100 SXM,8,on-demand,20,2025-06-01,second quote,\n";  // same $20, another source
  text += "acme,node-1,r1,H100 SXM,8,on-demand,25,2025-06-02,quote,\n";         // node-1's next day
  text += "acme,node-2,r1,H100 SXM,8,spot,9,2025-06-01,quote,\n";               // node-2's spot price
  const std::string path = stream_file("stream-not-contradictions.csv", text);
  const FileImport r = ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", false}, kChunk);
  EXPECT_EQ(r.rows_read, 153u);
  EXPECT_EQ(r.offers, 150u);
  EXPECT_EQ(r.result.observations_added, 153u);  // 150 + 3
  EXPECT_EQ(this->store_->counts().observations, before.observations + 153);
  EXPECT_EQ(this->store_->get("acme/node-0/r1")->prices.size(), 2u);
}

// New-user trial (robust11, #17): a header-only CSV "imported" 0 rows with exit 0 and raised
// the store's revision (its files changed). A file without offers is refused, nothing written.
TYPED_TEST(StoreContract, AFileWithoutRowsIsRefusedAndWritesNothing) {
  this->store_->import(fixture_batch());
  const auto before = this->store_->counts();
  const std::uint64_t revision = this->store_->revision();
  const std::string csv = stream_file("header-only.csv", kStreamHeader);
  const std::string json = stream_file("no-offers.json", R"({"format": "gpuplan-offers/1", "offers": []})");
  for (const std::string& path : {csv, json}) {
    for (const bool dry_run : {false, true}) {
      try {
        ingest_file(*this->store_, path, std::nullopt, IngestOptions{"2026-12-01", dry_run}, kChunk);
        ADD_FAILURE() << "a file without rows accepted: " << path << " dry_run " << dry_run;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
        EXPECT_EQ(e.where(), path);
        EXPECT_EQ(e.message().rfind("no rows: ", 0), 0u) << e.what();
      }
    }
  }
  EXPECT_EQ(this->store_->counts().offers, before.offers);
  EXPECT_EQ(this->store_->counts().observations, before.observations);
  EXPECT_EQ(this->store_->revision(), revision);
}

// Seen again (docs/fetch.md, issue 9 trial D3): a fetch that gives an offer's latest price again
// (an unchanged snapshot, or an accepted one at the same price) sets that price's last_seen_at and
// adds no observation; a changed price is a new observation (last seen = its own date); an offer
// the later snapshot leaves out keeps its last_seen_at; the stale filter and the evidence tier
// (both in SQL for the database stores) read last_seen_at; availability is re-confirmed.
TYPED_TEST(StoreContract, SeenAgainSetsLastSeenOfTheLatestPriceOnly) {
  // a and c are one machine in one place (one plan class), b another.
  auto offer = [](const std::string& id, double usd, const char* at) {
    Offer o = testing::base_offer(id, "src", id == "src/b" ? "n" : "m", "r1", "H100 SXM", "H100 SXM", 8, 80e9);
    o.confirmed_available_at = at;
    o.prices = {testing::obs(PriceKind::on_demand, usd, at, "fetch:src")};
    o.prices[0].offer_id = id;
    return o;
  };
  SnapshotRecord rec;
  rec.source = "src";
  rec.url = "http://x/a";
  rec.urls = {rec.url};
  rec.parser_version = 1;
  rec.status = "accepted";
  rec.content_hash = "sha256:day1";
  rec.fetched_at = "2026-10-25T06:00:00Z";
  ImportBatch day1;
  day1.dataset = "fetch:src";
  day1.offers = {offer("src/a", 16.0, "2026-10-25T06:00:00Z"), offer("src/b", 2.0, "2026-10-25T06:00:00Z"),
                 offer("src/c", 3.0, "2026-10-25T06:00:00Z")};
  ImportBatch b1 = day1;
  ingest_snapshot(*this->store_, rec, &b1, "2026-10-25");
  // Day 20: the same content (unchanged): every price seen again, availability re-confirmed.
  rec.status = "unchanged";
  rec.fetched_at = "2026-11-13T06:00:00Z";
  ImportBatch b20 = day1;
  for (Offer& o : b20.offers) {
    o.confirmed_available_at = rec.fetched_at;
    o.prices[0].source.observed_at = rec.fetched_at;
  }
  const SnapshotCommit c20 = ingest_snapshot(*this->store_, rec, &b20, "2026-11-13");
  EXPECT_EQ(c20.import.observations_added, 0u);
  // Day 40, accepted: a unchanged (seen again), b changed (new observation), c left out.
  rec.status = "accepted";
  rec.content_hash = "sha256:day40";
  rec.fetched_at = "2026-12-03T06:00:00Z";
  ImportBatch b40;
  b40.dataset = "fetch:src";
  b40.offers = {offer("src/a", 16.0, "2026-12-03T06:00:00Z"), offer("src/b", 2.5, "2026-12-03T06:00:00Z")};
  const SnapshotCommit c40 = ingest_snapshot(*this->store_, rec, &b40, "2026-12-03");
  EXPECT_EQ(c40.import.observations_added, 1u);  // b's new price only
  EXPECT_EQ(this->store_->counts().observations, 4u);  // 3 on day 1, b's on day 40

  OfferQuery q;
  q.now_date = "2026-12-04";
  q.sort = "price";
  std::map<std::string, Offer> got;
  for (Offer& o : this->store_->query(q)) got[o.id] = std::move(o);
  ASSERT_EQ(got.size(), 3u);
  const PriceObservation* a = got["src/a"].latest_price(PriceKind::on_demand);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->source.observed_at, "2026-10-25T06:00:00Z");  // first seen
  EXPECT_EQ(a->seen_at(), "2026-12-03T06:00:00Z");            // last seen
  EXPECT_EQ(got["src/a"].confirmed_available_at, "2026-12-03T06:00:00Z");
  const PriceObservation* b = got["src/b"].latest_price(PriceKind::on_demand);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->usd_per_hour, 2.5);
  EXPECT_EQ(b->seen_at(), "2026-12-03T06:00:00Z");
  const PriceObservation* c = got["src/c"].latest_price(PriceKind::on_demand);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->seen_at(), "2026-11-13T06:00:00Z");  // last seen by the unchanged snapshot of day 20
  EXPECT_EQ(got["src/c"].confirmed_available_at, "2026-11-13T06:00:00Z");
  // The whole history carries last_seen_at on the latest price only.
  const auto hist = this->store_->history("src/b");
  ASSERT_EQ(hist.size(), 2u);
  EXPECT_FALSE(hist[0].last_seen_at);
  // Stale at 2026-12-30 with the 30-day limit: only c (last seen 2026-11-13, 47 days); a was first
  // seen 2026-10-25 (66 days) but last seen 2026-12-03 (27 days). In SQL and in memory alike.
  q.now_date = "2026-12-30";
  q.filter = "stale";
  std::vector<std::string> stale;
  for (const Offer& o : this->store_->query(q)) stale.push_back(o.id);
  EXPECT_EQ(stale, std::vector<std::string>{"src/c"});
  q.filter.clear();
  q.evidence_first = true;
  std::vector<std::string> order;
  for (const Offer& o : this->store_->query(q)) order.push_back(o.id);
  // Clean first by price (b 2.5, a 16.0), then the stale c (3.0).
  EXPECT_EQ(order, (std::vector<std::string>{"src/b", "src/a", "src/c"}));
  // The planner's bounded read keeps the K = 1 cheapest clean-dated and the K cheapest other prices
  // per plan class, by the last-seen date: in a and c's class, a (16.0, clean by its last seen) is
  // kept beside the cheaper stale c (3.0); by the first-seen date both were stale and only c kept.
  q.evidence_first = false;
  q.cheapest_per_plan_class = 1;
  on_each_read_plan(this->store_.get(), [&] {
    std::vector<std::string> bounded;
    for (const Offer& o : this->store_->query(q)) bounded.push_back(o.id);
    std::sort(bounded.begin(), bounded.end());
    EXPECT_EQ(bounded, (std::vector<std::string>{"src/a", "src/b", "src/c"}));
  });
}

}  // namespace
}  // namespace gpuplan
