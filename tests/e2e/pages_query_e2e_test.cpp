// End-to-end regression tests for two page defects a new-user trial of issue 10 found
// (2026-12-04), through a running `gpuplan serve` on the bundled catalog:
// - a page URL typed with '=' inside a value (`/offers?q=gpus>=8`) lost everything up to the last
//   '=' (cpp-httplib's own query reading): the filter became "8" and the page answered 400;
// - `/offers?group_by=gpu` counted only the rows the page lists (at most 300), not every offer;
// - a second `gpuplan serve` on the same address bound too (SO_REUSEPORT) and took half the
//   connections;
// and one of issue 11: a query that is not valid percent-encoding (`?q=%zz`) was read leniently.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

class PagesQueryE2E : public gpuplan::e2e::ServedBinaryE2E<PagesQueryE2E> {
 public:
  static constexpr const char* kName = "pages-query";
  static httplib::Result get(const std::string& path) {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c.Get(path);
  }
};

TEST_F(PagesQueryE2E, AValueWithAnEqualsSignIsReadWhole) {
  auto r = get("/offers?q=gpus>=8&today=2026-11-30");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body.substr(0, 400);
  EXPECT_NE(r->body.find("value=\"gpus&gt;=8\""), std::string::npos);  // the filter box shows what was typed
  auto p = get("/plan?model=llama-3.1-70b&task=lora&tokens=5e8&filter=gpus>=8&today=2026-11-30");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 200) << p->body.substr(0, 400);
  // '=' inside the model name is the model's text, not a split: an unknown model, named whole.
  auto m = get("/plan?model=a=b&task=lora&tokens=1e8");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("a=b"), std::string::npos);
}

// The plan page's layout cell names the recompute modules a Megatron MoE search chose and the
// virtual stages, as the CLI's table does (docs/planner.md search order): gpt-oss-120b and
// Llama 3.1 70B on 64 H100s.
TEST_F(PagesQueryE2E, ThePlanPageNamesTheRecomputeModulesTheSearchChose) {
  auto p = get("/plan?model=gpt-oss-120b&task=pretrain&tokens=2e10&stack=megatron&grads_16bit=true&gpus=64"
               "&global_batch=1280&seq=4096&filter=gpu=H100&today=2026-11-30");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body.substr(0, 400);
  EXPECT_NE(p->body.find("EP8 Z1 mb1 rc:layernorm,moe_act"), std::string::npos) << p->body.substr(0, 2000);
  // ... and says what it is, in the page's language (trial42 D1; the CLI's footer line).
  EXPECT_NE(p->body.find("rc:layernorm,moe_act = chosen by the search: Megatron-Core selective recompute"),
            std::string::npos);
  auto fr = get("/fr/plan?model=gpt-oss-120b&task=pretrain&tokens=2e10&stack=megatron&grads_16bit=true&gpus=64"
                "&global_batch=1280&seq=4096&filter=gpu=H100&today=2026-11-30");
  ASSERT_TRUE(fr);
  EXPECT_NE(fr->body.find("rc:layernorm,moe_act = choisi par la recherche"), std::string::npos);
  // Given by the user: nothing to explain.
  auto given = get("/plan?model=gpt-oss-120b&task=pretrain&tokens=2e10&stack=megatron&grads_16bit=true&gpus=64"
                   "&global_batch=1280&seq=4096&filter=gpu=H100&today=2026-11-30&recompute_modules=layernorm,moe_act");
  ASSERT_TRUE(given);
  EXPECT_EQ(given->body.find("chosen by the search"), std::string::npos);
  // Interleaved stages (a Megatron search at PP > 1) show as in the CLI: "PP8 VP5".
  auto v = get("/plan?model=llama-3.1-70b&task=pretrain&tokens=1e10&stack=megatron&grads_16bit=true&gpus=64"
               "&tp=4&pp=8&micro_batch=1&recompute=full&virtual_stages=5&global_batch=128&seq=8192&filter=gpu=H100"
               "&today=2026-11-30");
  ASSERT_TRUE(v);
  ASSERT_EQ(v->status, 200) << v->body.substr(0, 400);
  EXPECT_NE(v->body.find("TP4 PP8 VP5 DP2 Z1 mb1 rc:full"), std::string::npos) << v->body.substr(0, 2000);
  // The layout cell's abbreviations are explained, only those shown, in the page's language.
  EXPECT_NE(v->body.find("Layout: TP tensor, PP pipeline, VP virtual stages per pipeline rank (interleaved 1F1B), DP "
                         "data parallel degrees; Z ZeRO stage; mb micro-batch; rc: activation recompute (full or "
                         "selective)."),
            std::string::npos)
      << v->body.substr(0, 2000);
  // (one of its plans runs expert TP 1 at TP 2, so ETP is shown and explained too)
  EXPECT_NE(p->body.find("DP data, EP expert, ETP expert tensor parallel degrees; Z ZeRO stage; mb micro-batch; rc: "
                         "activation recompute (full, selective, or the Megatron-Core modules named)."),
            std::string::npos);
  EXPECT_EQ(v->body.find("EP expert"), std::string::npos);  // a dense model: no EP shown, none explained
  EXPECT_NE(fr->body.find("Disposition\u202f: degrés de parallélisme TP tenseur, PP pipeline"), std::string::npos);
}

