#!/usr/bin/env python3
"""Deterministic POST /api/plan bodies for the load and instruction benchmarks (issue 10).

Usage: bench/plan_bodies.py N > bodies.txt   (one JSON body per line, no two alike)

The bodies mix what a real caller changes, not only the token count: seven bundled models
(dense 8B to 70B, two mixture-of-experts), the five plan tasks (lora, qlora, full, pretrain,
serve), four filters (none, gpus>=8, an H100 filter, a price filter), and a token count (training)
or service hours (serving) that makes every body distinct, so the server's response cache never
answers one. Cycle lengths 7, 5 and 4 are coprime: every model meets every task and filter
within 140 bodies. The same N gives the same file on every machine.
"""
import json
import sys

MODELS = ["llama-3.1-70b", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "qwen3-32b", "gemma-2-27b",
          "qwen3-30b-a3b"]
TASKS = ["lora", "qlora", "full", "pretrain", "serve"]
FILTERS = ["gpus>=8", "", "gpu~h100", "price_per_gpu<=4"]
CONCURRENCY = [8, 16, 32, 64]


def body(i: int) -> str:
    model, task, flt = MODELS[i % 7], TASKS[i % 5], FILTERS[i % 4]
    b = {"model": model, "task": task, "filter": flt, "limit": 10}
    if task == "serve":
        b["concurrency"] = CONCURRENCY[(i // 4) % 4]
        b["hours"] = round(24 + i / 1000, 3)  # distinct per body (at most 224 h for 200,000 bodies)
    elif task == "pretrain":
        b["tokens"] = 10_000_000_000 + i * 1_000_003  # distinct per body
    else:
        b["tokens"] = 100_000_000 + i * 1_000_003
    return json.dumps(b, separators=(", ", ": "))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    sys.stdout.write("".join(body(i) + "\n" for i in range(n)))
