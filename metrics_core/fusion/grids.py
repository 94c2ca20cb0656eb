"""ranx's tuning grids (``optimize_fusion``): weight vectors and parameter steps."""

from __future__ import annotations

from itertools import product

import numpy as np


def weight_grid(
    n_runs: int, step: float = 0.1, *, ranx_exact: bool = False
) -> list[tuple[float, ...]]:
    """Every vector of ``n_runs`` weights in multiples of ``step`` that sums to 1.

    By default counted in whole steps, so no combination is lost to rounding (66 vectors
    for 3 runs). ``ranx_exact``: ranx's own grid, the products of ``round(x, digits)`` for
    ``x`` in ``np.arange(0, 1 + step, step)`` whose floating sum is exactly ``1.0`` (ranx's
    test ``sum(seq) == 1.0`` drops some, e.g. ``(0.1, 0.2, 0.7)``), in ranx's order."""
    if ranx_exact:
        digits = str(step)[::-1].find(".")
        values = [round(float(x), digits) for x in np.arange(0, 1 + step, step)]
        return [seq for seq in product(*[values] * n_runs) if sum(seq) == 1.0]
    units = int(round(1 / step))
    out = []
    for combo in product(range(units + 1), repeat=n_runs):
        if sum(combo) == units:
            out.append(tuple(round(c * step, 10) for c in combo))
    return out


def steps(low: float, high: float, step: float) -> list[float]:
    """ranx's steps of a real parameter: ``round(x, digits)`` for ``x`` in
    ``np.arange(low, high + step, step)`` (``digits``: those of ``step``)."""
    digits = str(step)[::-1].find(".")
    return [round(float(x), digits) for x in np.arange(low, high + step, step)]


__all__ = ["weight_grid", "steps"]
