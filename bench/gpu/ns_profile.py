#!/usr/bin/env python3
"""Where one Newton-Schulz call of our library spends its GPU time, kernel
by kernel (torch.profiler over CUPTI), for the tiles it picks by default.

  python3 bench/gpu/ns_profile.py --lib build-cuda/lib/libmuon_runtime_cuda.so

Per shape: each kernel's total time per call (mean over the profiled calls),
its share of the call's kernel time, and its launches per call. The cuBLAS
kernels are the products; completeSymmetric mirrors A and B (and copies A);
sumSquares/inverseNorms (the norm) and convert/transposeConvert (pack and
unpack) are the ends; the last line splits the time between cuBLAS and
our kernels. Two builds of the library compare by running this once with
each --lib.
"""

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ns import BF16, TILE_AUTO, Library  # noqa: E402

CALLS = 5


def kernel_times(lib, x, tile):
    """{kernel name: (total us per call, launches per call)} for `tile`."""
    for _ in range(2):
        lib.ns(x, BF16, tile)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            lib.ns(x, BF16, tile)
        torch.cuda.synchronize()
    times = {}
    for avg in prof.key_averages():
        if avg.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = getattr(avg, "self_device_time_total", None)
        if us is None:
            us = avg.self_cuda_time_total
        times[avg.key] = (us / CALLS, avg.count / CALLS)
    if not times:
        sys.exit("the profiler recorded no CUDA kernels")
    return times


# Our kernels (runtime/cuda/lib/Kernels.cu); everything else the call
# launches is cuBLAS's (the products, and its memsets).
OURS = ("completeSymmetric", "sumSquares", "inverseNorms",
        "transposeConvert", "convert", "scaleInPlace")


def short(name):
    """Our kernel's name, or the first 60 characters of cuBLAS's."""
    for key in OURS:
        if key + "<" in name or key + "(" in name:
            return key
    return name[:60]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libmuon_runtime_cuda.so")
    ap.add_argument("--shapes", default="8192x8192,4096x14336,16x256x688",
                    help="[batch x] m x n list")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return 0
    lib = Library(args.lib)
    torch.manual_seed(0)
    for s in args.shapes.split(","):
        dims = [int(v) for v in s.split("x")]
        x = torch.randn(*dims, device="cuda")
        m, n = dims[-2:]
        times = kernel_times(lib, x, TILE_AUTO)
        total = sum(us for us, _ in times.values())
        print(f"\n{s}: {total / 1000:.3f} ms of kernels per call")
        for name, (us, n_) in sorted(times.items(), key=lambda kv: -kv[1][0]):
            print(f"  {us / 1000:8.3f} ms {100 * us / total:5.1f}% "
                  f"x{n_:<4g} {short(name)}")
        ours = sum(us for name, (us, _) in times.items()
                   if short(name) in OURS)
        print(f"  products (cuBLAS) {100 * (total - ours) / total:.1f}%, "
              f"our kernels {100 * ours / total:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
