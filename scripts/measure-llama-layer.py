#!/usr/bin/env python3
"""Time Llama decoder layers as eager PyTorch runs them, forward and backward, on this GPU: the per-layer time
clustersim predicts for `training.kernels: eager` (src/sim/workload/eagerOps.ts), measured.

The layer is written out in the form of Hugging Face Transformers' `modeling_llama.py` (the form
clustersim's eager ops follow): RMSNorm in fp32 with a cast back, q/k/v/o projections without bias, rotary
embedding with rotate_half, grouped-query keys and values expanded by repeat_kv (copies that Hugging Face skips since
it passes enable_gqa to SDPA where it can, and that clustersim does not charge), causal
scaled_dot_product_attention, the SiLU-gated MLP, two residual adds. Weights and activations in bf16, no
dropout. A stack of `--layers` layers is timed with CUDA events after warm-up; the figures are per layer,
medians of repeats. It also times the loop without a device synchronise, to show whether the host issuing the
kernels or the GPU bounds it.

    python3 scripts/measure-llama-layer.py --json          # on a GPU: the default shapes
    python3 scripts/measure-llama-layer.py --device cpu    # a small check of the script itself
"""

import argparse
import json
import statistics
import time

from torch_device import add_output_options, machine, measure_each, report, torch_and_device

# name: (hidden, ffn, heads, kv heads, sequence); micro-batch 1.
SHAPES = {
    "llama2-7b": (4096, 11008, 32, 32, 4096),
    "llama3-8b": (4096, 14336, 32, 8, 8192),
    "tinyllama-1.1b": (2048, 5632, 32, 4, 2048),
}
CPU_SHAPES = {"tiny": (128, 352, 4, 2, 64)}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to run (default: cuda if available)")
    p.add_argument("--layers", type=int, default=4, help="layers in the timed stack (default 4)")
    p.add_argument("--repeats", type=int, default=7, help="repeats; medians are reported (default 7)")
    add_output_options(p)
    p.add_argument("--sustain", type=int, default=0, metavar="N",
                   help="also run N forward + backward iterations back to back, without a device synchronise between "
                        "them, and report the median per-iteration time (the steady state a training loop runs in)")
    p.add_argument("--shapes", default=",".join(SHAPES),
                   help=f"which shapes, comma-separated (default: all of {', '.join(SHAPES)})")
    p.add_argument("--compile", action="store_true", help="run each layer under torch.compile (Inductor fuses the "
                   "element-wise work), to compare with clustersim's default fused kernels")
    p.add_argument("--kernels", metavar="FILE", help="also profile one forward + backward of each shape with "
                   "torch.profiler and write every GPU kernel's count and total time (us) to FILE as JSON")
    args = p.parse_args()
    if args.layers < 1 or args.repeats < 1 or args.sustain < 0:
        p.error("--layers and --repeats must be at least 1, --sustain at least 0")
    args.shapes = [x for x in args.shapes.split(",") if x]
    unknown = [x for x in args.shapes if x not in SHAPES]
    if unknown or not args.shapes:
        p.error(f"--shapes: unknown {', '.join(unknown) or '(none given)'} (known: {', '.join(SHAPES)})")
    return args


