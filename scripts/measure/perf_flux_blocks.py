#!/usr/bin/env python3
"""FLUX.1-shaped transformer forward on one GPU: FLOP count and time, for diffusion_perf.hpp.

Builds the FluxTransformer2DModel computation (diffusers transformer_flux.py layout, written out
here with plain torch ops because diffusers is not installed on the measuring machine):
x_embedder 64->D, context_embedder 4096->D, 19 double-stream blocks (per stream: AdaLayerNormZero
D->6D modulation, LayerNorm, q/k/v D->D with RMSNorm on q and k, joint SDPA over text+image
tokens, out D->D, GELU-tanh MLP D->4D->D), 38 single-stream blocks (AdaLayerNormZeroSingle D->3D,
q/k/v D->D, RMSNorm q/k, SDPA, proj_mlp D->4D, proj_out 5D->D), norm_out D->2D, proj_out D->64;
D = 24 heads x 128 = 3072, bf16, random weights, batch 1, no RoPE (elementwise, negligible).
Counts FLOPs with torch.utils.flop_counter.FlopCounterMode and times 5 forwards (CUDA events)
after 2 warm-ups, at 512x512, 1024x1024 and 1536x1536 (image tokens (H/16)(W/16), 512 text tokens).
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

D, HEADS, HD = 3072, 24, 128
dev, dt = "cuda", torch.bfloat16


def lin(i, o):
    w = torch.empty(o, i, device=dev, dtype=dt).normal_(0, 0.02)
    b = torch.zeros(o, device=dev, dtype=dt)
    return (w, b)


def apply(p, x):
    return F.linear(x, p[0], p[1])


def rms(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype)


def heads(x):
    b, t, _ = x.shape
    return x.view(b, t, HEADS, HD).transpose(1, 2)


def double_block(p, img, txt, temb):
    mi = apply(p["mod_img"], F.silu(temb)).chunk(6, dim=-1)
    mt = apply(p["mod_txt"], F.silu(temb)).chunk(6, dim=-1)
    ni = F.layer_norm(img, (D,)) * (1 + mi[1][:, None]) + mi[0][:, None]
    nt = F.layer_norm(txt, (D,)) * (1 + mt[1][:, None]) + mt[0][:, None]
    q = torch.cat([rms(heads(apply(p["aq"], nt))), rms(heads(apply(p["q"], ni)))], dim=2)
    k = torch.cat([rms(heads(apply(p["ak"], nt))), rms(heads(apply(p["k"], ni)))], dim=2)
    v = torch.cat([heads(apply(p["av"], nt)), heads(apply(p["v"], ni))], dim=2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, -1, D)
    ot, oi = o[:, : txt.shape[1]], o[:, txt.shape[1]:]
    img = img + mi[2][:, None] * apply(p["out"], oi)
    txt = txt + mt[2][:, None] * apply(p["aout"], ot)
    ni = F.layer_norm(img, (D,)) * (1 + mi[4][:, None]) + mi[3][:, None]
    nt = F.layer_norm(txt, (D,)) * (1 + mt[4][:, None]) + mt[3][:, None]
    img = img + mi[5][:, None] * apply(p["ff2"], F.gelu(apply(p["ff1"], ni), approximate="tanh"))
    txt = txt + mt[5][:, None] * apply(p["cff2"], F.gelu(apply(p["cff1"], nt), approximate="tanh"))
    return img, txt


def single_block(p, x, temb):
    m = apply(p["mod"], F.silu(temb)).chunk(3, dim=-1)
    n = F.layer_norm(x, (D,)) * (1 + m[1][:, None]) + m[0][:, None]
    mlp = F.gelu(apply(p["mlp"], n), approximate="tanh")
    q, k, v = rms(heads(apply(p["q"], n))), rms(heads(apply(p["k"], n))), heads(apply(p["v"], n))
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, -1, D)
    return x + m[2][:, None] * apply(p["out"], torch.cat([o, mlp], dim=-1))


def build():
    doubles = []
    for _ in range(19):
        p = {"mod_img": lin(D, 6 * D), "mod_txt": lin(D, 6 * D)}
        for n in ["q", "k", "v", "aq", "ak", "av", "out", "aout"]:
            p[n] = lin(D, D)
        p.update({"ff1": lin(D, 4 * D), "ff2": lin(4 * D, D), "cff1": lin(D, 4 * D), "cff2": lin(4 * D, D)})
        doubles.append(p)
    singles = []
    for _ in range(38):
        singles.append({"mod": lin(D, 3 * D), "mlp": lin(D, 4 * D), "q": lin(D, D), "k": lin(D, D), "v": lin(D, D),
                        "out": lin(5 * D, D)})
    top = {"x": lin(64, D), "ctx": lin(4096, D), "t1": lin(256, D), "t2": lin(D, D), "y1": lin(768, D),
           "y2": lin(D, D), "norm_out": lin(D, 2 * D), "proj_out": lin(D, 64)}
    return top, doubles, singles


def forward(top, doubles, singles, latents, text, tproj, pooled):
    temb = apply(top["t2"], F.silu(apply(top["t1"], tproj))) + apply(top["y2"], F.silu(apply(top["y1"], pooled)))
    img, txt = apply(top["x"], latents), apply(top["ctx"], text)
    for p in doubles:
        img, txt = double_block(p, img, txt, temb)
    x = torch.cat([txt, img], dim=1)
    for p in singles:
        x = single_block(p, x, temb)
    img = x[:, txt.shape[1]:]
    s = apply(top["norm_out"], F.silu(temb)).chunk(2, dim=-1)
    img = F.layer_norm(img, (D,)) * (1 + s[0][:, None]) + s[1][:, None]
    return apply(top["proj_out"], img)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.manual_seed(0)
    top, doubles, singles = build()
    params = sum(t.numel() for d in [top] + doubles + singles for p in d.values() for t in p)
    rows = []
    with torch.no_grad():
        for side in [512, 1024, 1536]:
            img_tokens = (side // 16) ** 2
            latents = torch.randn(1, img_tokens, 64, device=dev, dtype=dt)
            text = torch.randn(1, 512, 4096, device=dev, dtype=dt)
            tproj = torch.randn(1, 256, device=dev, dtype=dt)
            pooled = torch.randn(1, 768, device=dev, dtype=dt)
            fc = FlopCounterMode(display=False)
            with fc:
                forward(top, doubles, singles, latents, text, tproj, pooled)
            flop = fc.get_total_flops()
            for _ in range(2):
                forward(top, doubles, singles, latents, text, tproj, pooled)
            torch.cuda.synchronize()
            times = []
            for _ in range(5):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                forward(top, doubles, singles, latents, text, tproj, pooled)
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e) / 1000.0)
            med = statistics.median(times)
            row = {"id": f"flux-blocks-{side}px", "width_px": side, "height_px": side, "image_tokens": img_tokens,
                   "text_tokens": 512, "params": params, "flop_counted": flop, "seconds_median": med,
                   "seconds_all": times, "flop_per_s": flop / med, "gpu": torch.cuda.get_device_name(0),
                   "torch": torch.__version__, "measured_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            print(json.dumps(row), flush=True)
            rows.append(row)
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
