#!/usr/bin/env python3
"""Reads muon-run --dump output without numpy (plain .npy 1.0 parsing) and
checks it: file set per parameter, shapes, and that each step's distributed
result matches the reference like numpy.allclose(rtol=atol=1e-5)."""
import ast, glob, os, struct, sys

def load(path):
    with open(path, "rb") as f:
        assert f.read(8) == b"\x93NUMPY\x01\x00", path
        (n,) = struct.unpack("<H", f.read(2))
        header = ast.literal_eval(f.read(n).decode())
        assert header["descr"] == "<f4" and not header["fortran_order"]
        data = f.read()
    count = 1
    for s in header["shape"]:
        count *= s
    assert len(data) == 4 * count, path
    return header["shape"], struct.unpack(f"<{count}f", data)

def main():
    d, steps = sys.argv[1], int(sys.argv[2])
    names = sorted({os.path.basename(p).rsplit(".", 2)[0] for p in glob.glob(f"{d}/*.npy")})
    for name in names:
        what = ["param_init", "momentum_init"] + [
            f"{k}_step{t}" for t in range(steps)
            for k in ("grad", "param", "momentum", "ref_param", "ref_momentum")]
        shapes = set()
        for w in what:
            shapes.add(load(f"{d}/{name}.{w}.npy")[0])
        assert len(shapes) == 1, (name, shapes)
        worst = 0.0
        for t in range(steps):
            for k in ("param", "momentum"):
                _, got = load(f"{d}/{name}.{k}_step{t}.npy")
                _, ref = load(f"{d}/{name}.ref_{k}_step{t}.npy")
                for g, r in zip(got, ref):
                    assert abs(g - r) <= 1e-5 + 1e-5 * abs(r), (name, k, t, g, r)
                    worst = max(worst, abs(g - r))
        print(f"{name} {'x'.join(map(str, shapes.pop()))} {len(what)} files ok")


if __name__ == "__main__":
    main()
