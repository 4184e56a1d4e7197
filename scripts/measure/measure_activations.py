#!/usr/bin/env python3
"""Measure activation memory, fp32-master mixed precision and training throughput on one CUDA GPU.

Second measurement script beside measure_memory.py (whose helpers it imports: config loading with
layer-count overrides, arch summary). Models are built from data/models/<folder>/config.json with
RANDOM weights (AutoModelForCausalLM.from_config; no hub access). Three kinds of rows:

  activation_memory  bytes held for backward after the forward pass, split into decoder stack /
                     LM head (logits) / loss, for 2- and 4-layer cuts of one architecture, so that
                     (4-layer - 2-layer) / 2 is the per-layer activation size; pure bf16 model,
                     every parameter requires grad (full fine-tune). Rows with row_type
                     "per_layer_slope" hold that difference.
  train_memory       full fine-tune step with fp32 master weights and torch.autocast(bfloat16)
                     (and the same model in pure bf16 for comparison): weights, grads, AdamW state,
                     activation bytes, peaks, step time.
  train_throughput   pure-bf16 full fine-tune steps (2 warm-up + 5 timed) of a layer-cut
                     Llama-3.1-8B at full width: tokens/s and achieved TFLOP/s (formula in the row).

Each finished measurement is appended to --out at once (a timeout keeps what was done); every case
is wrapped in try/except and gives an `error` row on failure. Field meanings:
tests/data/h200-activations.PROVENANCE.md.

Run from the repo root:
  PYTHONUNBUFFERED=1 python3 scripts/measure/measure_activations.py --out /tmp/h200-activations.jsonl
Print the comparison with Korthikanti et al. 2022 from a finished file (needs no GPU, no torch):
  python3 scripts/measure/measure_activations.py --report tests/data/h200-activations.jsonl
"""

import argparse
import datetime
import gc
import json
import os
import shlex
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_memory as mm  # noqa: E402  (sets HF offline env vars; imports no torch at module level)

ADAMW_LR = 1e-5
# NVIDIA H200 SXM datasheet: 1,979 TFLOP/s bf16 "with sparsity" -> 989.5 dense (footnote: half with sparsity).
H200_DENSE_BF16_FLOPS = 989.5e12

# short name -> (folder, overrides)
MODELS = {
    "llama3.1-8b-L2": ("meta-llama__Llama-3.1-8B", {"num_hidden_layers": 2}),
    "llama3.1-8b-L4": ("meta-llama__Llama-3.1-8B", {"num_hidden_layers": 4}),
    "llama3.1-8b-L8": ("meta-llama__Llama-3.1-8B", {"num_hidden_layers": 8}),
    "qwen3-0.6b-L2": ("Qwen__Qwen3-0.6B", {"num_hidden_layers": 2}),
    "qwen3-0.6b-L4": ("Qwen__Qwen3-0.6B", {"num_hidden_layers": 4}),
    "qwen3-0.6b": ("Qwen__Qwen3-0.6B", {}),
    "llama3.2-1b": ("meta-llama__Llama-3.2-1B-Instruct", {}),
}

LLAMA_SHAPES = [(1, 1024), (2, 1024), (1, 4096), (2, 4096)]
QWEN_SHAPES = [(2, 2048)]
CENSUS_SHAPE = (1, 1024)  # saved-tensor census (gc off only) on this shape

