"""Shared by the measurement scripts: import PyTorch and pick the device, or exit with what is missing."""

import sys


def torch_and_device(prog, requested, where):
    """PyTorch and the device to use ("cuda" or "cpu") for `--device requested` (auto | cuda | cpu).

    Exits with a message naming `prog` when PyTorch is missing (`where` says where to run it instead) or when CUDA
    was asked for and is not there.
    """
    try:
        import torch
    except ImportError:
        sys.exit(f"{prog}: PyTorch is not installed for this Python (pip install torch, or run it {where})")
    device = requested
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{prog}: --device cuda, but torch.cuda.is_available() is False (no GPU or no CUDA build of PyTorch)")
    return torch, device


def add_output_options(parser):
    """--json (print one JSON object) and --out FILE (also write it there, the text still printed)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", help="also write the JSON object to this file (the text is printed)")


def measure_each(torch, device, items, measure, label):
    """measure(item) for each item; one that raises (out of memory, a backend that cannot run it) is recorded as
    {**label(item), "error": ...} and the rest go on. Returns (cases, errors)."""
    cases, errors = [], []
    for item in items:
        try:
            cases.append(measure(item))
        except Exception as e:
            errors.append({**label(item), "error": f"{type(e).__name__}: {e}"[:300]})
        if device == "cuda":
            torch.cuda.empty_cache()
    return cases, errors


def machine(torch, device):
    """The PyTorch version, device kind and GPU name every result carries."""
    return {"torch": torch.__version__, "device": device,
            "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None}


def report(result, args, lines):
    """Writes `result` to --out if given, then prints it as JSON (--json) or prints `lines`."""
    import json
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for line in lines:
        print(line)
