#!/usr/bin/env python3
"""Newton-Schulz on the GPU: ours vs the PyTorch eager reference vs a plain
cuBLAS GEMM chain, in one process, on the same inputs.

  python3 bench/gpu/ns.py --lib build-cuda/lib/libmuon_runtime_cuda.so

Rows (5 iterations, the quintic coefficients, fp32 input in device memory):
  torch   the published PyTorch reference (zeropower_via_newtonschulz5,
          bf16, eager)
  chain   our library with whole products (MUON_CUDA_TILE_FULL): three
          cuBLAS GEMMs per iteration, scalars fused, no symmetry
  ours    our library's default: symmetric products by lower tiles
  tile=T  our library with tile size T (the sweep behind the default)
  G/S     our library with tile G for A = X X^T and S for A A (--pairs;
          "p" is a whole product)
TFLOP/s counts the standard 4 m^2 n + 2 m^3 per iteration (m <= n) for
every row, so a row above the plain GEMM peak measured in the same run did
less work than the count. Accuracy: relative Frobenius error against a
float64 run of the same iteration on the GPU.
"""

import argparse
import ctypes
import statistics
import sys

import torch

QUINTIC = (3.4445, -4.7750, 2.0315)
SHAPES = [(1024, 1024), (4096, 4096), (4096, 14336), (8192, 8192),
          (8192, 28672)]
FP32, BF16 = 0, 1
TILE_AUTO, TILE_FULL = 0, -1


def zeropower_via_newtonschulz5(G, steps=5):
    """The reference as the Muon authors publish it (bf16, eager)."""
    a, b, c = QUINTIC
    X = G.bfloat16()
    if G.size(-2) > G.size(-1):
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def float64_ns(G, steps=5):
    """The same iteration in float64 (the accuracy yardstick). Not shared
    with the function above, which stays as published."""
    a, b, c = QUINTIC
    X = G.double()
    if G.size(-2) > G.size(-1):
        X = X.mT
    X = X / (X.norm() + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


class Library:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.muon_cuda_ns_create.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.c_void_p]
        L.muon_cuda_ns_error.restype = ctypes.c_char_p
        L.muon_cuda_ns_error.argtypes = [ctypes.c_void_p]
        L.muon_cuda_ns.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_double),
            ctypes.c_int64, ctypes.c_double, ctypes.c_int, ctypes.c_int64]
        # A library from before the tile pair (to compare builds) has none.
        self.pairs = hasattr(L, "muon_cuda_ns_tiles")
        if self.pairs:
            L.muon_cuda_ns_tiles.argtypes = L.muon_cuda_ns.argtypes + [
                ctypes.c_int64]
        L.muon_cuda_ns_auto_tile.restype = ctypes.c_int64
        L.muon_cuda_ns_auto_tile.argtypes = [ctypes.c_int64, ctypes.c_int]
        self.ctx = ctypes.c_void_p()
        stream = torch.cuda.current_stream().cuda_stream
        if L.muon_cuda_ns_create(ctypes.byref(self.ctx), stream) != 0:
            sys.exit("create: " + L.muon_cuda_ns_error(None).decode())
        self.coeffs = (ctypes.c_double * 3)(*QUINTIC)

    def ns(self, x, precision, tile, steps=5):
        """`tile`: one value for both products, or a (gram, square) pair."""
        m, n = x.shape[-2], x.shape[-1]
        batch = x.numel() // (m * n)
        if isinstance(tile, tuple):
            rc = self.lib.muon_cuda_ns_tiles(self.ctx, x.data_ptr(), batch, m,
                                             n, steps, self.coeffs, 3, 1e-7,
                                             precision, *tile)
        else:
            rc = self.lib.muon_cuda_ns(self.ctx, x.data_ptr(), batch, m, n,
                                       steps, self.coeffs, 3, 1e-7,
                                       precision, tile)
        if rc != 0:
            sys.exit("muon_cuda_ns: " +
                     self.lib.muon_cuda_ns_error(self.ctx).decode())
        return x


