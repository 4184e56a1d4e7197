// End-to-end regression tests for the defects D2-D4 the new-user trial of issue 10 (the JSON API
// and the web site) left on 2026-12-04, each on the input that showed it: through the real
// `gpuplan` binary and a real `gpuplan serve` on 127.0.0.1 (a read-only one, as a new user starts
// it, and where a case needs it one with a write token), on the bundled catalog.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using nlohmann::json;

class ServeTrial10cE2E : public gpuplan::e2e::ServedBinaryE2E<ServeTrial10cE2E> {
 public:
  static constexpr const char* kName = "serve-trial10c";
  static httplib::Result post(int port, const std::string& path, const json& body) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    return c.Post(path, body.dump(), "application/json");
  }
  static httplib::Result get(int port, const std::string& path) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    return c.Get(path);
  }
};

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

// D3: a plan whose filter matches no offer. The API said "widen the FILTER" (the CLI's positional
// argument) and, on a read-only server, "import more offers (POST /api/import)", a route that
// answers 403 there. Now: the request's own field (`filter`), and the import only where the
// server has an import route (a write token).
TEST_F(ServeTrial10cE2E, ANoOfferPlanNamesTheFilterFieldAndSuggestsAnImportOnlyWhereTheServerTakesOne) {
  // price < $0.001/h: no offer of the bundled catalog is that cheap.
  const json body = {{"model", "llama-3.1-8b"}, {"task", "lora"}, {"tokens", 1e8}, {"filter", "price<0.001"}};
  // The CLI: its own words (the positional FILTER, `gpuplan import FILE`).
  const json cli = run_json("plan 'price<0.001' --model llama-3.1-8b --task lora --tokens 1e8", 1);  // 1: no plan
  ASSERT_EQ(cli["no_plan"]["code"], "no_offer_matches") << cli.dump();
  EXPECT_EQ(strings(cli["no_plan"]["suggestions"]),
            (std::vector<std::string>{"widen the FILTER", "import more offers (`gpuplan import FILE`)"}));
  EXPECT_EQ(strings(cli["no_plan"]["suggestion_codes"]), (std::vector<std::string>{"widen_filter", "import_offers"}));

  // A read-only server (no write token: POST /api/import answers 403 read_only).
  const int port = server().port;
  ASSERT_GT(port, 0);
  auto r = post(port, "/api/plan", body);
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  const json plan = json::parse(r->body);
  ASSERT_EQ(plan["no_plan"]["code"], "no_offer_matches") << r->body;
  EXPECT_EQ(strings(plan["no_plan"]["suggestions"]), std::vector<std::string>{"widen the filter"});
  EXPECT_EQ(strings(plan["no_plan"]["suggestion_codes"]), std::vector<std::string>{"widen_filter"});
  EXPECT_EQ(r->body.find("FILTER"), std::string::npos);
  EXPECT_EQ(r->body.find("/api/import"), std::string::npos);
  auto refused = post(port, "/api/import", json::object());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);  // the route the suggestion named is closed here
  // Its plan page says the same in each language: the filter, no import.
  for (const auto& [lang, widen, import] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"en", "widen the filter", "import more offers"},
           {"fr", "élargir le filtre", "importer davantage"},
           {"th", "ขยายเงื่อนไขตัวกรอง", "นำเข้าข้อเสนอเพิ่ม"}}) {
    auto page = get(port, "/" + lang + "/plan?model=llama-3.1-8b&task=lora&tokens=1e8&filter=price%3C0.001");
    ASSERT_TRUE(page && page->status == 200) << lang;
    EXPECT_NE(page->body.find(widen), std::string::npos) << lang;
    EXPECT_EQ(page->body.find(import), std::string::npos) << lang;
  }

  // A server with a write token: a client with the token can import, so the import is suggested
  // as the API's route.
  gpuplan::e2e::ServeOptions o;
  o.db = (dir_ / "writable.sqlite").string();
  o.home = dir_;
  o.write_token = "0123456789abcdef0123456789abcdef";
  gpuplan::e2e::ServeProcess writable = gpuplan::e2e::start_serve(o);
  ASSERT_GT(writable.port, 0) << writable.first_line;
  auto w = post(writable.port, "/api/plan", body);
  ASSERT_TRUE(w && w->status == 200) << (w ? w->body : "");
  const json wplan = json::parse(w->body);
  EXPECT_EQ(strings(wplan["no_plan"]["suggestions"]),
            (std::vector<std::string>{"widen the filter", "import more offers (POST /api/import)"}));
  EXPECT_EQ(strings(wplan["no_plan"]["suggestion_codes"]), (std::vector<std::string>{"widen_filter", "import_offers"}));
  auto wpage = get(writable.port, "/plan?model=llama-3.1-8b&task=lora&tokens=1e8&filter=price%3C0.001");
  ASSERT_TRUE(wpage && wpage->status == 200);
  EXPECT_NE(wpage->body.find("import more offers"), std::string::npos);
  EXPECT_EQ(gpuplan::e2e::stop_serve(writable), 0);
}

