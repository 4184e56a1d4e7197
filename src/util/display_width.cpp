#include "util/display_width.hpp"

#include <locale.h>
#include <wchar.h>

namespace gpuplan {

namespace {

/// The next code point of `s` from `i` (advancing `i`), or -1 for a byte that does not start a
/// valid UTF-8 sequence (then `i` moves by one byte).
long next_code_point(std::string_view s, std::size_t& i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return -1;
  }
  long cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) {
      ++i;
      return -1;
    }
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  i += len;
  return cp;
}

/// The C.UTF-8 locale object, made once (never freed: it lives as long as the process).
locale_t utf8_locale() {
  static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return loc;
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t columns = 0;
  bool ascii = true;
  for (unsigned char c : text) ascii = ascii && c < 0x80;
  if (ascii) return text.size();
  const locale_t loc = utf8_locale();
  const locale_t previous = loc != static_cast<locale_t>(nullptr) ? uselocale(loc) : static_cast<locale_t>(nullptr);
  for (std::size_t i = 0; i < text.size();) {
    const long cp = next_code_point(text, i);
    if (cp < 0) {
      ++columns;
      continue;
    }
    const int w = loc != static_cast<locale_t>(nullptr) ? wcwidth(static_cast<wchar_t>(cp)) : 1;
    columns += w < 0 ? 1 : static_cast<std::size_t>(w);
  }
  if (previous != static_cast<locale_t>(nullptr)) uselocale(previous);
  return columns;
}

std::string pad_to_width(std::string_view text, std::size_t columns, bool right_align) {
  const std::size_t w = display_width(text);
  if (w >= columns) return std::string(text);
  const std::string pad(columns - w, ' ');
  return right_align ? pad + std::string(text) : std::string(text) + pad;
}

}  // namespace gpuplan
