// End-to-end regression tests for bad input through the JSON API and the pages (issue 11, left
// items of the small11 pass): the denoising-step count had no upper bound, and the durations
// were read by std::stod (hex "0x10h" was 16 hours). One `gpuplan serve` child on a loopback
// port over the bundled catalog; each test names the exact input that was mishandled.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using nlohmann::json;

class BadInput11bE2E : public gpuplan::e2e::ServedBinaryE2E<BadInput11bE2E> {
 public:
  static constexpr const char* kName = "bad-input11b";
  static httplib::Result get(const std::string& path) {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c.Get(path);
  }
  static httplib::Result post(const std::string& path, const std::string& body) {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c.Post(path, body, "application/json");
  }
};

// `steps` 9007199254740993 (and any count above 1000) was planned: the field had no upper bound.
// It is 400 integer_out_of_range at /steps, with the bound (planner/plan_request.cpp
// kMaxDenoisingSteps: the 1000 noise levels of DDPM's T = 1000); 1000 is planned. The page's form
// field is read by the same request: its error names the field in the page's language.
TEST_F(BadInput11bE2E, DenoisingStepsHaveAnUpperBound) {
  const std::string images = R"("model": "sdxl", "task": "images", "images": 1000, "today": "2026-11-30", "limit": 1)";
  for (const char* steps : {"1001", "9007199254740993"}) {
    auto r = post("/api/plan", "{" + images + R"(, "steps": )" + steps + "}");
    ASSERT_TRUE(r) << steps;
    EXPECT_EQ(r->status, 400) << steps << " " << r->body;
    const json e = json::parse(r->body, nullptr, false);
    EXPECT_EQ(e.value("field", ""), "/steps") << r->body;
    EXPECT_EQ(e.value("message_code", ""), "integer_out_of_range") << r->body;
    EXPECT_EQ(e["values"].value("max", ""), "1000") << r->body;
    EXPECT_EQ(e["values"].value("value", ""), steps) << r->body;  // the digits sent, not a rounded double
  }
  auto ok = post("/api/plan", "{" + images + R"(, "steps": 1000})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body.substr(0, 300);
  auto page = get("/fr/plan?model=sdxl&task=images&images=1000&steps=1001&today=2026-11-30");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 400) << page->body.substr(0, 300);
  // web/locales/fr.json error_integer_out_of_range, the value and bound written as French writes them.
  EXPECT_NE(page->body.find("1001 est hors de l’intervalle accepté, de 1 à 1000"), std::string::npos) << page->body;
}

// Decimal numbers only (issue 11): `deadline` "0x10h" was 16 hours, `max_price_age` "0x10d" 16
// days (std::stod reads hex and hex floats). Each entry point that reads a duration refuses them:
// POST /api/plan, GET /api/offers, and the /plan page.
TEST_F(BadInput11bE2E, DurationsAreDecimalOnlyOnTheApiAndThePages) {
  const std::string lora = R"("model": "llama-3.1-8b", "task": "lora", "tokens": 1e8, "today": "2026-11-30", "limit": 1)";
  for (const char* value : {"0x10h", "0x1p4h", "infh", "nanh"}) {
    auto r = post("/api/plan", "{" + lora + R"(, "deadline": ")" + value + "\"}");
    ASSERT_TRUE(r) << value;
    EXPECT_EQ(r->status, 400) << value << " " << r->body;
    const json e = json::parse(r->body, nullptr, false);
    EXPECT_EQ(e.value("field", ""), "/deadline") << r->body;
    EXPECT_EQ(e.value("message_code", ""), "not_duration") << r->body;
  }
  for (const char* value : {"0x10d", "0x1p4d"}) {
    auto r = post("/api/plan", "{" + lora + R"(, "max_price_age": ")" + value + "\"}");
    ASSERT_TRUE(r) << value;
    EXPECT_EQ(r->status, 400) << value << " " << r->body;
    EXPECT_EQ(json::parse(r->body, nullptr, false).value("field", ""), "/max_price_age") << r->body;
    auto o = get(std::string("/api/offers?limit=1&max_price_age=") + value);
    ASSERT_TRUE(o) << value;
    EXPECT_EQ(o->status, 400) << value << " " << o->body;
    EXPECT_EQ(json::parse(o->body, nullptr, false).value("field", ""), "/max_price_age") << o->body;
  }
  auto page = get("/en/plan?model=llama-3.1-8b&task=lora&tokens=1e8&deadline=0x10h&today=2026-11-30");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 400) << page->body.substr(0, 300);
  // The decimal form is read: 16 hours.
  auto ok = post("/api/plan", "{" + lora + R"(, "deadline": "16h"})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body.substr(0, 300);
}

}  // namespace
