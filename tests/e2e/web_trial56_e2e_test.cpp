// End-to-end (trial56 #6): /size?gpu=NAME answers what one such GPU holds, as the CLI's last line
// and /api/size's "limits" do; the page read gpu= (an unknown name was a 404) but showed nothing.
// Through one running `gpuplan serve` on the bundled catalog on a loopback port.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "binary_e2e.hpp"
#include "serve_process.hpp"

namespace {

using nlohmann::json;

class ServeSizeLimitE2E : public gpuplan::e2e::ServedBinaryE2E<ServeSizeLimitE2E> {
 public:
  static constexpr const char* kName = "serve-size-limit";
  static httplib::Client& client() {
    static httplib::Client c("127.0.0.1", server().port);
    c.set_read_timeout(120, 0);
    return c;
  }
};

std::string limit_line(const std::string& body) {
  const std::size_t at = body.find("id=\"size-limit\"");
  if (at == std::string::npos) return "";
  const std::size_t from = body.find('>', at) + 1;
  return body.substr(from, body.find("</p>", from) - from);
}

/// 8131 → "8,131" (en) — the page's grouping, written out for the numbers below.
std::string grouped(long v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

TEST_F(ServeSizeLimitE2E, ServingOnOneGpuShowsTheApisLimits) {
  const std::string q = "model=llama-3.1-70b&task=serve&gpu=L40S&quant=int4";
  auto api = client().Post("/api/size", R"({"model":"llama-3.1-70b","task":"serve","gpu":"L40S","quant":"int4"})",
                           "application/json");
  ASSERT_TRUE(api);
  ASSERT_EQ(api->status, 200) << api->body;
  const json l = json::parse(api->body)["limits"];
  ASSERT_TRUE(l.is_object()) << api->body;
  auto page = client().Get("/size?" + q);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->status, 200);
  const std::string line = limit_line(page->body);
  ASSERT_FALSE(line.empty()) << "no limit line on /size?" << q;
  EXPECT_NE(line.find(l["gpu"].get<std::string>()), std::string::npos) << line;
  EXPECT_NE(line.find("longest context at concurrency " + std::to_string(l["at_concurrency"].get<long>()) + " = " +
                      grouped(l["max_context_tokens"].get<long>()) + " tokens"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("most sequences at " + grouped(l["at_context_tokens"].get<long>()) + " tokens = " +
                      std::to_string(l["max_concurrency"].get<long>())),
            std::string::npos)
      << line;
  // Without gpu= there is no such line.
  auto plain = client().Get("/size?model=llama-3.1-70b&task=serve&quant=int4");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(limit_line(plain->body).empty());
}

TEST_F(ServeSizeLimitE2E, TrainingThatFitsNothingSaysNoneFitsInEachLanguage) {
  // Llama 3.1 70B LoRA (16-bit base, 141 GB of weights) on one 80 GB H100: nothing fits, and the
  // API says 0 for both limits.
  const std::string q = "model=llama-3.1-70b&task=lora&gpu=H100";
  auto api = client().Post("/api/size", R"({"model":"llama-3.1-70b","task":"lora","gpu":"H100"})", "application/json");
  ASSERT_TRUE(api);
  ASSERT_EQ(api->status, 200) << api->body;
  const json l = json::parse(api->body)["limits"];
  ASSERT_EQ(l["max_seq_len"], 0) << api->body;
  ASSERT_EQ(l["max_micro_batch"], 0) << api->body;
  for (const auto& [prefix, none] : {std::pair<std::string, std::string>{"", "none fits"}, {"/fr", "aucune ne tient"},
                                     {"/th", "ใส่ไม่ได้เลย"}}) {
    auto page = client().Get(prefix + "/size?" + q);
    ASSERT_TRUE(page);
    const std::string line = limit_line(page->body);
    ASSERT_FALSE(line.empty()) << prefix;
    EXPECT_NE(line.find(none), std::string::npos) << prefix << ": " << line;
    EXPECT_NE(line.find("NVIDIA H100"), std::string::npos) << line;
  }
}

}  // namespace
