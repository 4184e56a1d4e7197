// End-to-end regression tests for defects a new-user trial of main (30191fc, "trial 8") found,
// each on the exact input that showed it, through the built binary (GPUPLAN_BINARY) on the
// bundled catalog and, for the pages, one `gpuplan serve` child on a loopback port.
#include <gtest/gtest.h>
#include <signal.h>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using gpuplan::e2e::RunResult;
using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The group footer's counts as the CLI words them: "N groups (M offers); ... F prices questioned".
std::string fmt_footer(std::size_t groups, std::size_t offers, std::size_t flagged) {
  return std::to_string(groups) + " groups (" + std::to_string(offers) + " offers); on-demand prices, USD per GPU-hour of each "
         "offer's latest price; median of an even count = mean of the two middle prices; " + std::to_string(flagged) +
         " prices questioned by a flag";
}

class Trial8E2E : public gpuplan::e2e::ServedBinaryE2E<Trial8E2E> {
 public:
  static constexpr const char* kName = "trial8";
  static httplib::Result get(const std::string& path) {
    httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c.Get(path);
  }
};

// 1. The assistant's Compute button posted budget_usd and deadline_seconds to /plan, which
// ignored them (200, plans of 2.7-3.9 days for "within two days under $500"). The form now
// posts the plan request's names, and /plan and /size refuse a parameter they do not know.
TEST_F(Trial8E2E, AssistantFormPostsBudgetAndDeadlineThatThePlanPageReads) {
  const auto a = get("/en/assistant?q=" + httplib::detail::encode_query_param(
                                              "fine-tune Llama 3.1 70B with QLoRA on 200M tokens within two days under $500"));
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, 200) << a->body.substr(0, 500);
  EXPECT_TRUE(contains(a->body, "name=\"budget\" value=\"500\"")) << a->body.substr(0, 4000);
  EXPECT_TRUE(contains(a->body, "name=\"deadline\" value=\"48h\"")) << a->body.substr(0, 4000);
  EXPECT_FALSE(contains(a->body, "name=\"budget_usd\""));
  EXPECT_FALSE(contains(a->body, "name=\"deadline_seconds\""));

  // What the button submits: every plan listed finishes within 48 h and costs at most $500.
  const auto p = get("/en/plan?model=llama-3.1-70b&task=qlora&tokens=200000000&budget=500&deadline=48h");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 200);
  EXPECT_TRUE(contains(p->body, "value=\"48h\"")) << "the deadline field keeps what was sent";

  for (const std::string path : {"/en/plan?model=llama-3.1-70b&budget_usd=300", "/en/plan?bogus=1", "/en/size?bogus=1",
                                 "/fr/plan?model=llama-3.1-70b&deadline_seconds=172800"}) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
  }
}

// 2. "no more than $50" was read as a budget of at least $50 (and French "pas plus de 50 $").
TEST_F(Trial8E2E, NoMoreThanIsAnUpperBound) {
  for (const std::string s : {"fine-tune llama 3.1 8b with lora on 100M tokens for no more than $50",
                              "affiner llama 3.1 8b en lora sur 100 millions de jetons pour pas plus de 50 $"}) {
    const json j = run_json("ask '" + s + "'", 0);
    const json* budget = nullptr;
    for (const json& f : j["understood"]["fields"])
      if (f["name"] == "budget_usd") budget = &f;
    ASSERT_NE(budget, nullptr) << j.dump().substr(0, 1500);
    EXPECT_EQ((*budget)["value"], 50) << s;
    EXPECT_EQ((*budget)["mark"], "\u2264") << s;
  }
}

