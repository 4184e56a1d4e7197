// `gpuplan ask "SENTENCE" [--json]`: the sizing assistant (api/assistant.hpp). Prints what it
// understood (each field with the words it came from), what is still missing, and — when nothing
// is missing — the ranked plans for that request, marking the first within the budget and deadline.
// Exit 0 with plans, 1 when no plan (as `gpuplan plan`), 2 when fields are missing.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "api/assistant.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {

struct AskOptions {
  std::vector<std::string> words;
  bool json = false;
  std::string today;
  std::size_t limit = 5;
};

void run_ask(const AskOptions& o, GlobalOptions& global) {
  std::string sentence;
  for (const auto& w : o.words) sentence += (sentence.empty() ? "" : " ") + w;
  if (sentence.empty()) throw_invalid("SENTENCE", "nothing to read", "a sentence such as \"fine-tune llama 3.1 8b with lora on 100M tokens\"");
  const api::Context ctx = make_context(global);
  const api::AskResult ask = api::understand(sentence, ctx.gpus());
  nlohmann::json out = {{"understood", api::to_json(ask)}};
  std::optional<api::PlanOutput> planned;
  if (ask.missing.empty()) {
    api::PlanInput in;
    nlohmann::json body = ask.plan_body();
    body["limit"] = o.limit;
    if (!o.today.empty()) body["today"] = o.today;
    api::read_fields(in, body, api::plan_fields());
    planned = api::run_plan(in, ctx);
    out["plan"] = api::to_json(*planned);
    const auto within = api::first_plan_within(ask, planned->result);
    out["first_within_budget_and_deadline"] = within ? nlohmann::json(*within + 1) : nlohmann::json(nullptr);
  }
  global.exit_code = !ask.missing.empty() ? 2 : (planned && planned->result.no_plan ? 1 : 0);
  if (o.json) {
    fmt::print("{}\n", dump_json(out));
    return;
  }
  fmt::print("Understood ({}):\n", ask.language);
  for (const auto& f : ask.fields)
    fmt::print("  {:<17} {:<22} from \"{}\"\n", f.name, f.value.is_string() ? f.value.get<std::string>() : f.value.dump(), f.source);
  if (ask.fields.empty()) fmt::print("  nothing\n");
  if (!ask.missing.empty()) {
    std::string m;
    for (const auto& x : ask.missing) m += (m.empty() ? "" : ", ") + x;
    fmt::print("Missing: {} (say it in the sentence, or run gpuplan plan with the flags)\n", m);
    return;
  }
  const PlanResult& res = planned->result;
  if (res.no_plan) {
    fmt::print("No plan: {}\n", res.no_plan->reason);
    return;
  }
  for (std::size_t i = 0; i < res.plans.size(); ++i) {
    const Plan& p = res.plans[i];
    fmt::print("  #{} {} {} × {} ({}×{}): ${:.2f}, {:.1f} h\n", i + 1, p.provider, p.instance_type, p.instances, p.gpus_per_instance,
               p.gpu_name, p.total_usd(), p.time_seconds() / 3600);
  }
  if (ask.budget_usd || ask.deadline_seconds) {
    const auto within = api::first_plan_within(ask, res);
    if (within) {
      fmt::print("Plan #{} is the first within the budget and deadline.\n", *within + 1);
    } else {
      fmt::print("No plan shown meets both the budget and the deadline.\n");
    }
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
      sub.add_option("--limit", o->limit, "plans printed")->capture_default_str();
      sub.callback([o, &global] { run_ask(*o, global); });
    }});

}  // namespace
}  // namespace gpuplan::cli
