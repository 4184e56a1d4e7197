#!/usr/bin/env python3
"""Convert a Spare Cores Navigator SQLite database (sparecores-data `sc-data-all.db`, tables `server`
and `server_price`) into gpuplan user-quote CSV rows (docs/import-format.md): AWS GPU servers,
Linux on-demand hourly prices in USD, one row per server x region.
Usage: convert-sparecores-aws.py SOURCE sc-data-all.db > aws-gpu-ondemand.csv
Kept: vendor aws, gpu_count > 0, allocation ONDEMAND, operating_system Linux, currency USD, duration HOUR,
price > 0. observed_at = the row's inserted_at (the crawler's collection time, UTC).
Left out: instance families whose newer prices the bundled SkyPilot AWS excerpt already carries (p3, p3dn,
p4d, p4de, p5*, p6*): a dated 2024 price would otherwise replace their undated but newer one (the latest
dated observation wins). GPU name and count, vCPUs, RAM (MiB -> GB) and local disk (GB) from `server`."""
import csv, sqlite3, sys, re
SRC = sys.argv[1]
db = sqlite3.connect(sys.argv[2])
SKIP = re.compile(r'^(p3|p3dn|p4d|p4de|p5|p5e|p5en|p6[-a-z0-9]*)\.')
rows = db.execute("""
  select s.id, sp.datacenter_id, s.gpu_name, s.gpu_count, s.vcpus, s.memory, s.storage_size,
         sp.price, sp.inserted_at
  from server_price sp join server s on s.vendor_id = sp.vendor_id and s.id = sp.server_id
  where s.vendor_id = 'aws' and s.gpu_count > 0 and sp.allocation = 'ONDEMAND'
    and sp.operating_system = 'Linux' and sp.currency = 'USD' and sp.duration = 'HOUR' and sp.price > 0
  order by s.id, sp.datacenter_id""").fetchall()
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow("provider,instance_type,region,gpu,gpu_count,vcpus,ram_gb,local_disk_gb,price_kind,usd_per_hour,"
           "observed_at,source,notes".split(','))
kept = skipped = 0
seen = set()
for sid, region, gpu, count, vcpus, mem_mib, disk_gb, price, ins in rows:
    if SKIP.match(sid):
        skipped += 1
        continue
    assert (sid, region) not in seen, (sid, region)
    seen.add((sid, region))
    m = re.fullmatch(r'(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?', ins)
    assert m, ins
    ram_gb = round(mem_mib * 1048576 / 1e9, 3)
    w.writerow(['aws', sid, region, gpu, count, vcpus, repr(ram_gb), disk_gb or '', 'on-demand', repr(price),
                f"{m.group(1)}T{m.group(2)}Z", SRC, 'server_price Linux ONDEMAND USD/HOUR'])
    kept += 1
print(kept, 'rows kept,', skipped, 'p-family rows left out', file=sys.stderr)
