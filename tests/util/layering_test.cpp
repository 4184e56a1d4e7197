// Checks the layer rule of DESIGN.md by reading include lines: a layer includes only its own
// headers and those of the layers below it (util < hardware < model < sizing < catalog < fetch < planner < api <
// cli, server). hardware and model are siblings (model does not need hardware); catalog uses hardware but not
// sizing/model; fetch sits beside the catalog (it writes through the store's ingest path) and below the planner;
// api is the application layer both faces use; the CLI may start the server (`gpuplan serve`), never the reverse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> a = {
      {"util", {"util"}},
      {"hardware", {"util", "hardware"}},
      {"model", {"util", "model"}},
      {"sizing", {"util", "hardware", "model", "sizing"}},
      {"catalog", {"util", "hardware", "catalog"}},
      {"fetch", {"util", "hardware", "catalog", "fetch"}},
      {"planner", {"util", "hardware", "model", "sizing", "catalog", "planner"}},
      {"api", {"util", "hardware", "model", "sizing", "catalog", "fetch", "planner", "api"}},
      {"server", {"util", "hardware", "model", "sizing", "catalog", "fetch", "planner", "api", "server"}},
      {"cli", {"util", "hardware", "model", "sizing", "catalog", "fetch", "planner", "api", "server", "cli"}},
  };
  return a;
}

TEST(Layering, EachLayerIncludesOnlyLayersBelowIt) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(GPUPLAN_SOURCE_DIR) / "src";
  const std::regex include_re(R"re(^\s*#\s*include\s*"([a-z_]+)/[^"]+")re");
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".hpp" && ext != ".cpp") continue;
    const std::string layer = entry.path().parent_path().filename().string();
    auto it = allowed().find(layer);
    ASSERT_NE(it, allowed().end()) << "unknown layer folder " << layer << " for " << entry.path();
    std::ifstream in(entry.path());
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      std::smatch m;
      if (std::regex_search(line, m, include_re)) {
        EXPECT_TRUE(it->second.count(m[1].str()))
            << entry.path().string() << ":" << lineno << ": layer '" << layer << "' includes '" << m[1].str()
            << "/', which is not below it";
      }
    }
    ++files;
  }
  EXPECT_GT(files, 5);
}

}  // namespace
