#!/usr/bin/env python3
"""Measure how much slower a language-model head's GEMMs run when the vocabulary per rank is off the 16-byte
tensor-core alignment: the factor clustersim charges as MISALIGNED_GEMM_SLOWDOWN (3, from Netflix's measured
LM-head cliff; src/sim/workload/kernelTime.ts), here split by alignment (1, 2 and 4 elements of 2 bytes).

Run it on the GPU host, with the PyTorch the training uses:

    python3 scripts/measure-gemm-alignment.py            # CUDA if there is a GPU, else a small CPU check
    python3 scripts/measure-gemm-alignment.py --json     # one JSON object for scripts

For each hidden size and vocabulary width it times the head's three GEMMs as PyTorch's linear layer runs them:
forward logits = x . W^T, input gradient dx = dlogits . W, weight gradient dW = dlogits^T . x. The widths come in
pairs: an aligned width (a multiple of 128) and the nearby widths a split like `50257 // tp` gives (odd, a
multiple of 2, a multiple of 4). The ratio is time per FLOP of the misaligned width over that of its aligned
neighbour, so the small difference in size cancels. Each time is the median of repeats, timed with CUDA events
after warm-up.
"""

import argparse
import json
import platform
import statistics
import time

from torch_device import torch_and_device

# (aligned neighbour, misaligned widths): GPT-2's vocabulary split over 1, 2, 4 and 8 ranks, unpadded and padded.
WIDTH_GROUPS = [
    (50304, [50257, 50258, 50260]),
    (25216, [25129, 25130, 25132]),
    (12672, [12565, 12566, 12564]),
    (6400, [6283, 6282, 6284]),
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to run (default: cuda if available)")
    p.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16", help="GEMM dtype (default fp16)")
    p.add_argument("--tokens", type=int, default=4096,
                   help="tokens per micro-batch, m of the forward GEMM (default 4096)")
    p.add_argument("--hidden", type=int, nargs="+", default=[1024, 2048], help="hidden sizes (default 1024 2048)")
    p.add_argument("--repeats", type=int, default=9, help="timed repeats; the median is reported (default 9)")
    p.add_argument("--scale", type=int, default=1,
                   help="divide every width by this (the CPU check uses a small problem)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()
    if args.tokens < 8 or args.repeats < 1 or args.scale < 1 or any(h < 8 for h in args.hidden):
        p.error("--tokens and every --hidden must be at least 8, --repeats and --scale at least 1")
    return args


def alignment(width):
    """Largest of 8, 4, 2, 1 elements that divides the width."""
    for a in (8, 4, 2):
        if width % a == 0:
            return a
    return 1


def timer(torch, device):
    """A function timing fn() in microseconds: CUDA events on a GPU, the wall clock on the CPU."""
    if device == "cuda":
        def run(fn):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e3
        return run

    def run_cpu(fn):
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e6
    return run_cpu


def head_times(torch, device, dtype, tokens, hidden, width, repeats, clock):
    """Median microseconds of the forward, input-gradient and weight-gradient GEMMs of a head of `width` rows."""
    x = torch.randn(tokens, hidden, device=device, dtype=dtype)
    w = torch.randn(width, hidden, device=device, dtype=dtype)
    g = torch.randn(tokens, width, device=device, dtype=dtype)
    gemms = {
        "forward": lambda: torch.matmul(x, w.t()),
        "dgrad": lambda: torch.matmul(g, w),
        "wgrad": lambda: torch.matmul(g.t(), x),
    }
    out = {}
    for name, fn in gemms.items():
        for _ in range(3):
            fn()
        out[name] = statistics.median(clock(fn) for _ in range(repeats))
    return out


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-gemm-alignment", args.device, "on the GPU host")
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    if device == "cpu" and dtype == torch.float16:
        # CPU half matmul is slow or missing in older builds; the check is of the script, not of the CPU
        dtype = torch.float32
    clock = timer(torch, device)

    rows = []
    for hidden in args.hidden:
        for aligned, misaligned in WIDTH_GROUPS:
            widths = [max(8, aligned // args.scale)] + [max(1, m // args.scale) for m in misaligned]
            base = None
            for width in widths:
                t = head_times(torch, device, dtype, args.tokens, hidden, width, args.repeats, clock)
                total = t["forward"] + t["dgrad"] + t["wgrad"]
                per_flop = total / (3 * 2 * args.tokens * hidden * width)
                if base is None:
                    base = per_flop
                rows.append({
                    "hidden": hidden, "width": width, "alignElems": alignment(width), "alignedNeighbour": widths[0],
                    "forwardUs": round(t["forward"], 2), "dgradUs": round(t["dgrad"], 2),
                    "wgradUs": round(t["wgrad"], 2),
                    "slowdown": round(per_flop / base, 3),
                })
    by_alignment = {}
    for a in (1, 2, 4):
        ratios = [r["slowdown"] for r in rows if r["alignElems"] == a]
        if ratios:
            by_alignment[str(a)] = round(statistics.median(ratios), 3)
    out = {
        "device": device,
        "deviceName": torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or platform.machine(),
        "dtype": str(dtype).replace("torch.", ""),
        "torch": torch.__version__,
        "tokens": args.tokens,
        "scale": args.scale,
        "slowdownByAlignment": by_alignment,
        "rows": rows,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"LM-head GEMMs on {out['deviceName']} ({device}, {out['dtype']}), torch {out['torch']},"
          f" {args.tokens} tokens")
    print(f"{'hidden':>7} {'width':>7} {'align':>5} {'fwd us':>10} {'dgrad us':>10} {'wgrad us':>10} {'slowdown':>9}")
    for r in rows:
        print(f"{r['hidden']:>7} {r['width']:>7} {r['alignElems']:>5} {r['forwardUs']:>10.1f}"
              f" {r['dgradUs']:>10.1f} {r['wgradUs']:>10.1f} {r['slowdown']:>9.2f}")
    print("median slowdown per FLOP against the aligned neighbour, by alignment in elements: "
          + ", ".join(f"{k}: {v:.2f}x" for k, v in by_alignment.items())
          + " (clustersim charges 3x to any misalignment)")
    if device == "cpu":
        print("note: measured on the CPU; tensor-core alignment is a GPU matter. Run it on the GPU host.")


if __name__ == "__main__":
    main()
