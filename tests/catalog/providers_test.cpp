// Provider billing terms: data/providers.toml parsing, strict errors, effective_billing.
#include <gtest/gtest.h>

#include <string>

#include "catalog/providers.hpp"
#include "util/error.hpp"

namespace gpuplan {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_providers_toml(text, "p.toml");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Providers, BundledTermsHaveSources) {
  const std::vector<ProviderInfo>& all = bundled_providers();
  const ProviderInfo* aws = find_provider(all, "aws");
  ASSERT_NE(aws, nullptr);
  // AWS "What's New" 2017-10-02: Linux instances billed per second with a 60-second minimum.
  EXPECT_EQ(aws->billing.granularity_seconds, 1.0);
  EXPECT_EQ(aws->billing.minimum_billed_seconds, 60.0);
  EXPECT_EQ(aws->billing.preemptions_per_day, std::nullopt);  // not published: unknown
  ASSERT_EQ(aws->billing.sources.size(), 2u);
  EXPECT_NE(aws->billing.sources[0].find("https://aws.amazon.com/"), std::string::npos);
  // Lambda docs: On-Demand instances billed in one-minute increments; no egress charges.
  const ProviderInfo* lambda = find_provider(all, "lambda");
  ASSERT_NE(lambda, nullptr);
  EXPECT_EQ(lambda->billing.granularity_seconds, 60.0);
  EXPECT_EQ(lambda->billing.egress_usd_per_gb, 0.0);
  for (const ProviderInfo& p : all) {
    std::size_t known = 0;
    for (auto v : {p.billing.granularity_seconds, p.billing.minimum_billed_seconds, p.billing.storage_usd_per_gb_month,
                   p.billing.egress_usd_per_gb, p.billing.egress_free_gb_per_month, p.billing.preemptions_per_day})
      known += v.has_value() ? 1 : 0;
    EXPECT_EQ(p.billing.sources.size(), known) << p.id;  // one source per known value
  }
  EXPECT_EQ(find_provider(all, "no-such-cloud"), nullptr);
}

TEST(Providers, OfferOverrideWins) {
  const ProviderInfo* aws = find_provider(bundled_providers(), "aws");
  Offer o;
  o.provider = "aws";
  o.billing_override.granularity_seconds = 3600;
  o.billing_override.sources.push_back("granularity_seconds: capacity block terms (unknown)");
  const BillingTerms t = effective_billing(o, aws);
  EXPECT_EQ(t.granularity_seconds, 3600.0);
  EXPECT_EQ(t.minimum_billed_seconds, 60.0);  // from the provider
  ASSERT_EQ(t.sources.size(), 2u);
  EXPECT_EQ(t.sources[0], "granularity_seconds: capacity block terms (unknown)");
  const BillingTerms none = effective_billing(o, nullptr);
  EXPECT_EQ(none.granularity_seconds, 3600.0);
  EXPECT_EQ(none.minimum_billed_seconds, std::nullopt);
}

TEST(Providers, StrictErrorsNameFileLineColumn) {
  const std::string ok_entry = "value = 1\nsource = \"https://x\"\nseen = \"2026-11-30\"\n";
  EXPECT_EQ(error_of("[providers.a]\nname = \"A\"\n[providers.a.billing.granularity_seconds]\n" + ok_entry),
            "no error");
  // Syntax error on line 2.
  const std::string syntax = error_of("[providers.a]\nname = \n");
  EXPECT_NE(syntax.find("p.toml:2:"), std::string::npos) << syntax;
  // Unknown billing term on line 3.
  const std::string term = error_of("[providers.a]\nname = \"A\"\n[providers.a.billing.hourly_rounding]\n" + ok_entry);
  EXPECT_NE(term.find("p.toml:3:"), std::string::npos) << term;
  EXPECT_NE(term.find("hourly_rounding"), std::string::npos) << term;
  // Missing source.
  const std::string nosrc =
      error_of("[providers.a]\nname = \"A\"\n[providers.a.billing.granularity_seconds]\nvalue = 1\nseen = \"2026-11-30\"\n");
  EXPECT_NE(nosrc.find("source"), std::string::npos) << nosrc;
  // Negative value, bad date, unknown provider key, upper-case id.
  EXPECT_NE(error_of("[providers.a]\nname = \"A\"\n[providers.a.billing.egress_usd_per_gb]\nvalue = -1\nsource = "
                     "\"s\"\nseen = \"2026-11-30\"\n")
                .find("negative"),
            std::string::npos);
  EXPECT_NE(error_of("[providers.a]\nname = \"A\"\n[providers.a.billing.egress_usd_per_gb]\nvalue = 1\nsource = "
                     "\"s\"\nseen = \"last year\"\n")
                .find("not a date"),
            std::string::npos);
  EXPECT_NE(error_of("[providers.a]\nname = \"A\"\ncolour = \"red\"\n").find("p.toml:3:"), std::string::npos);
  EXPECT_NE(error_of("[providers.AWS]\nname = \"A\"\n").find("lower-case"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