# Tasks in priority order; the time budget skips the tail first.
TASKS = [
    {"type": "act", "short": "llama3.1-8b-L2", "attn": "sdpa", "shapes": LLAMA_SHAPES},
    {"type": "act", "short": "llama3.1-8b-L4", "attn": "sdpa", "shapes": LLAMA_SHAPES},
    {"type": "mixed", "short": "llama3.2-1b", "b": 1, "s": 2048, "precision": "fp32-master-autocast-bf16"},
    {"type": "mixed", "short": "llama3.2-1b", "b": 1, "s": 2048, "precision": "bf16"},
    {"type": "tput", "short": "llama3.1-8b-L8", "b": 1, "s": 4096, "gc": False},
    {"type": "act", "short": "llama3.1-8b-L2", "attn": "eager", "shapes": LLAMA_SHAPES},
    {"type": "act", "short": "llama3.1-8b-L4", "attn": "eager", "shapes": LLAMA_SHAPES},
    {"type": "act", "short": "qwen3-0.6b-L2", "attn": "sdpa", "shapes": QWEN_SHAPES},
    {"type": "act", "short": "qwen3-0.6b-L4", "attn": "sdpa", "shapes": QWEN_SHAPES},
    {"type": "act", "short": "qwen3-0.6b-L2", "attn": "eager", "shapes": QWEN_SHAPES},
    {"type": "act", "short": "qwen3-0.6b-L4", "attn": "eager", "shapes": QWEN_SHAPES},
    {"type": "tput", "short": "llama3.1-8b-L8", "b": 1, "s": 4096, "gc": True},
    {"type": "tput", "short": "llama3.1-8b-L8", "b": 2, "s": 4096, "gc": False},
    {"type": "mixed", "short": "qwen3-0.6b", "b": 1, "s": 2048, "precision": "fp32-master-autocast-bf16"},
]

PRECISION_TEXT = {
    "bf16": ("pure bf16: bf16 weights, bf16 grads, AdamW exp_avg/exp_avg_sq in param dtype (bf16); "
             "no fp32 master weights, no autocast"),
    "fp32-master-autocast-bf16": ("mixed precision, fp32 master weights: model parameters fp32, forward under "
                                  "torch.autocast('cuda', dtype=torch.bfloat16), backward outside autocast, fp32 "
                                  "grads, AdamW exp_avg/exp_avg_sq fp32; no separate bf16 weight copy is kept "
                                  "(autocast casts weights to bf16 per forward)"),
}

WEIGHTS_INIT = "random (AutoModelForCausalLM.from_config, torch.manual_seed(0); no checkpoint loaded)"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def tensor_bytes(t):
    return t.numel() * t.element_size()


def mem():
    import torch

    return torch.cuda.memory_allocated()


def sync():
    import torch

    torch.cuda.synchronize()


def reset_peak():
    import torch

    torch.cuda.reset_peak_memory_stats()


def peak():
    import torch

    return torch.cuda.max_memory_allocated()


def peak_reserved():
    import torch

    return torch.cuda.max_memory_reserved()


def clean():
    import torch

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()


def build(short, attn, dtype_name):
    """Model on the GPU with random weights in the given dtype; returns (model, config, info)."""
    import torch
    from transformers import AutoModelForCausalLM

    folder, overrides = MODELS[short]
    config, how = mm.load_config(folder, overrides)
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype_name]
    torch.manual_seed(0)
    t0 = time.perf_counter()
    with torch.device("cuda"):
        try:
            model = AutoModelForCausalLM.from_config(config, attn_implementation=attn, dtype=dtype)
        except TypeError:
            model = AutoModelForCausalLM.from_config(config, attn_implementation=attn, torch_dtype=dtype)
    if next(model.parameters()).device.type != "cuda":
        model.to("cuda")
    casted = False
    if any(p.dtype != dtype for p in model.parameters()):
        model.to(dtype=dtype)
        casted = True
    sync()
    emb = model.get_input_embeddings()
    info = {
        "model": folder,
        "model_short": short,
        "config_overrides": overrides,
        "config_load": how,
        "arch": mm.arch_summary(config),
        "weights_init": WEIGHTS_INIT,
        "attn_implementation": attn,
        "attn_implementation_effective": getattr(model.config, "_attn_implementation", None),
        "model_class": type(model).__name__,
        "build_seconds": round(time.perf_counter() - t0, 3),
        "cast_after_build": casted,
        "param_count": sum(p.numel() for p in model.parameters()),
        "embedding_params": emb.weight.numel() if emb is not None else None,
        "param_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
    }
    model.config.use_cache = False
    return model, config, info


def set_gc(model, on):
    if on:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_disable()
    model.train()


def decoder_of(model):
    prefix = getattr(model, "base_model_prefix", "model")
    dec = getattr(model, prefix, None)
    return dec if dec is not None else model.base_model


