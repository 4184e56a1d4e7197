#!/usr/bin/env python3
"""Measure real GPU memory and step time of small real architectures on one CUDA GPU.

Builds models from the bundled configs in data/models/<folder>/config.json with RANDOM
weights (AutoModelForCausalLM.from_config; no hub access), optionally with fewer layers,
and measures, per case, with PyTorch's caching-allocator counters:

  full   full fine-tune, pure bf16 (bf16 weights, grads and AdamW states; no fp32 master
         weights, no autocast), torch.optim.AdamW with its default foreach implementation
  lora   peft LoRA r=16 on q,k,v,o,gate,up,down of a frozen bf16 base
  serve  one prefill of b x s tokens with use_cache=True (weights + KV cache + activations)

With --compile, the training cases of COMPILED_CASES run with every decoder layer compiled
(nn.Module.compile(), torch.compile's default inductor mode), as torchtune's
training/_compile.py compile_model does; embeddings, LM head and the loss stay eager. Their ids
end in "-compiled" and their rows carry "compiled": true.

Each finished case is appended as JSON lines to --out at once, so a timeout keeps what was
done. Training cases give two rows (kind train_memory and train_step_time, same `measured`
object); serve cases give one row (kind infer_memory). Field meanings: see
tests/data/h200-measurements.PROVENANCE.md and scripts/measure/README.md.

Needs: torch with CUDA, transformers (5.x tested), peft (for LoRA cases). Run from the repo root:
  PYTHONUNBUFFERED=1 python3 scripts/measure/measure_memory.py --out /tmp/h200-measurements.jsonl
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODELS_DIR = os.path.join(REPO_ROOT, "data", "models")

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LORA_RANK = 16
LORA_ALPHA = 32
ADAMW_LR = 1e-5

# (short name, folder, config overrides). Overrides only cut the layer count.
MODELS = {
    "qwen3-0.6b": ("Qwen__Qwen3-0.6B", {}),
    "llama3.2-1b": ("meta-llama__Llama-3.2-1B-Instruct", {}),
    "qwen2.5-0.5b": ("Qwen__Qwen2.5-0.5B-Instruct", {}),
    "llama3.1-8b-L4": ("meta-llama__Llama-3.1-8B", {"num_hidden_layers": 4}),
    "gpt2": ("openai-community__gpt2", {}),
    "gemma2-9b-L4": ("google__gemma-2-9b", {"num_hidden_layers": 4}),
    "qwen3-30b-a3b-L2": ("Qwen__Qwen3-30B-A3B", {"num_hidden_layers": 2}),
    "mixtral-8x7b-L2": ("mistralai__Mixtral-8x7B-v0.1", {"num_hidden_layers": 2}),
    "mixtral-8x7b-L1": ("mistralai__Mixtral-8x7B-v0.1", {"num_hidden_layers": 1}),
}

# Cases in priority order: the time budget skips the tail first.
# (model short name, task, micro_batch, seq_len, gradient_checkpointing)
CASES = [
    ("qwen3-0.6b", "full", 1, 2048, False),
    ("qwen3-0.6b", "full", 1, 2048, True),
    ("qwen3-0.6b", "full", 4, 1024, False),
    ("qwen3-0.6b", "lora", 1, 2048, False),
    ("qwen3-0.6b", "serve", 8, 2048, False),
    ("llama3.2-1b", "full", 1, 2048, False),
    ("llama3.2-1b", "full", 1, 2048, True),
    ("llama3.2-1b", "full", 4, 1024, False),
    ("llama3.2-1b", "full", 4, 1024, True),
    ("llama3.2-1b", "lora", 4, 1024, False),
    ("llama3.2-1b", "serve", 8, 2048, False),
    ("llama3.1-8b-L4", "full", 1, 2048, False),
    ("llama3.1-8b-L4", "full", 1, 2048, True),
    ("llama3.1-8b-L4", "lora", 1, 2048, False),
    ("llama3.1-8b-L4", "serve", 8, 4096, False),
    ("qwen2.5-0.5b", "full", 4, 1024, False),
    ("qwen2.5-0.5b", "lora", 4, 1024, True),
    ("qwen2.5-0.5b", "serve", 16, 2048, False),
    ("gpt2", "full", 4, 1024, False),
    ("gpt2", "full", 4, 1024, True),
    ("gpt2", "serve", 8, 1024, False),
    ("gemma2-9b-L4", "full", 1, 2048, False),
    ("gemma2-9b-L4", "serve", 4, 2048, False),
    ("qwen3-30b-a3b-L2", "full", 1, 2048, False),
    ("qwen3-30b-a3b-L2", "serve", 4, 2048, False),
    ("mixtral-8x7b-L2", "serve", 4, 2048, False),
    ("mixtral-8x7b-L1", "full", 1, 2048, False),
]

# Training cases run with --compile (decoder layers compiled): the same shapes as eager cases
# above, so each compiled row has an eager twin measured by the same script.
COMPILED_CASES = [
    ("llama3.2-1b", "full", 4, 1024, False),
    ("llama3.2-1b", "full", 4, 1024, True),
    ("llama3.2-1b", "lora", 4, 1024, False),
    ("llama3.1-8b-L4", "full", 1, 2048, False),
    ("llama3.1-8b-L4", "lora", 1, 2048, False),
    ("llama3.1-8b-L4", "full", 1, 2048, True),
    ("qwen3-0.6b", "full", 4, 1024, False),
    ("qwen2.5-0.5b", "full", 4, 1024, False),
    ("llama3.2-1b", "full", 1, 2048, False),
]
COMPILE_LAYERS = False  # set by --compile

WARMUP_STEPS = 2  # step 1 materialises the AdamW state; step 2 runs with it in place
TIMED_STEPS = 3
PREFILL_WARMUP = 1
PREFILL_TIMED = 2


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def case_id(short, task, b, s, gc_on):
    return f"h200-{short}-{task}-b{b}-s{s}" + ("-gc" if gc_on else "") + ("-compiled" if COMPILE_LAYERS else "")


def load_config(folder, overrides):
    """Config from data/models/<folder>/config.json with overrides applied BEFORE the
    config class's __init__ runs (so derived fields such as layer_types follow)."""
    from transformers import AutoConfig

    path = os.path.join(MODELS_DIR, folder)
    with open(os.path.join(path, "config.json")) as f:
        d = json.load(f)
    d.update(overrides)
    for k in ("torch_dtype", "dtype", "_name_or_path", "transformers_version"):
        d.pop(k, None)
    model_type = d.pop("model_type")
    how = "CONFIG_MAPPING[model_type].from_dict(config.json + overrides)"
    try:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING

        config = CONFIG_MAPPING[model_type].from_dict(dict(d))
    except Exception as e:  # fall back to the stock loader, then set fields
        how = f"AutoConfig.from_pretrained + setattr (from_dict failed: {type(e).__name__}: {e})"
        config = AutoConfig.from_pretrained(path, local_files_only=True)
        for k, v in overrides.items():
            setattr(config, k, v)
    n = getattr(config, "num_hidden_layers", None)
    lt = getattr(config, "layer_types", None)
    if n is not None and isinstance(lt, (list, tuple)) and len(lt) != n:
        config.layer_types = list(lt)[:n]
        how += f"; layer_types truncated to {n}"
    for k, v in overrides.items():
        got = getattr(config, k, None)
        if got != v:
            raise RuntimeError(f"override {k}={v} did not take: config has {got}")
    return config, how


