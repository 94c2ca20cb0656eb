"""Reference ranges of the evidence-retrieval audit specification, as editable data.

``REFERENCE_RANGES[metric] = {"baseline": (low, high), "good": (low, high)}``. The
pages draw them as shaded bands and let the user edit a copy; nothing here judges a
value by itself. The numbers are the audit specification's, for its pipeline; other
datasets need their own.

>>> REFERENCE_RANGES["AUROC"]["good"]
(0.7, 0.8)
"""

from __future__ import annotations

import copy

REFERENCE_RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "nDCG@10": {"baseline": (0.70, 0.80), "good": (0.85, 0.90)},
    "Recall@10": {"baseline": (0.75, 0.85), "good": (0.90, 0.95)},
    "MRR@10": {"baseline": (0.65, 0.75), "good": (0.80, 0.90)},
    "AUROC": {"baseline": (0.55, 0.65), "good": (0.70, 0.80)},
    "TPR@5%FPR": {"baseline": (0.08, 0.15), "good": (0.20, 0.35)},
}


def default_ranges() -> dict:
    """A fresh, editable copy of :data:`REFERENCE_RANGES`."""
    return copy.deepcopy(REFERENCE_RANGES)
