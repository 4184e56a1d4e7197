// docs/planner.md "Examples (generated)": every `$ gpuplan ...` line of that section is run with
// the built binary (GPUPLAN_BINARY) on a fresh store of the bundled catalog, from the source tree
// (the images example reads data/models/...), at COLUMNS=120; it must exit 0 and print the line
// written under it — for a plan, as its first plan row (the line after the table's dashes). So the
// documented examples cannot drift from the binary (they had: a trial found them out of date).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "binary_e2e.hpp"

namespace {

using gpuplan::e2e::BinaryE2E;
using gpuplan::e2e::RunResult;

class DocsPlannerExamples : public BinaryE2E<DocsPlannerExamples> {
 public:
  static constexpr const char* kName = "docs-planner";
  static RunResult run_in_source(const std::string& args) {
    return run_shell("cd '" + std::string(GPUPLAN_SOURCE_DIR) + "' && COLUMNS=120 XDG_DATA_HOME='" +
                     dir_.string() + "' '" + std::string(GPUPLAN_BINARY) + "' --db '" +
                     (dir_ / "offers.sqlite").string() + "' " + args + " 2>&1");
  }
};

/// Runs of spaces → one space, ends trimmed: the table's column widths are not what is checked.
std::string squeeze(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

TEST_F(DocsPlannerExamples, FirstLinesMatchTheBinary) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/docs/planner.md");
  ASSERT_TRUE(in) << "docs/planner.md";
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  bool in_section = false;
  int checked = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("## ", 0) == 0) in_section = lines[i] == "## Examples (generated)";
    if (!in_section || lines[i].rfind("    $ gpuplan ", 0) != 0) continue;
    const std::string args = lines[i].substr(std::string("    $ gpuplan ").size());
    const std::string want = squeeze(lines[i + 1].substr(4));
    const RunResult r = run_in_source(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out.substr(0, 1500);
    std::istringstream out(r.out);
    std::vector<std::string> got;
    for (std::string l; std::getline(out, l);) got.push_back(l);
    std::string first_row;
    for (std::size_t k = 0; k + 1 < got.size(); ++k) {
      if (!got[k].empty() && got[k].find_first_not_of('-') == std::string::npos) {
        first_row = got[k + 1];
        break;
      }
    }
    if (args.rfind("plan ", 0) == 0) {
      EXPECT_EQ(squeeze(first_row), want) << args << "\n" << r.out.substr(0, 1500);
    } else {
      bool found = false;
      for (const auto& l : got) found |= squeeze(l) == want;
      EXPECT_TRUE(found) << args << "\nwant: " << want << "\n" << r.out.substr(0, 1500);
    }
    ++checked;
  }
  EXPECT_GE(checked, 9) << "the Examples (generated) section of docs/planner.md lost its examples";
}

}  // namespace