def arch_summary(config):
    def g(*names):
        for n in names:
            v = getattr(config, n, None)
            if v is not None:
                return v
        return None

    hidden = g("hidden_size", "n_embd")
    heads = g("num_attention_heads", "n_head")
    head_dim = g("head_dim")
    if head_dim is None and hidden and heads:
        head_dim = hidden // heads
    kv_heads = g("num_key_value_heads")
    if kv_heads is None:
        kv_heads = heads
    return {
        "model_type": config.model_type,
        "num_hidden_layers": g("num_hidden_layers", "n_layer"),
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": g("intermediate_size", "n_inner"),
        "vocab_size": g("vocab_size"),
        "tie_word_embeddings": g("tie_word_embeddings"),
        "num_experts": g("num_local_experts", "num_experts"),
        "num_experts_per_tok": g("num_experts_per_tok"),
        "moe_intermediate_size": g("moe_intermediate_size"),
        "sliding_window": g("sliding_window"),
    }


def tensor_bytes(t):
    return t.numel() * t.element_size()


def cuda_tensors_in(obj, seen_ptrs, depth=0):
    """All distinct CUDA tensors reachable from obj through attributes/containers (KV cache)."""
    import torch

    out = []
    if depth > 6 or obj is None:
        return out
    if isinstance(obj, torch.Tensor):
        if obj.is_cuda and obj.numel() > 0:
            key = (obj.untyped_storage().data_ptr(), obj.storage_offset(), obj.numel())
            if key not in seen_ptrs:
                seen_ptrs.add(key)
                out.append(obj)
        return out
    if isinstance(obj, (list, tuple)):
        for x in obj:
            out += cuda_tensors_in(x, seen_ptrs, depth + 1)
        return out
    if isinstance(obj, dict):
        for x in obj.values():
            out += cuda_tensors_in(x, seen_ptrs, depth + 1)
        return out
    if isinstance(obj, (str, bytes, int, float, bool, torch.nn.Module, type)) or callable(obj):
        return out  # never walk into modules, classes or functions: only cache data counts
    if hasattr(obj, "__dict__"):
        for x in vars(obj).values():
            out += cuda_tensors_in(x, seen_ptrs, depth + 1)
    return out