// D4: an unknown model's suggestions are close and the closest first; a name that begins several
// presets' names is refused with them all, never resolved to one silently. The lists below are
// written by hand from the bundled preset names (`gpuplan models`): the llama presets are
// llama-2-7b, llama-2-13b, llama-2-70b-chat, llama-3.1-8b, llama-3.1-70b, llama-3.1-405b,
// llama-3.2-1b-instruct, llama-3.2-3b-instruct, llama-4-scout-17b-16e-instruct (in that order);
// the Mistral ones mistral-7b-v0.1 and mistral-7b-instruct-v0.3.
TEST_F(ServeTrial10cE2E, UnknownModelSuggestionsAreCloseAndOrderedAndAnAmbiguousNameIsRefused) {
  const int port = server().port;
  ASSERT_GT(port, 0);
  const auto api_error = [&](const std::string& model, int status) {
    auto r = post(port, "/api/size", json{{"model", model}, {"task", "serve"}});
    EXPECT_TRUE(r && r->status == status) << model << " " << (r ? r->body : "");
    return r ? json::parse(r->body) : json::object();
  };
  // "llama-3.1-71b": version 3.1 kept (never llama-2, llama-3.2 or llama-4), then by size: 70B
  // (71/70 = 1.01), 405B (405/71 = 5.7), 8B (71/8 = 8.9).
  const json e71 = api_error("llama-3.1-71b", 404);
  EXPECT_EQ(e71["message_code"], "unknown_model");
  EXPECT_EQ(e71["values"]["near"], "llama-3.1-70b, llama-3.1-405b, llama-3.1-8b");
  const auto cli71 = run("size --model llama-3.1-71b --task serve");
  EXPECT_EQ(cli71.exit_code, 3) << cli71.out;
  EXPECT_NE(cli71.out.find("a preset such as llama-3.1-70b, llama-3.1-405b, llama-3.1-8b (see `gpuplan models`)"), std::string::npos)
      << cli71.out;
  EXPECT_EQ(cli71.out.find("llama-2"), std::string::npos) << cli71.out;

  // GET /api/models?name=llama3-70b: "llama3" is llama 3 (separator and version normalised), so
  // the 3.x presets only, 3.1-70b first (the same size), then by size: 405B (5.8×), 8B (8.75×),
  // 3B (23×), 1B (70×).
  auto models = get(port, "/api/models?name=llama3-70b");
  ASSERT_TRUE(models && models->status == 404) << (models ? models->body : "");
  const json m = json::parse(models->body);
  EXPECT_EQ(m["message_code"], "unknown_model");
  EXPECT_EQ(m["values"]["near"], "llama-3.1-70b, llama-3.1-405b, llama-3.1-8b, llama-3.2-3b-instruct, llama-3.2-1b-instruct");

  // "lama3": one edit from "llama" with version 3: the 3.x presets (no size typed: catalog order).
  const json lama = api_error("lama3", 404);
  EXPECT_EQ(lama["message_code"], "unknown_model");
  EXPECT_EQ(lama["values"]["near"], "llama-3.1-8b, llama-3.1-70b, llama-3.1-405b, llama-3.2-1b-instruct, llama-3.2-3b-instruct");

  // "mistral-7b" began both Mistral presets and resolved silently to v0.1: now refused, both named.
  const json amb = api_error("mistral-7b", 400);
  EXPECT_EQ(amb["message_code"], "ambiguous_model");
  EXPECT_EQ(amb["field"], "/model");
  EXPECT_EQ(amb["values"]["candidates"], "mistral-7b-v0.1, mistral-7b-instruct-v0.3");
  const auto cli_amb = run("size --model mistral-7b --task serve");
  EXPECT_EQ(cli_amb.exit_code, 2) << cli_amb.out;
  EXPECT_NE(cli_amb.out.find("model name 'mistral-7b' matches 2 presets: mistral-7b-v0.1, mistral-7b-instruct-v0.3"), std::string::npos)
      << cli_amb.out;
  auto page = get(port, "/fr/size?model=mistral-7b&task=serve");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 400);
  EXPECT_NE(page->body.find("correspond à plusieurs modèles prédéfinis : mistral-7b-v0.1, mistral-7b-instruct-v0.3"), std::string::npos);
  // Each full name still resolves.
  for (const char* full : {"mistral-7b-v0.1", "mistral-7b-instruct-v0.3"}) {
    auto r = post(port, "/api/size", json{{"model", full}, {"task", "serve"}});
    ASSERT_TRUE(r && r->status == 200) << full;
    EXPECT_EQ(json::parse(r->body)["model"]["name"], full);
  }
  // The earlier trial's cases keep their answers (web10_e2e_test.cpp AnUnknownModelSuggestsOnlyCloseNames).
  EXPECT_EQ(api_error("mistral-8b", 404)["values"]["near"], "mistral-7b-v0.1, mistral-7b-instruct-v0.3");
  EXPECT_EQ(api_error("zzzz-9000", 404)["message_code"], "unknown_model_no_near");
}

