#pragma once
/// Calendar dates written YYYY-MM-DD (ISO 8601, proleptic Gregorian): the one check every
/// importer, the filter language and the planner's --today use (issue 11: three copies of it).
#include <optional>
#include <string_view>

namespace gpuplan {

/// Days from 1970-01-01 of the date that the first ten characters of `s` write as YYYY-MM-DD
/// (four digits, '-', two, '-', two), when that is a real calendar day: 2028-02-29 is one,
/// 2027-02-29, 2026-02-30, 2026-11-31, 2026-13-01 and 2026-00-10 are not. What follows the ten
/// characters is not looked at (a timestamp's clock part is its reader's to check). nullopt
/// otherwise. Formula: H. Hinnant's days_from_civil (howardhinnant.github.io/date_algorithms.html).
std::optional<long> date_prefix_days_since_epoch(std::string_view s);

/// True when `s` is exactly YYYY-MM-DD naming a real calendar day (no time, no offset, no spaces).
bool is_calendar_date(std::string_view s);

}  // namespace gpuplan
