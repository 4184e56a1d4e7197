// `gpuplan estimate --model M --task T --gpu G --gpus N [layout] --tokens T`: times a training
// run the user specifies (GPU model × count × layout) without the offer catalog. The same
// search, step-time and goodput code as `gpuplan plan` (planner::estimate_run), so the numbers
// for the same cluster and layout are equal. No price. Computes no numbers itself: thin over the
// api layer (api/estimate.hpp: the flags are api::estimate_fields(), the fields of
// POST /api/estimate; --json is api::to_json); this file renders text.
//
// Exit codes: 0 estimated; 1 no layout fits the memory (the reason is printed); 2 bad input.
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/estimate.hpp"
#include "cli/api_flags.hpp"
#include "cli/command.hpp"
#include "cli/common.hpp"
#include "cli/plan_render.hpp"
#include "planner/planner.hpp"
#include "util/error.hpp"
#include "util/text_check.hpp"

namespace gpuplan::cli {
namespace {


void print_text(const PlanRequest& r, const Plan& p, const std::vector<PlanExplainLine>* lines) {
  const TrainingStepEstimate& t = *p.training;
  const int gpus = p.gpus_per_instance * p.instances;
  // Every line before the step table fits the terminal (continuation lines indented).
  const int columns = terminal_columns();
  fmt::print("{}", wrap_text(fmt::format("{} × {} ({} node{} × {}), {}, global batch {} × {} tokens{}", gpus, p.gpu_name,
                                         p.instances, p.instances == 1 ? "" : "s", p.gpus_per_instance, layout_text(p),
                                         p.global_batch_seqs, r.seq_len,
                                         p.global_batch_seqs != p.requested_global_batch_seqs
                                             ? fmt::format(" (asked {}: rounded to a multiple of DP × micro-batch)",
                                                           p.requested_global_batch_seqs)
                                             : ""),
                             columns, "  "));
  if (const std::string settings = api::training_settings_text(r); !settings.empty())
    fmt::print("{}", wrap_text(settings, columns, "  "));
  if (const std::string why = api::searched_recompute_modules_text(r, p.recompute_modules); !why.empty())
    fmt::print("{}", wrap_text(why, columns, "  "));
  fmt::print("{}", wrap_text(api::layout_legend_text(api::layout_abbreviations({p})), columns, "  "));
  fmt::print("memory per GPU {:.1f} of {:.1f} GB\n", p.per_gpu_memory_bytes / 1e9, p.gpu_memory_capacity_bytes / 1e9);
  TextTable tt;
  tt.header = {"step term", "seconds", "share"};
  tt.right_align = {false, true, true};
  auto row = [&](const char* name, double v) {
    tt.rows.push_back({name, fmt::format("{:.4f}", v), fmt::format("{:.1f}%", 100.0 * v / t.step_seconds)});
  };
  if (p.mfu_overridden) {
    row("step (from --mfu)", t.step_seconds);
  } else {
    row("compute", t.compute_seconds);
    row("tp all-reduce", t.tp_allreduce_seconds);
    row("ep all-to-all", t.ep_alltoall_seconds);
    row("pp send/recv", t.pp_p2p_seconds);
    row("pp bubble", t.pp_bubble_seconds);
    row("exposed dp/zero comm", t.exposed_comm_seconds);
    row("optimizer", t.optimizer_seconds);
    row("host overhead", t.overhead_seconds);
    row("step", t.step_seconds);
  }
  fmt::print("{}", tt.render());
  fmt::print("tokens/s {} ({} per GPU), MFU {:.1f}%, {:.0f} steps\n", rate_text(p.tokens_per_s),
             rate_text(p.tokens_per_s / gpus), t.mfu * 100, p.steps);
  const GoodputEstimate& g = *p.goodput;
  fmt::print("{}", wrap_text(fmt::format("steady-state time {}; goodput {:.1f}% (checkpoints {}, lost work {}, restarts {}, "
                                         "evaluation {}; {:.1f} expected failures)",
                                         duration_text(p.work_seconds), g.goodput * 100, duration_text(g.checkpoint_seconds),
                                         duration_text(g.lost_work_seconds), duration_text(g.restart_seconds),
                                         duration_text(g.evaluation_seconds), g.expected_failures),
                             columns, "  "));
  fmt::print("{}", wrap_text(fmt::format("time to finish {} (start-up {} + {}), {:.0f} GPU-hours", duration_text(p.time_seconds()),
                                         duration_text(p.cost.startup_seconds), duration_text(g.wall_seconds),
                                         p.time_seconds() * gpus / 3600.0),
                             columns, "  "));
  for (const auto& w : p.warnings) {
    if (w.code == PlanWarningCode::price_date_unknown || w.code == PlanWarningCode::not_confirmed_available) continue;
    fmt::print("{}", wrap_text(fmt::format("warning [{}] {}", w.name(), w.message), terminal_columns(), "  "));
  }
  if (lines) {
    TextTable e;
    e.header = {"term", "value", "unit", "formula", "source"};
    e.right_align = {false, true, false, false, false};
    for (const auto& l : *lines) {
      if (l.term.rfind("cost.", 0) == 0 || l.term == "storage_bytes" || l.term == "egress_bytes") continue;
      e.rows.push_back({l.term, fmt::format("{:.6g}", l.value), l.unit, l.formula, l.source});
    }
    fmt::print("{}", e.render());
  }
}

GPUPLAN_REGISTER_COMMAND(Command{
    "estimate", "time a training run you specify (GPU × count × layout) without the catalog: step time, MFU, time, GPU-hours",
    [](CLI::App& sub, GlobalOptions& global) {
      auto in = std::make_shared<api::EstimateInput>();
      auto json_out = std::make_shared<bool>(false);
      add_api_flags(sub, in, api::estimate_fields());
      sub.add_flag("--json", *json_out, "print JSON (SI units)");
      sub.callback([in, json_out, &global] {
        const api::Context ctx = make_context(global);
        const api::EstimateOutput out = api::run_estimate(*in, ctx);
        if (*json_out) {
          fmt::print("{}\n", dump_json(api::to_json(out)));
        } else if (!out.plan) {
          fmt::print("No fit: {}\n", out.no_fit);
          // A layout the user knows runs but the memory model rejects (docs/accuracy.md: Megatron MoE
          // runs are over-stated) can still be timed.
          for (const auto& f : out.fits_with)
            fmt::print("Fits on these GPUs with {} ({:.1f} GB per GPU)\n", f.flags, f.per_gpu_bytes / 1e9);
          if (out.no_fit.rfind("no layout fits", 0) == 0)
            fmt::print("To time it anyway (a layout you know runs): add --ignore-memory\n");
        } else {
          print_text(out.request, *out.plan, out.explain ? &out.explain_lines : nullptr);
        }
        if (!out.plan) global.exit_code = 1;
      });
    }});

}  // namespace
}  // namespace gpuplan::cli