def build(torch, device, dtype, hidden, ffn, heads, kv_heads, seq):
    nn, F = torch.nn, torch.nn.functional
    head_dim = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden, device=device, dtype=dtype))

        def forward(self, x):
            input_dtype = x.dtype
            x = x.to(torch.float32)
            variance = x.pow(2).mean(-1, keepdim=True)
            x = x * torch.rsqrt(variance + 1e-5)
            return self.weight * x.to(input_dtype)

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def repeat_kv(x, n_rep):
        if n_rep == 1:
            return x
        b, n, s, d = x.shape
        return x[:, :, None, :, :].expand(b, n, n_rep, s, d).reshape(b, n * n_rep, s, d)

    sdpa = getattr(F, "scaled_dot_product_attention", None)

    def attention_core(q, k, v):
        if sdpa is not None:
            return sdpa(q, k, v, is_causal=True)
        scores = q @ k.transpose(-1, -2) / head_dim ** 0.5  # old PyTorch (CPU check only)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=device).triu(1)
        return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            lin = lambda i, o: nn.Linear(i, o, bias=False, device=device, dtype=dtype)
            self.input_layernorm, self.post_attention_layernorm = RMSNorm(), RMSNorm()
            self.q_proj, self.k_proj = lin(hidden, heads * head_dim), lin(hidden, kv_heads * head_dim)
            self.v_proj, self.o_proj = lin(hidden, kv_heads * head_dim), lin(heads * head_dim, hidden)
            self.gate_proj, self.up_proj, self.down_proj = lin(hidden, ffn), lin(hidden, ffn), lin(ffn, hidden)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            residual = x
            x = self.input_layernorm(x)
            q = self.q_proj(x).view(b, s, heads, head_dim).transpose(1, 2)
            k = self.k_proj(x).view(b, s, kv_heads, head_dim).transpose(1, 2)
            v = self.v_proj(x).view(b, s, kv_heads, head_dim).transpose(1, 2)
            q = (q * cos) + (rotate_half(q) * sin)
            k = (k * cos) + (rotate_half(k) * sin)
            k, v = repeat_kv(k, heads // kv_heads), repeat_kv(v, heads // kv_heads)
            o = attention_core(q, k, v).transpose(1, 2).contiguous().view(b, s, hidden)
            x = residual + self.o_proj(o)
            residual = x
            x = self.post_attention_layernorm(x)
            return residual + self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return Layer, emb.cos().to(dtype)[None, None], emb.sin().to(dtype)[None, None]


def measure_shape(torch, device, name, shape, args):
    hidden, ffn, heads, kv_heads, seq = shape
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    Layer, cos, sin = build(torch, device, dtype, hidden, ffn, heads, kv_heads, seq)
    layers = [Layer() for _ in range(args.layers)]
    if args.compile:
        if not hasattr(torch, "compile"):
            raise RuntimeError(f"--compile needs torch.compile (PyTorch 2.0 or later; this is {torch.__version__})")
        layers = [torch.compile(layer) for layer in layers]
    x = torch.randn(1, seq, hidden, device=device, dtype=dtype, requires_grad=True)
    grad = torch.randn(1, seq, hidden, device=device, dtype=dtype)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def forward():
        y = x
        for layer in layers:
            y = layer(y, cos, sin)
        return y

    def clear():
        x.grad = None
        for layer in layers:
            for p in layer.parameters():
                p.grad = None

    def device_times():
        if device != "cuda":
            t0 = time.perf_counter()
            y = forward()
            t1 = time.perf_counter()
            y.backward(grad)
            t2 = time.perf_counter()
            clear()
            return t1 - t0, t2 - t1
        e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        e[0].record()
        y = forward()
        e[1].record()
        y.backward(grad)
        e[2].record()
        e[2].synchronize()
        clear()
        return e[0].elapsed_time(e[1]) / 1e3, e[1].elapsed_time(e[2]) / 1e3

    for _ in range(2):
        device_times()
    fwd, bwd, issue = [], [], []
    for _ in range(args.repeats):
        f, b = device_times()
        fwd.append(f)
        bwd.append(b)
        sync()
        t0 = time.perf_counter()
        forward().backward(grad)
        issue.append(time.perf_counter() - t0)  # host time to issue forward and backward, no synchronise
        sync()
        clear()
    sustained = sustained_times(torch, device, forward, grad, clear, args.sustain) if args.sustain else None
    kernels = profile_kernels(torch, forward, grad, clear, device) if args.kernels else None
    n = args.layers
    return {
        "name": name, "hidden": hidden, "ffnHidden": ffn, "heads": heads, "kvHeads": kv_heads, "seqLen": seq,
        "microBatch": 1, "layers": n,
        "forwardSPerLayer": statistics.median(fwd) / n, "backwardSPerLayer": statistics.median(bwd) / n,
        "issueSPerLayer": statistics.median(issue) / n,
        "spreadPct": 100 * (max(fwd) - min(fwd)) / statistics.median(fwd),
        **({"sustainedSPerLayer": sustained / n, "sustainedIterations": args.sustain} if sustained is not None else {}),
        **({"kernels": kernels} if kernels is not None else {}),
    }


def sustained_times(torch, device, forward, grad, clear, iterations):
    """Median seconds of one forward + backward of the stack when `iterations` run back to back: an event at each
    iteration's start, one synchronise at the end, so the host issues ahead as a training loop's does."""
    if device != "cuda":
        t0 = time.perf_counter()
        for _ in range(iterations):
            forward().backward(grad)
            clear()
        return (time.perf_counter() - t0) / iterations
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(iterations + 1)]
    torch.cuda.synchronize()
    for i in range(iterations):
        marks[i].record()
        forward().backward(grad)
        clear()
    marks[iterations].record()
    marks[iterations].synchronize()
    return statistics.median(marks[i].elapsed_time(marks[i + 1]) / 1e3 for i in range(1, iterations))


