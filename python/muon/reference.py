"""The single-device Muon step in NumPy float64, written from the
semantics in docs/muon-dialect.md (not from the compiler): the reference a
distributed step is compared against (fp32 results within 1e-5).

    new_p, new_m = muon_step(p, g, m, lr=0.02, weight_decay=0.01)

Hyper-parameters are named as in :class:`muon.StepBuilder`; defaults are
the ``muon.step`` attribute defaults.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import numpy as np

QUINTIC = (3.4445, -4.7750, 2.0315)


def newton_schulz(u: np.ndarray, ns_steps: int = 5,
                  ns_coefficients: Sequence = QUINTIC,
                  eps: float = 1e-7) -> np.ndarray:
    """Orthogonalises the last two dims of ``u`` (leading dims are a batch),
    in float64."""
    coeffs = np.asarray(ns_coefficients, dtype=np.float64).reshape(-1, 3)
    if len(coeffs) not in (1, ns_steps):
        raise ValueError(f"{len(coeffs)} coefficient triples for "
                         f"{ns_steps} steps")
    u = np.asarray(u, dtype=np.float64)
    if u.ndim > 2:
        return np.stack([newton_schulz(x, ns_steps, ns_coefficients, eps)
                         for x in u.reshape(-1, *u.shape[-2:])]
                        ).reshape(u.shape)
    x = u
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    norm = np.linalg.norm(x) + eps
    # An all-zero matrix with eps = 0 stays zero (0 / 0 would be NaN); a
    # NaN norm still makes the result NaN.
    x = np.zeros_like(x) if norm == 0 else x / norm
    for i in range(ns_steps):
        a, b, c = coeffs[i if len(coeffs) > 1 else 0]
        A = x @ x.T
        B = b * A + c * (A @ A)
        x = a * x + B @ x
    return x.T if tall else x


def lr_scale(shape: Sequence[int], lr_adjust: str = "original") -> float:
    m, n = shape[-2], shape[-1]
    if lr_adjust == "original":
        return math.sqrt(max(1.0, m / n))
    if lr_adjust == "match_rms_adamw":
        return 0.2 * math.sqrt(max(m, n))
    if lr_adjust == "spectral_unclamped":
        return math.sqrt(m / n)
    raise ValueError(f"unknown lr_adjust '{lr_adjust}'")


def muon_step(p, g, m, *, lr: float, momentum: float = 0.95,
              nesterov: bool = True, ns_steps: int = 5,
              ns_coefficients: Sequence = QUINTIC, eps: float = 1e-7,
              weight_decay: float = 0.0, lr_adjust: str = "original",
              momentum_form: str = "lerp",
              split: Optional[Tuple[int, Sequence[int]]] = None
              ) -> Tuple[np.ndarray, np.ndarray]:
    """One step for one parameter: returns (new parameter, new momentum),
    float64. ``split = (d, sizes)`` orthogonalises each matrix in
    consecutive blocks of ``sizes`` along dim ``d`` (one of the last two),
    each scaled for its own shape."""
    p, g, m = (np.asarray(x, dtype=np.float64) for x in (p, g, m))
    beta = momentum
    if momentum_form == "lerp":
        m2 = m + (1 - beta) * (g - m)
        u = g + beta * (m2 - g) if nesterov else m2
    elif momentum_form == "sum":
        m2 = beta * m + g
        u = g + beta * m2 if nesterov else m2
    else:
        raise ValueError(f"unknown momentum_form '{momentum_form}'")
    if split is None:
        o = newton_schulz(u, ns_steps, ns_coefficients, eps) * \
            lr_scale(p.shape, lr_adjust)
    else:
        dim, sizes = split
        o = np.empty_like(u)
        at = 0
        for size in sizes:
            index = [slice(None)] * u.ndim
            index[dim] = slice(at, at + size)
            block = u[tuple(index)]
            o[tuple(index)] = newton_schulz(block, ns_steps, ns_coefficients,
                                            eps) * lr_scale(block.shape,
                                                            lr_adjust)
            at += size
    p2 = p * (1 - lr * weight_decay) - lr * o
    return p2, m2
