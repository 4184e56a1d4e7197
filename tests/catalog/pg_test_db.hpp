#pragma once
// A fresh PostgreSQL database per test, on the server scripts/with-test-postgres.sh starts
// (make test sets GPUPLAN_TEST_PG_URL = a libpq URI of its admin database). Without the
// variable the PostgreSQL tests skip with a visible message; `make test` always sets it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <pqxx/pqxx>
#include <string>

namespace gpuplan::testing {

inline std::optional<std::string> pg_admin_url() {
  const char* v = std::getenv("GPUPLAN_TEST_PG_URL");
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

inline constexpr const char* kPgSkipMessage =
    "GPUPLAN_TEST_PG_URL is not set: PostgreSQL tests skipped (run `make test`, or "
    "scripts/with-test-postgres.sh ctest)";

/// GPUPLAN_TEST_PG_REQUIRED=1 (CI: .ci/run) turns a missing server into a failure.
inline bool pg_required() {
  const char* v = std::getenv("GPUPLAN_TEST_PG_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

/// In a test body: skip (or, when required, fail) unless the PostgreSQL test server is set.
#define GPUPLAN_REQUIRE_PG(db)                                                                   \
  do {                                                                                           \
    if (!(db).available()) {                                                                     \
      if (::gpuplan::testing::pg_required()) FAIL() << "GPUPLAN_TEST_PG_REQUIRED=1 but " << ::gpuplan::testing::kPgSkipMessage; \
      GTEST_SKIP() << ::gpuplan::testing::kPgSkipMessage;                                        \
    }                                                                                            \
  } while (0)

/// Creates a database named gpuplan_t_<pid>_<n> on construction and drops it on destruction.
class PgTestDb {
 public:
  PgTestDb() {
    admin_ = pg_admin_url();
    if (!admin_) return;
    static std::atomic<int> n{0};
    name_ = "gpuplan_t_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
    pqxx::connection c(*admin_);
    pqxx::nontransaction t(c);
    t.exec("DROP DATABASE IF EXISTS " + t.quote_name(name_));
    t.exec("CREATE DATABASE " + t.quote_name(name_));
  }
  ~PgTestDb() {
    if (!admin_) return;
    try {
      pqxx::connection c(*admin_);
      pqxx::nontransaction t(c);
      t.exec("DROP DATABASE IF EXISTS " + t.quote_name(name_) + " WITH (FORCE)");
    } catch (...) {
    }
  }
  PgTestDb(const PgTestDb&) = delete;
  PgTestDb& operator=(const PgTestDb&) = delete;

  bool available() const { return admin_.has_value(); }
  /// libpq URI of this test's database (the admin URI with its database name replaced).
  std::string url() const { return admin_->substr(0, admin_->rfind('/') + 1) + name_; }
  const std::string& name() const { return name_; }
  std::string admin() const { return *admin_; }

 private:
  std::optional<std::string> admin_;
  std::string name_;
};

}  // namespace gpuplan::testing