def profile_kernels(torch, forward, grad, clear, device):
    """One forward + backward of the stack under torch.profiler (after the timed runs): the GPU kernels (name,
    count, total us) and the aten ops with the device time of their kernels, each sorted by time."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        forward().backward(grad)
        if device == "cuda":
            torch.cuda.synchronize()
    clear()

    def first(e, *names):
        return next((getattr(e, n) for n in names if getattr(e, n, None) is not None), 0)

    kernels, ops = [], []
    for e in prof.key_averages():
        on_device = "CUDA" in str(getattr(e, "device_type", ""))
        if on_device:
            kernels.append({"name": e.key[:200], "count": e.count,
                            "totalUs": first(e, "self_device_time_total", "self_cuda_time_total")})
        elif e.key.startswith("aten::"):
            us = first(e, "device_time_total", "cuda_time_total") if device == "cuda" else e.self_cpu_time_total
            if us:
                ops.append({"name": e.key, "count": e.count, "totalUs": us})
    by_time = lambda rows: sorted(rows, key=lambda r: -r["totalUs"])
    return {"kernels": by_time(kernels)[:60], "atenOps": by_time(ops)[:40]}


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-llama-layer", args.device, "on the GPU machine")
    shapes = {name: SHAPES[name] for name in args.shapes} if device == "cuda" else CPU_SHAPES
    cases, errors = measure_each(torch, device, list(shapes),
                                 lambda name: measure_shape(torch, device, name, shapes[name], args),
                                 lambda name: {"name": name})
    result = {
        **machine(torch, device),
        "dtype": "bf16" if device == "cuda" else "fp32",
        "form": f"Hugging Face modeling_llama, {'torch.compile' if args.compile else 'eager'}, SDPA causal",
        "cases": cases, "errors": errors,
    }
    if args.kernels:
        with open(args.kernels, "w") as f:
            json.dump({c["name"]: c.get("kernels", []) for c in cases}, f, indent=1)
    report(result, args, [
        *(f"{c['name']:>15}: forward {c['forwardSPerLayer'] * 1e3:7.3f} ms/layer,"
          f" backward {c['backwardSPerLayer'] * 1e3:7.3f},"
          f" host issue {c['issueSPerLayer'] * 1e3:7.3f} (spread {c['spreadPct']:.1f}%)"
          + (f", sustained {c['sustainedSPerLayer'] * 1e3:7.3f} forward + backward"
             if "sustainedSPerLayer" in c else "")
          for c in cases),
        *(f"{e['name']}: {e['error']}" for e in errors),
    ])


if __name__ == "__main__":
    main()