// 4. and 9. Numbers far outside what is planned were accepted: an image side of 1e9 px (a
// 1.2-billion-year plan), half an image, 1e300 GB of egress. Each is a one-line error naming
// the flag, exit 2.
TEST_F(Trial8E2E, ImageSidesImageCountsAndEgressHaveRanges) {
  struct Case {
    std::string args;
    std::string flag;
  };
  for (const Case& c : {Case{"--task images --images 1e6 --width 1e9 --height 1024", "--width"},
                        Case{"--task images --images 1e6 --width 1024 --height 100000", "--height"},
                        Case{"--task images --images 0.5", "--images"},
                        Case{"--task lora --tokens 1e8 --egress-gb 1e300", "--egress-gb"}}) {
    const std::string model = contains(c.args, "images") ? "flux.1-schnell" : "llama-3.1-8b";
    const RunResult r = run("plan --model " + model + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, c.flag)) << c.args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  // The largest side allowed is still planned.
  const RunResult ok = run("plan --model flux.1-schnell --task images --images 1000 --width 8192 --height 8192 --limit 1");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

// 15. Switching language dropped what the page was asked (/fr/offers?q=... → /en/offers).
TEST_F(Trial8E2E, LanguageLinksKeepTheQuery) {
  const auto r = get("/fr/offers?q=gpu%3DH100");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_TRUE(contains(r->body, "href=\"/en/offers?q=gpu%3DH100\"")) << r->body.substr(0, 3000);
  EXPECT_TRUE(contains(r->body, "href=\"/th/offers?q=gpu%3DH100\""));
  const auto p = get("/en/plan");
  ASSERT_TRUE(p && p->status == 200);
  EXPECT_TRUE(contains(p->body, "href=\"/fr/plan\"")) << "no query: no question mark";
}

// 13. The OpenAPI document failed a validator (OPTIONS of /api/offers/{id}/history without its
// path parameter) and left out statuses the server sends: 413 for an oversized body, 405.
TEST_F(Trial8E2E, OpenApiDeclaresThePathParameterAndTheStatusesTheServerSends) {
  const auto d = get("/api/openapi.json");
  ASSERT_TRUE(d && d->status == 200);
  const json doc = json::parse(d->body);
  const json& history = doc["paths"]["/api/offers/{id}/history"];
  ASSERT_TRUE(history.contains("parameters")) << history.dump();
  EXPECT_EQ(history["parameters"][0]["name"], "id");
  EXPECT_EQ(history["parameters"][0]["in"], "path");

  httplib::Client c("127.0.0.1", server().port);
  c.set_read_timeout(120, 0);
  // A body of 1 MiB: the server answers 413, and the document lists 413 for the operation.
  const std::string big = "{\"model\": \"" + std::string(1 << 20, 'x') + "\"}";
  for (const std::string path : {"/api/plan", "/api/size", "/api/estimate"}) {
    auto r = c.Post(path, big, "application/json");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 413) << path;
    EXPECT_TRUE(doc["paths"][path]["post"]["responses"].contains("413")) << path;
    auto m = c.Get(path);
    ASSERT_TRUE(m) << path;
    EXPECT_EQ(m->status, 405) << path;
    EXPECT_TRUE(doc["paths"][path]["post"]["responses"].contains("405")) << path;
  }
}

// 3. `ask "... using 4 H100s ... seq 8192"` planned 1 GPU at the default sequence length and said
// nothing of the words it dropped. Now the count and the sequence length are read, and the plan
// is the one `gpuplan plan` gives for the same fields (one engine, two commands); a number the
// grammar does not read is listed as not read.
TEST_F(Trial8E2E, AskReadsGpuCountAndSequenceLengthAndSaysWhatItDidNotRead) {
  const json a = run_json("ask 'fine-tune llama 3.1 8b with lora on 1e8 tokens using 4 H100s, seq 8192' --limit 3", 0);
  ASSERT_TRUE(a.contains("plan")) << a.dump();
  EXPECT_EQ(a["understood"]["plan_request"]["gpus"], 4);
  EXPECT_EQ(a["understood"]["plan_request"]["seq"], 8192);
  EXPECT_TRUE(a["understood"]["unread"].empty()) << a["understood"].dump();
  const json& plans = a["plan"]["plans"];
  ASSERT_FALSE(plans.empty());
  for (const auto& p : plans) {
    EXPECT_EQ(p["gpus_total"], 4) << p["offer_id"];
    EXPECT_TRUE(contains(p["gpu_name"].get<std::string>(), "H100")) << p["gpu_name"];
  }
  const json direct = run_json("plan 'gpu=H100' --model llama-3.1-8b --task lora --tokens 1e8 --gpus 4 --seq 8192 --limit 3", 0);
  ASSERT_FALSE(direct["plans"].empty());
  EXPECT_EQ(plans[0]["offer_id"], direct["plans"][0]["offer_id"]);
  EXPECT_DOUBLE_EQ(plans[0]["total_usd"].get<double>(), direct["plans"][0]["total_usd"].get<double>());
  // The default sequence length gives another time: the 8,192 was used, not read and dropped.
  const json seq_default = run_json("plan 'gpu=H100' --model llama-3.1-8b --task lora --tokens 1e8 --gpus 4 --limit 3", 0);
  ASSERT_FALSE(seq_default["plans"].empty());
  EXPECT_NE(plans[0]["time_seconds"].get<double>(), seq_default["plans"][0]["time_seconds"].get<double>());

  const RunResult r = run("ask 'fine-tune llama 3.1 8b with lora on 1e8 tokens, batch 64'");
  EXPECT_TRUE(contains(r.out, "Not read: \u201cbatch 64\u201d")) << r.out;
  const auto page = get("/fr/assistant?q=" + httplib::detail::encode_query_param("affiner llama 3.1 8b en lora sur 1e8 jetons, lot 64"));
  ASSERT_TRUE(page);
  EXPECT_TRUE(contains(page->body, "class=\"ask-unread\"")) << page->body.substr(0, 3000);
  EXPECT_TRUE(contains(page->body, "lot 64")) << page->body.substr(0, 3000);
}