def build_model(config, attn_impl):
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("cuda"):
        try:
            model = AutoModelForCausalLM.from_config(config, attn_implementation=attn_impl, dtype=torch.bfloat16)
        except TypeError:  # older transformers name the argument torch_dtype
            model = AutoModelForCausalLM.from_config(config, attn_implementation=attn_impl,
                                                     torch_dtype=torch.bfloat16)
    if next(model.parameters()).device.type != "cuda":
        model.to("cuda")
    casted = False
    if any(p.dtype != torch.bfloat16 for p in model.parameters()):
        model.to(dtype=torch.bfloat16)
        casted = True
    got_attn = getattr(model.config, "_attn_implementation", None)
    return model, casted, got_attn


def mem():
    import torch

    return torch.cuda.memory_allocated()


def reset_peak():
    import torch

    torch.cuda.reset_peak_memory_stats()


def peaks():
    import torch

    return torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()


def run_train(model, task, b, s, gc_on, vocab, rec):
    import torch

    if gc_on:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.config.use_cache = False
    if task == "lora":
        from peft import LoraConfig, get_peft_model

        lcfg = LoraConfig(r=LORA_RANK, lora_alpha=LORA_ALPHA, lora_dropout=0.0,
                          target_modules=LORA_TARGETS, bias="none", task_type="CAUSAL_LM")
        model = get_peft_model(model, lcfg)
    model.train()
    if COMPILE_LAYERS:
        compiled = 0
        for m in model.modules():
            if type(m).__name__.endswith("DecoderLayer"):
                m.compile()
                compiled += 1
        if compiled == 0:
            raise RuntimeError("--compile: no module whose class name ends in DecoderLayer")
        rec["compiled"] = True
        rec["compile"] = {"how": "nn.Module.compile() on each *DecoderLayer (torch.compile default mode)",
                          "layers_compiled": compiled, "eager_parts": "embeddings, final norm, LM head, loss"}
    base = rec["_base"]
    rec["measured"]["weights_bytes"] = mem() - base
    trainable = [p for p in model.parameters() if p.requires_grad]
    rec["param_count"] = sum(p.numel() for p in model.parameters())
    rec["trainable_params"] = sum(p.numel() for p in trainable)
    rec["trainable_dtypes"] = sorted({str(p.dtype) for p in trainable})
    rec["param_bytes_direct"] = sum(tensor_bytes(p) for p in model.parameters())
    rec["buffer_bytes_direct"] = sum(tensor_bytes(x) for x in model.buffers() if x.is_cuda)
    opt = torch.optim.AdamW(trainable, lr=ADAMW_LR)
    rec["optimizer"] = (f"torch.optim.AdamW(lr={ADAMW_LR}, foreach={opt.defaults.get('foreach')}, "
                        f"fused={opt.defaults.get('fused')}, capturable={opt.defaults.get('capturable')})")
    g = torch.Generator(device="cuda").manual_seed(1234)
    ids = torch.randint(0, vocab, (b, s), device="cuda", generator=g)
    rec["measured"]["input_bytes"] = tensor_bytes(ids)

    peak_fb = peak_opt = 0
    peak_res = 0
    times = []
    loss_val = None
    n_steps = WARMUP_STEPS + TIMED_STEPS
    for step in range(1, n_steps + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        reset_peak()
        out = model(input_ids=ids, labels=ids, use_cache=False)
        loss = out.loss
        loss.backward()
        del out
        pa, pr = peaks()
        peak_fb = max(peak_fb, pa)
        peak_res = max(peak_res, pr)
        if step == 1:
            rec["measured"]["after_backward_allocated_bytes"] = mem() - base
            rec["measured"]["grads_bytes_direct"] = sum(tensor_bytes(p.grad) for p in trainable if p.grad is not None)
        reset_peak()
        opt.step()
        opt.zero_grad(set_to_none=True)
        pa, pr = peaks()
        peak_opt = max(peak_opt, pa)
        peak_res = max(peak_res, pr)
        loss_val = loss.detach().float().item()
        del loss
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if step == 1:
            rec["measured"]["after_step_allocated_bytes"] = mem() - base
            st = 0
            st_dtypes = set()
            for ps in opt.state.values():
                for v in ps.values():
                    if isinstance(v, torch.Tensor) and v.is_cuda:
                        st += tensor_bytes(v)
                        st_dtypes.add(str(v.dtype))
            rec["measured"]["optimizer_state_bytes_direct"] = st
            rec["optimizer_state_dtypes"] = sorted(st_dtypes)
            # A slow case gets one timed step only, to stay inside the budget.
            if dt > 10.0:
                n_steps = WARMUP_STEPS + 1
        if step > WARMUP_STEPS:
            times.append(dt)
        log(f"   step {step}: {dt:.3f} s, loss {loss_val:.3f}, allocated {mem() / 1e9:.2f} GB")
        if step >= n_steps:
            break
    m = rec["measured"]
    m["peak_fwd_bwd_allocated_bytes"] = peak_fb - base
    m["peak_optimizer_step_allocated_bytes"] = peak_opt - base
    m["peak_allocated_bytes"] = max(peak_fb, peak_opt) - base
    m["peak_reserved_bytes"] = peak_res
    m["kv_cache_bytes"] = None
    m["step_seconds_all"] = times
    m["step_seconds_median"] = statistics.median(times) if times else None
    m["tokens_per_s"] = (b * s / m["step_seconds_median"]) if times else None
    m["final_loss"] = loss_val
    del opt, ids, trainable
    return model


def run_serve(model, b, s, vocab, rec):
    import torch

    model.eval()
    base = rec["_base"]
    rec["measured"]["weights_bytes"] = mem() - base
    rec["param_count"] = sum(p.numel() for p in model.parameters())
    rec["trainable_params"] = 0
    rec["param_bytes_direct"] = sum(tensor_bytes(p) for p in model.parameters())
    rec["buffer_bytes_direct"] = sum(tensor_bytes(x) for x in model.buffers() if x.is_cuda)
    g = torch.Generator(device="cuda").manual_seed(1234)
    ids = torch.randint(0, vocab, (b, s), device="cuda", generator=g)
    rec["measured"]["input_bytes"] = tensor_bytes(ids)
    kwargs = {"logits_to_keep": 1}
    times = []
    peak_a = peak_r = 0
    out = None
    for i in range(PREFILL_WARMUP + PREFILL_TIMED):
        out = None
        gc.collect()
        torch.cuda.synchronize()
        reset_peak()
        t0 = time.perf_counter()
        with torch.no_grad():
            try:
                out = model(input_ids=ids, use_cache=True, **kwargs)
            except TypeError:
                kwargs = {}
                out = model(input_ids=ids, use_cache=True)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        pa, pr = peaks()
        peak_a = max(peak_a, pa)
        peak_r = max(peak_r, pr)
        if i == 0:
            pkv = out.past_key_values
            rec["cache_class"] = type(pkv).__name__
            tensors = cuda_tensors_in(pkv, set())
            rec["measured"]["kv_cache_bytes"] = sum(tensor_bytes(t) for t in tensors)
            rec["measured"]["kv_cache_tensor_count"] = len(tensors)
            rec["kv_cache_dtypes"] = sorted({str(t.dtype) for t in tensors})
            rec["kv_cache_first_shape"] = list(tensors[0].shape) if tensors else None
            rec["measured"]["logits_bytes"] = tensor_bytes(out.logits)
            rec["logits_shape"] = list(out.logits.shape)
            rec["measured"]["after_prefill_allocated_bytes"] = mem() - base
            del pkv, tensors
        else:
            times.append(dt)
        log(f"   prefill {i + 1}: {dt:.3f} s, allocated {mem() / 1e9:.2f} GB")
    rec["logits_to_keep"] = kwargs.get("logits_to_keep")
    m = rec["measured"]
    m["after_step_allocated_bytes"] = None
    m["peak_allocated_bytes"] = peak_a - base
    m["peak_reserved_bytes"] = peak_r
    m["step_seconds_all"] = times
    m["step_seconds_median"] = statistics.median(times) if times else None
    m["tokens_per_s"] = (b * s / m["step_seconds_median"]) if times else None
    del out, ids
    return model


def run_case(short, task, b, s, gc_on, env, command, attn_impl):
    import torch

    folder, overrides = MODELS[short]
    rec = {
        "id": case_id(short, task, b, s, gc_on),
        "kind": None,
        "status": "ok",
        "model": folder,
        "model_short": short,
        "config_overrides": overrides,
        "weights_init": "random (AutoModelForCausalLM.from_config; no checkpoint loaded)",
        "task": task,
        "precision": None,
        "optimizer": None,
        "micro_batch": b,
        "seq_len": s,
        "gradient_checkpointing": gc_on,
        "gradient_checkpointing_kwargs": {"use_reentrant": False} if gc_on else None,
        "attn_implementation": attn_impl,
        "measured": {},
        "env": env,
        "command": command,
        "measured_at_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if task == "lora":
        rec["lora"] = {"r": LORA_RANK, "alpha": LORA_ALPHA, "dropout": 0.0, "target_modules": LORA_TARGETS,
                       "library": "peft get_peft_model (autocast_adapter_dtype default)"}
    gc.collect()
    if COMPILE_LAYERS:
        torch._dynamo.reset()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    rec["_base"] = mem()
    rec["base_allocated_bytes"] = rec["_base"]
    model = None
    try:
        config, how = load_config(folder, overrides)
        rec["config_load"] = how
        rec["arch"] = arch_summary(config)
        torch.manual_seed(0)
        t0 = time.perf_counter()
        model, casted, got_attn = build_model(config, attn_impl)
        torch.cuda.synchronize()
        rec["build_seconds"] = round(time.perf_counter() - t0, 3)
        rec["cast_to_bf16_after_build"] = casted
        rec["attn_implementation_effective"] = got_attn
        rec["model_class"] = type(model).__name__
        vocab = rec["arch"]["vocab_size"]
        emb = model.get_input_embeddings()
        rec["embedding_params"] = emb.weight.numel() if emb is not None else None
        if task in ("full", "lora"):
            rec["kind"] = "train_memory"
            if task == "full":
                rec["precision"] = ("pure bf16: bf16 weights, bf16 grads, AdamW exp_avg/exp_avg_sq in param dtype "
                                    "(bf16); no fp32 master weights, no autocast")
            model = run_train(model, task, b, s, gc_on, vocab, rec)
            if task == "lora":
                rec["precision"] = (f"bf16 frozen base weights; LoRA adapter params {rec.get('trainable_dtypes')}; "
                                    f"AdamW states {rec.get('optimizer_state_dtypes')}; no autocast")
        else:
            rec["kind"] = "infer_memory"
            rec["task"] = "serve"
            rec["precision"] = "bf16 weights, bf16 activations, KV cache in its measured dtype (kv_cache_dtypes)"
            rec["optimizer"] = None
            model = run_serve(model, b, s, vocab, rec)
    except Exception as e:
        rec["status"] = "error"
        rec["error"] = f"{type(e).__name__}: {e}"[:2000]
        rec["traceback_tail"] = traceback.format_exc()[-3000:]
        log(f"   ERROR {rec['error'][:300]}")
    finally:
        model = None
        gc.collect()
        torch.cuda.empty_cache()
    rec.pop("_base", None)
    return rec


def write_rows(path, rec):
    rows = []
    if rec["kind"] == "train_memory" and rec["status"] == "ok":
        r1 = dict(rec, id=rec["id"] + "-mem", kind="train_memory")
        r2 = dict(rec, id=rec["id"] + "-time", kind="train_step_time")
        rows = [r1, r2]
    else:
        rows = [dict(rec, id=rec["id"] + ("-mem" if rec["kind"] else ""), kind=rec["kind"] or "error")]
    with open(path, "a") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="JSON-lines output file (appended)")
    ap.add_argument("--budget-s", type=float, default=240.0,
                    help="no new case starts after this many seconds since start (default 240)")
    ap.add_argument("--only", default="", help="comma-separated substrings; run only cases whose id contains one")
    ap.add_argument("--attn", default="sdpa", help="attn_implementation (default sdpa)")
    ap.add_argument("--list", action="store_true", help="print the case ids and exit (needs no GPU)")
    ap.add_argument("--compile", action="store_true",
                    help="run COMPILED_CASES with each decoder layer compiled (ids end in -compiled)")
    args = ap.parse_args()
    global COMPILE_LAYERS
    COMPILE_LAYERS = args.compile

    selected = [c for c in (COMPILED_CASES if args.compile else CASES)
                if not args.only or any(x in case_id(*c) for x in args.only.split(","))]
    if args.list:
        for c in selected:
            print(case_id(*c))
        return 0

    t_start = time.perf_counter()
    import torch
    import transformers

    try:
        import peft
        peft_version = peft.__version__
    except Exception as e:
        peft_version = f"unavailable ({type(e).__name__})"
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
        "peft": peft_version,
        "python": sys.version.split()[0],
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "unset (default allocator settings)"),
        "sdpa_flash_enabled": torch.backends.cuda.flash_sdp_enabled(),
        "sdpa_mem_efficient_enabled": torch.backends.cuda.mem_efficient_sdp_enabled(),
        "cpu_count": os.cpu_count(),
    }
    command = shlex.join([sys.executable] + sys.argv)
    log(f"env {json.dumps(env)}")
    log(f"{len(selected)} cases, budget {args.budget_s} s, out {args.out}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    summary = []
    for c in selected:
        elapsed = time.perf_counter() - t_start
        cid = case_id(*c)
        if elapsed > args.budget_s:
            log(f"SKIP {cid} (time budget: {elapsed:.0f} s > {args.budget_s:.0f} s)")
            summary.append((cid, "skipped", None, None))
            continue
        log(f"CASE {cid} (t={elapsed:.0f} s)")
        rec = run_case(*c, env=env, command=command, attn_impl=args.attn)
        write_rows(args.out, rec)
        m = rec.get("measured", {})
        summary.append((cid, rec["status"], m.get("peak_allocated_bytes"), m.get("step_seconds_median")))
        log(f"DONE {cid} status={rec['status']} weights={m.get('weights_bytes')} peak={m.get('peak_allocated_bytes')} "
            f"kv={m.get('kv_cache_bytes')} step_s={m.get('step_seconds_median')}")
    log(f"total {time.perf_counter() - t_start:.0f} s")
    print(f"{'case':48s} {'status':8s} {'peak GB':>9s} {'step s':>8s}", flush=True)
    for cid, st, pk, ss in summary:
        pks = f"{pk / 1e9:9.3f}" if pk is not None else f"{'-':>9s}"
        sss = f"{ss:8.4f}" if ss is not None else f"{'-':>8s}"
        print(f"{cid:48s} {st:8s} {pks} {sss}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
