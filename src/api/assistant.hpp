#pragma once
/// Application layer (api): the sizing assistant's reader (`gpuplan ask "..."`, the /assistant
/// page). A deterministic grammar of the field's terms in English, French and Thai turns one
/// sentence into plan fields: the model (a bundled preset's name, spaces/dots/hyphens ignored),
/// the task (fine-tune / LoRA / QLoRA / pre-train / serve / images and their FR/TH words), token
/// counts ("200M tokens", "2 milliards de jetons", "200 ล้านโทเคน"), request rates, a budget in
/// USD ("under $500", "moins de 500 $", "ไม่เกิน 500 ดอลลาร์"), a deadline ("within two days",
/// "en 48 heures", "ภายใน 2 วัน") and GPU names. It records only what it read, with the words it
/// read it from; what the plan needs and the sentence does not say is listed as missing, never
/// guessed. Budget and deadline become the plan's `budget` and `deadline` constraints: only plans
/// within both are ranked (as `gpuplan plan --budget --deadline`).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/plan.hpp"
#include "hardware/gpu_spec.hpp"

namespace gpuplan::api {

struct UnderstoodField {
  std::string name;      ///< a plan field name ("model", "task", "tokens", "rps", "filter", "params", "tpot_ms",
                         ///< "ttft_ms") or "budget_usd", "deadline_seconds", "budget_eur", "budget_thb"
  nlohmann::json value;  ///< as the plan field takes it
  std::string source;    ///< the words it was read from, the mark before the number included
  /// The sentence's mark on the number: "≥" ("at least", "au moins", "อย่างน้อย", ">="), "≈"
  /// ("about", "~", "environ", "ประมาณ") or "≤" ("at most", "under", "moins de", "ไม่เกิน",
  /// "within"), "" when none. The value is the number as written; the planner takes token counts
  /// and rates as they are and a budget or deadline as the limit.
  std::string mark;
  /// Why a field that was read does not go to the planner ("" = it does): "no_plan_field" (the
  /// planner has no such field yet: tpot_ms/ttft_ms before `gpuplan plan --tpot-ms`), "currency"
  /// (a budget in euros or baht: prices are in US dollars and gpuplan keeps no exchange rate),
  /// "not_for_task" (the task read does not use it: "2000 tokens" in a serving sentence).
  std::string not_used;
};

/// A field the sentence gives twice, differently ("llama 3.1 8B ... llama 3.1 70B", "$500 ...
/// $800", "in 2 days ... within 5 hours"): `readings` in the sentence's words, the first is the
/// one used; the answer says so instead of picking one silently.
struct AmbiguousField {
  std::string name;                   ///< the field, as in UnderstoodField::name
  std::vector<std::string> readings;  ///< what the sentence said, in order (used one first)
};

/// A name in the sentence that begins several presets' names and is none of them ("mistral 7b":
/// mistral-7b-v0.1 and mistral-7b-instruct-v0.3, whose configs differ): the model stays missing
/// and the answer lists the presets to choose from, never picks one.
struct ModelCandidates {
  std::string words;                 ///< as the sentence wrote them (lower case)
  std::vector<std::string> presets;  ///< the presets' short names, in the catalog's order
};

struct AskResult {
  std::string language;                  ///< "en", "fr" or "th": the sentence's language as guessed from its words
  std::vector<UnderstoodField> fields;   ///< in reading order, one per name
  std::vector<std::string> missing;      ///< field names the plan still needs ("model", "tokens", "rps", ...)
  std::vector<AmbiguousField> ambiguous;  ///< fields the sentence gives twice, differently
  std::optional<ModelCandidates> model_candidates;  ///< a model name that names several presets
  /// Numbers of the sentence that no field read, each with the word before and after it as
  /// written ("seq 8192" when the reader did not know the phrase): said, never silently dropped.
  std::vector<std::string> unread;
  std::optional<double> budget_usd;      ///< total budget, when read
  std::optional<double> deadline_seconds;  ///< finish within, when read
  /// The plan fields as a JSON body (POST /api/plan): exactly the fields read, the budget as
  /// `budget` (USD) and the deadline as `deadline` ("172800s").
  nlohmann::json plan_body() const;
};

/// "en", "fr" or "th": the sentence's language as understand() guesses it (AskResult::language),
/// for wording an error understand() threw.
std::string sentence_language(std::string_view sentence);

/// Reads one sentence. Never throws for unparsed words (they are simply not fields). `today`
/// (YYYY-MM-DD, the clock's date or --today) dates "by Friday" and "by end of month"; without it
/// those words are listed as unread.
AskResult understand(std::string_view sentence, const GpuCatalog& gpus, std::string_view today = {});

/// The ranked plans' numbers checked against the budget and deadline: the first plan (in the
/// plan's order) that meets both, or nullopt (then no plan meets them).
std::optional<std::size_t> first_plan_within(const AskResult& ask, const PlanResult& result);

/// The locale key of the sentence that reports first_plan_within: "within_yes" / "within_no"
/// when the sentence set a budget in USD and a deadline, with "_budget" or "_deadline" when it set
/// only that one (a budget in another currency is read but not used, so it is not claimed), and
/// "" when it set neither (nothing to report).
std::string within_text_key(const AskResult& ask, bool found);

nlohmann::json to_json(const AskResult& ask);

}  // namespace gpuplan::api
