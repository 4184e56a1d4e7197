// End-to-end regression tests for `gpuplan plan`'s first answer (issue 7, "the first answer is the
// product"; defects of a new-user trial), through the built binary (GPUPLAN_BINARY) on the bundled
// catalog and, for the API and the pages, one `gpuplan serve` child on a loopback port.
#include <gtest/gtest.h>
#include <signal.h>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using gpuplan::e2e::RunResult;
using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Terminal columns of one line of the plan output: one per code point (UTF-8 lead bytes). The
/// output's only non-ASCII characters (×, ≥, …, ·, –) are one column wide (wcwidth), none wide.
std::size_t columns_of(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

class Plan13E2E : public gpuplan::e2e::ServedBinaryE2E<Plan13E2E> {
 public:
  static constexpr const char* kName = "plan13";
  static httplib::Client client() {
    httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c;
  }
};

// Trial defect #8: `--seq 2000000` on Llama 3.1 70B answered "no layout fits: ... 370.8 GB" and
// left the real cause, a sequence 15× the model's maximum context, to a warning under it. The
// reason now starts with it, both numbers, in the text, in --json and in the API (one code path);
// the maximum context is the model's max_position_embeddings as `gpuplan models` reports it.
TEST_F(Plan13E2E, SequenceBeyondTheModelsContextIsTheReasonSaidFirst) {
  const json model = run_json("models llama-3.1-70b", 0);
  const std::int64_t max_ctx = model["max_position_embeddings"].get<std::int64_t>();
  ASSERT_EQ(max_ctx, 131072) << "Llama 3.1's config.json max_position_embeddings";
  const std::string args = "plan --model llama-3.1-70b --task lora --tokens 5e8 --seq 2000000";

  const RunResult text = run(args);
  EXPECT_EQ(text.exit_code, 1) << text.out;
  const std::string first = "No plan: --seq 2000000 exceeds the model's maximum context of " + std::to_string(max_ctx);
  EXPECT_EQ(text.out.rfind(first, 0), 0u) << text.out;
  EXPECT_TRUE(contains(text.out, "would help: a sequence within the model's context (--seq " + std::to_string(max_ctx)))
      << text.out;

  const json j = run_json(args, 1);
  const json& np = j["no_plan"];
  EXPECT_EQ(np["code"], "seq_exceeds_context") << np.dump();
  EXPECT_EQ(np["values"]["seq_tokens"], 2000000) << np.dump();
  EXPECT_EQ(np["values"]["max_context_tokens"], max_ctx) << np.dump();
  EXPECT_EQ(np["suggestion_codes"][0], "seq_within_context") << np.dump();
  EXPECT_EQ(np["reason"].get<std::string>().rfind("--seq 2000000 exceeds", 0), 0u) << np.dump();
  // What was found at that length is still said, after the cause.
  EXPECT_TRUE(contains(np["reason"].get<std::string>(), "no layout fits")) << np.dump();

  // Serving: prompt + output beyond the context (5M tokens: no load of 1 request/s fits 256
  // instances), the same way, with the 8B model's own maximum.
  const json s = run_json("plan --model llama-3.1-8b --task serve --prompt-tokens 5000000 --output-tokens 1000 --rps 1", 1);
  ASSERT_TRUE(s["no_plan"].is_object()) << s.dump().substr(0, 1500);
  EXPECT_EQ(s["no_plan"]["code"], "seq_exceeds_context") << s["no_plan"].dump();
  EXPECT_EQ(s["no_plan"]["values"]["seq_tokens"], 5001000) << s["no_plan"].dump();
  EXPECT_EQ(s["no_plan"]["values"]["max_context_tokens"],
            run_json("models llama-3.1-8b", 0)["max_position_embeddings"])
      << s["no_plan"].dump();

  // At the maximum context itself there are plans and no such warning (so the checks above can fail).
  const json w = run_json("plan --model llama-3.1-70b --task lora --tokens 5e8 --limit 1 --seq " + std::to_string(max_ctx), 0);
  EXPECT_FALSE(w["plans"].empty());
  for (const json& warning : w["warnings"]) EXPECT_NE(warning["code"], "seq_exceeds_context") << warning.dump();

  // The API (same planner path) and the French and Thai pages, worded by the code.
  auto c = client();
  auto api = c.Post("/api/plan", R"({"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "seq": 2000000})",
                    "application/json");
  ASSERT_TRUE(api && api->status == 200) << (api ? api->body : "");
  const json a = json::parse(api->body);
  EXPECT_EQ(a["no_plan"]["code"], "seq_exceeds_context") << a["no_plan"].dump();
  EXPECT_EQ(a["no_plan"]["values"]["max_context_tokens"], max_ctx);
  auto fr = c.Get("/fr/plan?model=llama-3.1-70b&task=lora&tokens=5e8&seq=2000000");
  ASSERT_TRUE(fr && fr->status == 200);
  EXPECT_TRUE(contains(fr->body, "dépasse le contexte maximal du modèle")) << fr->body.substr(0, 3000);
  auto th = c.Get("/th/plan?model=llama-3.1-70b&task=lora&tokens=5e8&seq=2000000");
  ASSERT_TRUE(th && th->status == 200);
  EXPECT_TRUE(contains(th->body, "เกินบริบทสูงสุดของโมเดล")) << th->body.substr(0, 3000);
}