def head_of(model):
    head = getattr(model, "lm_head", None)
    return head if head is not None else model.get_output_embeddings()


def loss_of(model, logits, labels, vocab):
    """The model's own causal-LM loss (transformers ForCausalLMLoss: logits.float(), shift, cross_entropy)."""
    import torch

    fn = getattr(model, "loss_function", None)
    if fn is not None:
        return fn(logits=logits, labels=labels, vocab_size=vocab), "model.loss_function (transformers ForCausalLMLoss)"
    lf = logits.float()[:, :-1, :].reshape(-1, vocab)
    return (torch.nn.functional.cross_entropy(lf, labels[:, 1:].reshape(-1)),
            "fallback: cross_entropy(logits.float()[:, :-1], labels[:, 1:])")


def staged_forward(model, ids, vocab):
    """Forward in three stages; returns (loss, logits, hidden, marks) with memory_allocated after each."""
    marks = {"m0": mem()}
    hidden = decoder_of(model)(input_ids=ids, use_cache=False).last_hidden_state
    marks["m1"] = mem()
    logits = head_of(model)(hidden)
    marks["m2"] = mem()
    loss, how = loss_of(model, logits, ids, vocab)
    marks["m3"] = mem()
    marks["loss_how"] = how
    return loss, logits, hidden, marks


