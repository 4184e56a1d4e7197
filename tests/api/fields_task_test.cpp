// Fields of another task (issue 11, trial 7: `size --task lora --quant int4` was sized as if
// --quant had not been typed): the tables say which tasks read each field, the readers record
// which fields were given, and check_fields_for_task refuses a given field the task does not read.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "api/catalog_reads.hpp"
#include "api/estimate.hpp"
#include "api/fields.hpp"
#include "api/plan.hpp"
#include "api/size.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"

namespace gpuplan::api {
namespace {

using nlohmann::json;

/// The error check_fields_for_task throws for `given` with `task` on `table` ("where | code | message |
/// expected"); "" when none.
template <class In>
std::string refusal(std::span<const FieldDef<In>> table, const std::set<std::string>& given, const std::string& task) {
  try {
    check_fields_for_task(given, table, task);
  } catch (const Error& e) {
    const ErrorCode* c = error_code_of(e);
    return e.where() + " | " + (c ? c->code : std::string("uncoded")) + " | " + e.message() + " | " + e.expected();
  }
  return "";
}

TEST(TaskFields, AServingFieldWithATrainingTaskIsRefusedNamingItsFlag) {
  EXPECT_EQ(refusal(size_fields(), {"concurrency"}, "lora"),
            "--concurrency | field_not_for_task | --concurrency is a serving option; --task lora does not use it | "
            "drop it, or --task serve");
  EXPECT_EQ(refusal(size_fields(), {"concurrency"}, "serve"), "");
  EXPECT_EQ(refusal(size_fields(), {"lora_rank"}, "qlora"), "");
  EXPECT_EQ(refusal(size_fields(), {"lora_rank"}, "pretrain"),
            "--lora-rank | field_not_for_task | --lora-rank is a LoRA option (lora, qlora); --task pretrain does not use it | "
            "drop it, or --task lora or qlora");
  // An unknown task checks nothing: its own parser names it.
  EXPECT_EQ(refusal(size_fields(), {"concurrency"}, "lorra"), "");
  // Fields every task reads.
  EXPECT_EQ(refusal(size_fields(), {"model", "task", "gpus", "tp", "pp", "margin", "explain"}, "serve"), "");
  EXPECT_EQ(refusal(size_fields(), {"model", "task", "gpus", "tp", "pp", "margin", "explain"}, "full"), "");
}

TEST(TaskFields, PlanReadsQuantForServingAndImages) {
  EXPECT_EQ(refusal(plan_fields(), {"quant"}, "serve"), "");
  EXPECT_EQ(refusal(plan_fields(), {"quant"}, "images"), "");
  EXPECT_EQ(refusal(plan_fields(), {"quant"}, "image"), "");  // plan's other spelling of images
  EXPECT_EQ(refusal(plan_fields(), {"quant"}, "lora"),
            "--quant | field_not_for_task | --quant is an option of --task serve and images; --task lora does not use it | "
            "drop it, or --task serve or images (4-bit weights while training: --task qlora)");
  EXPECT_EQ(refusal(plan_fields(), {"kv_dtype"}, "images"),
            "--kv-dtype | field_not_for_task | --kv-dtype is a serving option; --task images does not use it | "
            "drop it, or --task serve");
  EXPECT_EQ(refusal(plan_fields(), {"width"}, "serve"),
            "--width | field_not_for_task | --width is an image-generation option; --task serve does not use it | "
            "drop it, or --task images");
  // The pins: tp for training and serving, the rest for training only.
  EXPECT_EQ(refusal(plan_fields(), {"tp"}, "serve"), "");
  EXPECT_EQ(refusal(plan_fields(), {"pp"}, "serve").substr(0, 24), "--pp | field_not_for_tas");
  // The first given field in table order is named.
  EXPECT_EQ(refusal(plan_fields(), {"rps", "tokens"}, "images").substr(0, 9), "--tokens ");
  // Fields of every task (offers' filter, billing, constraints).
  EXPECT_EQ(refusal(plan_fields(), {"filter", "budget", "deadline", "gpus", "nodes", "max_nodes", "restart_seconds",
                                    "startup_minutes", "egress_gb", "margin", "stale_days"},
                    "images"),
            "");
  // Spot is planned for training only (trial50 #7: --preemptions-per-day on a service was read and ignored).
  EXPECT_EQ(refusal(plan_fields(), {"preemptions_per_day"}, "serve"),
            "--preemptions-per-day | field_not_for_task | --preemptions-per-day is a training option; --task serve does not "
            "use it | drop it, or --task pretrain, full, lora or qlora");
  EXPECT_EQ(refusal(plan_fields(), {"preemptions_per_day"}, "qlora"), "");
}

// small11 #1: stale_days and max_price_age are one limit; both in one body or query string were
// read, the later silently winning. Refused at /stale_days (plan and offers alike).
TEST(AliasFields, OneLimitUnderTwoNamesIsRefusedAtTheAlias) {
  auto refused_at = [](auto read) -> std::string {
    try {
      read();
    } catch (const Error& e) {
      const ErrorCode* c = error_code_of(e);
      return e.where() + " | " + (c ? c->code : std::string("?"));
    }
    return "";
  };
  EXPECT_EQ(refused_at([] {
              PlanInput in;
              read_fields(in, json{{"model", "llama-3.1-8b"}, {"stale_days", 3}, {"max_price_age", "10d"}}, plan_fields());
            }),
            "/stale_days | both_given");
  EXPECT_EQ(refused_at([] {
              PlanInput in;
              read_query(in, {{"max_price_age", "10"}, {"stale_days", "3"}}, plan_fields());
            }),
            "/stale_days | both_given");
  EXPECT_EQ(refused_at([] {
              OffersInput in;
              read_query(in, {{"max_price_age", "10d"}, {"stale_days", "3"}}, offers_fields());
            }),
            "/stale_days | both_given");
  EXPECT_EQ(refused_at([] {
              OffersInput in;
              read_fields(in, json{{"stale_days", 3}}, offers_fields());
            }),
            "");
}

// small11 #3: a bare number for a duration field is read in the field's unit (deadline: hours;
// max_price_age: days), as the CLI reads "72" and the planner's advice writes "max_price_age 192".
TEST(DurationFields, ABareNumberIsTheFieldsUnit) {
  PlanInput in;
  read_fields(in, json{{"model", "llama-3.1-8b"}, {"deadline", 72}, {"max_price_age", 192}}, plan_fields());
  EXPECT_EQ(in.deadline, "72");
  EXPECT_EQ(in.max_price_age, "192");
  OffersInput offers;
  read_fields(offers, json{{"max_price_age", 1.5}}, offers_fields());
  EXPECT_DOUBLE_EQ(offers.stale_days, 1.5);  // 1.5 days
  read_fields(offers, json{{"max_price_age", "2w"}}, offers_fields());
  EXPECT_DOUBLE_EQ(offers.stale_days, 14);
  PlanInput wrong;
  EXPECT_THROW(read_fields(wrong, json{{"deadline", json::array()}}, plan_fields()), Error);
  EXPECT_EQ(duration_text(json(72)), "72");
  EXPECT_EQ(duration_text(json(0.5)), "0.5");
  EXPECT_EQ(duration_text(json("30d")), "30d");
}

TEST(TaskFields, ReadersRecordTheFieldsGivenNotTheDefaults) {
  SizeInput in;
  read_fields(in, json{{"model", "llama-3.1-8b"}, {"task", "lora"}, {"quant", "bf16"}}, size_fields());
  EXPECT_EQ(in.given, (std::set<std::string>{"model", "task", "quant"}));  // bf16 is the default, typed
  PlanInput q;
  read_query(q, {{"model", "llama-3.1-8b"}, {"stale_days", "7"}}, plan_fields());
  EXPECT_EQ(q.given, (std::set<std::string>{"model", "stale_days"}));
  SizeInput none;
  EXPECT_TRUE(none.given.empty());
}

TEST(TaskFields, EveryFieldIsReadBySomeTask) {
  for (const auto& t : request_tables())
    for (const FieldInfo& f : t.fields) EXPECT_NE(f.tasks & task_bits::all, 0u) << t.request << " " << f.name;
}

}  // namespace
}  // namespace gpuplan::api
