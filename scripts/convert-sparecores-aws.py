#!/usr/bin/env python3
"""Convert a Spare Cores Navigator SQLite database (sparecores-data `sc-data-all.db`, tables `server`
and `server_price`) into gpuplan user-quote CSV rows (docs/import-format.md): AWS GPU servers,
Linux on-demand hourly prices in USD, one row per server x region.
Usage: convert-sparecores-aws.py SOURCE sc-data-all.db > aws-gpu-ondemand.csv
Kept: vendor aws, gpu_count > 0, allocation ONDEMAND, operating_system Linux, currency USD, duration HOUR,
price > 0. observed_at = the row's inserted_at (the crawler's collection time, UTC).
Left out: the p4d, p4de, p5* and p6* families, whose prices AWS has since cut: the bundled later observations
list p4d.24xlarge us-east-1 at 21.957642 (SkyPilot) / 21.9576 (ewyluda 2026-10-10) against 32.7726 here, and
p5.48xlarge at 55.04 against 98.32, so these 2024 rows are known to be superseded. p3 and p3dn are kept (their
prices here equal the SkyPilot excerpt's, e.g. p3.2xlarge us-east-1 3.06). GPU name and count, GPU memory per GPU
(total MiB / count -> GB), vCPUs, RAM (MiB -> GB) and local disk (GB) from `server`."""
import csv, sqlite3, sys, re
SRC = sys.argv[1]
db = sqlite3.connect(sys.argv[2])
SKIP = re.compile(r'^(p4d|p4de|p5|p5e|p5en|p6[-a-z0-9]*)\.')
rows = db.execute("""
  select s.id, sp.datacenter_id, s.gpu_name, s.gpu_count, s.gpu_memory, s.vcpus, s.memory, s.storage_size,
         sp.price, sp.inserted_at
  from server_price sp join server s on s.vendor_id = sp.vendor_id and s.id = sp.server_id
  where s.vendor_id = 'aws' and s.gpu_count > 0 and sp.allocation = 'ONDEMAND'
    and sp.operating_system = 'Linux' and sp.currency = 'USD' and sp.duration = 'HOUR' and sp.price > 0
  order by s.id, sp.datacenter_id""").fetchall()
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow("provider,instance_type,region,gpu,gpu_count,gpu_memory_gb,vcpus,ram_gb,local_disk_gb,price_kind,usd_per_hour,"
           "observed_at,source,notes".split(','))
kept = skipped = 0
seen = set()
for sid, region, gpu, count, gpu_mib, vcpus, mem_mib, disk_gb, price, ins in rows:
    if SKIP.match(sid):
        skipped += 1
        continue
    assert (sid, region) not in seen, (sid, region)
    seen.add((sid, region))
    m = re.fullmatch(r'(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?', ins)
    assert m, ins
    ram_gb = round(mem_mib * 1048576 / 1e9, 3)
    gpu_gb = round(gpu_mib / count * 1048576 / 1e9, 3)  # server.gpu_memory is the total in MiB
    w.writerow(['aws', sid, region, gpu, count, repr(gpu_gb), vcpus, repr(ram_gb), disk_gb or '', 'on-demand', repr(price),
                f"{m.group(1)}T{m.group(2)}Z", SRC, 'server_price Linux ONDEMAND USD/HOUR'])
    kept += 1
print(kept, 'rows kept,', skipped, 'p4d/p5 rows left out', file=sys.stderr)
