// End-to-end regression tests for the defects D5-D8 the new-user trial of issue 10 (the web site
// and the JSON API in en/fr/th) left on 2026-12-04, each on the input that showed it, through one
// running `gpuplan serve` on the bundled catalog (a fresh store) on a loopback port.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using nlohmann::json;

class ServeTrial10dE2E : public gpuplan::e2e::ServedBinaryE2E<ServeTrial10dE2E> {
 public:
  static constexpr const char* kName = "serve-trial10d";
  static httplib::Result get(const std::string& path) {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c.Get(path);
  }
};

using gpuplan::e2e::raw_http;

/// A query parameter's value, percent-encoded.
std::string q(const std::string& sentence) { return httplib::detail::encode_query_param(sentence); }

// D6: the assistant given a budget of 10^30 dollars showed it as float digits
// ("1000000000000000019884624838656") and planned it. A budget above $1,000,000,000,000
// (PlanRequest::kMaxBudgetUsd, the same bound as --budget and the API's `budget`) is refused,
// quoting the sentence's words, in each language; nothing is planned.
TEST_F(ServeTrial10dE2E, AnAssistantBudgetBeyondTheBoundIsRefusedInTheUsersWords) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/assistant?q=" + q("fine-tune llama 3.1 8b with lora on 100M tokens with a budget of 10^30 dollars"),
       "the budget “10^30 dollars” is more than the largest budget planned (US$1,000,000,000,000)"},
      {"/fr/assistant?q=" + q("affiner llama 3.1 8b avec lora sur 100M jetons pour 10^30 dollars"),
       "le budget «\u202f10^30 dollars\u202f» dépasse le plus grand budget planifié (1\u202f000\u202f000\u202f000\u202f000 $ US)"},
      {"/th/assistant?q=" + q("ปรับแต่ง llama 3.1 8b ด้วย lora 100M โทเคน งบ 10^30 ดอลลาร์"),
       "งบประมาณ “10^30 ดอลลาร์” เกินงบประมาณสูงสุดที่วางแผนได้ (US$1,000,000,000,000)"}};
  for (const auto& [path, sentence] : cases) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(r->body.find(sentence), std::string::npos) << path << "\n" << r->body.substr(r->body.find("<main"), 3000);
    EXPECT_EQ(r->body.find("1000000000000000019884624838656"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("id=\"plans\""), std::string::npos) << path << ": planned";
  }
  // The API's `budget` and the CLI's --budget have the same bound: 1e12 is planned, more is not.
  httplib::Client c("127.0.0.1", server().port);
  c.set_read_timeout(120, 0);
  const auto over = c.Post("/api/plan", R"({"model": "llama-3.1-8b", "task": "lora", "tokens": 1e8, "budget": 1e30})", "application/json");
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 400) << over->body;
  const json e = json::parse(over->body);
  EXPECT_EQ(e["field"], "/budget") << over->body;
  EXPECT_EQ(e["message_code"], "too_large") << over->body;
  const auto at = c.Post("/api/plan", R"({"model": "llama-3.1-8b", "task": "lora", "tokens": 1e8, "budget": 1e12, "limit": 1})", "application/json");
  ASSERT_TRUE(at);
  EXPECT_EQ(at->status, 200) << at->body.substr(0, 400);
  const gpuplan::e2e::RunResult cli = run("plan --model llama-3.1-8b --task lora --tokens 1e8 --budget 1e13");
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.out.find("--budget"), std::string::npos) << cli.out;
}

// D7: a refused assistant value quoted seconds ("-259200s") where the user wrote "-3 jours". The
// refusal quotes the sentence's words, in each language, and never the seconds.
TEST_F(ServeTrial10dE2E, ARefusedAssistantValueQuotesTheUsersWords) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/assistant?q=" + q("fine-tune llama 3.1 8b with lora on 100M tokens within -3 days"),
       "deadline “within -3 days” must be more than zero"},
      {"/fr/assistant?q=" + q("affiner llama 3.1 8b avec lora sur 100M jetons en -3 jours"),
       "délai «\u202f-3 jours\u202f» doit être supérieur à zéro"},
      {"/th/assistant?q=" + q("ปรับแต่ง llama 3.1 8b ด้วย lora 100M โทเคน ภายใน -3 วัน"),
       "กำหนดเวลา “ภายใน -3 วัน” ต้องมากกว่าศูนย์"}};
  for (const auto& [path, sentence] : cases) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(r->body.find(sentence), std::string::npos) << path << "\n" << r->body.substr(r->body.find("<main"), 3000);
    EXPECT_EQ(r->body.find("259200"), std::string::npos) << path;
  }
  // The CLI's `ask` words it the same way, in the sentence's language.
  const gpuplan::e2e::RunResult cli = run("ask 'affiner llama 3.1 8b avec lora sur 100M jetons en -3 jours'");
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.out.find("«\u202f-3 jours\u202f» doit être supérieur à zéro"), std::string::npos) << cli.out;
  EXPECT_EQ(cli.out.find("259200"), std::string::npos) << cli.out;
}