// trial54 #8: the plan page took stack=megatron from its URL, but its form had no stack field, so
// resubmitting the form planned the default stack. The form now carries it, selected.
TEST_F(PagesQueryE2E, ThePlanFormKeepsTheTrainingStack) {
  auto p = get("/en/plan?model=llama-3.2-1b&task=full&tokens=1e9&stack=megatron&today=2026-11-30");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body.substr(0, 400);
  EXPECT_NE(p->body.find("<select name=\"stack\">"), std::string::npos) << p->body.substr(0, 2000);
  EXPECT_NE(p->body.find("<option value=\"megatron\" selected"), std::string::npos) << p->body.substr(0, 2000);
  auto none = get("/fr/plan?model=llama-3.2-1b&task=full&tokens=1e9&today=2026-11-30");
  ASSERT_TRUE(none);
  EXPECT_NE(none->body.find("pile d’entraînement"), std::string::npos);
  EXPECT_EQ(none->body.find("<option value=\"megatron\" selected"), std::string::npos);
  // The same form switched to serving keeps its stack selection without refusing the request.
  auto serve = get("/en/plan?model=llama-3.2-1b&task=serve&concurrency=4&hours=1&stack=megatron&today=2026-11-30");
  ASSERT_TRUE(serve);
  EXPECT_EQ(serve->status, 200) << serve->body.substr(0, 2000);
  EXPECT_EQ(serve->body.find("class=\"error\""), std::string::npos) << serve->body.substr(0, 2000);
}

