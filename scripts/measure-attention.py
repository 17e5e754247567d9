#!/usr/bin/env python3
"""Measure fused attention on this GPU: the forward and backward throughput of PyTorch's
scaled_dot_product_attention with each backend (FlashAttention-2, cuDNN, memory-efficient), causal, in bf16,
at the shapes the kernels' own benchmarks use (head dimension 128, 16k tokens per batch, sequence 2k-16k).

clustersim's attention figures (src/sim/workload/attentionKernels.ts) come from those published benchmarks;
this script gives the same figures measured on the machine at hand, in the same FLOP convention: forward
4*s^2*d per head, halved when causal; backward 2.5x the forward.

    python3 scripts/measure-attention.py --json            # on a GPU
    python3 scripts/measure-attention.py --device cpu      # a small check of the script itself

Each case is timed with CUDA events after warm-up; the figure is the median of repeats. A backend that cannot
run a case is recorded with its error and skipped.
"""

import argparse
import statistics
import time

from torch_device import add_output_options, machine, measure_each, report, torch_and_device

BACKENDS = ["flash", "cudnn", "efficient"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to run (default: cuda if available)")
    p.add_argument("--seqs", default="2048,4096,8192,16384", help="sequence lengths, comma-separated (default 2k..16k)")
    p.add_argument("--tokens", type=int, default=16384, help="tokens per batch: batch = tokens / seq (default 16384)")
    p.add_argument("--hidden", type=int, default=2048, help="model width: heads = hidden / head-dim (default 2048)")
    p.add_argument("--head-dim", type=int, default=128, help="head dimension (default 128)")
    p.add_argument("--repeats", type=int, default=7, help="timed repeats; the median is reported (default 7)")
    add_output_options(p)
    args = p.parse_args()
    try:
        args.seqs = [int(s) for s in args.seqs.split(",") if s]
    except ValueError:
        p.error("--seqs takes integers separated by commas, e.g. 2048,4096")
    if not args.seqs or min(args.seqs) < 16 or args.tokens < max(args.seqs):
        p.error("--seqs must be at least 16 each and --tokens at least the longest sequence")
    if args.hidden % args.head_dim or args.repeats < 1:
        p.error("--hidden must be a multiple of --head-dim, and --repeats at least 1")
    return args


def backend_context(torch, name):
    """A context that lets SDPA run only `name`, or None when this PyTorch cannot pin that backend."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # PyTorch >= 2.3
        member = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION"}[name]
        return sdpa_kernel(getattr(SDPBackend, member)) if hasattr(SDPBackend, member) else None
    except ImportError:
        if name == "cudnn" or not hasattr(torch.backends.cuda, "sdp_kernel"):
            return None
        return torch.backends.cuda.sdp_kernel(enable_flash=name == "flash", enable_mem_efficient=name == "efficient",
                                              enable_math=False)


def attention(torch):
    """SDPA where PyTorch has it; on an old PyTorch (CPU check only) the plain math form."""
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return lambda q, k, v: sdpa(q, k, v, is_causal=True)

    def math(q, k, v):
        s = q.shape[-2]
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v

    return math


def timer(torch, device):
    """A function that runs fn once and returns its time in seconds, measured on the device."""
    if device == "cuda":
        def cuda_time(fn):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        return cuda_time

    def host_time(fn):
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return host_time


def median_time(time_once, fn, repeats):
    for _ in range(2):
        fn()
    samples = [time_once(fn) for _ in range(repeats)]
    return statistics.median(samples), (max(samples) - min(samples)) / statistics.median(samples) * 100


def measure_case(torch, device, attn, time_once, seq, args):
    batch, heads = args.tokens // seq, args.hidden // args.head_dim
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    shape = (batch, heads, seq, args.head_dim)
    q, k, v = (torch.randn(shape, device=device, dtype=dtype, requires_grad=True) for _ in range(3))
    grad = torch.randn(shape, device=device, dtype=dtype)

    def forward():
        with torch.no_grad():
            attn(q, k, v)

    def forward_backward():
        attn(q, k, v).backward(grad)
        q.grad = k.grad = v.grad = None

    fwd_s, fwd_spread = median_time(time_once, forward, args.repeats)
    both_s, both_spread = median_time(time_once, forward_backward, args.repeats)
    fwd_flop = 4 * seq * seq * args.head_dim * heads * batch / 2  # the benchmarks' count, halved for causal
    bwd_s = max(both_s - fwd_s, 1e-12)
    return {
        "seq": seq, "batch": batch, "heads": heads, "headDim": args.head_dim,
        "forwardS": fwd_s, "forwardBackwardS": both_s, "backwardS": bwd_s,
        "forwardTflops": fwd_flop / fwd_s / 1e12, "backwardTflops": 2.5 * fwd_flop / bwd_s / 1e12,
        "forwardBackwardTflops": 3.5 * fwd_flop / both_s / 1e12,
        "spreadPct": max(fwd_spread, both_spread),
    }


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-attention", args.device, "on the GPU machine")
    attn, time_once = attention(torch), timer(torch, device)
    backends = BACKENDS if device == "cuda" else ["default"]
    cases, errors = [], []
    for name in backends:
        ctx = backend_context(torch, name) if name != "default" else None
        if name != "default" and ctx is None:
            errors.append({"backend": name, "error": f"this PyTorch ({torch.__version__}) cannot select it"})
            continue

        def measure(seq, name=name):
            if name == "default":
                return {"backend": name, **measure_case(torch, device, attn, time_once, seq, args)}
            with backend_context(torch, name):
                return {"backend": name, **measure_case(torch, device, attn, time_once, seq, args)}

        more, failed = measure_each(torch, device, args.seqs, measure,
                                    lambda seq, name=name: {"backend": name, "seq": seq})
        cases += more
        errors += failed
    result = {
        **machine(torch, device),
        "cudnn": torch.backends.cudnn.version() if device == "cuda" else None,
        "dtype": "bf16" if device == "cuda" else "fp32", "causal": True,
        "flopConvention": "forward 4*s^2*d per head, halved when causal; backward 2.5x forward",
        "cases": cases, "errors": errors,
    }
    report(result, args, [
        *(f"{c['backend']:>9} seq {c['seq']:>6}: forward {c['forwardTflops']:6.1f} TFLOP/s,"
          f" backward {c['backwardTflops']:6.1f},"
          f" both {c['forwardBackwardTflops']:6.1f} (spread {c['spreadPct']:.1f}%)" for c in cases),
        *(f"{e['backend']:>9}: {e.get('seq', '')} {e['error']}" for e in errors),
    ])


if __name__ == "__main__":
    main()
