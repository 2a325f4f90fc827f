"""Deterministic test tensors shared by the ranks and the checker."""
import numpy as np


def _rng(*key):
    return np.random.default_rng(list(key))


def initial(param, shape, kind):
    """Initial parameter (kind 0) or momentum (kind 1)."""
    return _rng(1, param, kind).uniform(-1, 1, shape).astype(np.float32)


def gradient_term(param, shape, step, term):
    """Term `term` of the gradient of `param` at `step` (a gradient without
    partial placements has the one term 0)."""
    return _rng(2, param, step, term).uniform(-1, 1, shape).astype(np.float32)
