// `gpuplan ask "SENTENCE" [--json]`: the sizing assistant (api/assistant.hpp). Prints what it
// understood (each field with the words it came from), what is still missing, and — when nothing
// is missing — the ranked plans for that request, marking the first within the budget and deadline.
// Exit 0 with plans, 1 when no plan (as `gpuplan plan`), 2 when fields are missing (then stderr
// says which: "gpuplan: error: SENTENCE: ..."). It answers in the sentence's language (English,
// French or Thai: the texts of web/locales, numbers and money as that language writes them).
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "api/assistant.hpp"
#include "api/fields.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "server/pages.hpp"
#include "util/display_width.hpp"
#include "util/error.hpp"
#include "util/error_code.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

struct AskOptions {
  std::vector<std::string> words;
  bool json = false;
  std::string today;
  std::size_t limit = 5;
};

/// "missing: training tokens (say it in the sentence, ...)" in the sentence's language.
std::string missing_text(const api::AskResult& ask) {
  const nlohmann::json& t = server::locale_texts(ask.language);
  std::string names;
  for (const auto& m : ask.missing) names += (names.empty() ? "" : ", ") + t.value("field_" + m, m);
  return server::fill_text(t.value("cli_ask_missing", "missing: {fields}"), {{"fields", names}});
}

/// A value the sentence gave that the planner refuses (a trial's "-3 days" was answered with
/// "--deadline: -259200 is not a positive number", a flag and a unit the user never wrote): the
/// error names the field in the sentence's language and quotes the words it was read from.
/// Returns when the error is not about a field the sentence gave.
void refuse_in_sentence_terms(const Error& e, const api::AskResult& ask) {
  if (e.kind() != ErrorKind::invalid_input) return;
  const std::string field = api::api_field_of(e);  // "/deadline", "/tokens", ...
  for (const auto& f : ask.fields) {
    const std::string plan_name = f.name == "deadline_seconds" ? "deadline" : f.name == "budget_usd" ? "budget" : f.name;
    if ("/" + plan_name != field) continue;
    const nlohmann::json& t = server::locale_texts(ask.language);
    const auto* coded = dynamic_cast<const ErrorCode*>(&e);
    // The planner's reason in the sentence's language when the locales have it, as the /assistant
    // page says it (a trial: "100 users at 2 requests per second" was refused without a reason;
    // the page said "rps or users, not both").
    std::string reason;
    if (coded && coded->code != "not_positive" && t.contains("error_" + coded->code)) {
      std::map<std::string, std::string> vars = coded->values;
      for (auto& [k, v] : vars)
        if (k.ends_with("_field")) v = t.value("field_" + v, v);
      reason = server::fill_text(t.value("error_" + coded->code, ""), vars);
    }
    const std::string why_key = coded && coded->code == "not_positive" ? "cli_ask_refused_not_positive"
                                : reason.empty()                       ? "cli_ask_refused_other"
                                                                       : "cli_ask_refused_because";
    throw_invalid("SENTENCE",
                  server::fill_text(t.value(why_key, ""), {{"field", t.value("field_" + f.name, f.name)}, {"words", f.source}, {"reason", reason}}),
                  t.value("cli_ask_refused_expected", ""));
  }
}

