// End-to-end (trial56 #6, and French explanations' decimal commas): /size?gpu=NAME answers what one such GPU holds, as the CLI's last line
// and /api/size's "limits" do; the page read gpu= (an unknown name was a 404) but showed nothing.
// Through one running `gpuplan serve` on the bundled catalog on a loopback port.
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
  for (const auto& [prefix, none] : {std::pair<std::string, std::string>{"", "none fits"}, {"/fr", "aucun ne tient"},
                                     {"/th", "ใส่ไม่ได้เลย"}}) {
    auto page = client().Get(prefix + "/size?" + q);
    ASSERT_TRUE(page);
    const std::string line = limit_line(page->body);
    ASSERT_FALSE(line.empty()) << prefix;
    EXPECT_NE(line.find(none), std::string::npos) << prefix << ": " << line;
    EXPECT_NE(line.find("NVIDIA H100"), std::string::npos) << line;
  }
}

/// The <code> cells of a page (an explanation's formulas).
std::vector<std::string> code_cells(const std::string& body) {
  std::vector<std::string> out;
  for (std::size_t at = body.find("<code>"); at != std::string::npos; at = body.find("<code>", at + 1)) {
    const std::size_t from = at + 6;
    out.push_back(body.substr(from, body.find("</code>", from) - from));
  }
  return out;
}

TEST_F(ServeSizeLimitE2E, FrenchFormulasWriteDecimalCommasAndKeepNames) {
  // French writes 0,2 where English writes 0.2; names and terms keep their points ("qwen2.5",
  // "llama-3.1-8b", "memory.fragmentation").
  const std::string q = "/size?model=llama-3.1-8b&task=lora&explain=1";
  auto en = client().Get(q);
  auto fr = client().Get("/fr" + q);
  ASSERT_TRUE(en);
  ASSERT_TRUE(fr);
  const std::vector<std::string> en_cells = code_cells(en->body), fr_cells = code_cells(fr->body);
  ASSERT_FALSE(fr_cells.empty());
  const std::regex point_number(R"((^|[\s(×=/+≈])\d+\.\d)");
  const std::regex comma_number(R"((^|[\s(×=/+≈])\d+,\d)");
  int en_points = 0, fr_commas = 0;
  for (const auto& c : en_cells) en_points += std::regex_search(c, point_number);
  for (const auto& c : fr_cells) {
    EXPECT_FALSE(std::regex_search(c, point_number)) << c;
    fr_commas += std::regex_search(c, comma_number);
  }
  EXPECT_GT(en_points, 0);
  EXPECT_EQ(fr_commas, en_points) << "each English formula with a decimal point has its French comma";
}

TEST_F(ServeSizeLimitE2E, ServingWhoseWeightsExceedTheGpuSaysWhy) {
  // Llama 3.1 70B in 16 bits (141 GB of weights) on one 80 GB H100: nothing fits, and the line
  // says the weights alone exceed the usable memory (trial57 #10: "none fits" twice, no reason).
  auto page = client().Get("/size?model=llama-3.1-70b&task=serve&gpu=H100");
  ASSERT_TRUE(page);
  const std::string line = limit_line(page->body);
  EXPECT_NE(line.find("nothing fits: the weights and CUDA context alone take "), std::string::npos) << line;
  EXPECT_NE(line.find(" usable (more GPUs with tensor parallelism"), std::string::npos) << line;
}

}  // namespace