// 11, 12. API errors named CLI flags ("--heads dividing --hidden", "see `gpuplan models`") and
// three pointed at the wrong field ("/api/gpus?name=H1000" had field ""). The API speaks in its
// own field names and endpoints; the CLI keeps its flags.
TEST_F(Trial8E2E, ApiErrorsNameTheRequestFieldsNotCliFlags) {
  const auto g = get("/api/gpus?name=H1000");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->status, 404);
  json e = json::parse(g->body);
  EXPECT_EQ(e["field"], "/name");
  EXPECT_TRUE(contains(e["message"].get<std::string>(), "H1000")) << e.dump();
  for (const std::string path : {"/api/models?params=7e9&hidden=3", "/api/models?params=1&layers=32",
                                 "/api/models?name=llama-3.1-8b&params=7e9", "/api/models?name=llama",
                                 "/api/models?params=7e9&heads=7&hidden=4096", "/api/models?name=llama-3.1-8b&model=qwen3-8b"}) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status / 100, 4) << path;
    e = json::parse(r->body);
    for (const char* key : {"message", "expected"}) {
      const std::string text = e[key].get<std::string>();
      EXPECT_FALSE(contains(text, "--")) << path << " " << key << ": " << text;
      EXPECT_FALSE(contains(text, "gpuplan ")) << path << " " << key << ": " << text;
      EXPECT_FALSE(contains(text, "positional")) << path << " " << key << ": " << text;
    }
  }
  e = json::parse(get("/api/models?params=7e9&heads=7&hidden=4096")->body);
  EXPECT_EQ(e["field"], "/heads");
  EXPECT_EQ(e["expected"], "a divisor of hidden");
  // The CLI keeps its own form of the same error.
  const RunResult cli = run("models --params 7e9 --heads 7 --hidden 4096");
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_TRUE(contains(cli.out, "--heads")) << cli.out;
}

// 19. The price-history chart spaced its points evenly whatever their dates and labelled only
// its top and bottom price. Now x is time: three prices seen on days 0, 1 and 364 of 2025 sit at
// 0, 1/364 and 1 of the axis's width (hand calculation), and the y axis has three price labels.
TEST_F(Trial8E2E, HistoryChartPlacesPricesByTheirDates) {
  const std::filesystem::path file = dir_ / "chart.csv";
  {
    std::ofstream f(file);
    f << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_gpu_hour,observed_at,source\n"
         "chartcloud,one-h100,eu-1,H100 SXM,1,on-demand,2.00,2025-01-01,test fixture: invented price\n"
         "chartcloud,one-h100,eu-1,H100 SXM,1,on-demand,2.50,2025-01-02,test fixture: invented price\n"
         "chartcloud,one-h100,eu-1,H100 SXM,1,on-demand,3.00,2025-12-31,test fixture: invented price\n";
  }
  const std::string db = (dir_ / "chart.sqlite").string();
  const std::string gpuplan = "XDG_DATA_HOME='" + dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" + db + "' ";
  const RunResult imp = run_shell(gpuplan + "import '" + file.string() + "' 2>&1");
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  const RunResult listed = run_shell(gpuplan + "offers provider=chartcloud --format json");
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  const json offers = json::parse(listed.out);
  const json& list = offers.is_array() ? offers : offers["offers"];
  ASSERT_EQ(list.size(), 1u) << offers.dump();
  gpuplan::e2e::ServeOptions o;
  o.db = db;
  o.home = dir_;
  o.write_token = "";
  gpuplan::e2e::ServeProcess s = gpuplan::e2e::start_serve(o);
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  const auto r = c.Get("/en/offers/history?id=" + httplib::detail::encode_query_param(list[0]["id"].get<std::string>()));
  gpuplan::e2e::stop_serve(s);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const std::regex circle(R"re(<circle cx="([0-9.]+)" cy="([0-9.]+)")re");
  std::vector<double> xs, ys;
  for (auto it = std::sregex_iterator(r->body.begin(), r->body.end(), circle); it != std::sregex_iterator(); ++it) {
    xs.push_back(std::stod((*it)[1].str()));
    ys.push_back(std::stod((*it)[2].str()));
  }
  ASSERT_EQ(xs.size(), 3u) << r->body.substr(0, 3000);
  EXPECT_NEAR((xs[1] - xs[0]) / (xs[2] - xs[0]), 1.0 / 364.0, 0.002);  // 0.1 px rounding on a ~486 px axis
  EXPECT_GT(ys[0], ys[1]);  // dearer is higher (smaller y)
  EXPECT_GT(ys[1], ys[2]);
  const std::string svg = r->body.substr(r->body.find("<svg class=\"chart\""));
  const std::regex price_label(R"(text-anchor="end">\$)");
  const auto labels = std::distance(std::sregex_iterator(svg.begin(), svg.end(), price_label), std::sregex_iterator());
  EXPECT_EQ(labels, 3) << svg.substr(0, 2000);
}

