#!/usr/bin/env python3
"""SDXL-UNet-shaped forward on one GPU: FLOP count and time, for diffusion_perf.hpp.

STATUS: written 2026-11-30 but NOT YET RUN (no device machine was lent when it was ready). Run it
like perf_flux_blocks.py, then calibrate PerfAssumptions::diffusion_unet_efficiency from it and
compare its counted FLOPs with diffusion_perf (per evaluation x 2: the batch holds the CFG pair).

The diffusers UNet2DConditionModel layout of stabilityai/stable-diffusion-xl-base-1.0 (block_out_channels
320/640/1280, layers_per_block 2, transformer_layers_per_block 1/2/10, DownBlock2D + 2 CrossAttnDownBlock2D,
UNetMidBlock2DCrossAttn, 2 CrossAttnUpBlock2D + UpBlock2D, cross_attention_dim 2048, 77 text tokens, linear
proj_in/out), written out with plain torch ops because diffusers is not installed on the measuring machine:
ResnetBlock2D = GroupNorm(32) + SiLU + conv3x3 + time-embedding add + GroupNorm + SiLU + conv3x3 (+ 1x1
shortcut); Transformer2D = GroupNorm + proj_in + blocks of (LayerNorm, self-attention, LayerNorm,
cross-attention, LayerNorm, GEGLU feed-forward) + proj_out; stride-2 conv downsampling; nearest x2 + conv
upsampling; conv_in/conv_out. bf16 random weights, batch 2 (classifier-free guidance pair), SDPA attention.
Counts FLOPs (FlopCounterMode) and times 5 forwards after 2 warm-ups at 1024x1024 (latent 128x128).
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

dev, dt = "cuda", torch.bfloat16
TEMB, X, TXT = 1280, 2048, 77


def W(*shape):
    return torch.empty(*shape, device=dev, dtype=dt).normal_(0, 0.02)


def Z(n):
    return torch.zeros(n, device=dev, dtype=dt)


class Conv:
    def __init__(s, ci, co, k):
        s.w, s.b, s.p = W(co, ci, k, k), Z(co), k // 2

    def __call__(s, x, stride=1):
        return F.conv2d(x, s.w, s.b, stride=stride, padding=s.p)


class Lin:
    def __init__(s, i, o, bias=True):
        s.w, s.b = W(o, i), (Z(o) if bias else None)

    def __call__(s, x):
        return F.linear(x, s.w, s.b)


class Resnet:
    def __init__(s, ci, co):
        s.c1, s.c2, s.t = Conv(ci, co, 3), Conv(co, co, 3), Lin(TEMB, co)
        s.sc = Conv(ci, co, 1) if ci != co else None
        s.ci, s.co = ci, co

    def __call__(s, x, temb):
        h = s.c1(F.silu(F.group_norm(x, 32)))
        h = h + s.t(F.silu(temb))[:, :, None, None]
        h = s.c2(F.silu(F.group_norm(h, 32)))
        return (s.sc(x) if s.sc else x) + h


class Transformer2D:
    def __init__(s, c, layers):
        s.c, s.heads = c, c // 64
        s.pin, s.pout = Lin(c, c), Lin(c, c)
        s.blocks = [dict(q=Lin(c, c, False), k=Lin(c, c, False), v=Lin(c, c, False), o=Lin(c, c),
                         cq=Lin(c, c, False), ck=Lin(X, c, False), cv=Lin(X, c, False), co=Lin(c, c),
                         ff1=Lin(c, 8 * c), ff2=Lin(4 * c, c)) for _ in range(layers)]

    def attn(s, q, k, v):
        b, tq, c = q.shape
        tk = k.shape[1]
        q = q.view(b, tq, s.heads, -1).transpose(1, 2)
        k = k.view(b, tk, s.heads, -1).transpose(1, 2)
        v = v.view(b, tk, s.heads, -1).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, tq, c)

    def __call__(s, x, ctx):
        b, c, hh, ww = x.shape
        r = x
        h = F.group_norm(x, 32).permute(0, 2, 3, 1).reshape(b, hh * ww, c)
        h = s.pin(h)
        for p in s.blocks:
            n = F.layer_norm(h, (c,))
            h = h + p["o"](s.attn(p["q"](n), p["k"](n), p["v"](n)))
            n = F.layer_norm(h, (c,))
            h = h + p["co"](s.attn(p["cq"](n), p["ck"](ctx), p["cv"](ctx)))
            n = F.layer_norm(h, (c,))
            a, g = p["ff1"](n).chunk(2, dim=-1)
            h = h + p["ff2"](a * F.gelu(g))
        h = s.pout(h).reshape(b, hh, ww, c).permute(0, 3, 1, 2)
        return h + r


def build():
    ch, tl = [320, 640, 1280], [1, 2, 10]
    cross = [False, True, True]
    m = {"cin": Conv(4, 320, 3), "cout": Conv(320, 4, 3), "t1": Lin(320, TEMB), "t2": Lin(TEMB, TEMB)}
    down, out = [], 320
    for i in range(3):
        res, att = [], []
        for j in range(2):
            res.append(Resnet(out if j == 0 else ch[i], ch[i]))
            att.append(Transformer2D(ch[i], tl[i]) if cross[i] else None)
        out = ch[i]
        down.append((res, att, Conv(out, out, 3) if i < 2 else None))
    mid = (Resnet(1280, 1280), Transformer2D(1280, 10), Resnet(1280, 1280))
    up, prev = [], 1280
    rch, rtl, rcross = [1280, 640, 320], [10, 2, 1], [True, True, False]
    for i in range(3):
        o, skip_in = rch[i], rch[min(i + 1, 2)]
        res, att = [], []
        for j in range(3):
            skip = skip_in if j == 2 else o
            res.append(Resnet((prev if j == 0 else o) + skip, o))
            att.append(Transformer2D(o, rtl[i]) if rcross[i] else None)
        up.append((res, att, Conv(o, o, 3) if i < 2 else None))
        prev = o
    return m, down, mid, up


def forward(net, x, tproj, ctx):
    m, down, mid, up = net
    temb = m["t2"](F.silu(m["t1"](tproj)))
    h = m["cin"](x)
    skips = [h]
    for res, att, ds in down:
        for r, a in zip(res, att):
            h = r(h, temb)
            if a:
                h = a(h, ctx)
            skips.append(h)
        if ds:
            h = ds(h, stride=2)
            skips.append(h)
    h = mid[0](h, temb)
    h = mid[1](h, ctx)
    h = mid[2](h, temb)
    for res, att, us in up:
        for r, a in zip(res, att):
            h = r(torch.cat([h, skips.pop()], dim=1), temb)
            if a:
                h = a(h, ctx)
        if us:
            h = us(F.interpolate(h, scale_factor=2.0, mode="nearest"))
    return m["cout"](F.silu(F.group_norm(h, 32)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.manual_seed(0)
    net = build()
    rows = []
    with torch.no_grad():
        for side in [1024]:
            x = torch.randn(2, 4, side // 8, side // 8, device=dev, dtype=dt)
            tproj = torch.randn(2, 320, device=dev, dtype=dt)
            ctx = torch.randn(2, TXT, X, device=dev, dtype=dt)
            fc = FlopCounterMode(display=False)
            with fc:
                y = forward(net, x, tproj, ctx)
            assert y.shape == (2, 4, side // 8, side // 8), y.shape
            flop = fc.get_total_flops()
            for _ in range(2):
                forward(net, x, tproj, ctx)
            torch.cuda.synchronize()
            times = []
            for _ in range(5):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                forward(net, x, tproj, ctx)
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e) / 1000.0)
            med = statistics.median(times)
            row = {"id": f"sdxl-unet-{side}px-b2", "width_px": side, "height_px": side, "batch": 2,
                   "text_tokens": TXT, "flop_counted": flop, "seconds_median": med, "seconds_all": times,
                   "flop_per_s": flop / med, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "measured_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            print(json.dumps(row), flush=True)
            rows.append(row)
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