void run_ask(const AskOptions& o, GlobalOptions& global) {
  std::string sentence;
  for (const auto& w : o.words) sentence += (sentence.empty() ? "" : " ") + w;
  // Only spaces is nothing to read too (trial46: "   " was answered "does not say: model, task").
  if (sentence.find_first_not_of(" \t\r\n") == std::string::npos) throw_invalid("SENTENCE", "nothing to read", "a sentence such as \"fine-tune llama 3.1 8b with lora on 100M tokens\"");
  const api::Context ctx = make_context(global);
  const api::AskResult ask = [&] {
    try {
      return api::understand(sentence, ctx.gpus(), o.today.empty() ? ctx.clock().today() : o.today);
    } catch (const Error& e) {
      // A value refused in the sentence (question_value_not_positive, question_budget_too_large,
      // ...): worded in the sentence's language, quoting its words, as the /assistant page says it.
      const ErrorCode* coded = error_code_of(e);
      const nlohmann::json& t = server::locale_texts(api::sentence_language(sentence));
      if (coded == nullptr || !t.contains("error_" + coded->code)) throw;
      std::map<std::string, std::string> vars = coded->values;
      const std::string lang = api::sentence_language(sentence);
      for (auto& [k, v] : vars) {
        if (k.ends_with("_field")) v = t.value("field_" + v, v);
        if (k == "max") v = server::locale_count(std::stod(v), lang);  // a bound the server wrote, digits only
      }
      // A byte that is not text is no value to change: the engine's expectation (UTF-8 text).
      throw_invalid("SENTENCE", server::fill_text(t.value("error_" + coded->code, ""), vars),
                    coded->code == "text_not_clean" ? e.expected() : t.value("cli_ask_refused_expected", ""));
    }
  }();
  nlohmann::json out = {{"understood", api::to_json(ask)}};
  std::optional<api::PlanOutput> planned;
  if (ask.missing.empty()) {
    api::PlanInput in;
    nlohmann::json body = ask.plan_body();
    body["limit"] = o.limit;
    if (!o.today.empty()) body["today"] = o.today;
    try {
      api::read_fields(in, body, api::plan_fields());
      planned = api::run_plan(in, ctx);
    } catch (const Error& e) {
      refuse_in_sentence_terms(e, ask);
      throw;
    }
    out["plan"] = api::to_json(*planned);
    const auto within = api::first_plan_within(ask, planned->result);
    out["first_within_budget_and_deadline"] = within ? nlohmann::json(*within + 1) : nlohmann::json(nullptr);
  }
  global.exit_code = !ask.missing.empty() ? 2 : (planned && planned->result.no_plan ? 1 : 0);
  if (o.json) {
    fmt::print("{}\n", dump_json(out));
    if (!ask.missing.empty()) fmt::print(stderr, "gpuplan: error: SENTENCE: {}\n", missing_text(ask));
    return;
  }
  // The answer in the question's language (web/locales cli_ask_*, field_*), numbers as it writes them.
  const std::string& lang = ask.language;
  const nlohmann::json& t = server::locale_texts(lang);
  fmt::print("{}\n", server::fill_text(t.value("cli_ask_understood", "Understood ({language}):"),
                                       {{"language", t.value("language_name", lang)}}));
  for (const auto& f : ask.fields) {
    std::string shown = api::field_value_text(f.value);
    if (f.name == "task") shown = t.value("task_" + shown, shown);  // "service (inférence)"
    if (f.name == "budget_usd") shown = server::locale_money(f.value.get<double>(), lang);
    else if (f.name == "deadline_seconds") shown = server::locale_duration(f.value.get<double>(), lang);
    else if (f.name == "hours") shown = server::locale_duration(f.value.get<double>() * 3600.0, lang);
    else if (f.value.is_number()) shown = server::locale_count(f.value, lang);  // an integer with every digit
    else if (f.value.is_boolean()) shown = t.value(f.value.get<bool>() ? "bool_true" : "bool_false", shown);
    if (f.name == "budget_eur") shown += " EUR";
    if (f.name == "budget_thb") shown += " THB";
    if (f.name == "tpot_ms" || f.name == "ttft_ms") shown += " ms";
    if (!f.mark.empty()) shown = f.mark + " " + shown;  // "≥", "≈", "≤" as the sentence said
    if (!f.not_used.empty()) shown += " (" + t.value("ask_not_used_" + f.not_used, f.not_used) + ")";
    // Padded by display columns (util/display_width.hpp): fmt's {:<28} counts Thai marks as columns.
    fmt::print("  {} {} ← \"{}\"\n", pad_to_width(t.value("field_" + f.name, f.name), 28), pad_to_width(shown, 22), f.source);
  }
  if (ask.fields.empty()) fmt::print("  {}\n", t.value("understood_nothing", "nothing"));
  for (const auto& a : ask.ambiguous) fmt::print("  {}\n", server::ambiguous_text(a, lang));
  if (ask.model_candidates) fmt::print("  {}\n", server::model_candidates_text(*ask.model_candidates, lang));
  if (!ask.unread.empty()) fmt::print("  {}\n", server::unread_text(ask.unread, lang));
  if (!ask.missing.empty()) {
    // Unanswerable as asked: say what is missing, on stderr, and exit 2.
    fmt::print(stderr, "gpuplan: error: SENTENCE: {}\n", missing_text(ask));
    return;
  }
  const PlanResult& res = planned->result;
  if (res.no_plan) {
    const server::NoPlanWords words = server::no_plan_words(*res.no_plan, lang);
    fmt::print("{}: {}\n", t.value("no_plan", "No plan"), words.reason);
    for (const auto& s : words.suggestions) fmt::print("  - {}\n", s);
    for (const std::string& line : server::warning_lines(out["plan"].value("warnings", nlohmann::json::array()), lang))
      fmt::print("  {}\n", line);
    return;
  }
  // The marks `gpuplan plan` shows (trial of issue 10: ask showed none): R recommended, the price
  // evidence (~ stale, ? undated, ! flagged; Plan::demotion_tier) and ≥ when storage or egress
  // has no price (the total is a lower bound); a legend when any is shown.
  bool evidence_marked = false, lower_bound = false, recommended = false;
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    const Plan& p = res.plans[i];
    const char* mark = p.demotion_tier == 1 ? "~" : p.demotion_tier == 2 ? "?" : p.demotion_tier == 3 ? "!" : "";
    evidence_marked |= *mark != '\0';
    lower_bound |= p.cost.total_is_lower_bound();
    recommended |= p.recommended;
    fmt::print("  #{}{}{} {} {} × {} ({}×{}): {}{}, {}\n", i + 1, p.recommended ? "R" : "", mark, p.provider, p.instance_type,
               p.instances, p.gpus_per_instance, p.gpu_name, p.cost.total_is_lower_bound() ? "≥" : "",
               server::locale_money(p.total_usd(), lang), server::locale_duration(p.time_seconds(), lang));
  }
  // The plan's warnings, as `gpuplan plan` prints them for the same request (the whole result's,
  // then each listed plan's, numbered), in the sentence's language; the per-plan notes `plan`
  // only counts (undated price, billing assumed, ...) are left to `gpuplan plan`.
  const nlohmann::json& plan_doc = out["plan"];
  for (const std::string& line : server::warning_lines(plan_doc.value("warnings", nlohmann::json::array()), lang))
    fmt::print("  {}\n", line);
  for (std::size_t i = 0; i < plan_doc["plans"].size(); ++i) {
    nlohmann::json shown = nlohmann::json::array();
    for (const auto& w : plan_doc["plans"][i].value("warnings", nlohmann::json::array())) {
      const std::string code = w.value("code", "");
      if (code == "billing_assumption" || code == "price_date_unknown" || code == "not_confirmed_available" ||
          code == "link_assumed")
        continue;
      shown.push_back(w);
    }
    for (const std::string& line : server::warning_lines(shown, lang)) fmt::print("  #{} {}\n", i + 1, line);
  }
  if (recommended) fmt::print("  {}\n", t.value("cli_ask_mark_recommended", ""));
  if (evidence_marked)
    fmt::print("  {}\n", server::fill_text(t.value("cli_ask_mark_evidence", ""),
                                            {{"days", server::locale_count(planned->request.stale_after_days, lang)}}));
  if (lower_bound) fmt::print("  {}\n", t.value("cli_ask_mark_lower_bound", ""));
  // Serving without a duration in the sentence: the plan priced --hours' default (720 h = 30
  // days); say so, as the total depends on it.
  const bool hours_said = std::any_of(ask.fields.begin(), ask.fields.end(), [](const auto& f) { return f.name == "hours"; });
  if (planned->request.workload == PlanWorkload::serving && !hours_said)
    fmt::print("  {}\n", server::fill_text(t.value("cli_ask_hours_assumed", ""),
                                            {{"duration", server::locale_duration(planned->request.hours * 3600.0, lang)}}));
  if (ask.budget_usd || ask.deadline_seconds) {
    const auto within = api::first_plan_within(ask, res);
    const std::string key = api::within_text_key(ask, within.has_value());
    if (!key.empty())
      fmt::print("{}\n", server::fill_text(t.value(key, ""), {{"rank", within ? std::to_string(*within + 1) : ""}}));
  }
}

GPUPLAN_REGISTER_COMMAND(Command{
    "ask", "describe the job in a sentence (English, French or Thai); gpuplan reads it and plans it",
    [](CLI::App& sub, GlobalOptions& global) {
      auto o = std::make_shared<AskOptions>();
      sub.add_option("sentence", o->words, "e.g. \"fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500\"")
          ->required();
      sub.add_flag("--json", o->json, "print JSON: understood fields, missing ones, and the plan");
      sub.add_option("--today", o->today, "today's date YYYY-MM-DD for staleness (default: the system clock)");
      sub.add_option("--limit", o->limit, "plans printed")->capture_default_str()
          ->check(non_negative_count_check());
      sub.callback([o, &global] { run_ask(*o, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
