#!/usr/bin/env python3
"""Dates the on-demand prices of the bundled SkyPilot AWS p-family excerpt by a dated observation of the
same price: writes data/offers/skypilot-catalog/v8/aws/vms.p-family.price-dates.csv (PROVENANCE.md §1),
which bundled_catalog() applies (src/catalog/importers.cpp, apply_price_dates).

SkyPilot's catalog gives no date. AWS on-demand prices are per region (the same in every zone of a
region), so a SkyPilot row whose InstanceType, Region and on-demand Price equal **exactly** (decimal
equality) a dated AWS on-demand observation of that type and region in a bundled dated source shows a
price that was observed on that date. The sources: the Spare Cores crawl (data/offers/sparecores-aws,
PROVENANCE.md §13: observed_at = the crawler's collection time) and the ewyluda daily observations
(data/offers/ewyluda-gpu-price-index/observations-2026-10-10.csv, §6: collected_at per row). Of several
equal observations the newest is cited (the price was still that on that day). The on-demand observation
then carries that date and cites that observation (observed_in: its locator as bundled_catalog() writes
it, then its file and line). A row with no exact match, and every spot price (SpotPrice: neither source
has AWS spot rows), stays undated. Re-runnable: the output depends on these bundled files only.

Columns: line (the excerpt's line, as its locators count: header = 1), instance_type, region,
usd_per_hour (the excerpt's Price text), observed_at, observed_in.
Usage: scripts/date-skypilot-aws-prices.py [--check]   (--check: exit 1 when the committed file differs)
"""
import csv, io, sys
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXCERPT = ROOT / 'data/offers/skypilot-catalog/v8/aws/vms.p-family.csv'
OUT = ROOT / 'data/offers/skypilot-catalog/v8/aws/vms.p-family.price-dates.csv'
# The dated sources: file (relative to the repository) and locator base (kBundled in
# src/catalog/importers.cpp).
SPARECORES = ('data/offers/sparecores-aws/aws-gpu-ondemand-2024-02.csv',
              'SpareCores/sc-data@ce414d8e9d6bb1faf6ce9407fedac0c1f25f587a:src/sc_data/data/sc-data-all.db'
              '[AWS GPU on-demand, converted; PROVENANCE.md §13]')
EWYLUDA = ('data/offers/ewyluda-gpu-price-index/observations-2026-10-10.csv',
           'ewyluda/gpu-price-index@ab49c8081de81f1dae5f8f7e7d46af80b68c35d6:data/observations/2026/2026-10-10.csv')

def rows_with_lines(path):
    """(line, row) of a CSV whose rows hold no line breaks (checked), header = line 1."""
    with open(path, newline='') as f:
        r = csv.DictReader(f)
        for row in r:
            yield r.line_num, row


def main():
    dated = {}  # (instance_type, region) -> [(price, observed_at, observed_in, file)]
    seen = set()

    def add(rel, base, line, key, price, observed_at):
        if not observed_at:
            return
        if (rel, key) in seen:
            sys.exit(f'{rel}:{line}: a second on-demand row for {key}')
        seen.add((rel, key))
        dated.setdefault(key, []).append((Decimal(price), observed_at, f'{base}:{line} ({rel}:{line})', rel))

    rel, base = SPARECORES
    for line, row in rows_with_lines(ROOT / rel):
        if row['provider'] == 'aws' and row['price_kind'] == 'on-demand':
            add(rel, base, line, (row['instance_type'], row['region']), row['usd_per_hour'], row['observed_at'])
    rel, base = EWYLUDA
    for line, row in rows_with_lines(ROOT / rel):
        if row['source'] == 'aws' and row['pricing'] == 'on_demand':
            at = row['collected_at']
            if not at.endswith('+00:00'):
                sys.exit(f'{rel}:{line}: collected_at {at} is not UTC')
            add(rel, base, line, (row['sku'], row['region']), row['usd_per_hour'], at[:-len('+00:00')] + 'Z')
    out = io.StringIO()
    w = csv.writer(out, lineterminator='\n')
    w.writerow(['line', 'instance_type', 'region', 'usd_per_hour', 'observed_at', 'observed_in'])
    matched = unmatched = differ = 0
    by_source = {}
    for line, row in rows_with_lines(EXCERPT):
        if not row['Price']:
            continue
        hits = dated.get((row['InstanceType'], row['Region']))
        if not hits:
            unmatched += 1
            continue
        equal = [h for h in hits if h[0] == Decimal(row['Price'])]
        if not equal:
            differ += 1
            continue
        _, observed_at, observed_in, rel = max(equal, key=lambda h: h[1])  # the newest; ties: the first listed
        matched += 1
        by_source[rel] = by_source.get(rel, 0) + 1
        w.writerow([line, row['InstanceType'], row['Region'], row['Price'], observed_at, observed_in])
    text = out.getvalue()
    print(f'{matched} rows dated by an exact same-price observation, {differ} with a different price and '
          f'{unmatched} without a dated observation of their type and region left undated; cited: {by_source}',
          file=sys.stderr)
    if '--check' in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text() != text:
            sys.exit(f'{OUT.relative_to(ROOT)} differs from what this script writes')
        return
    OUT.write_text(text)


if __name__ == '__main__':
    main()
