"""The tables of a hash-code evaluation, ready for the shared exporters.

:func:`hashing_tables` turns what :func:`metrics_core.hashing.evaluate.evaluate_hashing`
returns into plain DataFrames (the Hash codes page's numbers: the summary, AP per query,
P@k, precision and recall by Hamming radius, mAP per class), so that
:func:`metrics_core.report.format_table` exports them to CSV, JSON, Markdown and LaTeX like
every other table; :func:`hashing_settings` is their provenance. Pure pandas: no torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import N_

#: The settings of an evaluation that every export states (its provenance).
SETTINGS = ("ties", "topk", "radius", "n_queries", "n_db", "bits", "zero_relevant_queries")


#: The tie rules in words (marked for the catalogs; translated where shown).
TIE_RULE_NAMES = {
    "expected": N_("expected (random tie order)"),
    "optimistic": N_("optimistic (relevant first)"),
    "pessimistic": N_("pessimistic (relevant last)"),
    "stable": N_("stable (database order)"),
}


#: The rule of precision within a Hamming radius, in words: every place that shows it (the
#: page's headline, the radius table, the summary and their exports) follows it.
RADIUS_RULE = N_(
    "Precision within a Hamming radius: a query with no code within it counts 0 (DeepHash's "
    "rule); where no query has one, the radius retrieves nothing and its precision is "
    "undefined (–)."
)


def _same(text: str) -> str:
    return text


def radius_precision(precision: float, empty: int, n_queries: int) -> float:
    """Precision within a Hamming radius under :data:`RADIUS_RULE`: the mean over the queries
    (``precision``, a query with no code within the radius counting 0, as DeepHash counts it),
    or NaN when none of the ``n_queries`` has a code within it (``empty`` of them have none):
    the radius retrieved nothing, and 0 would read as "everything retrieved was wrong".

    >>> radius_precision(0.25, 1, 4), radius_precision(0.0, 4, 4)
    (0.25, nan)
    """
    return math.nan if n_queries and empty >= n_queries else float(precision)


def radius_note(empty: int, n_queries: int, gettext=_same, number=str) -> str:
    """The note beside a precision within a Hamming radius (:data:`RADIUS_RULE`): how many
    queries have no code within it ("" when every query has one). ``number`` writes the
    counts (the app groups their digits in the visitor's language).

    >>> radius_note(1, 4), radius_note(4, 4), radius_note(0, 4)
    ('1 of 4 queries have no code within the radius (counted as 0)', 'no query has a code within the radius: it retrieves nothing, and its precision is undefined', '')
    """
    if not empty:
        return ""
    if n_queries and empty >= n_queries:
        return gettext(
            N_(
                "no query has a code within the radius: it retrieves nothing, and its "
                "precision is undefined"
            )
        )
    return gettext(
        N_("{n} of {total} queries have no code within the radius (counted as 0)")
    ).format(n=number(empty), total=number(n_queries))


def _summary(result: Mapping, _=_same) -> pd.DataFrame:
    topk = result.get("topk")
    name = f"mAP@{topk}" if topk else "mAP"
    lo, hi = result["map_band"]
    rule = result["ties"]
    rows = [
        (name, result["map"], _("ties: {rule}").format(rule=_(TIE_RULE_NAMES.get(rule, rule)))),
        (
            _("{measure}, relevant items last among ties").format(measure=name),
            lo,
            _("the lowest any tie order gives"),
        ),
        (
            _("{measure}, relevant items first among ties").format(measure=name),
            hi,
            _("the highest any tie order gives"),
        ),
    ]
    rows += [(f"P@{k}", v, "") for k, v in result["precision_at_k"].items()]
    rad = result["radius"]
    empty, nq = result.get("empty_radius_queries", 0), result["n_queries"]
    rows += [
        (
            _("Precision within Hamming radius {radius}").format(radius=rad),
            radius_precision(result["precision_radius"], empty, nq),
            radius_note(empty, nq, _),
        ),
        (
            _("Recall within Hamming radius {radius}").format(radius=rad),
            result["recall_radius"],
            "",
        ),
    ]
    return pd.DataFrame(rows, columns=["measure", "value", "note"])


def hashing_tables(
    result: Mapping, query_ids: Sequence | None = None, gettext=None
) -> dict[str, pd.DataFrame]:
    """Every table of a hash-code evaluation, for export.

    Parameters
    ----------
    result : mapping
        What :func:`~metrics_core.hashing.evaluate.evaluate_hashing` returned.
    query_ids : sequence, optional
        A name per query, in the order of the query codes (default: ``1 .. n``, the
        query's row number in the codes file).
    gettext : callable, optional
        A translation function (str -> str) for the summary's words (its measure
        descriptions and notes); English without it. Column names, measure names
        (mAP, P@k) and numbers stay as they are.

    Returns
    -------
    dict of DataFrame
        * ``"summary"``: measure, value, note -- mAP (or mAP@K) under the chosen tie rule,
          the two ends of its tie band, P@k for each k, precision and recall within the
          Hamming radius;
        * ``"per_query"``: query, AP (under the chosen tie rule);
        * ``"precision_at_k"``: k, precision;
        * ``"by_radius"``: radius, precision, recall (the mean over queries of the items
          within each Hamming radius; precision by :func:`radius_precision`, as in the
          summary);
        * ``"per_class"``: class, mAP (single-label data; empty otherwise).

        Numbers are floats at full precision (the exporters round for people and keep
        every digit in CSV and JSON); a value that is undefined (e.g. mAP with every query
        left out) is NaN, which the exporters print as a dash or an empty CSV cell.

    Raises
    ------
    ValueError
        ``query_ids`` of the wrong length.

    Examples
    --------
    >>> from metrics_core.hashing.evaluate import evaluate_hashing
    >>> res = evaluate_hashing([[1, 1], [-1, 1]], [[1, 1], [1, -1], [-1, -1]], [0, 1], [0, 1, 0], ks=(1,))
    >>> t = hashing_tables(res, ["qa", "qb"])
    >>> sorted(t)
    ['by_radius', 'per_class', 'per_query', 'precision_at_k', 'summary']
    >>> t["per_query"].round(4).values.tolist()   # qb's one relevant item is third (distance 2)
    [['qa', 0.8333], ['qb', 0.3333]]
    >>> t["summary"]["measure"].tolist()[:4]
    ['mAP', 'mAP, relevant items last among ties', 'mAP, relevant items first among ties', 'P@1']
    >>> t["summary"]["note"][0]
    'ties: expected (random tie order)'
    >>> from metrics_core.report.catalogs import translations
    >>> hashing_tables(res, gettext=translations("es").gettext)["summary"]["note"].tolist()[:3]
    ['empates: esperado (orden aleatorio de empates)', 'el mínimo que da cualquier orden de los empates', 'el máximo que da cualquier orden de los empates']
    """
    ap = np.asarray(result["ap"], dtype=np.float64)
    if query_ids is None:
        query_ids = list(range(1, len(ap) + 1))
    elif len(query_ids) != len(ap):
        raise ValueError(f"{len(query_ids)} query ids for {len(ap)} queries")
    pr = result["pr_by_radius"]
    nq = result["n_queries"]
    empty = pr.get("empty") or [0] * len(pr["radius"])
    per_class = result.get("per_class_map") or {}
    return {
        "summary": _summary(result, gettext or _same),
        "per_query": pd.DataFrame({"query": list(query_ids), "AP": ap}),
        "precision_at_k": pd.DataFrame(
            {
                "k": [int(k) for k in result["precision_at_k"]],
                "precision": [float(v) for v in result["precision_at_k"].values()],
            }
        ),
        "by_radius": pd.DataFrame(
            {
                "radius": [int(r) for r in pr["radius"]],
                "precision": np.array(
                    [
                        radius_precision(p, e, nq)
                        for p, e in zip(pr["precision"], empty, strict=True)
                    ],
                    dtype=np.float64,
                ),
                "recall": np.asarray(pr["recall"], dtype=np.float64),
            }
        ),
        "per_class": pd.DataFrame(
            {"class": list(per_class), "mAP": [float(v) for v in per_class.values()]},
            columns=["class", "mAP"],
        ),
    }


def hashing_settings(result: Mapping, gettext=None, **extra) -> dict:
    """The settings of an evaluation (:data:`SETTINGS`, plus ``extra`` such as the
    normalizer or the data source) for :func:`metrics_core.report.provenance`; ``gettext``
    translates the one word among the values ("whole ranking", when there is no K).

    >>> hashing_settings({"ties": "expected", "topk": None, "radius": 2, "n_queries": 3, "n_db": 10,
    ...                   "bits": 16, "zero_relevant_queries": 0}, normalizer="retrieved")["topk"]
    'whole ranking'
    """
    out = {k: result.get(k) for k in SETTINGS}
    out["topk"] = out["topk"] or (gettext or _same)(N_("whole ranking"))
    out.update(extra)
    return out


__all__ = [
    "hashing_tables",
    "hashing_settings",
    "radius_note",
    "radius_precision",
    "RADIUS_RULE",
    "SETTINGS",
    "TIE_RULE_NAMES",
]
