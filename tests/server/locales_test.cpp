// Every page exists in English, French and Thai: the three locale files have the same keys, no
// text is empty, and every {{t.KEY}} a template uses is a key of the locales. Read from the
// source tree (web/), the same files the binary embeds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Locales, EveryLanguageHasEveryKeyAndEveryTemplateKeyExists) {
  const fs::path web = fs::path(GPUPLAN_SOURCE_DIR) / "web";
  std::map<std::string, nlohmann::json> loc;
  for (const char* l : {"en", "fr", "th"}) loc[l] = nlohmann::json::parse(read(web / "locales" / (std::string(l) + ".json")));
  for (const auto& [lang, j] : loc) {
    for (const auto& [k, v] : loc["en"].items()) {
      ASSERT_TRUE(j.contains(k)) << lang << " lacks " << k;
      EXPECT_FALSE(j[k].get<std::string>().empty()) << lang << ": " << k;
    }
    for (const auto& [k, v] : j.items()) EXPECT_TRUE(loc["en"].contains(k)) << lang << " has extra " << k;
  }
  // The French and Thai texts are translations, not copies of the English ones (a few labels
  // such as "GPU" are the same in every language).
  std::size_t same_fr = 0, same_th = 0;
  for (const auto& [k, v] : loc["en"].items()) {
    same_fr += loc["fr"][k] == v;
    same_th += loc["th"][k] == v;
  }
  EXPECT_LT(same_fr, 12u);
  EXPECT_LT(same_th, 12u);
  const std::regex key(R"(\{\{\s*t\.([a-z0-9_]+)\s*\}\})");
  std::size_t used = 0;
  for (const auto& e : fs::directory_iterator(web / "templates")) {
    const std::string text = read(e.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), key); it != std::sregex_iterator(); ++it) {
      ++used;
      EXPECT_TRUE(loc["en"].contains((*it)[1].str())) << e.path().filename() << " uses missing key " << (*it)[1].str();
    }
  }
  EXPECT_GT(used, 50u);
  // The workload guides (pages.cpp): each workload's own sections and the shared ones.
  for (const char* w : {"training", "generative_ai", "large_model_training"}) {
    for (const char* s : {"_title", "_intro", "_what_matters", "_scale", "_typical", "_faq"})
      EXPECT_TRUE(loc["en"].contains(std::string(w) + s)) << w << s;
  }
}

}  // namespace
