#!/usr/bin/env python3
"""Weight-streaming roofline of LLM decode on one GPU, for the serving model (serving_perf.hpp).

Runs the matmul chain of one decode step of a Llama-3.1-8B-shaped model (32 layers of fused
q/k/v 4096x6144, o 4096x4096, gate+up 4096x28672, down 14336x4096, then the 4096x128256 LM
head; bf16, random weights) for a batch of B tokens, captured in a CUDA graph so launch
overhead is excluded. Attention over the KV cache, norms, RoPE and sampling are NOT included:
this is the weight-bandwidth / GEMM part of a decode step only (an upper bound for a real
server). Also measures a device-to-device copy and an 8192^3 bf16 GEMM as ceilings.

Output: one JSON object per line on stdout and in --out.
"""
import argparse
import json
import statistics
import time

import torch


def timed(fn, reps):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    dev = "cuda"
    torch.manual_seed(0)
    rows = []

    def emit(row):
        row["gpu"] = torch.cuda.get_device_name(0)
        row["torch"] = torch.__version__
        row["measured_at_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        print(json.dumps(row), flush=True)
        rows.append(row)

    # Ceiling 1: device-to-device copy (bytes read + written).
    a = torch.empty(2 * 1024**3, dtype=torch.uint8, device=dev)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    t = timed(lambda: b.copy_(a), 10)
    emit({"id": "copy-4GiB", "bytes_moved": 2 * a.numel(), "seconds_median": statistics.median(t),
          "bytes_per_s": 2 * a.numel() / statistics.median(t)})
    del a, b

    # Ceiling 2: large bf16 GEMM.
    m = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    n = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    for _ in range(3):
        m @ n
    t = timed(lambda: m @ n, 10)
    emit({"id": "gemm-8192-bf16", "flop": 2 * 8192**3, "seconds_median": statistics.median(t),
          "flop_per_s": 2 * 8192**3 / statistics.median(t)})
    del m, n

    h, inter, layers, vocab, kv = 4096, 14336, 32, 128256, 1024
    shapes = [(h, h + 2 * kv), (h, h), (h, 2 * inter), (inter, h)]
    weights = [[torch.randn(k, c, device=dev, dtype=torch.bfloat16) * 0.01 for (k, c) in shapes] for _ in range(layers)]
    head = torch.randn(h, vocab, device=dev, dtype=torch.bfloat16) * 0.01
    weight_elems = sum(k * c for k, c in shapes) * layers + h * vocab
    weight_bytes = 2 * weight_elems

    def step(x):
        for wqkv, wo, wgu, wd in weights:
            y = x @ wqkv
            x2 = y[:, :h] @ wo
            gu = x2 @ wgu
            x = (gu[:, :inter] * gu[:, inter:]) @ wd
        return x @ head

    for batch in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]:
        x = torch.randn(batch, h, device=dev, dtype=torch.bfloat16)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                step(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = step(x)
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
        t = timed(g.replay, 15)
        med = statistics.median(t)
        emit({"id": f"llama3.1-8b-matmuls-b{batch}", "batch": batch, "weight_bytes": weight_bytes,
              "matmul_flop": 2 * weight_elems * batch, "seconds_median": med, "seconds_all": t,
              "weight_bytes_per_s": weight_bytes / med, "flop_per_s": 2 * weight_elems * batch / med,
              "tokens_per_s": batch / med})
        del g, out, x
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
