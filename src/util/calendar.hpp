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

/// The UTC day (days from 1970-01-01) of a date or timestamp as the importers accept it: YYYY-MM-DD
/// alone is that day; YYYY-MM-DDTHH:MM[...](Z|±HH:MM) is the day its instant falls on in UTC
/// ("2026-12-07T01:00:00+14:00" is 2026-12-06 at 11:00 UTC). nullopt when the date is not a
/// calendar day or the clock / offset are not digits where they belong (the importers' own
/// check, is_iso_date, decides what is accepted; this only places it).
std::optional<long> utc_days_since_epoch(std::string_view s);

/// True when `s` is exactly YYYY-MM-DD naming a real calendar day (no time, no offset, no spaces).
bool is_calendar_date(std::string_view s);

/// The earliest date gpuplan accepts for a price observation (an import's observed_at and
/// confirmed_available_at), for --today and for a date in a filter: 2000-01-01. No cloud GPU
/// offer predates it (the first rentable cloud GPUs, Amazon EC2 Cluster GPU instances, announced
/// in November 2010: allthingsdistributed.com/2010/11/cluster_gpu_instances_amazon_ec2.html), so an earlier date is a typo or a placeholder
/// (`0000-01-01` made an offer 740,319 days old). docs/import-format.md, docs/freshness.md.
inline constexpr std::string_view kEarliestDate = "2000-01-01";
/// kEarliestDate in days since 1970-01-01 (30 years of 365 days and 7 leap days, 1972..1996).
inline constexpr long kEarliestDateDays = 10957;
/// True when the date that `s` starts with (YYYY-MM-DD, as date_prefix_days_since_epoch reads
/// it) is before kEarliestDate; false for a later date and for text that is not a date.
bool before_earliest_date(std::string_view s);

}  // namespace gpuplan