def time_ms(fn, inputs, reps, windows=5):
    """Median over `windows` of the mean time of `reps` calls (CUDA events),
    rotating over `inputs` so that no call reads what the last one left in
    the cache."""
    for i in range(3):
        fn(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    samples = []
    for _ in range(windows):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(reps):
            fn(inputs[i % len(inputs)])
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / reps)
    return statistics.median(samples)


def rel_error(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libmuon_runtime_cuda.so")
    ap.add_argument("--shapes", default="",
                    help="m x n list, e.g. 1024x1024,8192x8192 (default: "
                         "the five benchmark shapes)")
    ap.add_argument("--sweep", action="store_true",
                    help="also time every valid tile size")
    ap.add_argument("--pairs", action="store_true",
                    help="also time every pair of tile sizes (one for each "
                         "symmetric product)")
    ap.add_argument("--fp32", action="store_true",
                    help="also time the fp32 (no TF32) mode")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return 0
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(v) for v in s.split("x"))
                  for s in args.shapes.split(",")]
    lib = Library(args.lib)
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")

    # The plain GEMM peak of this run: bf16 8192^3 through torch.mm.
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    ms = time_ms(lambda _: torch.mm(a, b), [None], 20)
    peak = 2 * 8192 ** 3 / ms / 1e9
    print(f"plain GEMM peak (torch.mm bf16 8192^3): {peak:.0f} TFLOP/s")
    del a, b

    rows = []
    for m, n in shapes:
        p, q = min(m, n), max(m, n)
        flops = 5 * (4 * p * p * q + 2 * p ** 3)
        reps = max(2, min(50, int(2e13 / flops)))
        inputs = [torch.randn(m, n, device="cuda") for _ in range(3)]
        ref64 = float64_ns(inputs[0])
        err_torch = rel_error(zeropower_via_newtonschulz5(inputs[0]), ref64)
        variants = [("torch", None, None), ("chain", BF16, TILE_FULL),
                    ("ours", BF16, TILE_AUTO)]
        if args.sweep:
            for t in (256, 512, 1024, 2048):
                if t < p and p % t == 0:
                    variants.append((f"tile={t}", BF16, t))
        if args.pairs and not lib.pairs:
            sys.exit("--pairs: this library has no muon_cuda_ns_tiles")
        if args.pairs:
            sizes = [t for t in (256, 512, 1024, 2048) if t < p and p % t == 0]
            sizes.append(TILE_FULL)
            label = lambda t: "p" if t == TILE_FULL else str(t)
            for g in sizes:
                for sq in sizes:
                    variants.append((f"{label(g)}/{label(sq)}", BF16, (g, sq)))
        if args.fp32:
            variants.append(("fp32", FP32, TILE_AUTO))
        result = {}
        for name, prec, tile in variants:
            if prec is None:
                fn = zeropower_via_newtonschulz5
                err = err_torch
            else:
                fn = (lambda x, prec=prec, tile=tile: lib.ns(x, prec, tile))
                x = inputs[0].clone()
                err = rel_error(lib.ns(x, prec, tile), ref64)
            ms = time_ms(fn, [x.clone() for x in inputs], reps)
            result[name] = ms
            rows.append((f"{m}x{n}", name, ms, flops / ms / 1e9,
                         result["torch"] / ms, err))
        del inputs, ref64
        torch.cuda.empty_cache()

    auto = {f"{m}x{n}": lib.lib.muon_cuda_ns_auto_tile(min(m, n), BF16)
            for m, n in shapes}
    print()
    print(f"{'shape':>12} {'variant':>10} {'ms':>9} {'TFLOP/s':>8} "
          f"{'vs torch':>9} {'rel err':>9}")
    for shape, name, ms, tflops, speedup, err in rows:
        label = name if name != "ours" else f"ours(t={auto[shape]})"
        print(f"{shape:>12} {label:>10} {ms:9.3f} {tflops:8.0f} "
              f"{speedup:8.2f}x {err:9.2e}")
    print(f"(TFLOP/s: standard count; plain GEMM peak this run: "
          f"{peak:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