// Issue 11: `/offers?q=%zz` (and `/plan?model=%zz...`) passed the bad escape on as text (the
// filter "%zz", the model "%zz") while `/api/offers?q=%zz` answered 400 query_not_percent_encoded.
// Every page now refuses it the same way: 400, an HTML page in the request's language (its prefix,
// else Accept-Language) whose sentence names the parameter (web/locales error_query_not_percent_encoded),
// and none of the query's text: the bytes are not echoed, the language links drop the query.
// (French puts U+202F, a narrow no-break space, inside its quotation marks.)
TEST_F(PagesQueryE2E, BadPercentEncodingIsABadRequestPageInTheRequestsLanguage) {
  struct Case {
    const char* path;
    const char* accept_language;
    const char* lang;
    const char* title;
    const char* sentence;
  };
  const Case cases[] = {
      {"/en/offers?q=%zz", "", "en", "Bad request",
       "the query parameter “q” is not valid percent-encoding (character 1)"},
      {"/fr/offers?q=%zz", "", "fr", "Requête incorrecte",
       "le paramètre de requête «\u202Fq\u202F» n’est pas un encodage-pourcent valide (caractère 1)"},
      {"/th/offers?q=%zz", "", "th", "คำขอไม่ถูกต้อง", "พารามิเตอร์ “q” ในสตริงคิวรีไม่ได้เข้ารหัสแบบเปอร์เซ็นต์ที่ถูกต้อง (อักขระที่ 1)"},
      {"/plan?model=%zz&task=lora&tokens=5e8", "fr-FR,fr;q=0.9", "fr", "Requête incorrecte",
       "le paramètre de requête «\u202Fmodel\u202F» n’est pas un encodage-pourcent valide (caractère 1)"},
      {"/th/size?task=lora&model=llama%2", "", "th", "คำขอไม่ถูกต้อง", "พารามิเตอร์ “model” ในสตริงคิวรีไม่ได้เข้ารหัสแบบเปอร์เซ็นต์ที่ถูกต้อง (อักขระที่ 6)"},
      {"/en/offers/history?id=%G1", "", "en", "Bad request",
       "the query parameter “id” is not valid percent-encoding (character 1)"},
  };
  httplib::Client c("127.0.0.1", server().port);
  c.set_read_timeout(120, 0);
  for (const Case& k : cases) {
    httplib::Headers h;
    if (*k.accept_language) h.emplace("Accept-Language", k.accept_language);
    auto r = c.Get(k.path, h);
    ASSERT_TRUE(r) << k.path;
    EXPECT_EQ(r->status, 400) << k.path << "\n" << r->body.substr(0, 400);
    EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/html", 0), 0u) << k.path;
    EXPECT_EQ(r->get_header_value("Content-Language"), k.lang) << k.path;
    EXPECT_NE(r->body.find(std::string("<h1>") + k.title + "</h1>"), std::string::npos) << k.path << "\n" << r->body;
    EXPECT_NE(r->body.find(k.sentence), std::string::npos) << k.path << "\n" << r->body;
    // The bad bytes and the rest of the query are not echoed (links included).
    const std::string query = std::string(k.path).substr(std::string(k.path).find('?') + 1);
    EXPECT_EQ(r->body.find(query.substr(query.find('=') + 1)), std::string::npos) << k.path << "\n" << r->body;
    EXPECT_EQ(r->body.find("%zz"), std::string::npos) << k.path;
  }
  // Every page refuses it, the ones that read no parameter too; a well-formed escape still works.
  for (const char* page : {"/", "/offers", "/offers/history", "/size", "/plan", "/assistant", "/training",
                           "/generative-ai", "/large-model-training"}) {
    auto r = c.Get(std::string("/en") + (std::string(page) == "/" ? "/" : page) + "?q=%zz");
    ASSERT_TRUE(r) << page;
    EXPECT_EQ(r->status, 400) << page;
    EXPECT_NE(r->body.find("the query parameter “q” is not valid percent-encoding"), std::string::npos) << page;
  }
  auto ok = c.Get("/en/offers?q=gpu%3DH100&today=2026-11-30");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body.substr(0, 400);
  EXPECT_NE(ok->body.find("value=\"gpu=H100\""), std::string::npos);
}

// trial51: an empty history id read "offre : offre est vide" (the label, then a sentence naming
// the same field). After the field's label the sentence is its short form (error_value_empty_labelled).
TEST_F(PagesQueryE2E, AnEmptyHistoryIdNamesTheFieldOnce) {
  const std::pair<const char*, const char*> cases[] = {
      {"/en/offers/history?id=", "offer: empty"}, {"/fr/offers/history?id=", "offre\u202F: vide"},
      {"/th/offers/history?id=", "ข้อเสนอ: ว่างเปล่า"}};
  for (const auto& [path, sentence] : cases) {
    auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_NE(r->body.find(sentence), std::string::npos) << path << "\n" << r->body.substr(0, 3000);
    EXPECT_EQ(r->body.find("offre est vide"), std::string::npos) << path;
  }
}

// The French idle-GPU warning read "2 réplique(s) en TP 1 portent" and "(6 inactifs)" for one idle
// GPU too: the sentence agrees with its replica count (warn_idle_gpus_one, _plural_by replicas),
// and the idle count follows a colon. 1 user on 8 fixed GPUs: 1 replica busy, 7 idle.
TEST_F(PagesQueryE2E, TheIdleGpuWarningAgreesWithItsReplicaCount) {
  auto one = get("/fr/plan?model=llama-3.1-8b&task=serve&concurrency=1&gpus=8&hours=10&today=2026-11-30");
  ASSERT_TRUE(one);
  EXPECT_NE(one->body.find("Sert sur 1 des 8 GPU loués (inactifs\u202F: 7)\u202F: 1 réplique en TP 1 porte la charge"),
            std::string::npos)
      << one->body.substr(0, 4000);
  auto two = get("/fr/plan?model=llama-3.1-8b&task=serve&concurrency=2&gpus=8&hours=10&today=2026-11-30");
  ASSERT_TRUE(two);
  EXPECT_NE(two->body.find("2 répliques en TP 1 portent la charge"), std::string::npos) << two->body.substr(0, 4000);
  EXPECT_EQ(two->body.find("réplique(s)"), std::string::npos);
}

