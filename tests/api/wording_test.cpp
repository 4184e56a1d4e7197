// The API's words (issue 10, trial 9): the JSON API answers a client that cannot pass CLI flags,
// so its error texts and its documents' prose name JSON fields (api_wording, api_worded).
// Expected strings are written by hand from the naming rule of api/fields.hpp
// (name = flag without "--", '-' → '_').
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/fields.hpp"

namespace gpuplan::api {
namespace {

using nlohmann::json;

TEST(ApiWording, FlagsBecomeFieldNamesAndQuotedTextStays) {
  EXPECT_EQ(api_wording("a budget of at least $255 (--budget 255)"), "a budget of at least $255 (budget 255)");
  EXPECT_EQ(api_wording("--include-flagged ranks them together; --max-price-age changes the limit"),
            "include_flagged ranks them together; max_price_age changes the limit");
  EXPECT_EQ(api_wording("(all in --json: warnings[].values.gpus)"), "(all in the JSON: warnings[].values.gpus)");
  EXPECT_EQ(api_wording("see `gpuplan models`"), "see GET /api/models");
  // The client's own text, in quotes, is left as written; so is a dash inside a word.
  EXPECT_EQ(api_wording("filter 'name=--x' is odd; pre--post"), "filter 'name=--x' is odd; pre--post");
}

// The scan copies the runs between the characters that can start a rewording or a quote whole
// (perf10): each rule still applies where the run ends, and only there. Expected strings by hand.
TEST(ApiWording, EveryRuleAppliesBetweenPlainRuns) {
  // "positional NAME" anywhere in a sentence, after words holding 'p' that are not it.
  EXPECT_EQ(api_wording("pass the plan's positional NAME or --model"), "pass the plan's name or model");
  // An apostrophe inside a word does not open a quote: the flag after it is reworded.
  EXPECT_EQ(api_wording("can't use --tp here"), "can't use tp here");
  // An apostrophe after a space does: the flag inside stays, the one after the closing quote not.
  EXPECT_EQ(api_wording("got '--tp 3' from --tp"), "got '--tp 3' from tp");
  // A quote never closed keeps the rest as written.
  EXPECT_EQ(api_wording("bad \"--gpus 3 `gpuplan gpus`"), "bad \"--gpus 3 `gpuplan gpus`");
  // A back-quote that is not a known command, then one that is; a flag at the very end.
  EXPECT_EQ(api_wording("`x` then `gpuplan offers` then --no-spot"), "`x` then GET /api/offers then no_spot");
  EXPECT_EQ(api_wording("`gpuplan gpus`"), "GET /api/gpus");
  EXPECT_EQ(api_wording(""), "");
  EXPECT_EQ(api_wording("plain text, no flag"), "plain text, no flag");
}

TEST(ApiWording, WordedDocumentChangesProseOnly) {
  const json cli = {
      {"filter", "gpus>=8 --not-a-flag"},  // an echo of the request: not prose, unchanged
      {"warnings", {{{"code", "spot_rate_unknown"}, {"message", "spot not planned (--preemptions-per-day plans it)"}}}},
      {"no_plan", {{"reason", "--seq 2000000 exceeds the context"}, {"suggestions", {"QLoRA (--task qlora)", "more nodes (--max-nodes)"}}}},
      {"explain", {{{"term", "step"}, {"formula", "work × 0.05 (--eval-fraction)"}, {"source", "--mfu replaces the modelled step time"}}}},
      {"price_source", {{"source", "https://example.test/a--b"}}},  // not an explanation line: unchanged
      {"recommendation_rule", "its 16 nodes are assumed (ask the provider; --max-nodes caps the count)"},
      {"total_usd", 12.5}};
  const json api = api_worded(cli);
  EXPECT_EQ(api["filter"], cli["filter"]);
  EXPECT_EQ(api["warnings"][0]["message"], "spot not planned (preemptions_per_day plans it)");
  EXPECT_EQ(api["warnings"][0]["code"], "spot_rate_unknown");
  EXPECT_EQ(api["no_plan"]["reason"], "seq 2000000 exceeds the context");
  EXPECT_EQ(api["no_plan"]["suggestions"], json({"QLoRA (task qlora)", "more nodes (max_nodes)"}));
  EXPECT_EQ(api["explain"][0]["formula"], "work × 0.05 (eval_fraction)");
  EXPECT_EQ(api["explain"][0]["source"], "mfu replaces the modelled step time");
  EXPECT_EQ(api["price_source"], cli["price_source"]);
  EXPECT_EQ(api["total_usd"], 12.5);
  // Trial 10: the recommendation line named --max-nodes in the API.
  EXPECT_EQ(api["recommendation_rule"], "its 16 nodes are assumed (ask the provider; max_nodes caps the count)");
}

}  // namespace
}  // namespace gpuplan::api
