// End-to-end tests of the reserved price kinds with a term (issue 9, "reserved and committed
// capacity ... with their term (weeks, months, years)"), through the built binary on small
// imported catalogs: a plan on a week / 1-, 3- or 6-month commitment bills the whole term even
// when the run is hours long, and an unknown term is refused at file:line naming the kinds.
// Terms (docs/import-format.md): a week of 7 days, months of 730 h (8,760 h / 12).
// The fixture prices are invented (test fixtures, not market data).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;
using nlohmann::json;
namespace fs = std::filesystem;

class ReservedTermsE2E : public BinaryE2E<ReservedTermsE2E> {
 public:
  static constexpr const char* kName = "reserved-terms";
  static RunResult import_rows(const std::string& db, const std::string& rows) {
    const fs::path csv = dir_ / (db + ".csv");
    std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source,"
                          "interconnect,network,network_gbps,max_nodes\n"
                       << rows;
    return run_db(db, "import '" + csv.string() + "'");
  }
};

// One 8×H100 node priced at $2/GPU-h = $16/h per node, only under the commitment `kind`; a
// LoRA run of 2e7 tokens on one node lasts hours, so the bill is the whole term:
// $16/h × term hours.
TEST_F(ReservedTermsE2E, AShortRunOnACommitmentBillsTheWholeTerm) {
  const struct {
    const char* kind;
    double term_hours;
  } cases[] = {{"reserved-1w", 7 * 24.0}, {"reserved-1m", 730.0}, {"reserved-3m", 3 * 730.0}, {"reserved-6m", 6 * 730.0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind);
    const std::string db = std::string(c.kind) + ".sqlite";
    const RunResult imp = import_rows(
        db, std::string("examplecloud,hgx-h100-8x,us-west,H100 SXM,8,") + c.kind +
                ",2.00,2026-11-02,test fixture,nvlink,infiniband,3200,4\n");
    ASSERT_EQ(imp.exit_code, 0) << imp.out;
    const RunResult r = run_db(db,
                               "plan --model llama-3.1-8b --task lora --tokens 2e7 --nodes 1 'provider=examplecloud' "
                               "--today 2026-11-30 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 2000);
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 2000);
    ASSERT_FALSE(j["plans"].empty()) << r.out.substr(0, 2000);
    const json& p = j["plans"][0];
    const json& cost = p["cost"];
    EXPECT_EQ(cost["price_kind"], c.kind);
    EXPECT_LT(cost["run_seconds"].get<double>(), 24 * 3600.0);  // hours of work, not the term
    EXPECT_NEAR(cost["billed_seconds"].get<double>(), c.term_hours * 3600.0, 1e-6);
    EXPECT_NEAR(cost["compute_usd"].get<double>(), 16.0 * c.term_hours, 1e-6);
    bool said = false;
    for (const json& w : p["warnings"])
      if (w["code"] == "reserved_commitment") said = true;
    EXPECT_TRUE(said) << p["warnings"].dump();
  }
}

TEST_F(ReservedTermsE2E, AnUnknownTermIsRefusedAtItsLineNamingTheKinds) {
  const RunResult imp = import_rows(
      "bad.sqlite", "examplecloud,hgx-h100-8x,us-west,H100 SXM,8,reserved-2w,2.00,2026-11-02,test fixture,nvlink,,,\n");
  EXPECT_EQ(imp.exit_code, 2) << imp.out;
  EXPECT_NE(imp.out.find("bad.sqlite.csv:2"), std::string::npos) << imp.out;
  EXPECT_NE(imp.out.find("reserved-2w"), std::string::npos) << imp.out;
  for (const char* k : {"reserved-1w", "reserved-3m", "reserved-6m"})
    EXPECT_NE(imp.out.find(k), std::string::npos) << k << "\n" << imp.out;
}

}  // namespace
