// End-to-end regression tests for what the new-user trial of issue 10 (trial10c, a clean clone,
// the web site and the JSON API in en/fr/th) found on 2026-12-04, each on the input that showed
// it, through one running `gpuplan serve` on the bundled catalog (a fresh store) on a loopback port.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using nlohmann::json;

class ServeTrial10fE2E : public gpuplan::e2e::ServedBinaryE2E<ServeTrial10fE2E> {
 public:
  static constexpr const char* kName = "serve-trial10f";
  static httplib::Client& client() {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c;
  }
  static httplib::Result get(const std::string& path) { return client().Get(path); }
  static httplib::Result post(const std::string& path, const std::string& body) {
    return client().Post(path, body, "application/json");
  }
};

using gpuplan::e2e::raw_http;

/// The text of the element with `id` (its inner HTML up to the next closing tag of its kind).
std::string element(const std::string& body, const std::string& id, const std::string& tag = "p") {
  const std::size_t at = body.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::size_t from = body.find('>', at) + 1;
  return body.substr(from, body.find("</" + tag + ">", from) - from);
}

/// The text of every element of class "error" (a page's errors), joined.
std::string errors(const std::string& body) {
  std::string out;
  for (std::size_t at = body.find("class=\"error\""); at != std::string::npos; at = body.find("class=\"error\"", at + 1)) {
    const std::size_t from = body.find('>', at) + 1;
    out += body.substr(from, body.find('<', from) - from) + "\n";
  }
  return out;
}

// 1. A budget of 1e30 showed with the digits of its double, which the user never typed
// ("1,000,000,000,000,000,019,884,624,838,656"), in en, fr and th. Past 15 digits a double's
// value is shown in scientific form with its shortest digits ("1 × 10³⁰"; the API's message says
// "1e+30"), never C's exponent form on a page; the bound (10^12, PlanRequest's kMaxBudgetUsd) stays grouped.
TEST_F(ServeTrial10fE2E, AHugeBudgetIsShownInScientificFormNotWithInventedDigits) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/en/plan?model=llama-3.1-70b&task=lora&tokens=5e8&budget=1e30",
       "budget (USD): 1 × 10³⁰ is implausibly large (at most 1,000,000,000,000)"},
      {"/fr/plan?model=llama-3.1-70b&task=lora&tokens=5e8&budget=1e30",
       "1 × 10³⁰ est invraisemblablement grand (au plus 1\u202f000\u202f000\u202f000\u202f000)"},
      {"/th/plan?model=llama-3.1-70b&task=lora&tokens=5e8&budget=1e30", "1 × 10³⁰ ใหญ่เกินจริง (ไม่เกิน 1,000,000,000,000)"}};
  for (const auto& [path, sentence] : cases) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(errors(r->body).find(sentence), std::string::npos) << path << "\n" << errors(r->body);
    EXPECT_EQ(r->body.find("19,884,624,838,656"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("19\u202f884\u202f624\u202f838\u202f656"), std::string::npos) << path;
  }
  // tokens=1e30: refused as a count a double cannot hold exactly, in the same form.
  const auto t = get("/en/plan?model=llama-3.1-70b&task=lora&tokens=1e30");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->status, 400);
  EXPECT_NE(errors(t->body).find("training tokens: 1 × 10³⁰ is not held exactly"), std::string::npos) << errors(t->body);
  EXPECT_EQ(t->body.find("19,884,624,838,656"), std::string::npos);
}

// 2. The English plan and assistant pages showed the CLI's words in the engine's warnings:
// "(--include-flagged ranks them together; --max-price-age changes the limit)", "(--preemptions-per-day
// plans it)", "(`gpuplan gpus`)". A page names a setting by its form label (web/locales/en.json
// field_include_flagged "include flagged prices"), as the API names it by its JSON field.
TEST_F(ServeTrial10fE2E, EnglishPagesNameSettingsByTheirLabelsNotByCliFlags) {
  const std::string sentence = httplib::detail::encode_query_param("fine-tune llama 3.1 70b with lora on 500M tokens");
  for (const std::string& path : std::vector<std::string>{"/en/plan?model=llama-3.1-70b&task=lora&tokens=5e8", "/en/assistant?q=" + sentence}) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    ASSERT_EQ(r->status, 200) << path;
    const std::size_t from = r->body.find("<main");
    ASSERT_NE(from, std::string::npos) << path;
    const std::string main = r->body.substr(from, r->body.find("</main>") - from);
    // The bundled catalog has stale and undated prices and spot prices without a preemption rate
    // (measured: 271 plans rank after, 336 offers), so both warnings are on the page.
    EXPECT_NE(main.find("(“include flagged prices” ranks them together; “maximum price age (days)” changes the limit)"),
              std::string::npos) << path;
    EXPECT_NE(main.find("(“preemptions per day” plans it)"), std::string::npos) << path;
    // A flag: "--" and a letter after a space or bracket (a URL's "meta-llama--Meta" is none).
    std::smatch flag;
    EXPECT_FALSE(std::regex_search(main, flag, std::regex(R"([ (“]--[a-z])"))) << path << ": " << flag.str() << " in\n"
                                                                                  << flag.prefix().str().substr(flag.prefix().length() > 300 ? flag.prefix().length() - 300 : 0);
    for (const std::string cli : {"gpuplan gpus", "gpuplan models", "`gpuplan", "--json"})
      EXPECT_EQ(main.find(cli), std::string::npos) << path << ": " << cli;
  }
  // The API keeps its own words (JSON field names).
  const auto api = post("/api/plan", R"({"model": "llama-3.1-70b", "task": "lora", "tokens": 5e8, "limit": 1})");
  ASSERT_TRUE(api);
  ASSERT_EQ(api->status, 200) << api->body.substr(0, 300);
  EXPECT_NE(api->body.find("(include_flagged ranks them together; max_price_age changes the limit)"), std::string::npos);
}