// Trial 9 (#2): "serve ... in int4" planned bf16 weights and said nothing of "int4". The format
// is read as the plan's `quant`, and the plan is the one `gpuplan plan --quant int4` gives.
TEST_F(Trial8E2E, AskReadsTheServedWeightsFormat) {
  const json a = run_json("ask 'serve llama 3.1 8b to 20 users in int4' --limit 1", 0);
  ASSERT_TRUE(a.contains("plan")) << a.dump();
  EXPECT_EQ(a["understood"]["plan_request"]["quant"], "int4");
  const json direct = run_json("plan --model llama-3.1-8b --task serve --concurrency 20 --quant int4 --limit 1", 0);
  const json bf16 = run_json("plan --model llama-3.1-8b --task serve --concurrency 20 --limit 1", 0);
  ASSERT_FALSE(a["plan"]["plans"].empty());
  ASSERT_FALSE(direct["plans"].empty());
  ASSERT_FALSE(bf16["plans"].empty());
  EXPECT_EQ(a["plan"]["plans"][0]["offer_id"], direct["plans"][0]["offer_id"]);
  EXPECT_DOUBLE_EQ(a["plan"]["plans"][0]["total_usd"].get<double>(), direct["plans"][0]["total_usd"].get<double>());
  // int4 weights are a quarter of bf16's: the per-GPU memory differs, so the format was used.
  EXPECT_NE(direct["plans"][0]["per_gpu_memory_bytes"], bf16["plans"][0]["per_gpu_memory_bytes"]);
}

// Trial 9 (medium): `offers --group-by gpu`'s footer counted the flagged prices left out of the
// groups shown, so it said 0 at --limit 3 and 5 at --limit 50. It now counts over every group,
// and says how many groups there are: both from the whole `--format json` answer (limit 0 = all).
TEST_F(Trial8E2E, GroupByFooterCountsEveryGroupWhateverTheLimit) {
  const RunResult all = run("offers --group-by gpu --limit 0 --format json");
  ASSERT_EQ(all.exit_code, 0) << all.out.substr(0, 500);
  const json groups = json::parse(all.out);
  ASSERT_TRUE(groups.is_array());
  std::size_t flagged = 0, offers = 0;
  for (const json& g : groups) {
    flagged += g["flagged_offers"].get<std::size_t>();
    offers += g["offers"].get<std::size_t>();
  }
  ASSERT_GT(flagged, 0u) << "the bundled catalog has flagged prices: the case must exercise the count";
  const std::string expected = fmt_footer(groups.size(), offers, flagged);
  for (const std::string limit : {"3", "50", "0"}) {
    const RunResult r = run("offers --group-by gpu --limit " + limit);
    ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 500);
    const std::size_t shown = limit == "0" ? groups.size() : std::min<std::size_t>(std::stoul(limit), groups.size());
    EXPECT_TRUE(contains(r.out, std::to_string(shown) + " of " + expected)) << "--limit " << limit << "\n" << r.out.substr(r.out.size() - 600);
  }
}

}  // namespace