def census(model, ids, vocab):
    """Distinct storages saved for backward by autograd during one staged forward (no backward run).

    Uses torch.autograd.graph.saved_tensors_hooks; the pack hook returns a detached alias (no
    reference cycle), tallies storages by data_ptr and skips parameters. Returns a dict."""
    import torch

    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen = {}
    counts = {"saved_calls": 0, "param_saves": 0}

    def pack(t):
        counts["saved_calls"] += 1
        try:
            st = t.untyped_storage()
            ptr = st.data_ptr()
            if ptr in param_ptrs:
                counts["param_saves"] += 1
            elif ptr not in seen and t.is_cuda:
                seen[ptr] = (tuple(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes())
        except Exception:
            pass
        return t.detach()

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss, logits, hidden, marks = staged_forward(model, ids, vocab)
    groups = {}
    for shape, dt, nb in seen.values():
        key = f"{list(shape)} {dt}"
        g = groups.setdefault(key, {"shape": list(shape), "dtype": dt, "count": 0, "bytes": 0})
        g["count"] += 1
        g["bytes"] += nb
    top = sorted(groups.values(), key=lambda g: -g["bytes"])[:40]
    res = {
        "saved_storage_bytes_total": sum(nb for _, _, nb in seen.values()),
        "saved_storage_count": len(seen),
        "saved_calls": counts["saved_calls"],
        "param_saves": counts["param_saves"],
        "forward_total_bytes_during_census": marks["m3"] - marks["m0"],
        "groups_by_shape_dtype_top40": top,
    }
    del loss, logits, hidden
    return res


def warmup(model, vocab):
    import torch

    ids = torch.randint(0, vocab, (1, 256), device="cuda")
    loss, logits, hidden, _ = staged_forward(model, ids, vocab)
    loss.backward()
    del loss, logits, hidden
    model.zero_grad(set_to_none=True)
    sync()


def measure_activation(model, info, b, s, gc_on, vocab):
    import torch

    model.zero_grad(set_to_none=True)
    gc.collect()
    sync()
    g = torch.Generator(device="cuda").manual_seed(1234)
    ids = torch.randint(0, vocab, (b, s), device="cuda", generator=g)
    sync()
    reset_peak()
    t0 = time.perf_counter()
    loss, logits, hidden, marks = staged_forward(model, ids, vocab)
    sync()
    t1 = time.perf_counter()
    peak_fwd = peak()
    logits_b = tensor_bytes(logits)
    logits_shape = list(logits.shape)
    logits_dtype = str(logits.dtype)
    hidden_b = tensor_bytes(hidden)
    del logits, hidden  # the graph keeps what backward needs
    after_release = mem()
    reset_peak()
    t2 = time.perf_counter()
    loss.backward()
    sync()
    t3 = time.perf_counter()
    peak_bwd = peak()
    after_bwd = mem()
    grads = sum(tensor_bytes(p.grad) for p in model.parameters() if p.grad is not None)
    loss_val = loss.detach().float().item()
    del loss
    model.zero_grad(set_to_none=True)
    m0 = marks["m0"]
    m = {
        "before_forward_allocated_bytes": m0,
        "decoder_stack_forward_bytes": marks["m1"] - m0,
        "lm_head_forward_bytes": marks["m2"] - marks["m1"],
        "loss_forward_bytes": marks["m3"] - marks["m2"],
        "forward_total_bytes": marks["m3"] - m0,
        "forward_total_after_release_bytes": after_release - m0,
        "logits_bytes": logits_b,
        "logits_bytes_formula_b_s_V_2": b * s * vocab * 2,
        "final_hidden_bytes": hidden_b,
        "peak_forward_bytes": peak_fwd - m0,
        "peak_backward_bytes": peak_bwd - m0,
        "after_backward_grads_bytes": after_bwd - m0,
        "grads_bytes_direct": grads,
        "forward_seconds": round(t1 - t0, 6),
        "backward_seconds": round(t3 - t2, 6),
        "loss": loss_val,
    }
    extra = {"logits_shape": logits_shape, "logits_dtype": logits_dtype, "loss_impl": marks["loss_how"]}
    del ids
    return m, extra


def act_id(short, attn, b, s, gc_on):
    return f"h200-act-{short}-{attn}-b{b}-s{s}" + ("-gc" if gc_on else "")


def base_row(info, env, command):
    return {
        "id": None, "kind": None, "row_type": None, "status": "ok",
        "model": info.get("model"), "model_short": info.get("model_short"),
        "config_overrides": info.get("config_overrides"), "arch": info.get("arch"),
        "micro_batch": None, "seq_len": None,
        "attn_implementation": info.get("attn_implementation"),
        "attn_implementation_effective": info.get("attn_implementation_effective"),
        "gradient_checkpointing": None, "gradient_checkpointing_kwargs": None,
        "precision": None, "measured": {}, "env": env, "command": command, "measured_at_utc": now_utc(),
        "weights_init": info.get("weights_init", WEIGHTS_INIT),
        "model_class": info.get("model_class"), "config_load": info.get("config_load"),
        "param_count": info.get("param_count"), "embedding_params": info.get("embedding_params"),
        "param_dtypes": info.get("param_dtypes"), "build_seconds": info.get("build_seconds"),
    }


def error_row(rid, kind, info, env, command, e):
    r = base_row(info or {}, env, command)
    r.update(id=rid, kind=kind, row_type="error", status="error",
             error=f"{type(e).__name__}: {e}"[:2000], traceback_tail=traceback.format_exc()[-3000:])
    return r


def write_row(path, row):
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def slope_row(r2, r4, env, command):
    """Per-layer activation bytes = (4-layer - 2-layer) / 2 for the same shape, attention and checkpointing."""
    l2 = r2["arch"]["num_hidden_layers"]
    l4 = r4["arch"]["num_hidden_layers"]
    dl = l4 - l2
    b, s = r4["micro_batch"], r4["seq_len"]
    h = r4["arch"]["hidden_size"]
    a = r4["arch"]["num_attention_heads"]
    m2, m4 = r2["measured"], r4["measured"]
    per_layer_stack = (m4["decoder_stack_forward_bytes"] - m2["decoder_stack_forward_bytes"]) / dl
    per_layer_total = (m4["forward_total_bytes"] - m2["forward_total_bytes"]) / dl
    per_layer_peak_bwd = (m4["peak_backward_bytes"] - m2["peak_backward_bytes"]) / dl
    sbh = s * b * h
    intercept = m2["decoder_stack_forward_bytes"] - l2 * per_layer_stack
    r = dict(r4)
    r.update(
        id=r4["id"].replace("-L4-", "-perlayer-").replace("-L" + str(l4) + "-", "-perlayer-") + "-slope",
        kind="activation_memory", row_type="per_layer_slope", measured_at_utc=now_utc(),
        derived_from=[r2["id"], r4["id"]], layers_compared=[l2, l4],
    )
    for k in ("param_count", "embedding_params", "build_seconds", "census", "extra"):
        r.pop(k, None)
    r["measured"] = {
        "per_layer_activation_bytes": per_layer_stack,
        "per_layer_activation_bytes_per_sbh": per_layer_stack / sbh,
        "per_layer_forward_total_bytes": per_layer_total,
        "per_layer_peak_backward_bytes": per_layer_peak_bwd,
        "decoder_stack_intercept_bytes": intercept,
        "decoder_stack_intercept_bytes_per_sbh": intercept / sbh,
        "s_b_h": sbh,
        "a_s_over_h": a * s / h,
        "head_and_loss_forward_bytes": m4["lm_head_forward_bytes"] + m4["loss_forward_bytes"],
        "logits_bytes": m4["logits_bytes"],
    }
    return r


def run_act_task(task, env, command, out, results, deadline):
    short, attn = task["short"], task["attn"]
    info = None
    model = None
    try:
        clean()
        base = mem()
        model, config, info = build(short, attn, "bf16")
        weights = mem() - base
        vocab = info["arch"]["vocab_size"]
        set_gc(model, False)
        warmup(model, vocab)
        for gc_on in (False, True):
            set_gc(model, gc_on)
            for (b, s) in task["shapes"]:
                rid = act_id(short, attn, b, s, gc_on)
                if time.perf_counter() > deadline:
                    log(f"SKIP {rid} (budget)")
                    continue
                try:
                    m, extra = measure_activation(model, info, b, s, gc_on, vocab)
                    m["weights_bytes"] = weights
                    row = base_row(info, env, command)
                    row.update(id=rid, kind="activation_memory", row_type="measurement", micro_batch=b, seq_len=s,
                               gradient_checkpointing=gc_on,
                               gradient_checkpointing_kwargs={"use_reentrant": False} if gc_on else None,
                               precision=("pure bf16 model (bf16 weights and activations), every parameter "
                                          "requires grad; no optimizer; no autocast"),
                               measured=m, extra=extra)
                    if not gc_on and (b, s) == CENSUS_SHAPE:
                        try:
                            row["census"] = census(model, torch_randint(vocab, b, s), vocab)
                            gc.collect()
                        except Exception as e:  # census is optional
                            row["census"] = {"error": f"{type(e).__name__}: {e}"[:500]}
                    write_row(out, row)
                    results[(info["model"], attn, b, s, gc_on, info["arch"]["num_hidden_layers"])] = row
                    log(f"DONE {rid}: stack {m['decoder_stack_forward_bytes'] / 1e9:.3f} GB, fwd total "
                        f"{m['forward_total_bytes'] / 1e9:.3f} GB, logits {m['logits_bytes'] / 1e9:.3f} GB, "
                        f"peak bwd {m['peak_backward_bytes'] / 1e9:.3f} GB")
                    # per-layer slope once both cuts of this shape exist
                    L = info["arch"]["num_hidden_layers"]
                    other = results.get((info["model"], attn, b, s, gc_on, 2)) if L == 4 else None
                    if other is not None:
                        sr = slope_row(other, row, env, command)
                        write_row(out, sr)
                        log(f"SLOPE {sr['id']}: {sr['measured']['per_layer_activation_bytes'] / 1e6:.1f} MB/layer = "
                            f"{sr['measured']['per_layer_activation_bytes_per_sbh']:.2f} x s*b*h")
                except Exception as e:
                    log(f"ERROR {rid}: {type(e).__name__}: {str(e)[:300]}")
                    write_row(out, error_row(rid, "activation_memory", info, env, command, e))
                    model.zero_grad(set_to_none=True)
                    clean()
    except Exception as e:
        rid = f"h200-act-{short}-{attn}-build"
        log(f"ERROR {rid}: {type(e).__name__}: {str(e)[:300]}")
        write_row(out, error_row(rid, "activation_memory", info, env, command, e))
    finally:
        model = None
        clean()


def torch_randint(vocab, b, s):
    import torch

    g = torch.Generator(device="cuda").manual_seed(1234)
    return torch.randint(0, vocab, (b, s), device="cuda", generator=g)


def linear_weight_numel(model):
    """Distinct parameters that are weights of nn.Linear modules (what autocast casts to bf16)."""
    import torch

    seen = set()
    n = 0
    for mod in model.modules():
        if isinstance(mod, torch.nn.Linear):
            w = mod.weight
            if id(w) not in seen:
                seen.add(id(w))
                n += w.numel()
    return n


def run_train_task(task, env, command, out, tput):
    """tput=False: train_memory (fp32 master + autocast, or pure bf16). tput=True: train_throughput."""
    import torch

    short, b, s = task["short"], task["b"], task["s"]
    prec = "bf16" if tput else task["precision"]
    gc_on = task.get("gc", False)
    if tput:
        rid = f"h200-tput-{short}-bf16-b{b}-s{s}" + ("-gc" if gc_on else "")
        kind = "train_throughput"
    else:
        rid = f"h200-train-{short}-{prec}-b{b}-s{s}"
        kind = "train_memory"
    info = None
    model = opt = None
    try:
        clean()
        base = mem()
        model, config, info = build(short, "sdpa", "fp32" if prec != "bf16" else "bf16")
        weights = mem() - base
        vocab = info["arch"]["vocab_size"]
        set_gc(model, gc_on)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=ADAMW_LR)
        use_autocast = prec == "fp32-master-autocast-bf16"
        ids = torch_randint(vocab, b, s)
        warm, timed = (2, 5) if tput else (2, 3)
        steps = []
        peak_fb = peak_opt = 0
        peak_res = 0
        first = {}
        for step in range(1, warm + timed + 1):
            sync()
            e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            t0 = time.perf_counter()
            reset_peak()
            m_before = mem()
            e0.record()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_autocast):
                out_ = model(input_ids=ids, labels=ids, use_cache=False)
            loss = out_.loss
            m_after_fwd = mem()
            logits_b = tensor_bytes(out_.logits)
            logits_dtype = str(out_.logits.dtype)
            del out_
            loss.backward()
            e1.record()
            pf = peak()
            peak_res = max(peak_res, peak_reserved())
            m_after_bwd = mem()
            grads = sum(tensor_bytes(p.grad) for p in params if p.grad is not None) if step == 1 else None
            reset_peak()
            opt.step()
            opt.zero_grad(set_to_none=True)
            e2.record()
            po = peak()
            peak_res = max(peak_res, peak_reserved())
            loss_val = loss.detach().float().item()
            del loss
            sync()
            t1 = time.perf_counter()
            peak_fb = max(peak_fb, pf - base)
            peak_opt = max(peak_opt, po - base)
            rec = {"step": step, "wall_seconds": t1 - t0, "fwd_bwd_seconds": e0.elapsed_time(e1) / 1e3,
                   "optimizer_seconds": e1.elapsed_time(e2) / 1e3,
                   "forward_activation_bytes": m_after_fwd - m_before,
                   "before_forward_allocated_bytes": m_before - base,
                   "after_backward_allocated_bytes": m_after_bwd - base, "loss": loss_val}
            steps.append(rec)
            if step == 1:
                st = 0
                for ps in opt.state.values():
                    for v in ps.values():
                        if isinstance(v, torch.Tensor) and v.is_cuda:
                            st += tensor_bytes(v)
                first = {"grads_bytes_direct": grads, "optimizer_state_bytes_direct": st,
                         "after_step_allocated_bytes": mem() - base, "logits_bytes": logits_b,
                         "logits_dtype": logits_dtype,
                         "optimizer_state_dtypes": sorted({str(v.dtype) for ps in opt.state.values()
                                                          for v in ps.values()
                                                          if isinstance(v, torch.Tensor) and v.is_cuda})}
            log(f"   {rid} step {step}: {rec['wall_seconds']:.4f} s (fwd+bwd {rec['fwd_bwd_seconds']:.4f}, "
                f"opt {rec['optimizer_seconds']:.4f}), act {rec['forward_activation_bytes'] / 1e9:.3f} GB")
        timed_steps = steps[warm:]
        med = statistics.median(x["wall_seconds"] for x in timed_steps)
        med_fb = statistics.median(x["fwd_bwd_seconds"] for x in timed_steps)
        med_opt = statistics.median(x["optimizer_seconds"] for x in timed_steps)
        tokens = b * s
        a = info["arch"]
        L, h = a["num_hidden_layers"], a["hidden_size"]
        attn_width = a["num_attention_heads"] * a["head_dim"]
        n_matmul = info["param_count"] - info["embedding_params"]
        if a.get("tie_word_embeddings"):
            n_matmul += info["embedding_params"]  # tied LM head still does a V x h matmul
        flops_6n = 6 * n_matmul * tokens
        flops_attn_full = 12 * L * s * attn_width * tokens
        m = {
            "weights_bytes": weights,
            "linear_weight_params": linear_weight_numel(model),
            "autocast_bf16_weight_copies_bytes_estimate": (2 * linear_weight_numel(model)) if use_autocast else 0,
            **{k: v for k, v in first.items() if k not in ("optimizer_state_dtypes", "logits_dtype")},
            "forward_activation_bytes": timed_steps[0]["forward_activation_bytes"],
            "peak_fwd_bwd_allocated_bytes": peak_fb,
            "peak_optimizer_step_allocated_bytes": peak_opt,
            "peak_allocated_bytes": max(peak_fb, peak_opt),
            "peak_reserved_bytes": peak_res,
            "step_seconds_median": med,
            "fwd_bwd_seconds_median": med_fb,
            "optimizer_seconds_median": med_opt,
            "tokens_per_s": tokens / med,
            "n_matmul_params": n_matmul,
            "flops_per_step_6N": flops_6n,
            "flops_per_step_attention_full_12Lsh": flops_attn_full,
            "tflops_6N": flops_6n / med / 1e12,
            "tflops_6N_plus_attention_full": (flops_6n + flops_attn_full) / med / 1e12,
            "tflops_6N_plus_attention_causal": (flops_6n + flops_attn_full / 2) / med / 1e12,
            "tflops_6N_plus_attention_full_fwd_bwd_only": (flops_6n + flops_attn_full) / med_fb / 1e12,
            "mfu_6N_plus_attention_full_vs_989.5": (flops_6n + flops_attn_full) / med / H200_DENSE_BF16_FLOPS,
            "steps": steps,
            "final_loss": steps[-1]["loss"],
        }
        row = base_row(info, env, command)
        row.update(id=rid, kind=kind, row_type="measurement", micro_batch=b, seq_len=s, gradient_checkpointing=gc_on,
                   gradient_checkpointing_kwargs={"use_reentrant": False} if gc_on else None,
                   precision=PRECISION_TEXT[prec], measured=m,
                   optimizer=(f"torch.optim.AdamW(lr={ADAMW_LR}, foreach={opt.defaults.get('foreach')}, "
                              f"fused={opt.defaults.get('fused')})"),
                   optimizer_state_dtypes=first.get("optimizer_state_dtypes"), logits_dtype=first.get("logits_dtype"),
                   warmup_steps=warm, timed_steps=timed,
                   flops_formula=("6*N_matmul*tokens (N_matmul = param_count - input embedding params, + V*h again "
                                  "if the LM head is tied) + attention score/context matmuls 12*L*s*(a*head_dim) "
                                  "per token (fwd 4*s*a*d + bwd 8*s*a*d, full s x s; '_causal' counts half); "
                                  "peak 989.5e12 = H200 SXM datasheet dense bf16"))
        write_row(out, row)
        log(f"DONE {rid}: weights {weights / 1e9:.3f} GB, peak {max(peak_fb, peak_opt) / 1e9:.3f} GB, step {med:.4f} s, "
            f"{tokens / med:.0f} tok/s, {m['tflops_6N_plus_attention_full']:.1f} TFLOP/s")
    except Exception as e:
        log(f"ERROR {rid}: {type(e).__name__}: {str(e)[:300]}")
        write_row(out, error_row(rid, kind, info, env, command, e))
    finally:
        model = opt = None
        clean()


