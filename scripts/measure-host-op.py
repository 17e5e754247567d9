#!/usr/bin/env python3
"""Measure the host cost of one eager PyTorch call on this machine: the `training.hostOpUs` of a clustersim
scenario (the figure clustersim otherwise takes from PyTorch's operator benchmark, 16.1 us for
`addmm_M1_N1_K1_cuda`, pytorch/pytorch#38421), and on a GPU the host cost of one torch.distributed
all-reduce call, `training.hostCollectiveUs` (otherwise 89 us, pytorch/pytorch#138773).

Run it on the training host, with the PyTorch the training uses:

    python3 scripts/measure-host-op.py            # CUDA if there is a GPU, else the CPU
    python3 scripts/measure-host-op.py --json     # one JSON object for scripts

The main figure repeats the cited benchmark: `torch.addmm` on 1x1 tensors, forward, no autograd. The kernels
are tiny, so the loop is bound by the host issuing them; the script checks that by also timing the loop with a
device synchronise at the end. It also reports, for context, the same call with autograd recording, a
`nn.Linear(1, 1)` module call and a backward pass per autograd node. Each figure is the median of repeats.
"""

import argparse
import json
import os
import platform
import socket
import statistics
import time

from torch_device import torch_and_device


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where the tensors live (default: cuda if available)")
    p.add_argument("--calls", type=int, default=2000, help="calls per repeat (default 2000)")
    p.add_argument("--repeats", type=int, default=7, help="repeats; the median is reported (default 7)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()
    if args.calls < 10 or args.repeats < 1:
        p.error("--calls must be at least 10 and --repeats at least 1")
    return args


def timed_loop(fn, calls, repeats, sync):
    """Median host time per call (us) of `calls` calls, and the median with a device sync at the end."""
    for _ in range(min(calls, 200)):  # warm-up: allocator, dispatcher caches, cuBLAS handle
        fn()
    sync()
    host, synced = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        host.append((t1 - t0) / calls * 1e6)
        synced.append((t2 - t0) / calls * 1e6)
    return statistics.median(host), statistics.median(synced), (max(host) - min(host)) / statistics.median(host) * 100


def measure_collective(torch, device, calls, repeats, sync):
    """Host time of one torch.distributed.all_reduce (c10d -> NCCL) on a one-rank group: training.hostCollectiveUs."""
    import torch.distributed as dist

    if device != "cuda":
        return None, "needs CUDA and NCCL"
    if not dist.is_available() or not dist.is_nccl_available():
        return None, "this PyTorch has no NCCL backend"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    try:
        dist.init_process_group("nccl", rank=0, world_size=1)
        t = torch.ones(1, device="cuda")
        host_us = timed_loop(lambda: dist.all_reduce(t), calls, repeats, sync)[0]
        dist.destroy_process_group()
        return host_us, "torch.distributed.all_reduce of one element, one-rank NCCL group"
    except Exception as err:  # a broken NCCL setup should not lose the other figures
        return None, f"failed: {err}"


def main():
    args = parse_args()
    torch, device = torch_and_device("measure-host-op", args.device, "where the training runs")
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    a, b, c = (torch.ones(1, 1, device=device) for _ in range(3))
    ga, gb = (torch.ones(1, 1, device=device, requires_grad=True) for _ in range(2))
    linear = torch.nn.Linear(1, 1).to(device)
    x = torch.ones(1, 1, device=device)

    results = {}
    with torch.no_grad():
        results["addmm"] = timed_loop(lambda: torch.addmm(c, a, b), args.calls, args.repeats, sync)
    results["addmm_autograd"] = timed_loop(lambda: torch.addmm(c, ga, gb), args.calls, args.repeats, sync)
    results["linear_module"] = timed_loop(lambda: linear(x), args.calls, args.repeats, sync)

    # Backward: a chain of `depth` mul nodes, one backward() per chain; per node = (time - fixed) / depth.
    depth = 50

    def chain_backward():
        y = ga
        for _ in range(depth):
            y = y * 1.0001
        y.sum().backward()

    chains = max(10, args.calls // depth)
    fwd_only = timed_loop(lambda: [ga * 1.0001 for _ in range(depth)], chains, args.repeats, sync)[0]
    both = timed_loop(chain_backward, chains, args.repeats, sync)[0]
    results["backward_per_node"] = ((both - fwd_only) / depth, None, None)

    coll_us, coll_note = measure_collective(torch, device, max(100, args.calls // 10), args.repeats, sync)
    host_us, synced_us, spread = results["addmm"]
    out = {
        "hostOpUs": round(host_us, 2),
        "hostCollectiveUs": None if coll_us is None else round(coll_us, 2),
        "collectiveNote": coll_note,
        "device": device,
        "deviceName": torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "spreadPct": round(spread, 1),
        "hostBound": synced_us < 1.2 * host_us,
        "context": {
            "addmmAutogradUs": round(results["addmm_autograd"][0], 2),
            "linearModuleUs": round(results["linear_module"][0], 2),
            "backwardPerNodeUs": round(results["backward_per_node"][0], 2),
        },
        "calls": args.calls,
        "repeats": args.repeats,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"host cost of one eager call on {out['deviceName']} ({device}), torch {out['torch']},"
          f" python {out['python']}")
    print(f"  addmm 1x1, no autograd (the cited benchmark): {host_us:.2f} us   <- training.hostOpUs")
    print(f"  addmm 1x1, autograd recording:                {out['context']['addmmAutogradUs']:.2f} us")
    print(f"  nn.Linear(1, 1) module call:                  {out['context']['linearModuleUs']:.2f} us")
    print(f"  backward, per autograd node:                  {out['context']['backwardPerNodeUs']:.2f} us")
    coll = "n/a" if coll_us is None else f"{coll_us:.2f} us"
    print(f"  torch.distributed.all_reduce call:            {coll}   <- training.hostCollectiveUs ({coll_note})")
    print(f"""  spread of the repeats: {spread:.1f}%; {'host-bound, as intended' if out['hostBound'] else
          'NOT host-bound: the device was slower than the host, the figure is an upper bound'}""")
    if device == "cpu":
        print("  note: measured on CPU tensors; the CUDA issue cost (a kernel launch per call) is higher."
              " Run it on the GPU host.")
    extra = "" if coll_us is None else f" --set training.hostCollectiveUs={coll_us:.1f}"
    print(f"\nuse it:  clustersim simulate <scenario> --set training.hostOpUs={host_us:.1f}{extra}")


if __name__ == "__main__":
    main()