// 3a. POST /api/estimate with task serve answered the message "serve" alone.
TEST_F(ServeTrial10fE2E, AnEstimateOfServingSaysEstimateIsForTraining) {
  const auto r = post("/api/estimate", R"({"model":"llama-3.1-70b","task":"serve","gpu":"H100 SXM","gpus":8})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  const json e = json::parse(r->body);
  EXPECT_EQ(e["field"], "/task");
  EXPECT_EQ(e["message_code"], "estimate_training_only");
  EXPECT_EQ(e["message"], "estimate times training runs, not serve (serving is planned by plan with task serve)");
}

// 3b. A method no server knows gets 501 whose expected text listed PUT, PATCH and DELETE, which
// every route answers 405: it lists the methods some route takes.
TEST_F(ServeTrial10fE2E, NotImplementedListsOnlyMethodsSomeRouteTakes) {
  const std::string reply = raw_http(server().port, "FOO /api/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_NE(reply.find(" 501 "), std::string::npos) << reply;
  const json e = json::parse(reply.substr(reply.find("\r\n\r\n") + 4));
  EXPECT_EQ(e["expected"], "GET, HEAD, POST or OPTIONS");
  // PUT is known and refused with 405 on every route.
  const auto put = client().Put("/api/plan", "{}", "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
}

// 3c. Content-Length: -1 got 413 (read as 2^64 - 1 bytes): it is not a length, 400 (RFC 9112 §6.3).
TEST_F(ServeTrial10fE2E, ANegativeContentLengthIsABadRequest) {
  for (const std::string length : {"-1", "abc", "1e3"}) {
    const std::string reply = raw_http(
        server().port, "POST /api/plan HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\nConnection: close\r\n\r\n{}");
    ASSERT_NE(reply.find(" 400 "), std::string::npos) << length << "\n" << reply;
    const json e = json::parse(reply.substr(reply.find("\r\n\r\n") + 4));
    EXPECT_EQ(e["code"], "invalid_input") << length;
    EXPECT_EQ(e["message"], "Content-Length '" + length + "' is not a number of bytes");
  }
}

// 3c'. Two different Content-Length fields (2 and 3) were accepted, the first one read (trial11):
// the framing is invalid, 400 (RFC 9112 §6.3). Two equal ones stay one length.
TEST_F(ServeTrial10fE2E, TwoDifferentContentLengthsAreABadRequest) {
  const std::string twice = raw_http(server().port,
                                     "POST /api/plan HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n"
                                     "Connection: close\r\n\r\n{} ");
  ASSERT_NE(twice.find(" 400 "), std::string::npos) << twice;
  const json e = json::parse(twice.substr(twice.find("\r\n\r\n") + 4));
  EXPECT_EQ(e["message"], "two different Content-Length fields");
  const std::string same = raw_http(server().port,
                                    "POST /api/plan HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n"
                                    "Connection: close\r\n\r\n{}");
  EXPECT_EQ(same.find("two different Content-Length"), std::string::npos) << same;
}

// 3d. /api/models?name=%c3%28 (not UTF-8) was a 404 "unknown model preset" echoing the bytes,
// where a filter with the same bytes is a 400: now 400 text_not_clean at /name.
TEST_F(ServeTrial10fE2E, AModelNameThatIsNotUtf8IsABadRequest) {
  const auto r = get("/api/models?name=%c3%28");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  const json e = json::parse(r->body);
  EXPECT_EQ(e["field"], "/name");
  EXPECT_EQ(e["message_code"], "text_not_clean");
  EXPECT_EQ(e["values"]["position"], "1:1");
  const auto f = get("/api/offers?q=%c3%28");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->status, 400);
}

// 3e. model_missing's expected text in the API offered "config config.json, safetensors FILE",
// two CLI-only fields the API refuses (model_fields.hpp): it names only what the API takes.
TEST_F(ServeTrial10fE2E, TheApisModelMissingOffersOnlyWhatTheApiTakes) {
  const auto r = post("/api/plan", R"({"task":"lora","tokens":1e8})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  const json e = json::parse(r->body);
  EXPECT_EQ(e["message_code"], "model_missing");
  EXPECT_EQ(e["expected"], "one of model PRESET or params N");
  const auto c = post("/api/size", R"({"config":"config.json"})");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 400) << c->body;  // the API refuses it
  // The CLI still offers all four.
  const gpuplan::e2e::RunResult cli = run("size");
  EXPECT_NE(cli.out.find("--config config.json, --safetensors FILE"), std::string::npos) << cli.out;
}

// 4a. A page path that is not valid percent-encoding (/fr/off%zzers) was a 404: it is a 400 page
// in its language, as the API's path_not_percent_encoded.
TEST_F(ServeTrial10fE2E, APagePathThatIsNotPercentEncodedIsABadRequestPage) {
  const auto r = get("/fr/off%zzers");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(element(r->body, "bad-request"),
            "le segment de chemin «\u202foff%zzers\u202f» n’est pas un encodage-pourcent valide (caractère 4)\u202f: "
            "écrivez %XX avec deux chiffres hexadécimaux, un signe pour cent en %25")
      << r->body;
  const auto api = get("/api/offers/off%zz/history");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 400);
}

}  // namespace

