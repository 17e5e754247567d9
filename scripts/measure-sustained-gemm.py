#!/usr/bin/env python3
"""Measure how a GPU's GEMM throughput holds up under sustained load: one large GEMM run back to back for
`--seconds`, its throughput read every `--window-ms` from CUDA events. A training step keeps the GPU busy for
seconds, long enough to reach its power limit and lower its clock; calibration measures each shape for milliseconds.
The ratio of the sustained throughput (median of the second half) to the burst (the best window of the first two
seconds, what a millisecond measurement sees) is what a step loses to that.

    python3 scripts/measure-sustained-gemm.py --json              # on a GPU (20 s)
    python3 scripts/measure-sustained-gemm.py --device cpu --seconds 1 --size 256   # a check of the script itself

Sample the clock and power beside it to see why: nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv -lms 250
"""

import argparse
import statistics
import time

from torch_device import add_output_options, machine, report, torch_and_device


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to run (default: cuda if available)")
    p.add_argument("--size", type=int, default=8192, help="m = n = k of the GEMM (default 8192)")
    p.add_argument("--seconds", type=float, default=20.0, help="how long to keep it running (default 20)")
    p.add_argument("--window-ms", type=float, default=100.0,
                   help="throughput is read per window of this length (default 100)")
    add_output_options(p)
    args = p.parse_args()
    if args.size < 64 or args.seconds <= 0 or args.window_ms <= 0:
        p.error("--size must be at least 64, --seconds and --window-ms above 0")
    return args


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-sustained-gemm", args.device, "on the GPU machine")
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    n = args.size
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    flop = 2 * n ** 3

    def one():
        torch.matmul(a, b, out=out)

    # GEMMs per window from a short timing of a few.
    for _ in range(3):
        one()
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        one()
    if device == "cuda":
        torch.cuda.synchronize()
    per_window = max(1, round(args.window_ms / 1e3 / ((time.perf_counter() - t0) / 5)))
    windows = max(2, round(args.seconds * 1e3 / args.window_ms))

    seconds = []
    if device == "cuda":
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(windows + 1)]
        marks[0].record()
        for w in range(windows):
            for _ in range(per_window):
                one()
            marks[w + 1].record()
        marks[-1].synchronize()
        seconds = [marks[w].elapsed_time(marks[w + 1]) / 1e3 for w in range(windows)]
    else:
        for _ in range(windows):
            t = time.perf_counter()
            for _ in range(per_window):
                one()
            seconds.append(time.perf_counter() - t)
    tflops = [flop * per_window / s / 1e12 for s in seconds]
    last_half = tflops[len(tflops) // 2:]
    burst = max(tflops[:max(1, round(2e3 / args.window_ms))])
    result = {
        **machine(torch, device), "dtype": "bf16" if device == "cuda" else "fp32", "size": n,
        "gemmsPerWindow": per_window, "windows": windows,
        "burstTflops": burst, "sustainedTflops": statistics.median(last_half),
        "sustainedOverBurst": statistics.median(last_half) / burst,
        "minTflops": min(tflops), "maxTflops": max(tflops), "tflopsByWindow": tflops, "errors": [],
    }
    report(result, args, [
        f"{n}^3 GEMM, {windows} windows of {per_window}: burst {result['burstTflops']:.1f} TFLOP/s, "
        f"sustained (median of the second half) {result['sustainedTflops']:.1f},"
        f" ratio {result['sustainedOverBurst']:.3f}; "
        f"range {result['minTflops']:.1f}-{result['maxTflops']:.1f}",
    ])


if __name__ == "__main__":
    main()
