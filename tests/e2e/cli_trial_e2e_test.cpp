// End-to-end regressions from a new-user trial of the CLI (issue 10 leftovers), through the
// built binary on its own store:
//   - `gpuplan offers --today 1900-01-01` printed every price as fresh with negative ages: a date
//     before every observation read is now a one-line error, exit 2 (the planner's rule and
//     message code, catalog/freshness.hpp require_today_not_before_observations);
//   - Thai and CJK text misaligned the CLI's columns (padding counted bytes or code points): the
//     columns now line up by display width (util/display_width.hpp);
//   - `gpuplan plan --help` listed one setting twice (--stale-days beside --max-price-age): each
//     subcommand's help lists every option once and no option as "the same as" another.
#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "binary_e2e.hpp"

namespace gpuplan::e2e {
namespace {

class CliTrialE2E : public BinaryE2E<CliTrialE2E> {
 public:
  static constexpr const char* kName = "cli-trial";
};

/// Terminal columns of UTF-8 text, written here independently of the code under test: Thai
/// combining marks (U+0E31, U+0E34–U+0E3A, U+0E47–U+0E4E) take none, CJK ideographs
/// (U+4E00–U+9FFF) and fullwidth forms (U+FF01–U+FF60) two, any other code point one.
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    if (cp == 0x0E31 || (cp >= 0x0E34 && cp <= 0x0E3A) || (cp >= 0x0E47 && cp <= 0x0E4E)) continue;
    n += (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xFF01 && cp <= 0xFF60) ? 2 : 1;
  }
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST_F(CliTrialE2E, OffersTodayBeforeEveryObservationIsAnError) {
  // The trial typed 1900-01-01, now refused earlier as before 2000-01-01 (util/calendar.hpp
  // kEarliestDate; Small11E2E.DatesBefore2000AreRefused); 2001-01-01 is before every bundled
  // observation too.
  const RunResult r = run("offers --today 2001-01-01 gpu=H100");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(lines_of(r.out).size(), 1u) << r.out;  // one line, no table
  EXPECT_EQ(r.out.rfind("gpuplan: error: --today: 2001-01-01 is before every price observation", 0), 0u) << r.out;
  // The same rule as `plan`'s, with its message.
  const RunResult p = run("plan --model llama-3.1-8b --task lora --tokens 1e8 --today 2001-01-01");
  EXPECT_EQ(p.exit_code, 2) << p.out;
  EXPECT_NE(p.out.find("2001-01-01 is before every price observation"), std::string::npos) << p.out;
  // A date after the observations still lists offers with their ages.
  const RunResult ok = run("offers --today 2026-12-01 gpu=H100 --limit 3");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_GE(lines_of(ok.out).size(), 3u) << ok.out;
}

TEST_F(CliTrialE2E, ThaiAndCjkCellsKeepTheColumnsAligned) {
  // Offers whose instance type and region are Thai and Chinese text (a provider's own names).
  const std::filesystem::path csv = dir_ / "wide.csv";
  std::ofstream(csv) << "provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source\n"
                        "widetext,h100-ไทยที่สุด,กรุงเทพฯ,H100,1,on-demand,3.10,2026-11-20,https://example.com/th\n"
                        "widetext,h100-东京,东京区域,H100,1,on-demand,3.20,2026-11-20,https://example.com/cjk\n"
                        "widetext,h100-plain,us-east,H100,1,on-demand,3.30,2026-11-20,https://example.com/en\n";
  ASSERT_EQ(run("import '" + csv.string() + "'").exit_code, 0);
  const RunResult r = run("offers provider=widetext --today 2026-12-01");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> lines = lines_of(r.out);
  // The header, then one row per offer (its id holds the Thai or Chinese names): the GPU column
  // starts at the same display column on the header and on every row.
  std::vector<std::size_t> gpu_column;
  for (const auto& l : lines) {
    if (l.rfind("ID ", 0) == 0) gpu_column.insert(gpu_column.begin(), columns(l.substr(0, l.find(" GPU ") + 1)));
    else if (l.rfind("widetext/", 0) == 0) gpu_column.push_back(columns(l.substr(0, l.find("NVIDIA"))));
  }
  ASSERT_EQ(gpu_column.size(), 4u) << r.out;
  for (std::size_t i = 1; i < gpu_column.size(); ++i) EXPECT_EQ(gpu_column[i], gpu_column[0]) << r.out;
  // `gpuplan ask` in Thai: the "←" of every understood field at the same display column.
  const RunResult a = run("ask 'ไฟน์จูน Llama 3.1 8B ด้วย LoRA บน 200 ล้านโทเคน ภายใน 2 วัน' --today 2026-12-01 --limit 1");
  std::set<std::size_t> arrow;
  for (const auto& l : lines_of(a.out)) {
    const std::size_t at = l.find("\u2190");
    if (at != std::string::npos) arrow.insert(columns(l.substr(0, at)));
  }
  EXPECT_GE(arrow.size(), 1u) << a.out;
  EXPECT_EQ(arrow.size(), 1u) << a.out;
}

TEST_F(CliTrialE2E, EverySubcommandHelpListsEachOptionOnce) {
  const RunResult top = run("--help");
  ASSERT_EQ(top.exit_code, 0);
  std::vector<std::string> subcommands;
  bool in_list = false;
  for (const auto& l : lines_of(top.out)) {
    if (l.rfind("Subcommands:", 0) == 0) in_list = true;
    else if (in_list && l.size() > 2 && l[2] != ' ') subcommands.push_back(l.substr(2, l.find(' ', 2) - 2));
  }
  ASSERT_GE(subcommands.size(), 10u) << top.out;
  const std::regex option(R"(^\s+(?:-[A-Za-z],)?(--[a-z0-9-]+))");
  for (const auto& sub : subcommands) {
    const RunResult h = run(sub + " --help");
    EXPECT_EQ(h.exit_code, 0) << sub;
    std::map<std::string, int> seen;
    for (const auto& l : lines_of(h.out)) {
      std::smatch m;
      if (std::regex_search(l, m, option)) ++seen[m[1].str()];
      EXPECT_EQ(l.find("the same limit as --"), std::string::npos) << sub << ": " << l;
    }
    EXPECT_GE(seen.size(), 1u) << sub;
    for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << sub << " lists " << name << " " << n << " times";
  }
  // The alias is still accepted (a script that used it keeps working).
  const RunResult alias = run("plan --model llama-3.1-8b --task lora --tokens 1e8 --stale-days 30 --today 2026-12-01 --limit 1");
  EXPECT_EQ(alias.exit_code, 0) << alias.out;
}


// New-user trial of d0f47fc (2026-12-01): `--tokens 0x10` was read as 16 tokens, `--tokens 0.5`
// and `1e-3` planned a 12-minute run, serving flags on a training task (`--tpot-ms 50`, `--rps 5`)
// were ignored without a word, and `--budget 0.01` was echoed as "the budget of $0".
TEST_F(CliTrialE2E, TokenCountsAreDecimalAndAtLeastOneAndServingFlagsNeedServing) {
  const std::string lora = "plan --model llama-3.1-8b --task lora --today 2026-12-01 ";
  for (const char* tokens : {"0x10", "0.5", "1e-3", "0X1p4", "inf"}) {
    const RunResult r = run(lora + "--tokens " + tokens);
    EXPECT_EQ(r.exit_code, 2) << tokens << "\n" << r.out;
    EXPECT_NE(r.out.find("--tokens"), std::string::npos) << tokens << "\n" << r.out;
    EXPECT_EQ(r.out.find("internal"), std::string::npos) << r.out;
  }
  EXPECT_EQ(run(lora + "--tokens 1e6").exit_code, 0);  // a decimal count still plans
  for (const char* flag : {"--tpot-ms 50", "--ttft-ms 500", "--rps 5", "--concurrency 8"}) {
    const RunResult r = run(lora + "--tokens 5e8 " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.out;
    const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    EXPECT_NE(r.out.find(name), std::string::npos) << flag << "\n" << r.out;
    EXPECT_NE(r.out.find("serving"), std::string::npos) << flag << "\n" << r.out;
  }
  const RunResult tiny = run(lora + "--tokens 5e8 --budget 0.01");
  EXPECT_EQ(tiny.out.find("the budget of $0,"), std::string::npos) << tiny.out;
  EXPECT_EQ(tiny.out.find("the budget of $0 "), std::string::npos) << tiny.out;
  EXPECT_NE(tiny.out.find("$0.01"), std::string::npos) << tiny.out;
}

}  // namespace
}  // namespace gpuplan::e2e
