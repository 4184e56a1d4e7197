#pragma once
/// Terminal display width of UTF-8 text (issue 10: Thai and CJK cells misaligned CLI tables).
///
/// A terminal shows a combining mark (Thai vowel and tone marks above or below a consonant,
/// U+0E31, U+0E34–U+0E3A, U+0E47–U+0E4E; Latin combining accents) in zero columns and an East
/// Asian wide or fullwidth character (CJK ideographs, Hangul, fullwidth forms) in two, so
/// counting bytes or code points misaligns padded columns. The width of each code point comes
/// from the C library's wcwidth() (POSIX; glibc's tables follow Unicode's EastAsianWidth and
/// general categories) under the C.UTF-8 locale, selected for the calling thread only
/// (uselocale), so no global locale is changed. A byte that is not valid UTF-8 and a code point
/// wcwidth() calls non-printable count one column each (what a terminal shows for U+FFFD).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuplan {

/// Columns `text` takes on a terminal.
std::size_t display_width(std::string_view text);

/// `text` followed (left-aligned) or preceded (right-aligned) by spaces up to `columns`
/// display columns; unchanged when already as wide or wider.
std::string pad_to_width(std::string_view text, std::size_t columns, bool right_align = false);

}  // namespace gpuplan