// D2: `model.source` was the repository path data/models/<org>__<name>/config.json, which a user
// cannot open. Now the Hugging Face repo and its address, and where the bundled config.json was
// copied from at its commit, written here from data/models/PROVENANCE.md's rows.
TEST_F(ServeTrial10cE2E, AModelSourceIsItsHuggingFaceAddressAndWhereTheConfigWasCopiedFrom) {
  // Row meta-llama__Llama-3.1-70B: ai-dynamo/aiconfigurator, that path, commit 095f58a…, class A.
  const std::string llama70 =
      "preset llama-3.1-70b: meta-llama/Llama-3.1-70B (https://huggingface.co/meta-llama/Llama-3.1-70B); config.json copied from "
      "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/aic-core/src/"
      "aiconfigurator_core/model_configs/meta-llama--Meta-Llama-3.1-70B_config.json, provenance class A";
  // Row mistralai__Mistral-7B-v0.1: a Hugging Face page of a fine-tune at "HF rev 367d8cb", class B+C.
  const std::string mistral =
      "preset mistral-7b-v0.1: mistralai/Mistral-7B-v0.1 (https://huggingface.co/mistralai/Mistral-7B-v0.1); config.json copied "
      "from https://huggingface.co/dmayboroda/42_mistral_0.1/blob/main/config.json (revision 367d8cb), provenance class B+C";
  const int port = server().port;
  ASSERT_GT(port, 0);
  for (const auto& [model, expected] : std::vector<std::pair<std::string, std::string>>{{"llama-3.1-70b", llama70},
                                                                                       {"mistral-7b-v0.1", mistral}}) {
    // The CLI's --json and the API's answer.
    const json cli = run_json("size --model " + model + " --task serve", 0);
    EXPECT_EQ(cli["model"]["source"], expected);
    auto api = post(port, "/api/size", json{{"model", model}, {"task", "serve"}});
    ASSERT_TRUE(api && api->status == 200) << model;
    EXPECT_EQ(json::parse(api->body)["model"]["source"], expected);
    // GET /api/models?name=: the same, with the two addresses as fields (data_folder is gone).
    auto one = get(port, "/api/models?name=" + model);
    ASSERT_TRUE(one && one->status == 200) << model;
    const json m = json::parse(one->body);
    const json& entry = m.is_array() ? m.at(0) : m;
    EXPECT_EQ(entry["source"], expected) << one->body.substr(0, 400);
    EXPECT_FALSE(entry.contains("data_folder"));
    EXPECT_EQ(entry["hf_url"], expected.substr(expected.find("(https://") + 1, expected.find(");") - expected.find("(https://") - 1));
  }
  // The size page shows the same addresses, in each language, and no repository path.
  const std::string hf_link = "<a href=\"https://huggingface.co/meta-llama/Llama-3.1-70B\" rel=\"noopener\">meta-llama/Llama-3.1-70B</a>";
  const std::string copy_url = llama70.substr(llama70.find("https://github.com/"), llama70.find(", provenance") - llama70.find("https://github.com/"));
  for (const char* lang : {"en", "fr", "th"}) {
    auto page = get(port, std::string("/") + lang + "/size?model=llama-3.1-70b&task=serve");
    ASSERT_TRUE(page && page->status == 200) << lang;
    EXPECT_NE(page->body.find(hf_link), std::string::npos) << lang;
    EXPECT_NE(page->body.find("<a href=\"" + copy_url + "\""), std::string::npos) << lang << " " << copy_url;
    EXPECT_EQ(page->body.find("data/models/"), std::string::npos) << lang;
  }
  // The plan page names the model's origin too, as the size page does (web10c left it out): in
  // each language, and on the assistant's answer, which shows the same plan table.
  for (const std::string path : {"/en/plan?model=llama-3.1-70b&task=lora&tokens=5e8&limit=1",
                                 "/fr/plan?model=llama-3.1-70b&task=lora&tokens=5e8&limit=1",
                                 "/th/plan?model=llama-3.1-70b&task=lora&tokens=5e8&limit=1",
                                 "/assistant?q=lora%20llama%203.1%2070b%20on%20500M%20tokens"}) {
    auto page = get(port, path);
    ASSERT_TRUE(page && page->status == 200) << path;
    EXPECT_NE(page->body.find(hf_link), std::string::npos) << path;
    EXPECT_NE(page->body.find("<a href=\"" + copy_url + "\""), std::string::npos) << path;
  }
  // /api/models gives the copy's address alone (a link) and its revision apart (trial10c: "URL
  // (revision 367d8cb)" in one string).
  auto mistral_api = get(port, "/api/models?name=mistral-7b-v0.1");
  ASSERT_TRUE(mistral_api && mistral_api->status == 200);
  const json mj = json::parse(mistral_api->body);
  const json& me = mj.is_array() ? mj.at(0) : mj;
  EXPECT_EQ(me["config_copied_from"], "https://huggingface.co/dmayboroda/42_mistral_0.1/blob/main/config.json") << mistral_api->body.substr(0, 600);
  EXPECT_EQ(me["config_revision"], "367d8cb");
  // A copy read from a Hugging Face page: the link is its address, the revision beside it.
  auto mpage = get(port, "/size?model=mistral-7b-v0.1&task=serve");
  ASSERT_TRUE(mpage && mpage->status == 200);
  EXPECT_NE(mpage->body.find("<a href=\"https://huggingface.co/dmayboroda/42_mistral_0.1/blob/main/config.json\" rel=\"noopener\">"
                             "the config.json read (copy)</a> (367d8cb)"),
            std::string::npos);
  // A plan (CLI and API, explained): no repository path of the model either.
  const json plan_cli = run_json("plan --model llama-3.1-70b --task lora --tokens 5e8 --explain 1", 0);
  EXPECT_EQ(plan_cli.dump().find("data/models/"), std::string::npos);
  auto plan = post(port, "/api/plan", json{{"model", "llama-3.1-70b"}, {"task", "lora"}, {"tokens", 5e8}, {"explain", 1}});
  ASSERT_TRUE(plan && plan->status == 200);
  EXPECT_EQ(plan->body.find("data/models/"), std::string::npos);
  // A config file the user gives keeps the path as given.
  const std::string own = (dir_ / "my-config.json").string();
  ASSERT_EQ(run_shell("cp '" + std::string(GPUPLAN_SOURCE_DIR) + "/data/models/meta-llama__Llama-3.1-8B/config.json' '" + own + "'").exit_code, 0);
  const json mine = run_json("size --config '" + own + "' --task serve", 0);
  EXPECT_EQ(mine["model"]["source"], own);
}

}  // namespace
