#pragma once
// Rendering shared by `gpuplan plan` and `gpuplan estimate`: JSON of a plan (SI units: bytes,
// seconds, USD), short text for tables, and the terminal width (COLUMNS, else the terminal's,
// else 120). Computes no numbers (STYLE.md §1).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "api/plan_json.hpp"
#include "planner/planner.hpp"

namespace gpuplan::cli {

std::string duration_text(double seconds);  ///< "42 s", "17 min", "5.2 h", "31.0 d", "never"
std::string usd_text(double v);             ///< "$1234" or "$12.34"
std::string rate_text(double v);            ///< "1.23M", "4.5k", "12.3"
std::string layout_text(const Plan& p);     ///< "TP8 PP2 DP4 EP1 Z2 mb1 rc:full"
using api::goodput_json;  // the JSON writers live in api (one writer for CLI and API)
using api::plan_json;
using api::step_json;
using api::warnings_json;
/// Columns to fit: $COLUMNS when a positive integer (taken within 40..1000), else the terminal's
/// width when stdout is a terminal, else 120.
int terminal_columns();
/// Whether the width is known: $COLUMNS is set or stdout is a terminal (a file or a pipe gets
/// every column of a table that only fits by leaving some out).
bool terminal_width_known();
/// Wraps `text` to `width` columns; continuation lines start with `indent`.
std::string wrap_text(const std::string& text, int width, const std::string& indent);
/// Cuts `s` to at most `n` display columns (UTF-8 aware), ending with "…" when cut.
std::string clip(const std::string& s, std::size_t n);
/// A GPU name without its vendor prefix ("NVIDIA H100 SXM" → "H100 SXM", "AMD Instinct MI300X" →
/// "MI300X"): the prefix says nothing the model name does not.
std::string short_gpu(const std::string& name);
/// Breaks an identifier without spaces ("provider/instance/region") into lines of at most `n`
/// display columns joined with '\n', after a '/', '-' or '_' where one falls in the second half of the line, else at `n` (a
/// TextTable cell of several lines: an offer id stays whole for `history`, where "…" lost it).
std::string wrap_id(const std::string& s, std::size_t n);
/// Word-wraps `s` into lines of at most `n` display columns joined with '\n' (a TextTable cell of
/// several lines); a single word wider than `n` is clipped.
std::string wrap_cell(const std::string& s, std::size_t n);

}  // namespace gpuplan::cli
