#pragma once
/// Util layer: checks on untrusted text (issue 11: an invalid UTF-8 byte stored from an import
/// made every later `--format json` fail; NUL bytes were stored and printed raw).
///
/// Rule (docs/import-format.md "Text"): imported text must be valid UTF-8 (RFC 3629: no
/// overlong forms, no surrogates U+D800..DFFF, nothing above U+10FFFF) and must not contain
/// control characters (U+0000..U+001F except tab, line feed and carriage return between cells,
/// U+007F, U+0080..U+009F) nor bidirectional controls (Unicode's Bidi_Control property: U+061C,
/// U+200E, U+200F, U+202A..U+202E, U+2066..U+2069; a U+202E in an instance type made one offer
/// id display as another, trial11). Offending input is rejected, never repaired: the error names
/// the file, 1-based line and byte column, the byte or code point seen and, where the reader
/// can tell, the field.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuplan {

/// A problem found in text: byte offset and a description ("invalid UTF-8 byte 0xff").
struct TextProblem {
  std::size_t offset = 0;
  std::string what;
  std::size_t length = 1;  ///< bytes of the offending character (1 for a byte that starts no UTF-8 sequence)
};

/// First problem in `text` by the rule above; `allow_newlines` admits \n and \r (whole files;
/// single cells and JSON strings pass false). Tab is always allowed.
std::optional<TextProblem> find_text_problem(std::string_view text, bool allow_newlines) noexcept;

/// `text` as an error message echoes it: whole when at most `max_bytes` bytes, else its first
/// bytes up to `max_bytes`, cut at a UTF-8 character boundary, and "…" (trial41: a 100,000-character
/// value was echoed whole on one error line).
std::string echo_clip(std::string_view text, std::size_t max_bytes = 40);

/// True for a code point of Unicode's Bidi_Control property (the list above).
bool is_bidi_control(std::uint32_t cp) noexcept;

/// The field that holds byte `offset` of a file ("field instance_type", "/offers/0/region"), or
/// "" when it cannot be told.
using FieldAt = std::function<std::string(std::size_t offset)>;
/// Throws Error{invalid_input} at "source:LINE:COL" for the first problem of a whole file; the
/// message ends "in FIELD" when `field_at` names the field that holds the byte.
void check_text_file(std::string_view text, const std::string& source, const FieldAt& field_at = {});

/// How a place in a JSON document is named in errors. `pointer`: RFC 6901 ("/offers/0/gpu"; the
/// importers and the JSON API's `field`). `dotted`: the field path of a model's config.json or
/// weight index, keys as written ("text_config.num_hidden_layers", "layer_types[1]",
/// `weight_map["model.norm.weight"]`: a key other than [A-Za-z_][A-Za-z0-9_]* is quoted as a JSON
/// string in brackets). The document itself is "/" as a pointer and "" dotted (the error's where
/// is then the source alone).
enum class JsonPlaceStyle { pointer, dotted };

/// `parent` extended by object member `key` (pointer: "/key" with ~ and / escaped; dotted: above).
std::string json_place_key(std::string_view parent, std::string_view key, JsonPlaceStyle style);
/// `parent` extended by array element `index` (pointer: "/3"; dotted: "[3]").
std::string json_place_index(std::string_view parent, std::size_t index, JsonPlaceStyle style);
/// An Error's where for `place` in `source`: "source: place", or `source` alone for the document.
std::string json_place_where(const std::string& source, std::string_view place, JsonPlaceStyle style);

/// Throws Error{invalid_input} at "source: PLACE" (JSON pointer by default) for the first string
/// (key or value) with a problem in a parsed JSON document (escapes such as \u0000 decode to control bytes).
void check_json_strings(const nlohmann::json& doc, const std::string& source,
                        JsonPlaceStyle style = JsonPlaceStyle::pointer);

/// Most nested arrays/objects parse_json_strict accepts (a deeper document is an error).
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Parses untrusted JSON (RFC 8259) strictly: syntax errors and numbers out of double's range
/// (1e400) are Error{invalid_input} at "source:LINE:COL"; duplicate object keys (RFC 8259 leaves
/// them undefined; nlohmann keeps the last silently) and nesting deeper than kMaxJsonDepth are
/// errors at "source: PLACE" (a JSON pointer, or the dotted path with JsonPlaceStyle::dotted: the
/// config.json and weight-index readers); then every string is checked by check_json_strings.
nlohmann::json parse_json_strict(std::string_view text, const std::string& source,
                                 JsonPlaceStyle style = JsonPlaceStyle::pointer);

/// Receives one element of a streamed array (see below): its index and its parsed value (the
/// callee may move from it).
using JsonElementSink = std::function<void(std::size_t index, nlohmann::json& element)>;
/// As parse_json_strict, but each element of the array that is the top-level object's member
/// `array_key` is checked (check_json_strings, at "source: /array_key/INDEX/...") and handed to
/// `sink` as soon as it ends, in order, then dropped: the returned document keeps that member as
/// an empty array, so memory holds one element at a time, not the whole array (issue 11: an
/// import of 200,000 offers held every offer's DOM). Errors anywhere in the text still throw,
/// after the sink saw the elements before them. An empty sink parses as the 2-argument form.
nlohmann::json parse_json_strict(std::string_view text, const std::string& source, std::string_view array_key,
                                 const JsonElementSink& sink);

/// JSON text of `doc` that cannot throw on bad UTF-8 (invalid bytes become U+FFFD): output
/// of data already in a store must never fail. indent < 0: compact.
std::string dump_json(const nlohmann::json& doc, int indent = 2);

/// Strict decimal number: optional sign, digits with an optional fraction, optional exponent;
/// no hex (0x10), no inf/nan, no leading/trailing junk. nullopt when `text` is not one, or
/// when it is out of double's finite range (1e400).
std::optional<double> parse_decimal(std::string_view text) noexcept;

/// The whole number a strict decimal `text` (as parse_decimal reads it) writes, times 10^scale10
/// (a K/M/B/T suffix: 3, 6, 9, 12), as its exact decimal digits: "9007199254740993" →
/// "9007199254740993", "1.5e12" → "1500000000000", "1.5" with scale10 6 → "1500000", "-0" → "0",
/// a negative one with its '-'. nullopt when `text` is not a strict decimal, when the value is not
/// a whole number (0.5, 1e-3) or when it has more than 400 digits (1e400).
std::optional<std::string> decimal_integer_digits(std::string_view text, int scale10 = 0);

/// Whether `value` is exactly the whole number `digits` writes (decimal_integer_digits' form):
/// a double holds every integer up to 2^53 = 9007199254740992 and beyond it only some
/// (9007199254740993 becomes 9007199254740992). fmt's "{:.0f}" prints a double's exact value.
bool double_is_exactly(double value, const std::string& digits);

}  // namespace gpuplan
