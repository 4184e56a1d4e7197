#include "util/calendar.hpp"

namespace gpuplan {

std::optional<long> date_prefix_days_since_epoch(std::string_view s) {
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  auto digits = [&](std::size_t from, std::size_t n) -> std::optional<long> {
    long v = 0;
    for (std::size_t i = from; i < from + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const auto y = digits(0, 4), m = digits(5, 2), d = digits(8, 2);
  if (!y || !m || !d) return std::nullopt;
  static constexpr long kDaysIn[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (*y % 4 == 0 && *y % 100 != 0) || *y % 400 == 0;
  if (*m < 1 || *m > 12 || *d < 1 || *d > kDaysIn[*m - 1] + (*m == 2 && leap ? 1 : 0)) return std::nullopt;
  const long yy = *y - (*m <= 2 ? 1 : 0);
  const long era = (yy >= 0 ? yy : yy - 399) / 400;
  const long yoe = yy - era * 400;
  const long mp = (*m + 9) % 12;
  const long doy = (153 * mp + 2) / 5 + *d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::optional<long> utc_days_since_epoch(std::string_view s) {
  const auto day = date_prefix_days_since_epoch(s);
  if (!day || s.size() == 10) return day;
  auto two = [&](std::size_t at) -> std::optional<long> {
    if (at + 2 > s.size() || s[at] < '0' || s[at] > '9' || s[at + 1] < '0' || s[at + 1] > '9') return std::nullopt;
    return (s[at] - '0') * 10L + (s[at + 1] - '0');
  };
  const auto hh = two(11), mm = two(14);
  if (s[10] != 'T' || !hh || !mm) return std::nullopt;
  long offset = 0;  // minutes east of UTC
  const char last = s.back();
  if (last != 'Z') {
    if (s.size() < 16 + 6) return std::nullopt;
    const std::size_t at = s.size() - 6;
    const auto oh = two(at + 1), om = two(at + 4);
    if ((s[at] != '+' && s[at] != '-') || s[at + 3] != ':' || !oh || !om) return std::nullopt;
    offset = (s[at] == '+' ? 1 : -1) * (*oh * 60 + *om);
  }
  const long minutes = *hh * 60 + *mm - offset;  // in (−24 h, +48 h): a day back or forward at most
  return *day + (minutes < 0 ? -1 : minutes / 1440);
}

bool is_calendar_date(std::string_view s) { return s.size() == 10 && date_prefix_days_since_epoch(s).has_value(); }

bool before_earliest_date(std::string_view s) {
  const auto d = date_prefix_days_since_epoch(s);
  return d && *d < kEarliestDateDays;
}

}  // namespace gpuplan