def task_name(t):
    if t["type"] == "act":
        return f"act {t['short']} {t['attn']} shapes={t['shapes']}"
    if t["type"] == "mixed":
        return f"train_memory {t['short']} {t['precision']} b{t['b']} s{t['s']}"
    return f"throughput {t['short']} b{t['b']} s{t['s']} gc={t['gc']}"


def korthikanti_bytes(s, b, h, a):
    """Korthikanti et al. 2022, 'Reducing Activation Recomputation in Large Transformer Models', eq. (1):
    activation bytes per transformer layer, 16-bit, no parallelism, no recomputation: s*b*h*(34 + 5*a*s/h)."""
    return s * b * h * 34 + 5 * a * s * s * b


def report(path):
    rows = [json.loads(x) for x in open(path) if x.strip()]
    print(f"{'slope row':52s} {'MB/layer':>9s} {'/(sbh)':>7s} {'K22 MB':>9s} {'K22/sbh':>8s} {'meas/K22':>8s}")
    for r in rows:
        if r.get("row_type") != "per_layer_slope":
            continue
        m = r["measured"]
        a = r["arch"]
        s, b, h, heads = r["seq_len"], r["micro_batch"], a["hidden_size"], a["num_attention_heads"]
        k = korthikanti_bytes(s, b, h, heads)
        if r.get("gradient_checkpointing"):
            k = 2 * s * b * h  # full recomputation keeps only the layer input (Korthikanti sec. 5, 2sbh)
        print(f"{r['id']:52s} {m['per_layer_activation_bytes'] / 1e6:9.1f} {m['per_layer_activation_bytes_per_sbh']:7.2f} "
              f"{k / 1e6:9.1f} {k / (s * b * h):8.2f} {m['per_layer_activation_bytes'] / k:8.3f}")
    for r in rows:
        if r.get("kind") in ("train_memory", "train_throughput") and r.get("status") == "ok":
            m = r["measured"]
            print(f"{r['id']}: weights {m['weights_bytes']} peak {m['peak_allocated_bytes']} step {m['step_seconds_median']:.4f}"
                  f" s tok/s {m['tokens_per_s']:.0f} TFLOP/s(6N+attn) {m['tflops_6N_plus_attention_full']:.1f}")
        elif r.get("status") == "error":
            print(f"{r['id']}: ERROR {r.get('error', '')[:200]}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="JSON-lines output file (appended)")
    ap.add_argument("--budget-s", type=float, default=200.0,
                    help="no new task or measurement starts after this many seconds since start (default 200)")
    ap.add_argument("--list", action="store_true", help="print the tasks and exit (needs no GPU)")
    ap.add_argument("--report", metavar="JSONL", help="print slope vs Korthikanti et al. 2022 from a finished file")
    args = ap.parse_args()
    if args.report:
        return report(args.report)
    if args.list:
        for t in TASKS:
            print(task_name(t))
        return 0
    if not args.out:
        ap.error("--out is required")

    t_start = time.perf_counter()
    deadline = t_start + args.budget_s
    import torch
    import transformers

    if not torch.cuda.is_available():
        log("no CUDA device")
        return 2
    props = torch.cuda.get_device_properties(0)
    env = {
        "gpu": torch.cuda.get_device_name(0),
        "gpu_total_memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "python": sys.version.split()[0],
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "unset (default allocator settings)"),
        "sdpa_flash_enabled": torch.backends.cuda.flash_sdp_enabled(),
        "sdpa_mem_efficient_enabled": torch.backends.cuda.mem_efficient_sdp_enabled(),
        "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
    }
    command = shlex.join([sys.executable] + sys.argv)
    log(f"env {json.dumps(env)}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    results = {}
    for t in TASKS:
        el = time.perf_counter() - t_start
        if time.perf_counter() > deadline:
            log(f"SKIP task {task_name(t)} (budget, t={el:.0f} s)")
            continue
        log(f"TASK {task_name(t)} (t={el:.0f} s)")
        if t["type"] == "act":
            run_act_task(t, env, command, args.out, results, deadline)
        elif t["type"] == "mixed":
            run_train_task(t, env, command, args.out, tput=False)
        else:
            run_train_task(t, env, command, args.out, tput=True)
    log(f"total {time.perf_counter() - t_start:.0f} s")
    report(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