// trial52 #9: a negative duration on the plan form read "-3d is not a positive number: give a number
// above 0" where the CLI asks for "a positive duration such as 72h". A non-positive duration has
// its own sentence (error_not_positive_duration); a negative count keeps the number's.
TEST_F(PagesQueryE2E, ANegativeDurationIsAskedAsADuration) {
  const std::pair<const char*, const char*> cases[] = {
      {"/en/plan?model=llama-3.1-8b&task=lora&tokens=1e8&deadline=-3d",
       "deadline: -3d is not a positive duration: give one such as 72h, 30d, 2w, 90m or 3600s"},
      {"/fr/plan?model=llama-3.1-8b&task=lora&tokens=1e8&deadline=-3d", "-3d n’est pas une durée positive"},
      {"/en/plan?model=llama-3.1-8b&task=lora&tokens=-5", "-5 is not a positive number: give a number above 0"}};
  for (const auto& [path, sentence] : cases) {
    auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_NE(r->body.find(sentence), std::string::npos) << path << "\n" << r->body.substr(0, 3000);
  }
}

// trial52 #8: the French plan form refused "50,5" ("n'est pas un nombre") while the page writes its
// own numbers with a comma and `ask` reads "1500,50 dollars". On /fr a number, count or duration
// of digits, one comma and digits is the decimal (a budget of 50,5 = $50.50); English keeps the dot.
TEST_F(PagesQueryE2E, TheFrenchFormReadsADecimalComma) {
  const std::string q = "/plan?model=llama-3.1-8b&task=lora&tokens=1e8&today=2026-11-30&budget=";
  auto fr = get("/fr" + q + "50,5");
  ASSERT_TRUE(fr);
  EXPECT_EQ(fr->status, 200) << fr->body.substr(0, 2000);
  EXPECT_EQ(fr->body.find("n’est pas un nombre"), std::string::npos) << fr->body.substr(0, 3000);
  auto dot = get("/fr" + q + "50.5");
  ASSERT_TRUE(dot);
  // The same plans: the comma and the dot are the same budget.
  auto plans_of = [](const std::string& body) { return body.substr(body.find("<table")); };
  EXPECT_EQ(plans_of(fr->body).substr(0, 4000), plans_of(dot->body).substr(0, 4000));
  auto en = get("/en" + q + "50,5");
  ASSERT_TRUE(en);
  EXPECT_NE(en->body.find("is not a number"), std::string::npos) << en->body.substr(0, 3000);
}

