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

bool is_calendar_date(std::string_view s) { return s.size() == 10 && date_prefix_days_since_epoch(s).has_value(); }

bool before_earliest_date(std::string_view s) {
  const auto d = date_prefix_days_since_epoch(s);
  return d && *d < kEarliestDateDays;
}

}  // namespace gpuplan
