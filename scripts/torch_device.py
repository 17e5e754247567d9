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
