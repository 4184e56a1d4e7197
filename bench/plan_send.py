#!/usr/bin/env python3
"""Sends POST /api/plan bodies (one per line of a file) one after the other on one keep-alive
connection; fails on any answer other than 200. Used by bench/plan_instructions.sh,
bench/serve_wrk.sh and scripts/capture-plan-outputs.sh (which keeps the answers: OUT_FILE gets
each request line, then its response body).
Usage: bench/plan_send.py PORT BODIES_FILE FIRST COUNT [OUT_FILE]
"""
import http.client
import sys

port, path, first, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(path, encoding="utf-8") as f:
    lines = f.read().splitlines()
out = open(sys.argv[5], "wb") if len(sys.argv) > 5 else None
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
for k in range(first, first + count):
    conn.request("POST", "/api/plan", body=lines[k].encode(), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"body {k}: HTTP {r.status}: {data[:300]!r}")
    if out:
        out.write(b"== " + lines[k].encode() + b"\n" + data)
if out:
    out.close()
