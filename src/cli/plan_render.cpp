#include "cli/plan_render.hpp"

#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "util/display_width.hpp"

namespace gpuplan::cli {

using nlohmann::json;

std::string duration_text(double s) {
  if (!std::isfinite(s)) return "never";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.0f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}
std::string usd_text(double v) { return v >= 100 ? fmt::format("${:.0f}", v) : fmt::format("${:.2f}", v); }
std::string rate_text(double v) {
  // The unit follows the value as printed: 999.96 prints "1.0k", not "1000.0" beside a "1.0k"
  // (trial56 #14); 999,960 prints "1.00M".
  if (v >= 1e6 || std::round(v / 1e3 * 10) / 10 >= 1e3) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e3 || std::round(v * 10) / 10 >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.1f}", v);
}

std::string layout_text(const Plan& p) {
  if (p.training) {
    return fmt::format("TP{} PP{}{} DP{}{}{} Z{} mb{}{}", p.layout.tp, p.layout.pp,
                       p.layout.virtual_stages > 1 ? fmt::format(" VP{}", p.layout.virtual_stages) : "", p.layout.dp,
                       p.layout.ep > 1 ? fmt::format(" EP{}", p.layout.ep) : "",
                       p.layout.expert_tp > 0 && p.layout.expert_tp != p.layout.tp ? fmt::format(" ETP{}", p.layout.expert_tp) : "",
                       p.layout.zero_stage, p.layout.micro_batch,
                       p.recompute == Recompute::none ? std::string()
                       // Megatron-Core's modules name the selective recompute they make up.
                       : p.recompute_modules != 0 ? " rc:" + recompute_modules_name(p.recompute_modules)
                                                  : fmt::format(" rc:{}", recompute_name(p.recompute))) +
           (p.math_fallback.empty() ? "" : " " + p.math_fallback + "!");
  }
  // The math precision the time model fell back to (Plan::math_fallback) is part of the layout
  // cell, which no terminal width drops: "fp32!" = timed at the FP32 peak, BF16/FP16 unknown.
  const std::string math = p.math_fallback.empty() ? "" : " " + p.math_fallback + "!";
  // A batch job runs at most its requests per replica at once, not the whole KV-pool batch.
  if (p.serving)
    return fmt::format("TP{} ×{} batch {}{}", p.layout.tp, p.replicas,
                       p.batch_job ? p.batch_job->peak_running_sequences : p.serving->batch, math);
  return p.gpus_per_instance == 1 ? "1 GPU × 1 image" : fmt::format("{} GPUs × 1 image", p.gpus_per_instance);
}

int terminal_columns() {
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    // A width outside 40..1000 is taken at the nearest bound (trial49: COLUMNS=20 and 100000 fell
    // back to 120 without a word); text that is not a whole number is ignored.
    if (end != c && *end == '\0' && v >= 1) return static_cast<int>(std::clamp<long>(v, 40, 1000));
  }
  if (::isatty(STDOUT_FILENO)) {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  }
  return 120;
}

bool terminal_width_known() { return std::getenv("COLUMNS") != nullptr || ::isatty(STDOUT_FILENO) != 0; }

std::string clip(const std::string& s, std::size_t n) {
  if (display_width(s) <= n || n == 0) return s;
  std::string out;
  std::size_t w = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t next = i + 1;  // one code point: its lead byte and continuation bytes
    while (next < s.size() && (static_cast<unsigned char>(s[next]) & 0xC0) == 0x80) ++next;
    const std::size_t cw = display_width(std::string_view(s).substr(i, next - i));
    if (w + cw + 1 > n) break;  // keep a column for "…"
    w += cw;
    out.append(s, i, next - i);
    i = next;
  }
  return out + "…";
}

std::string wrap_cell(const std::string& s, std::size_t n) {
  if (n == 0 || display_width(s) <= n) return s;
  std::string out, line;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t sp = s.find(' ', pos);
    if (sp == std::string::npos) sp = s.size();
    const std::string word = clip(s.substr(pos, sp - pos), n);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > n) {
      out += line + "\n";
      line = word;
    } else {
      line += (line.empty() ? "" : " ") + word;
    }
    pos = sp + 1;
  }
  return out + line;
}

std::string short_gpu(const std::string& name) {
  for (const std::string_view prefix : {"NVIDIA ", "AMD Instinct ", "AMD "})
    if (name.rfind(prefix, 0) == 0) return name.substr(prefix.size());
  return name;
}

std::string wrap_id(const std::string& s, std::size_t n) {
  if (n == 0 || display_width(s) <= n) return s;
  std::string out;
  std::size_t from = 0;
  while (from < s.size()) {
    // The longest prefix of at most n code points (ids are ASCII in practice; UTF-8 is kept whole).
    std::size_t end = from, cols = 0;
    while (end < s.size() && cols < n) {
      std::size_t next = end + 1;
      while (next < s.size() && (static_cast<unsigned char>(s[next]) & 0xC0) == 0x80) ++next;
      end = next;
      ++cols;
    }
    if (end < s.size()) {
      const std::size_t slash = s.find_last_of("/-_", end - 1);
      if (slash != std::string::npos && slash >= from && slash + 1 > from + n / 2) end = slash + 1;
    }
    out += (out.empty() ? "" : "\n") + s.substr(from, end - from);
    from = end;
  }
  return out;
}

std::string wrap_text(const std::string& text, int width, const std::string& indent) {
  std::string out, line;
  std::size_t pos = text.find_first_not_of(' ');
  if (pos == std::string::npos) return text + "\n";
  line = text.substr(0, pos);  // keep the leading indentation
  const std::string lead = line;
  const std::size_t max = static_cast<std::size_t>(std::max(20, width));
  while (pos < text.size()) {
    std::size_t sp = text.find(' ', pos);
    if (sp == std::string::npos) sp = text.size();
    const std::string word = text.substr(pos, sp - pos);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > max) {
      out += line + "\n";
      line = indent + word;
    } else {
      line += (line.empty() || line == indent || line == lead ? "" : " ") + word;
    }
    pos = sp + 1;
  }
  if (!line.empty()) out += line + "\n";
  return out;
}

}  // namespace gpuplan::cli
