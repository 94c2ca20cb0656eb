"""The family of a multiple-comparison correction: which comparisons one correction covers.

Only tests of effectiveness are in a family: a measure the registry declares neither
higher- nor lower-is-better (NumQ, NumRet, NumRel, NumRelRet, Judged@k, Unjudged@k,
Hole@k ...) describes a run rather than judges it, so its p-values stay uncorrected and
never marked. The family's scope is named: ``"all"`` (every run x effectiveness measure
comparison of a table together; the default everywhere, :data:`DEFAULT_FAMILY`) or
``"per_measure"`` (each measure's comparisons apart, as PyTerrier's ``Experiment``
corrects). Numbers only; the words that state a family are
:func:`metrics_core.stats.comparison.family_sentence`'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.stats import significance as sig
from metrics_core.stats.direction import measure_direction

#: Scopes of the correction family: every (run, measure) pair together, or each measure apart
FAMILY_SCOPES = ("all", "per_measure")
#: The scope every page, command and export uses unless told otherwise
DEFAULT_FAMILY = "all"


def effectiveness_measures(measures) -> list[str]:
    """The measures whose comparisons are tests of effectiveness: those the registry
    declares higher- or lower-is-better (not counts or judgement coverage).

    >>> effectiveness_measures(["AP", "NumRet", "nDCG@10", "Judged@10", "NumQ", "FirstRel"])
    ['AP', 'nDCG@10', 'FirstRel']
    """
    return [m for m in measures if measure_direction(m) != 0]


def corrected_in_families(
    frame: pd.DataFrame, pvalues: np.ndarray, correction: str, family: str
) -> np.ndarray:
    """``pvalues`` (one per row of ``frame``) corrected within each family of ``family``'s
    scope; rows of measures outside the family (:func:`effectiveness_measures`) get NaN."""
    out = np.full(len(frame), np.nan)
    if not len(frame):
        return out
    measures = frame["measure"].to_numpy(dtype=object)
    inside = np.isin(measures, effectiveness_measures(list(dict.fromkeys(measures))))
    if family == "per_measure":
        families = [
            np.flatnonzero(inside & (measures == m)) for m in dict.fromkeys(measures[inside])
        ]
    else:
        families = [np.flatnonzero(inside)]
    for rows in families:
        if len(rows):
            out[rows] = sig.correct_pvalues(pvalues[rows], correction)
    return out


def correction_family(frame: pd.DataFrame) -> dict:
    """The comparisons one multiple-comparison correction covers in a table.

    A :func:`compare_runs` frame or a :func:`leaderboard` corrects each test's p-values
    over every (run, measure) pair it holds besides the baseline's own rows: R runs against
    the baseline times M measures. Two tables with the same runs, measures and settings give
    the same corrected p-value for a pair; a table with other runs or measures has another
    family, so its corrected p-value for the same pair differs (its uncorrected one does not).

    Only effectiveness measures are in the family (:func:`effectiveness_measures`); with
    ``family="per_measure"`` each measure's comparisons form a family of their own.

    Returns
    -------
    dict
        ``correction`` (the method's key), ``n`` (the number of comparisons in one family),
        ``runs`` (the runs compared with the baseline), ``measures`` (those in the family)
        and ``baseline``; ``scope`` (``"all"`` or ``"per_measure"``) and ``excluded`` (the
        measures outside the family).

    Examples
    --------
    >>> f = pd.DataFrame({"run": ["b", "c", "b", "c"], "measure": ["RR", "RR", "AP", "AP"]})
    >>> f.attrs.update(baseline="a", correction="holm")
    >>> correction_family(f)
    {'correction': 'holm', 'n': 4, 'runs': ['b', 'c'], 'measures': ['RR', 'AP'], 'baseline': 'a', \
'scope': 'all', 'excluded': []}
    """
    a = frame.attrs
    baseline = a.get("baseline")
    rows = frame[frame["run"] != baseline] if len(frame) else frame
    runs = list(dict.fromkeys(rows["run"])) if len(rows) else []
    every = list(dict.fromkeys(rows["measure"])) if len(rows) else list(a.get("measures", []))
    measures = effectiveness_measures(every)
    scope = a.get("family", DEFAULT_FAMILY)
    inside = int(rows["measure"].isin(measures).sum()) if len(rows) else 0
    n = len(runs) if scope == "per_measure" and measures else inside
    return {
        "correction": a.get("correction", "holm"),
        "n": int(n),
        "runs": runs,
        "measures": measures,
        "baseline": baseline,
        "scope": scope,
        "excluded": [m for m in every if m not in measures],
    }


__all__ = [
    "FAMILY_SCOPES",
    "DEFAULT_FAMILY",
    "effectiveness_measures",
    "corrected_in_families",
    "correction_family",
]
