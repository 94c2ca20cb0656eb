"""The comparative report's interpretation: labels of rows and the summary row.

A value is *Good* at or above its threshold, *Fair* at or above half of it, else *Needs
improvement* (:func:`metrics_core.report.interpret`); a row's label is the worst label of
its measures; the summary's overall label is *Efficient* when every mean is Good, *Needs
improvement* when any mean is, else *Acceptable*.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from metrics_core.report import DEFAULT_GOOD_THRESHOLDS, LABELS, interpret, row_label

__all__ = ["REPORT_MEASURES", "OVERALL_LABELS", "overall_label", "summarize_rows", "row_label",
           "DEFAULT_GOOD_THRESHOLDS"]

#: The report's measures (MRR is the mean of RR) and their "Good" thresholds.
REPORT_MEASURES = ("RR", "nDCG@10", "P@5")
OVERALL_LABELS = {LABELS[0]: "Efficient", LABELS[1]: "Acceptable", LABELS[2]: "Needs improvement"}


def overall_label(means: Mapping[str, float], thresholds: Mapping[str, float]) -> str:
    """Efficient (every mean Good), Needs improvement (any mean Needs improvement),
    else Acceptable; "" when no measure has a threshold.

    >>> overall_label({"RR": 0.694, "nDCG@10": 0.66, "P@5": 0.533}, DEFAULT_GOOD_THRESHOLDS)
    'Acceptable'
    """
    worst = row_label(means, thresholds)
    return OVERALL_LABELS.get(worst, "")


def summarize_rows(rows: pd.DataFrame, measures: Iterable[str], thresholds: Mapping[str, float],
                   per_query: bool = False) -> dict:
    """``{"count", "means", "labels", "label"}`` of report rows (NaN cells are skipped)."""
    measures = list(measures)
    means = {}
    for m in measures:
        col = rows[m].to_numpy(dtype=float) if m in rows.columns and len(rows) else np.array([])
        col = col[~np.isnan(col)]
        means[m] = float(col.mean()) if col.size else float("nan")
    labels = {m: interpret(means[m], thresholds[m]) for m in measures if m in thresholds}
    return {"count": int(len(rows)), "per_query": bool(per_query), "means": means, "labels": labels,
            "label": overall_label(means, thresholds)}