std::string body_of(const std::string& reply) { return reply.substr(reply.find("\r\n\r\n") + 4); }

// D8: a method cpp-httplib does not know at all got its 400 "bad request": it is 501 Not
// Implemented (RFC 9110 §15.6.2), the JSON error (the path is not known then).
TEST_F(ServeTrial10dE2E, AnUnknownMethodIsA501) {
  const int port = server().port;
  ASSERT_GT(port, 0);
  const std::string api = raw_http(port, "FOO /api/offers HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(api.substr(0, 12), "HTTP/1.1 501") << api.substr(0, 300);
  const json j = json::parse(body_of(api), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << api;
  EXPECT_EQ(j["code"], "not_implemented") << api;
  EXPECT_EQ(j["message_code"], "http_not_implemented") << api;
  EXPECT_EQ(j["values"]["method"], "FOO") << api;
  // cpp-httplib refuses the line before it reads the path, so a page route gets the same JSON.
  const std::string page = raw_http(port, "FOO /th/offers HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(page.substr(0, 12), "HTTP/1.1 501") << page.substr(0, 300);
  const json jp = json::parse(body_of(page), nullptr, false);
  ASSERT_FALSE(jp.is_discarded()) << page;
  EXPECT_EQ(jp["message_code"], "http_not_implemented") << page;
}

// Trial (web10c): "mistral 7b" is refused as ambiguous by `--model`, and the assistant then
// said only "Not read: mistral 7b on". The CLI and the pages now list the presets it names
// (the two bundled Mistral 7B configs) and ask which one, in the sentence's language; exit 2.
TEST_F(ServeTrial10dE2E, TheAssistantAsksWhichModelANameOfSeveralPresetsMeans) {
  const gpuplan::e2e::RunResult cli = run("ask 'fine-tune mistral 7b on 100M tokens'");
  EXPECT_EQ(cli.exit_code, 2) << cli.out;
  EXPECT_NE(cli.out.find("model: “mistral 7b” names several models: mistral-7b-v0.1 or mistral-7b-instruct-v0.3. Say which one."),
            std::string::npos) << cli.out;
  EXPECT_EQ(cli.out.find("Not read"), std::string::npos) << cli.out;
  const auto fr = get("/fr/assistant?q=" + q("affiner mistral 7b sur 100M jetons"));
  ASSERT_TRUE(fr);
  EXPECT_NE(fr->body.find("modèle\u202f: «\u202fmistral 7b\u202f» désigne plusieurs modèles\u202f: mistral-7b-v0.1 ou "
                          "mistral-7b-instruct-v0.3. Précisez lequel."),
            std::string::npos) << fr->body.substr(fr->body.find("<main"), 3000);
  const auto th = get("/th/assistant?q=" + q("ปรับแต่ง mistral 7b บน 100 ล้านโทเคน"));
  ASSERT_TRUE(th);
  EXPECT_NE(th->body.find("“mistral 7b” ตรงกับหลายโมเดล: mistral-7b-v0.1 หรือ mistral-7b-instruct-v0.3"), std::string::npos)
      << th->body.substr(th->body.find("<main"), 3000);
  EXPECT_EQ(th->body.find("id=\"plans\""), std::string::npos) << "planned without a model";
}

// Trial 10c: the size page listed "NVIDIA GeForce RTX 3090 × 64" for a 70B int4 serve, a tensor-
// parallel group of 64 bridged PCIe cards (their NVLink bridge joins a pair). Past one node (8
// GPUs) a fit needs a GPU whose NVLink joins the whole node (GET /api/gpus nvlink_domain_gpus ≥ 8;
// the 3090's is 2), and tensor parallelism stays within the node (tp ≤ 8, the nodes as pipeline
// stages), checked on the CLI's JSON and on the page.
TEST_F(ServeTrial10dE2E, FitsPastOneNodeNeedANodeWideNvlinkAndKeepTensorParallelismInANode) {
  const json gpus = run_json("gpus", 0);
  std::map<std::string, int> domain;
  // The GPU-link domain as the catalog states it: nvlink_domain_gpus, else (not stated) a link
  // with "bridge" in its interconnect joins 2 and any other link 8 (hardware/gpu_spec.hpp), none 0.
  for (const auto& g : gpus.is_array() ? gpus : gpus.at("gpus")) {
    int d = 0;
    if (g.value("nvlink_domain_gpus", json()).is_number()) d = g["nvlink_domain_gpus"].get<int>();
    else if (g.value("gpu_link_bytes_per_s", json()).is_number() && g["gpu_link_bytes_per_s"].get<double>() > 0)
      d = g.value("interconnect", std::string()).find("bridge") != std::string::npos ? 2 : 8;
    domain[g.at("name").get<std::string>()] = d;
  }
  ASSERT_EQ(domain.at("NVIDIA GeForce RTX 3090"), 2);
  const json size = run_json("size --model llama-3.1-70b --task serve --quant int4 --context 32768 --concurrency 16", 0);
  ASSERT_FALSE(size.at("fits").empty());
  bool past_a_node = false;
  for (const auto& f : size.at("fits")) {
    const std::string gpu = f.at("gpu");
    const int n = f.at("gpu_count");
    EXPECT_LE(f.at("layout").at("tp").get<int>(), 8) << gpu << " × " << n;
    EXPECT_EQ(f.at("layout").at("tp").get<int>() * f.at("layout").at("pp").get<int>(), n) << gpu;
    if (n > 8) {
      past_a_node = true;
      EXPECT_GE(domain.at(gpu), 8) << gpu << " × " << n << ": its NVLink does not join a node";
    }
  }
  EXPECT_TRUE(past_a_node) << "the 16-GPU fits (V100 16GB, TPU v5e) are the case under test";
  const auto page = get("/size?model=llama-3.1-70b&task=serve&quant=int4&context=32768&concurrency=16");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_EQ(page->body.find("RTX 3090</td><td class=\"num\">64"), std::string::npos);
  const std::string fits = page->body.substr(page->body.find("id=\"fits\""));
  const std::size_t row = fits.find("GeForce RTX 3090");
  if (row != std::string::npos) {  // listed at all: at 8 GPUs at most
    const std::string tail = fits.substr(row, 200);
    EXPECT_TRUE(tail.find(">64<") == std::string::npos && tail.find(">16<") == std::string::npos && tail.find(">32<") == std::string::npos) << tail;
  }
}

// Trial 10d N8: the size pages said "NVLink joins a whole 8-GPU node" next to a TPU v5e × 16 fit
// (a TPU's chips are joined by ICI, not NVLink). The rule names the link of each accelerator kind,
// in the CLI's --json and on the page.
TEST_F(ServeTrial10dE2E, TheFitRulePastOneNodeNamesEachAcceleratorsLink) {
  const json size = run_json("size --model llama-3.1-70b --task serve --quant int4 --context 32768 --concurrency 16", 0);
  const std::string rule = size.at("fit_assumption");
  EXPECT_NE(rule.find("(NVLink, Infinity Fabric, TPU ICI)"), std::string::npos) << rule;
  EXPECT_EQ(rule.find("whose NVLink"), std::string::npos) << rule;
  bool tpu_past_a_node = false;
  for (const auto& f : size.at("fits"))
    tpu_past_a_node |= f.at("gpu").get<std::string>().find("TPU") != std::string::npos && f.at("gpu_count").get<int>() > 8;
  EXPECT_TRUE(tpu_past_a_node) << "a TPU fit past 8 chips is the case under test";
  const auto page = get("/size?model=llama-3.1-70b&task=serve&quant=int4&context=32768&concurrency=16");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_EQ(page->body.find("whose NVLink joins"), std::string::npos);
  EXPECT_NE(page->body.find("(NVLink, Infinity Fabric, TPU ICI)"), std::string::npos);
}

// Trial 10d N5: an image plan on a 1-GPU instance read "1 GPUs × 1 image" in the CLI's table and
// on the English page.
TEST_F(ServeTrial10dE2E, AOneGpuImagePlanSaysOneGpu) {
  const gpuplan::e2e::RunResult cli = run("plan --model sdxl-unet --task images --images 1000 --today 2026-11-30 --limit 40");
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_NE(cli.out.find("1 GPU × 1 image"), std::string::npos) << cli.out;
  EXPECT_EQ(cli.out.find("1 GPUs"), std::string::npos) << cli.out;
  const auto page = get("/plan?model=sdxl-unet&task=images&images=1000&today=2026-11-30");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_NE(page->body.find("1 GPU × 1 image"), std::string::npos);
  EXPECT_EQ(page->body.find(">1 GPUs"), std::string::npos);
}

// Trial 10c: a budget-only plan page stated the recommendation rule without the clause that
// picked its plan (a faster plan wins only if each hour it saves costs at most 3× the cheaper
// plan's spend per hour, PlanRequest::speedup_max_cost_ratio), which the CLI states.
TEST_F(ServeTrial10dE2E, TheBudgetRuleOnThePageStatesTheHourSavedClauseAsTheCliDoes) {
  const gpuplan::e2e::RunResult cli = run("plan --model llama-3.1-70b --task qlora --tokens 2e8 --budget 500 --limit 2");
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  std::string flat = cli.out;  // the footer is wrapped at the terminal width
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  ASSERT_NE(flat.find("a faster plan goes first only if each hour it saves costs at most 3× the cheaper plan's spend per hour"),
            std::string::npos) << cli.out;
  const auto en = get("/plan?model=llama-3.1-70b&task=qlora&tokens=2e8&budget=500&limit=2");
  ASSERT_TRUE(en && en->status == 200);
  EXPECT_NE(en->body.find("a faster plan wins only if each hour it saves costs at most 3× the cheaper plan&apos;s spend per hour"),
            std::string::npos) << en->body.substr(en->body.find("class=\"recommend\""), 600);
  const auto fr = get("/fr/plan?model=llama-3.1-70b&task=qlora&tokens=2e8&budget=500&limit=2");
  ASSERT_TRUE(fr && fr->status == 200);
  EXPECT_NE(fr->body.find("chaque heure gagnée coûte au plus 3\u202f×"), std::string::npos)
      << fr->body.substr(fr->body.find("class=\"recommend\""), 600);
}

// Trial 10d: `gpuplan ask` in English printed the pages' wording of engine sentences ("“include
// flagged prices” ranks them together", "(/api/gpus)") in a terminal; it prints them as
// `gpuplan plan` does, flags and commands included.
TEST_F(ServeTrial10dE2E, AskInEnglishPrintsWarningsInTheClisWords) {
  const gpuplan::e2e::RunResult r = run("ask 'fine-tune qwen3 8b with LoRA on 50M tokens'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("(--include-flagged ranks them together; --max-price-age changes the limit)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("“include flagged prices”"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/api/gpus"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/api/openapi.json"), std::string::npos) << r.out;
}

/// The explanation section of a page (`<section id="explain">` … `</section>`), each tag's
/// attributes dropped (a row's title is its term's code), "" when the page has none.
std::string explain_section(const std::string& html) {
  const auto from = html.find("<section id=\"explain\">");
  if (from == std::string::npos) return "";
  const std::string section = html.substr(from, html.find("</section>", from) - from);
  std::string text;
  bool in_tag = false;
  for (const char c : section) {
    if (c == '<') in_tag = true;
    if (!in_tag) text += c;
    if (c == '>') {
      in_tag = false;
      text += ' ';
    }
  }
  return text;
}

/// Whether `phrase` stands in `text` as whole words: no letter, digit, '_', '-' or '/' on either
/// side ("all-to-all", "16-bit" and "scatter/gather" are terms of their own, not "to", "bit" or
/// "gather"), and not as a gloss in parentheses after the locale's own word ("(replica)").
bool has_words(const std::string& text, const std::string& phrase) {
  const auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '/';
  };
  for (auto at = text.find(phrase); at != std::string::npos; at = text.find(phrase, at + 1)) {
    const std::size_t end = at + phrase.size();
    const bool left = at == 0 || !word(text[at - 1]);
    const bool right = end >= text.size() || !word(text[end]);
    const bool gloss = at > 0 && text[at - 1] == '(' && end < text.size() && text[end] == ')';
    if (left && right && !gloss) return true;
  }
  return false;
}

json read_locale(const std::string& lang) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/web/locales/" + lang + ".json");
  return json::parse(in);
}

// D5: a plan's explanation showed the internal key `goodput.wall_seconds` as text, and French and
// Thai pages with explain=1 kept English phrases. On /fr and /th plan pages (a training, a
// fine-tuning and a serving plan) and size pages, no phrase of the English explanation table
// (web/locales/en.json xp_*) stands untranslated: each one the locale words differently must not
// appear as it is in English (a phrase the locale keeps as it is, a name or a unit, is excepted).
TEST_F(ServeTrial10dE2E, ExplanationsOnFrenchAndThaiPagesHaveNoEnglishPhraseLeft) {
  const json en = read_locale("en");
  const std::vector<std::string> pages = {
      "/plan?model=llama-3.1-8b&task=full&tokens=1e8&limit=1&explain=1",
      "/plan?model=llama-3.1-8b&task=lora&tokens=1e8&limit=1&explain=1",
      "/plan?model=llama-3.1-8b&task=serve&rps=2&limit=1&explain=1",
      "/size?model=llama-3.1-8b&task=lora&explain=1",
      // Trial 10c: an images plan ("efficacité measured sur un H200") and a 70B LoRA on 8 GPUs
      // or more ("ZeRO-3/FSDP rassemblement", "1 nœuds").
      "/plan?model=flux.1-schnell&task=images&images=100000&limit=1&explain=1",
      "/plan?model=llama-3.1-70b&task=lora&tokens=5e8&filter=" + q("gpus>=8") + "&limit=1&explain=1"};
  // The English page names the quantity, not its key.
  const auto en_page = get("/en" + pages[0]);
  ASSERT_TRUE(en_page);
  const std::string en_text = explain_section(en_page->body);
  ASSERT_FALSE(en_text.empty()) << en_page->body.substr(0, 400);
  EXPECT_EQ(en_text.find("wall_seconds"), std::string::npos) << en_text;
  EXPECT_NE(en_text.find("wall time"), std::string::npos) << en_text;
  for (const std::string lang : {"fr", "th"}) {
    const json t = read_locale(lang);
    for (const auto& page : pages) {
      const auto r = get("/" + lang + page);
      ASSERT_TRUE(r) << lang << page;
      ASSERT_EQ(r->status, 200) << lang << page << "\n" << r->body.substr(0, 600);
      const std::string text = explain_section(r->body);
      ASSERT_FALSE(text.empty()) << lang << page;
      EXPECT_EQ(text.find("wall_seconds"), std::string::npos) << lang << page;
      for (const auto& [key, value] : en.items()) {
        if (key.rfind("xp_", 0) != 0 || !value.is_string() || !t.contains(key)) continue;
        const std::string english = value.get<std::string>();
        if (t[key].get<std::string>() == english) continue;  // kept as it is: a name, a symbol
        // A term the locale itself writes in English in its own explanation texts (Thai keeps
        // "tensor parallel", "CUDA context") is its choice, not a phrase left behind.
        if (std::any_of(t.items().begin(), t.items().end(), [&](const auto& kv) {
              return kv.key().rfind("xp_", 0) == 0 && kv.value().is_string() && has_words(kv.value().template get<std::string>(), english);
            }))
          continue;
        if (std::none_of(english.begin(), english.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
          continue;
        EXPECT_FALSE(has_words(text, english)) << lang << page << ": \"" << english << "\" (" << key << ") left in English";
      }
    }
  }
}

// D8: the Thai locale spelled one term two ways ("โทเคน" 29 times and "โทเค็น" 38; "ปรับจูน" 5 and
// "ไฟน์จูน" 12; "สปอต" once, "spot" elsewhere). Each term has one spelling: โทเค็น, ไฟน์จูน, spot.
// Checked on the served /th pages as well as in the file.
TEST_F(ServeTrial10dE2E, ThaiSpellsEachTermOneWay) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/web/locales/th.json");
  const std::string th((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(th.empty());
  for (const std::string other : {"โทเคน", "ปรับจูน", "สปอต"}) EXPECT_EQ(th.find(other), std::string::npos) << other;
  EXPECT_NE(th.find("โทเค็น"), std::string::npos);
  const auto page = get("/th/plan?model=llama-3.1-8b&task=serve&rps=2&limit=1");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("โทเค็น"), std::string::npos);
  EXPECT_EQ(page->body.find("โทเคน"), std::string::npos);
}

/// Every explanation line's formula and source in `j` (an object with "term" and "formula").
void explanation_texts(const json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    if ((j.contains("term") || j.contains("name")) && j.contains("formula")) {  // plan: term; size: name
      for (const char* k : {"formula", "source"}) {
        if (j.contains(k) && j[k].is_string()) out.push_back(j[k].get<std::string>());
      }
      return;
    }
    for (const auto& [k, v] : j.items()) explanation_texts(v, out);
  } else if (j.is_array()) {
    for (const auto& v : j) explanation_texts(v, out);
  }
}

// Trial 10c: explanations named repository files as sources ("planner/cost.cpp price_job",
// "sizing/memory.hpp", "offer / data/gpus.csv", "tests/data/h200-measurements.jsonl") and an
// internal key ("comm_overlap_fraction (PyTorch DDP gradient buckets, ...)"). The CLI's --json
// explanations of a training, a fine-tuning on 8 GPUs or more, a serving and an images plan, and
// size --explain, name none (docs/*.md, public documentation, may be named).
TEST_F(ServeTrial10dE2E, NoExplanationNamesARepositoryFileOrAnInternalKey) {
  const std::vector<std::string> commands = {
      "plan --model llama-3.1-8b --task full --tokens 1e8 --limit 1 --explain 1",
      "plan --model llama-3.1-70b --task lora --tokens 5e8 'gpus>=8' --limit 1 --explain 1",
      "plan --model llama-3.1-8b --task serve --rps 2 --limit 1 --explain 1",
      "plan --model flux.1-schnell --task images --images 100000 --limit 1 --explain 1",
      "size --model llama-3.1-8b --task lora --explain", "size --model llama-3.1-8b --task serve --explain"};
  for (const auto& command : commands) {
    const json j = run_json(command, 0);
    std::vector<std::string> texts;
    explanation_texts(j, texts);
    EXPECT_GE(texts.size(), 10u) << command;
    bool overlap = false;
    for (std::string text : texts) {
      // "llama.cpp" is the serving engine's own name, not a file of this repository.
      for (std::size_t at = text.find("llama.cpp"); at != std::string::npos; at = text.find("llama.cpp")) text.erase(at, 9);
      for (const char* bad : {".hpp", ".cpp", "tests/", "data/", "comm_overlap_fraction", "::"}) {
        EXPECT_EQ(text.find(bad), std::string::npos) << command << ": " << text;
      }
      overlap = overlap || text.find("share of communication hidden behind compute") != std::string::npos;
    }
    // A training step's exposed communication names its overlap share in words.
    if (command.find("--task full") != std::string::npos) {
      EXPECT_TRUE(overlap) << command;
    }
  }
}

// Trial 10c: an OCI MI300X plan warned "intra-node link not listed: NVLink assumed from the GPU
// datasheet". The MI300X datasheet lists AMD Infinity Fabric (data/gpus.csv interconnect
// "Infinity Fabric (xGMI; 7 links)", ROCm specs): the warning names that link, not NVLink.
TEST_F(ServeTrial10dE2E, ALinkAssumedWarningNamesTheGpusOwnLink) {
  const json j = run_json("plan --model llama-3.1-8b --task lora --tokens 1e8 'gpu=MI300X' --limit 20", 0);
  std::size_t warned = 0;
  for (const auto& p : j.at("plans")) {
    for (const auto& w : p.value("warnings", json::array())) {
      if (w.value("code", "") != "link_assumed") continue;
      ++warned;
      const std::string m = w.value("message", "");
      EXPECT_EQ(m, "intra-node link not listed: Infinity Fabric (xGMI; 7 links) assumed from the GPU datasheet")
          << p.value("gpu_name", "");
    }
  }
  EXPECT_GE(warned, 1u) << j.dump().substr(0, 2000);
}

}  // namespace
