#!/usr/bin/env python3
"""Measure the torch fallback of Megatron's scale-mask-softmax on this GPU, forward and backward, against the
bytes clustersim charges for it (src/sim/workload/megatronOps.ts: five fp32 passes each way).

Megatron's FusedScaleMaskSoftmax runs its fused kernel only when b*np is a multiple of 4 (among other
conditions); otherwise `forward_torch_softmax` runs: float(), x*scale, masked_fill_(mask, -10000.0),
softmax(-1), half(). This script runs that sequence with autograd, as Megatron's eager code does, on a
[b, np, s, s] score tensor, and reports per shape:

- the device time of the forward and of the backward (CUDA events, median of repeats);
- the host time to issue them (the loop without a device synchronise, per iteration), which shows whether a
  small shape is bound by the host issuing its kernels rather than by the GPU;
- the bandwidth the device time implies for the bytes clustersim counts.

    python3 scripts/measure-softmax-fallback.py --json          # on a GPU
    python3 scripts/measure-softmax-fallback.py --device cpu    # a small check of the script itself
"""

import argparse
import statistics
import time

from torch_device import add_output_options, machine, measure_each, report, torch_and_device

# Bytes per score element clustersim charges (megatronOps.ts `torchSoftmaxFallback`), for 2-byte inputs (the mask, s^2
# bytes, stays in L2 across heads): forward float() r2 w4, x scale r4 w4, masked_fill_ r4 w4, softmax r4 w4,
# half() r4 w2; backward half()'s r2 w4, softmax's r4 r4 w4, masked_fill's r4 w4, x scale's r4 w4, float()'s r4 w2.
FORWARD_BYTES_PER_ELEMENT = 6 + 8 + 8 + 8 + 6
BACKWARD_BYTES_PER_ELEMENT = 6 + 12 + 8 + 8 + 6


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to run (default: cuda if available)")
    p.add_argument("--shapes", default="2x2048,6x2048,12x2048,2x1024",
                   help="score shapes as (b*np)x(s), comma-separated (default: 2x2048,6x2048,12x2048,2x1024)")
    p.add_argument("--iters", type=int, default=20, help="forward+backward iterations per repeat (default 20)")
    p.add_argument("--repeats", type=int, default=7, help="repeats; medians are reported (default 7)")
    add_output_options(p)
    args = p.parse_args()
    try:
        args.shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s]
        assert all(len(s) == 2 and s[0] >= 1 and s[1] >= 4 for s in args.shapes) and args.shapes
    except (ValueError, AssertionError):
        p.error("--shapes takes (b*np)x(s) pairs separated by commas, e.g. 2x2048,12x2048")
    if args.iters < 1 or args.repeats < 1:
        p.error("--iters and --repeats must be at least 1")
    return args


def fallback(torch, x, mask, scale, half):
    """Megatron's forward_torch_softmax with softmax_in_fp32 (the default) and a causal mask."""
    y = x.float() * scale
    y = y.masked_fill_(mask, -10000.0)
    return y.softmax(dim=-1).to(half)


def measure_shape(torch, device, batches, seq, args):
    half = torch.float16 if device == "cuda" else torch.bfloat16
    x = torch.randn(1, batches, seq, seq, device=device, dtype=half, requires_grad=True)
    mask = torch.ones(1, 1, seq, seq, device=device, dtype=torch.bool).triu(1)
    grad = torch.randn(1, batches, seq, seq, device=device, dtype=half)
    scale = 1.0 / 8.0
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def forward_backward():
        fallback(torch, x, mask, scale, half).backward(grad)
        x.grad = None

    def device_times():
        """Forward and backward device time of one iteration, in seconds."""
        if device != "cuda":
            t0 = time.perf_counter()
            out = fallback(torch, x, mask, scale, half)
            t1 = time.perf_counter()
            out.backward(grad)
            x.grad = None
            return t1 - t0, time.perf_counter() - t1
        e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        e[0].record()
        out = fallback(torch, x, mask, scale, half)
        e[1].record()
        out.backward(grad)
        e[2].record()
        x.grad = None
        e[2].synchronize()
        return e[0].elapsed_time(e[1]) / 1e3, e[1].elapsed_time(e[2]) / 1e3

    for _ in range(3):
        forward_backward()
    sync()
    fwd, bwd, issue = [], [], []
    for _ in range(args.repeats):
        times = [device_times() for _ in range(args.iters)]
        fwd.append(statistics.median(t[0] for t in times))
        bwd.append(statistics.median(t[1] for t in times))
        sync()
        t0 = time.perf_counter()
        for _ in range(args.iters):
            forward_backward()
        issue.append((time.perf_counter() - t0) / args.iters)  # host time to issue, no synchronise
        sync()
    n = batches * seq * seq
    fwd_s, bwd_s = statistics.median(fwd), statistics.median(bwd)
    return {
        "batchHeads": batches, "seq": seq, "elements": n,
        "forwardS": fwd_s, "backwardS": bwd_s, "issueS": statistics.median(issue),
        "forwardGBps": n * FORWARD_BYTES_PER_ELEMENT / fwd_s / 1e9,
        "backwardGBps": n * BACKWARD_BYTES_PER_ELEMENT / bwd_s / 1e9,
    }


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-softmax-fallback", args.device, "on the GPU machine")
    cases, errors = measure_each(torch, device, args.shapes, lambda shape: measure_shape(torch, device, *shape, args),
                                 lambda shape: {"batchHeads": shape[0], "seq": shape[1]})
    result = {
        **machine(torch, device),
        "input": "fp16" if device == "cuda" else "bf16", "softmaxInFp32": True,
        "bytesPerElement": {"forward": FORWARD_BYTES_PER_ELEMENT, "backward": BACKWARD_BYTES_PER_ELEMENT},
        "cases": cases, "errors": errors,
    }
    report(result, args, [
        *(f"b*np {c['batchHeads']:>3} s {c['seq']:>5}:"
          f" forward {c['forwardS'] * 1e6:8.1f} us ({c['forwardGBps']:6.0f} GB/s),"
          f" backward {c['backwardS'] * 1e6:8.1f} us ({c['backwardGBps']:6.0f} GB/s),"
          f" host issue {c['issueS'] * 1e6:7.1f} us" for c in cases),
        *(f"b*np {e['batchHeads']} s {e['seq']}: {e['error']}" for e in errors),
    ])


if __name__ == "__main__":
    main()
