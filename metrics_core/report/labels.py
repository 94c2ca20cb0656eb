"""Interpretation labels of the reports (Good, Fair, Needs improvement), their default
thresholds, the measures of the interpreted reports and the run colours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sized

import numpy as np

#: Run colours, in run order (colour-blind friendly: blue, orange, teal, red, purple, grey,
#: ochre, pink): the HTML report's and the app's one palette.
PALETTE = ("#3559e0", "#e07a35", "#2a9d8f", "#c0392b", "#8e44ad", "#7f8c8d", "#d4a017", "#d63384")

#: The measures of the interpreted reports (comparative report, history): MRR, nDCG@10, P@5.
REPORT_MEASURES = ("RR", "nDCG@10", "P@5")
# Interpretation labels: a value at or above its threshold is "Good".
DEFAULT_GOOD_THRESHOLDS = {"RR": 0.7, "nDCG@10": 0.6, "P@5": 0.5}
LABELS = ("Good", "Fair", "Needs improvement")


#: A measure's threshold: its "Good" bound, or the pair ``(good, fair)``.
Threshold = float | tuple[float, float]


def bounds(threshold: Threshold, fair_ratio: float = 0.5) -> tuple[float, float]:
    """``(good, fair)`` of a threshold: a pair as given, a single number ``good`` with
    ``fair = good * fair_ratio``.

    >>> bounds(0.7), bounds((0.7, 0.5)), bounds(0.6, 0.8)
    ((0.7, 0.35), (0.7, 0.5), (0.6, 0.48))
    """
    if isinstance(threshold, (tuple, list)):
        good, fair = threshold
        return float(good), float(fair)
    return float(threshold), float(threshold) * fair_ratio


def interpret(value: float, good: Threshold, fair_ratio: float = 0.5) -> str:
    """The interpretation label of one value: Good at or above ``good``, Fair at or above
    the fair bound (``good * fair_ratio``, or the second number when ``good`` is a pair
    ``(good, fair)``, see :func:`bounds`), else Needs improvement; NaN gives "".

    >>> interpret(0.75, 0.7), interpret(0.4, 0.7), interpret(0.2, 0.7)
    ('Good', 'Fair', 'Needs improvement')
    >>> interpret(0.4, (0.7, 0.5))
    'Needs improvement'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    top, fair = bounds(good, fair_ratio)
    if value >= top:
        return LABELS[0]
    if value >= fair:
        return LABELS[1]
    return LABELS[2]


def worst_labels(
    columns: Mapping[str, Sized], thresholds: Mapping[str, Threshold], fair_ratio: float = 0.5
) -> np.ndarray:
    """Per row, the worst :func:`interpret` label over the measures that have a threshold
    ("" when none has a value): the row's interpretation (its worst label), for all rows at once.

    ``columns`` maps a measure to its values (one per row); NaN and None are skipped.
    ``thresholds`` maps a measure to its threshold (a number or a pair, see :func:`bounds`).

    >>> worst_labels({"RR": [0.8, 0.8, float("nan")], "P@5": [0.6, 0.3, float("nan")]},
    ...              {"RR": 0.7, "P@5": 0.5}).tolist()
    ['Good', 'Fair', '']
    """
    n = len(next(iter(columns.values()))) if columns else 0
    worst = np.full(n, -1)  # index into LABELS; -1: no label yet
    for measure, values in columns.items():
        if measure not in thresholds:
            continue
        v = np.asarray(values, dtype=float)
        good, fair = bounds(thresholds[measure], fair_ratio)
        rank = np.where(v >= good, 0, np.where(v >= fair, 1, 2))
        rank[np.isnan(v)] = -1
        np.maximum(worst, rank, out=worst)
    return np.array([*LABELS, ""], dtype=object)[worst]


def row_label(
    values: Mapping[str, float], thresholds: Mapping[str, Threshold], fair_ratio: float = 0.5
) -> str:
    """The worst label of one row's measures (see :func:`worst_labels`).

    >>> row_label({"RR": 0.833, "nDCG@10": 0.72, "P@5": 0.6}, DEFAULT_GOOD_THRESHOLDS)
    'Good'
    >>> row_label({"RR": 0.25, "nDCG@10": 0.41, "P@5": 0.2}, DEFAULT_GOOD_THRESHOLDS)
    'Needs improvement'
    """
    return str(worst_labels({m: [v] for m, v in values.items()}, thresholds, fair_ratio)[0])
