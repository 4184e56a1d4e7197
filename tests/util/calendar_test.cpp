// util/calendar.hpp: the one YYYY-MM-DD check (importers, filter dates, --today).
#include "util/calendar.hpp"

#include <gtest/gtest.h>

namespace gpuplan {
namespace {

TEST(Calendar, LeapDaysAndMonthEnds) {
  EXPECT_TRUE(is_calendar_date("2028-02-29"));   // 2028 is divisible by 4, not by 100
  EXPECT_TRUE(is_calendar_date("2000-02-29"));   // divisible by 400
  EXPECT_FALSE(is_calendar_date("2100-02-29"));  // divisible by 100, not by 400
  EXPECT_FALSE(is_calendar_date("2027-02-29"));
  EXPECT_FALSE(is_calendar_date("2026-02-30"));
  EXPECT_FALSE(is_calendar_date("2026-11-31"));  // November has 30 days
  EXPECT_TRUE(is_calendar_date("2026-12-31"));
  EXPECT_FALSE(is_calendar_date("2026-13-01"));
  EXPECT_FALSE(is_calendar_date("2026-00-10"));
  EXPECT_FALSE(is_calendar_date("2026-01-00"));
}

TEST(Calendar, OnlyTheExactShapeIsADate) {
  EXPECT_FALSE(is_calendar_date("2026-12-01T00:00:00Z"));  // a timestamp is not a date
  EXPECT_FALSE(is_calendar_date("2026-12-01 "));
  EXPECT_FALSE(is_calendar_date("2026-1-01"));
  EXPECT_FALSE(is_calendar_date("+026-12-01"));
  EXPECT_FALSE(is_calendar_date("2026/12/01"));
  EXPECT_FALSE(is_calendar_date(""));
  // The prefix reader ignores what follows the ten characters (a timestamp's date part)...
  EXPECT_TRUE(date_prefix_days_since_epoch("2026-12-01T25:00:00Z").has_value());
  // ...but still refuses a day that does not exist.
  EXPECT_FALSE(date_prefix_days_since_epoch("2026-02-30T00:00:00Z").has_value());
}

TEST(Calendar, DaysSinceEpochByHand) {
  EXPECT_EQ(date_prefix_days_since_epoch("1970-01-01"), 0L);
  EXPECT_EQ(date_prefix_days_since_epoch("1969-12-31"), -1L);
  // 1970..1999: 30 years, 7 leap days (1972..1996) -> 30*365 + 7 = 10957; + Jan 31 + Feb 29 (2000 leaps).
  EXPECT_EQ(date_prefix_days_since_epoch("2000-03-01"), 10957L + 31 + 29);
  // 1970..2025: 56 years, 14 leap days (1972..2024) -> 20454 to 2026-01-01; + 334 days Jan..Nov.
  EXPECT_EQ(date_prefix_days_since_epoch("2026-12-01"), 20454L + 334);
}

}  // namespace
TEST(Calendar, EarliestDateIs2000) {
  // kEarliestDateDays by hand: 1970..1999 is 30 years of 365 days plus the leap days of 1972,
  // 1976, ..., 1996 (7): 10950 + 7 = 10957.
  EXPECT_EQ(kEarliestDateDays, 30 * 365 + 7);
  EXPECT_EQ(date_prefix_days_since_epoch(kEarliestDate), kEarliestDateDays);
  EXPECT_TRUE(before_earliest_date("0000-01-01"));  // trial11: an offer 740,319 days old
  EXPECT_TRUE(before_earliest_date("1999-12-31"));
  EXPECT_TRUE(before_earliest_date("1999-12-31T23:59:59Z"));
  EXPECT_FALSE(before_earliest_date("2000-01-01"));
  EXPECT_FALSE(before_earliest_date("2026-12-04"));
  EXPECT_FALSE(before_earliest_date("unknown"));  // not a date: the date check's to refuse
}

// The UTC day of a timestamp: 2026-12-06 is day 20454 + 339 = 20793 (20454 to 2026-01-01, + 334
// days Jan..Nov, + 5). A +14:00 time an hour after its local midnight is 11:00 UTC the day before;
// a −12:00 time at 23:30 is 11:30 UTC the next day; Z and a date alone are their own day.
TEST(Calendar, UtcDayOfATimestamp) {
  const long dec6 = 20454L + 334 + 5;
  EXPECT_EQ(utc_days_since_epoch("2026-12-06"), dec6);
  EXPECT_EQ(utc_days_since_epoch("2026-12-06T23:59:59Z"), dec6);
  EXPECT_EQ(utc_days_since_epoch("2026-12-07T01:00:00+14:00"), dec6);
  EXPECT_EQ(utc_days_since_epoch("2026-12-06T23:30:00-12:00"), dec6 + 1);
  EXPECT_EQ(utc_days_since_epoch("2026-12-06T13:59+14:00"), dec6 - 1);
  EXPECT_EQ(utc_days_since_epoch("2026-12-06T14:00:00.5+14:00"), dec6);
  EXPECT_EQ(utc_days_since_epoch("2026-01-01T00:30:00+01:00"), 20454L - 1);  // across a year
  EXPECT_EQ(utc_days_since_epoch("2026-12-06T12:00"), std::nullopt);         // no offset
  EXPECT_EQ(utc_days_since_epoch("2026-02-30T00:00:00Z"), std::nullopt);     // not a day
}

}  // namespace gpuplan