// Trial defect #6: `--nodes 641` with nothing pinned was told "no parallel layout matches the
// pinned degrees". Hand calculation: 641 nodes × 8 GPUs = 5,128 = 2³ × 641 (641 is prime); TP
// stays in a node (≤ 8) and PP ≤ the model's 80 layers, so TP × PP divides 5,128 only as 1, 2, 4
// or 8 and DP = 5,128 / (TP × PP) ≥ 641. The default global batch of a full fine-tune is 1 Mi
// tokens = 1,048,576 / 4,096 (--seq) = 256 sequences < 641: the batch is the cause. The planner
// never raises the batch (docs/planner.md "Batch rounding"), so it says which batch would run, and
// that batch, applied as written, plans DP 641.
TEST_F(Plan13E2E, DefaultBatchBelowTheDataParallelDegreeIsTheReasonNotPins) {
  const json model = run_json("models llama-3.1-70b", 0);
  const int layers = model["num_layers"].get<int>();
  ASSERT_LT(layers, 641);
  const std::int64_t batch = (1 << 20) / 4096;  // docs/planner.md: 1 Mi tokens for full fine-tunes
  const std::int64_t dp_min = 641 * 8 / 8;      // TP 8, PP 1
  const std::string args = "plan --model llama-3.1-70b --task full --tokens 1e10 --nodes 641";

  const RunResult text = run(args);
  EXPECT_EQ(text.exit_code, 1) << text.out;
  EXPECT_FALSE(contains(text.out, "pinned")) << text.out;
  EXPECT_TRUE(contains(text.out, "global batch of " + std::to_string(batch) + " sequences")) << text.out;
  EXPECT_TRUE(contains(text.out, "(DP " + std::to_string(dp_min) + ")")) << text.out;

  const json j = run_json(args, 1);
  const json& np = j["no_plan"];
  EXPECT_EQ(np["code"], "batch_below_dp") << np.dump();
  EXPECT_EQ(np["values"]["global_batch_seqs"], batch) << np.dump();
  EXPECT_EQ(np["values"]["dp_min"], dp_min) << np.dump();
  ASSERT_FALSE(np["suggestion_codes"].empty());
  EXPECT_EQ(np["suggestion_codes"][0], "global_batch_at_least") << np.dump();

  // The suggestion applied as written plans, on 641 nodes, with DP 641 and that batch.
  const json ok = run_json(args + " --global-batch " + std::to_string(dp_min) + " --limit 1", 0);
  ASSERT_FALSE(ok["plans"].empty()) << ok.dump().substr(0, 1500);
  const json& p = ok["plans"][0];
  EXPECT_EQ(p["instances"], 641) << p.dump().substr(0, 1500);
  EXPECT_EQ(p["layout"]["dp"], dp_min) << p["layout"].dump();
  EXPECT_EQ(p["global_batch_seqs"], dp_min) << p.dump().substr(0, 1500);

  // A pinned layout that matches nothing still says "pinned" (so the check above can fail).
  const RunResult pinned = run("plan --model llama-3.1-70b --task full --tokens 1e9 --tp 8 --pp 3 --nodes 1");
  EXPECT_EQ(pinned.exit_code, 1) << pinned.out;
  EXPECT_TRUE(contains(pinned.out, "matches the pinned degrees")) << pinned.out;
}

// Trial defect #22: "the plan table is 124 columns wide". Measured in characters (terminal
// columns) the default output of main at 52c8f35 already fit 120; 124 was the byte length of rows
// holding ×, ≥ and … (2-3 bytes each in UTF-8: awk's length or `wc -L` under LC_ALL=C). This
// keeps it so, for the README's demo, a serving plan and a multi-node full plan, with COLUMNS
// unset (not a terminal: 120) and COLUMNS=120, and checks that COLUMNS is honoured (a width of
// 110 changes the table). Every line, warnings included, counts.
TEST_F(Plan13E2E, DefaultPlanOutputFitsA120ColumnTerminal) {
  const std::string binary = "'" + std::string(GPUPLAN_BINARY) + "' --db '" + (dir_ / "offers.sqlite").string() + "' ";
  const std::string env = "XDG_DATA_HOME='" + dir_.string() + "' ";
  for (const std::string args : {"plan --model llama-3.1-70b --task lora --tokens 5e8",
                                 "plan --model llama-3.1-70b --task serve --quant int4 --concurrency 100 --hours 720",
                                 "plan --model llama-3.1-70b --task full --tokens 1e10 --nodes 641 --global-batch 1282",
                                 "plan --params 7e9 --task full --tokens 1e12"}) {
    for (const auto& [columns, prefix] : {std::pair<std::size_t, std::string>{120, "env -u COLUMNS "},
                                          std::pair<std::size_t, std::string>{120, "env COLUMNS=120 "},
                                          std::pair<std::size_t, std::string>{110, "env COLUMNS=110 "}}) {
      const RunResult r = run_shell(prefix + env + binary + args + " 2>&1");
      ASSERT_EQ(r.exit_code, 0) << prefix << args << "\n" << r.out;
      std::size_t widest = 0, lines = 0;
      std::string line, widest_line;
      for (std::size_t i = 0; i <= r.out.size(); ++i) {
        if (i == r.out.size() || r.out[i] == '\n') {
          if (columns_of(line) > widest) widest = columns_of(line), widest_line = line;
          ++lines;
          line.clear();
        } else {
          line += r.out[i];
        }
      }
      EXPECT_GT(lines, 5u) << args;
      EXPECT_LE(widest, columns) << prefix << args << "\n" << widest_line;
      if (columns == 120) {
        EXPECT_GE(widest, 110u) << prefix << args << ": the table uses the width it has";
      }
    }
  }
}

}  // namespace