namespace {

/// The header cells of the first table after `marker` (its <thead>), as text.
std::vector<std::string> header_cells(const std::string& body, const std::string& marker) {
  std::vector<std::string> cells;
  const std::size_t at = body.find(marker);
  if (at == std::string::npos) return cells;
  const std::size_t end = body.find("</thead>", at);
  for (std::size_t th = body.find("<th", at); th != std::string::npos && th < end; th = body.find("<th", th + 1)) {
    if (body.compare(th, 7, "<thead>") == 0) continue;
    const std::size_t from = body.find('>', th) + 1;
    cells.push_back(body.substr(from, body.find("</th>", from) - from));
  }
  return cells;
}

// 4b. /fr/offers?q=%ff%fe put the English detail "(invalid UTF-8 (byte 0xff))" in the French
// sentence: the detail is in the page's language (web/locales text_problem_*), the byte as sent.
TEST_F(ServeTrial10fE2E, AFilterByteProblemIsWordedInThePagesLanguage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/fr/offers?q=%ff%fe", "le filtre contient un caractère illisible (UTF-8 invalide (octet 0xff))"},
      {"/th/offers?q=%ff%fe", "ตัวกรองมีอักขระที่อ่านไม่ได้ (ไบต์ที่ไม่ใช่ UTF-8 (ไบต์ 0xff))"},
      {"/en/offers?q=%ff%fe", "the filter holds a character it cannot read (invalid UTF-8 (byte 0xff))"},
      {"/fr/offers?q=gpu%3DH100%01", "le filtre contient un caractère illisible (caractère de contrôle (octet 0x01))"},
      {"/fr/offers?q=gpu%3DH100%e2%80%ae", "(caractère de contrôle bidirectionnel U+202E)"}};
  for (const auto& [path, sentence] : cases) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(errors(r->body).find(sentence), std::string::npos) << path << "\n" << errors(r->body);
  }
  const auto fr = get("/fr/offers?q=%ff%fe");
  ASSERT_TRUE(fr);
  EXPECT_EQ(fr->body.find("invalid UTF-8"), std::string::npos);
}

// 4c. The French generative-AI guide called a serving run "un entraînement" in the provider
// section's heading (guide_provider_title, shared by the guides): it says "une tâche", as the
// English "a run" and the Thai "งาน".
TEST_F(ServeTrial10fE2E, TheFrenchGenerativeAiGuideDoesNotCallServingATrainingRun) {
  const auto r = get("/fr/generative-ai");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("Ce qui, chez le fournisseur, fait réussir ou échouer une tâche"), std::string::npos);
  EXPECT_EQ(r->body.find("un entraînement"), std::string::npos);
}

// 4d. The French offers and size tables read "GPU | GPU": the GPU model and the number of GPUs had
// the same French label (col_gpu, col_count). Every column header of each table is distinct.
TEST_F(ServeTrial10fE2E, FrenchTableColumnsHaveDistinctHeaders) {
  for (const auto& [path, marker] : std::vector<std::pair<std::string, std::string>>{
           {"/fr/offers", "<table"}, {"/fr/size?model=llama-3.1-8b&task=serve", "id=\"fits\""}}) {
    const auto r = get(path);
    ASSERT_TRUE(r) << path;
    ASSERT_EQ(r->status, 200) << path;
    const std::vector<std::string> cells = header_cells(r->body, marker);
    ASSERT_GE(cells.size(), 2u) << path;
    EXPECT_EQ(cells[0], "GPU") << path;
    EXPECT_EQ(cells[1], "nombre de GPU") << path;
    for (std::size_t i = 0; i < cells.size(); ++i)
      for (std::size_t j = i + 1; j < cells.size(); ++j)
        if (!cells[i].empty()) {
          EXPECT_NE(cells[i], cells[j]) << path << ": columns " << i << " and " << j;
        }
  }
}

}  // namespace