// trial52 #7: the comparison pages quoted each GPU's cheapest price with no provider, source or date
// ("$0.15 (stale)"). Each price now names its provider and the day it was seen, linked to that
// offer's price history, which opens.
TEST_F(PagesQueryE2E, ComparisonPricesNameTheirOfferAndDate) {
  for (const char* page : {"/en/training", "/fr/generative-ai", "/th/large-model-training"}) {
    auto r = get(page);
    ASSERT_TRUE(r) << page;
    ASSERT_EQ(r->status, 200) << page;
    const std::regex cell(R"re(<br><span class="muted"><a href="(/(en|fr|th)/offers/history\?id=[^"]+)">([a-z0-9-]+)</a>, )re");
    std::smatch m;
    const std::string body = r->body;
    ASSERT_TRUE(std::regex_search(body, m, cell)) << page << "\n" << body.substr(0, 3000);
    auto history = get(std::regex_replace(m[1].str(), std::regex("&amp;"), "&"));
    ASSERT_TRUE(history);
    EXPECT_EQ(history->status, 200) << m[1].str();
    EXPECT_NE(history->body.find(m[3].str()), std::string::npos) << m[1].str();
  }
}

// trial53 #8/#9: the plan form had no max_gpus field, and a quant alias (awq, gguf_q4_k_m) left the
// select on "default", so resubmitting planned 16-bit weights. The form keeps both.
TEST_F(PagesQueryE2E, ThePlanFormKeepsMaxGpusAndQuantAliases) {
  auto r = get("/en/plan?model=llama-3.1-8b&task=serve&concurrency=4&hours=10&quant=awq&max_gpus=2&today=2026-11-30");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("<option value=\"int4\" selected>"), std::string::npos) << r->body.substr(0, 3000);
  EXPECT_NE(r->body.find("name=\"max_gpus\" type=\"number\" min=\"1\" value=\"2\""), std::string::npos);
  auto g = get("/en/plan?model=llama-3.1-8b&task=serve&concurrency=4&hours=10&quant=gguf_q4_k_m&engine=llama.cpp&today=2026-11-30");
  ASSERT_TRUE(g);
  EXPECT_NE(g->body.find("<option value=\"q4_k_m\" selected>"), std::string::npos) << g->body.substr(0, 3000);
}

// trial50 #21: the comparison pages take no query parameters; one was a 200 page that ignored it
// (?sort=foo), where the form pages refuse an unknown field. Refused in the page's language.
TEST_F(PagesQueryE2E, TheComparisonPagesRefuseAQueryParameter) {
  for (const char* page : {"/training", "/generative-ai", "/large-model-training"}) {
    auto en = get(std::string("/en") + page + "?sort=foo");
    ASSERT_TRUE(en) << page;
    EXPECT_EQ(en->status, 400) << page;
    EXPECT_NE(en->body.find("sort"), std::string::npos) << page << "\n" << en->body.substr(0, 1500);
    auto plain = get(std::string("/fr") + page);
    ASSERT_TRUE(plain) << page;
    EXPECT_EQ(plain->status, 200) << page;
  }
  auto fr = get("/fr/generative-ai?foo=1");
  ASSERT_TRUE(fr);
  EXPECT_EQ(fr->status, 400);
  EXPECT_NE(fr->body.find("<h1>Requête incorrecte</h1>"), std::string::npos) << fr->body.substr(0, 1500);
  EXPECT_EQ(fr->body.find("this page"), std::string::npos) << fr->body.substr(0, 1500);
}

// trial42 D6: a query value that decodes to a NUL or another control character was echoed raw
// into the page's error text. It is refused at the parameter, in the page's language, and no such
// byte reaches the page.
TEST_F(PagesQueryE2E, AControlCharacterInAQueryValueIsRefusedNotEchoed) {
  for (const char* bad : {"%00", "%01", "%1B", "%7F"}) {
    auto r = get(std::string("/en/plan?model=llama-3.1-8b&task=lora&tokens=1e8&recompute_modules=layernorm") + bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(r->status, 400) << bad;
    EXPECT_EQ(r->body.find('\0'), std::string::npos) << bad;
    EXPECT_EQ(r->body.find('\x01'), std::string::npos) << bad;
    EXPECT_EQ(r->body.find('\x1b'), std::string::npos) << bad;
    EXPECT_EQ(r->body.find('\x7f'), std::string::npos) << bad;
    EXPECT_NE(r->body.find("the query parameter “recompute_modules” holds a control character (character 10)"),
              std::string::npos)
        << bad << ": " << r->body.substr(0, 1500);
  }
  auto fr = get("/fr/plan?model=llama-3.1-8b&task=lora&tokens=1e8&stack=megatron%00");
  ASSERT_TRUE(fr);
  EXPECT_EQ(fr->status, 400);
  EXPECT_NE(fr->body.find("contient un caractère de contrôle (caractère 9)"), std::string::npos) << fr->body.substr(0, 1500);
}

// The --ep-overlap refusals say on the page which of Megatron-Core's rules the request breaks, in
// the page's language (trial45 D4: one generic sentence for all of them).
TEST_F(PagesQueryE2E, AnEpOverlapRefusalNamesTheRuleItBreaks) {
  auto stack = get("/en/plan?model=gpt-oss-120b&task=pretrain&tokens=1e10&stack=fsdp&ep_overlap=true");
  ASSERT_TRUE(stack);
  EXPECT_EQ(stack->status, 400);
  EXPECT_NE(stack->body.find("ep_overlap is Megatron-Core’s switch: it runs with the megatron stack (or none given), "
                             "not this one"),
            std::string::npos)
      << stack->body.substr(0, 1500);
  EXPECT_NE(stack->body.find("training stack"), std::string::npos);
  auto full = get("/fr/plan?model=gpt-oss-120b&task=pretrain&tokens=1e10&stack=megatron&ep_overlap=true&recompute=full");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 400);
  EXPECT_NE(full->body.find("le recalcul complet ne peut pas tourner avec ep_overlap (Megatron-Core)"), std::string::npos)
      << full->body.substr(0, 1500);
  auto vp = get("/en/plan?model=gpt-oss-120b&task=pretrain&tokens=1e10&ep_overlap=true&pp=2&virtual_stages=1");
  ASSERT_TRUE(vp);
  EXPECT_NE(vp->body.find("ep_overlap at pp above 1 needs 2 or more virtual stages"), std::string::npos)
      << vp->body.substr(0, 1500);
}

TEST_F(PagesQueryE2E, GroupsCountEveryMatchingOfferAsTheApiDoes) {
  auto api = get("/api/offers?group_by=gpu&today=2026-11-30");
  ASSERT_TRUE(api && api->status == 200);
  const nlohmann::json groups = nlohmann::json::parse(api->body);
  auto page = get("/offers?group_by=gpu&today=2026-11-30");
  ASSERT_TRUE(page && page->status == 200);
  std::size_t checked = 0;
  for (const auto& g : groups) {
    const std::string gpu = g.value("gpu", std::string());
    if (gpu.empty() || g["offers"].get<int>() < 50) continue;  // the large groups: the page lists at most 300 rows
    const std::regex cell(std::regex_replace(gpu, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                          R"(</td><td class="num">([0-9]+)</td><td class="num">\$([0-9.]+)</td><td>\$([0-9.]+) – \$([0-9.]+)</td>)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(page->body, m, cell)) << gpu;
    EXPECT_EQ(std::stoi(m[1]), g["offers"].get<int>()) << gpu;
    // trial50 #12: the page's statistics are the API's (median, and min–max without flagged prices).
    EXPECT_NEAR(std::stod(m[2]), g["median_usd_per_gpu_hour"].get<double>(), 0.0051) << gpu;
    EXPECT_NEAR(std::stod(m[3]), g["min_usd_per_gpu_hour"].get<double>(), 0.0051) << gpu;
    EXPECT_NEAR(std::stod(m[4]), g["max_usd_per_gpu_hour"].get<double>(), 0.0051) << gpu;
    ++checked;
  }
  EXPECT_GE(checked, 2u);
  // In the API's order (by median), not alphabetical: the first group row is the API's first group.
  const std::regex first_row(R"(<table id="groups"[^]*?<tbody><tr><td>([^<]+)</td>)");
  std::smatch f;
  ASSERT_TRUE(std::regex_search(page->body, f, first_row));
  EXPECT_EQ(f[1].str(), groups[0]["gpu"].get<std::string>());
}

// trial50 #10: the plan form had no engine, KV cache type, prompt/output tokens, requests, GPUs or
// TP fields: typed in the URL they worked, and a resubmitted form lost them.
TEST_F(PagesQueryE2E, ThePlanFormCarriesTheServingAndClusterFields) {
  auto r = get("/en/plan?model=llama-3.1-8b&task=serve&concurrency=10&engine=tensorrt-llm&kv_dtype=fp8&prompt_tokens=2000"
               "&output_tokens=500&gpus=1&tp=1&today=2026-12-01");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body.substr(0, 1500);
  for (const char* echoed : {R"(<option value="tensorrt-llm" selected)", R"(<option value="fp8" selected)",
                             R"(name="prompt_tokens" type="number" min="1" value="2000")",
                             R"(name="output_tokens" type="number" min="1" value="500")", R"(name="gpus" type="number" min="1" value="1")",
                             R"(name="tp" type="number" min="1" value="1")", R"(name="requests" value="")"})
    EXPECT_NE(r->body.find(echoed), std::string::npos) << echoed;
  // The same form submitted for a fine-tune, the serving fields left empty: planned, no error.
  auto lora = get("/fr/plan?model=llama-3.1-8b&task=lora&tokens=1e8&engine=&kv_dtype=&prompt_tokens=&output_tokens=&requests="
                  "&gpus=&tp=&today=2026-12-01");
  ASSERT_TRUE(lora);
  EXPECT_EQ(lora->status, 200);
  EXPECT_EQ(lora->body.find("class=\"error\""), std::string::npos) << lora->body.substr(0, 1500);
}

TEST_F(PagesQueryE2E, ASecondServerOnTheSameAddressFailsToListen) {
  const std::string port = std::to_string(server().port);
  const gpuplan::e2e::RunResult r =
      run_shell("timeout 20 '" + std::string(GPUPLAN_BINARY) + "' --db '" + (dir_ / "second.sqlite").string() +
                "' serve --listen 127.0.0.1:" + port + " 2>&1");
  EXPECT_EQ(r.exit_code, 5) << r.out;  // 124 would mean it bound and served
  EXPECT_NE(r.out.find("--listen: cannot listen on 127.0.0.1:" + port), std::string::npos) << r.out;
}

}  // namespace
