#!/usr/bin/env python3
"""Measure the memory bandwidth PyTorch's own kernels reach on this GPU: element-wise ops, casts, and the fused
normalisation and softmax kernels, each over tensors far larger than the caches. clustersim times memory-bound
ops as bytes over the GPU's streaming bandwidth (`hbmBandwidthGBps` x `hbmEfficiency`, kernelTime.ts); a
device-to-device copy is what `calibrate` measures for it. This gives the same figure for the kernels a
training step runs.

    python3 scripts/measure-elementwise.py --json          # on a GPU
    python3 scripts/measure-elementwise.py --device cpu    # a small check of the script itself

Each op's bytes are what it must read and write (inputs once, outputs once); the figure is bytes over the median
time of repeats, timed with CUDA events after warm-up, with the op repeated back to back inside each sample.
"""

import argparse
import statistics
import time

from torch_device import add_output_options, machine, measure_each, report, torch_and_device


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to run (default: cuda if available)")
    p.add_argument("--elements", default="16777216,67108864,268435456",
                   help="tensor sizes in elements, comma-separated (default 16M, 64M, 256M)")
    p.add_argument("--repeats", type=int, default=7, help="repeats; the median is reported (default 7)")
    p.add_argument("--inner", type=int, default=10, help="ops back to back per sample (default 10)")
    add_output_options(p)
    args = p.parse_args()
    try:
        args.elements = [int(x) for x in args.elements.split(",") if x]
        assert args.elements and min(args.elements) >= 1024
    except (ValueError, AssertionError):
        p.error("--elements takes whole numbers of at least 1024, separated by commas")
    if args.repeats < 1 or args.inner < 1:
        p.error("--repeats and --inner must be at least 1")
    return args


def ops(torch, n, device, half):
    """name -> (function, bytes read + written). Rows of 4096 for the row-wise kernels."""
    F = torch.nn.functional
    x, y = torch.randn(n, device=device, dtype=half), torch.randn(n, device=device, dtype=half)
    x32, y32 = torch.randn(n, device=device, dtype=torch.float32), torch.randn(n, device=device, dtype=torch.float32)
    rows = x.view(-1, 4096)
    w = torch.ones(4096, device=device, dtype=half)
    e, f = x.element_size(), 4
    table = {
        "copy (clone)": (lambda: x.clone(), 2 * n * e),
        "add": (lambda: x + y, 3 * n * e),
        "mul": (lambda: x * y, 3 * n * e),
        "mul fp32": (lambda: x32 * y32, 3 * n * f),
        "cast to fp32": (lambda: x.float(), n * (e + f)),
        "cast from fp32": (lambda: x32.to(half), n * (f + e)),
        "silu": (lambda: F.silu(x), 2 * n * e),
        "layer_norm": (lambda: F.layer_norm(rows, (4096,), w, w), 2 * n * e),
        "softmax": (lambda: rows.softmax(-1), 2 * n * e),
    }
    if hasattr(F, "rms_norm"):
        table["rms_norm"] = (lambda: F.rms_norm(rows, (4096,), w), 2 * n * e)
    return table


def time_op(torch, device, fn, args):
    for _ in range(3):
        fn()
    samples = []
    for _ in range(args.repeats):
        if device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(args.inner):
                fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) / 1e3 / args.inner)
        else:
            t0 = time.perf_counter()
            for _ in range(args.inner):
                fn()
            samples.append((time.perf_counter() - t0) / args.inner)
    return statistics.median(samples), 100 * (max(samples) - min(samples)) / statistics.median(samples)


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-elementwise", args.device, "on the GPU machine")
    half = torch.bfloat16

    def measure(n):
        rows = []
        for name, (fn, nbytes) in ops(torch, n, device, half).items():
            s, spread = time_op(torch, device, fn, args)
            rows.append({"op": name, "elements": n, "bytes": nbytes, "seconds": s, "GBps": nbytes / s / 1e9,
                         "spreadPct": spread})
        return rows

    per_size, errors = measure_each(torch, device, args.elements, measure, lambda n: {"elements": n})
    cases = [row for rows in per_size for row in rows]
    result = {**machine(torch, device), "dtype": "bf16", "cases": cases, "errors": errors}
    report(result, args, [
        *(f"{c['op']:>15} {c['elements']:>10}: {c['GBps']:7.0f} GB/s"
          f" ({c['seconds'] * 1e6:8.1f} us, spread {c['spreadPct']:.1f}%)" for c in cases),
        *(f"{e['elements']}: {e['error']}" for e in errors),
    ])


if __name__ == "__main__":
    main()
