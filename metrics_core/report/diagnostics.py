"""The data diagnostics table: per run, what was read and what the evaluation had to decide."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd


def diagnostic_measures(k: int) -> list[str]:
    """The measures :func:`diagnostics_table` reads: ``Judged@k``, ``P@k`` and ``NumRet``.

    >>> diagnostic_measures(10)
    ['Judged@10', 'P@10', 'NumRet']
    """
    return [f"Judged@{k}", f"P@{k}", "NumRet"]


def diagnostics_table(evaluations: Mapping, k: int, runs: Mapping | None = None) -> pd.DataFrame:
    """One row per run: lines, queries evaluated, missing / extra queries, duplicates, tie
    groups straddling the cutoff, mean Judged@k and queries with unjudged documents in the top k.

    Parameters
    ----------
    evaluations : mapping
        Run name -> Evaluation of (at least) :func:`diagnostic_measures` ``(k)``.
    k : int
        The cutoff of the tie and judged columns.
    runs : mapping, optional
        Run name -> the Run evaluated; its number of lines fills ``lines`` (left out
        when not given).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``run``; columns ``lines`` (with ``runs``), ``queries evaluated``,
        ``missing queries``, ``extra queries``, ``duplicates``,
        ``tied groups straddling @k``, ``Judged@k (mean)`` (NaN without queries) and
        ``queries with unjudged in top k`` (Judged@k below 1). Empty without evaluations.

    Examples
    --------
    >>> import metrics_core as mc
    >>> ev = mc.evaluate({"q1": {"d1": 1}, "q2": {"d1": 1}},
    ...                  {"q1": {"d1": 2.0, "d2": 2.0}, "q3": {"d1": 1.0}}, diagnostic_measures(2))
    >>> diagnostics_table({"r": ev}, 2).to_dict(orient="records")[0]  # doctest: +NORMALIZE_WHITESPACE
    {'queries evaluated': 1, 'missing queries': 1, 'extra queries': 1, 'duplicates': 0,
     'tied groups straddling @2': 0, 'Judged@2 (mean)': 0.5, 'queries with unjudged in top 2': 1}
    """
    rows = []
    for name, ev in evaluations.items():
        d = ev.diagnostics
        judged = ev.per_query[f"Judged@{k}"]
        row = {"run": name}
        if runs is not None:
            row["lines"] = len(runs[name])
        row.update(
            {
                "queries evaluated": d["num_queries"],
                "missing queries": len(d["missing_queries"]),
                "extra queries": len(d["extra_queries"]),
                "duplicates": d["duplicates"],
                f"tied groups straddling @{k}": d["ties_straddling"].get(str(k), 0),
                f"Judged@{k} (mean)": float(np.mean(judged)) if len(judged) else float("nan"),
                f"queries with unjudged in top {k}": int((judged < 1).sum()),
            }
        )
        rows.append(row)
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).set_index("run")


def common_queries(evaluation) -> int:
    """How many evaluated queries the run and the qrels share: the evaluated queries less
    those the run lacks (counted in only under ``missing_queries="zero"``).

    0 means the run answers none of the judged queries (a wrong file, or ids written
    differently): every value of it is empty (``"skip"``) or 0 (``"zero"``).

    Examples
    --------
    >>> import metrics_core as mc
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d1": 1}}
    >>> common_queries(mc.evaluate(qrels, {"q1": {"d1": 1.0}, "x": {"d1": 1.0}}, ["P@5"]))
    1
    >>> common_queries(mc.evaluate(qrels, {"x": {"d1": 1.0}}, ["P@5"], missing_queries="zero"))
    0
    """
    missing = set(evaluation.diagnostics.get("missing_queries", ()))
    return sum(1 for q in evaluation.evaluated_ids if q not in missing)


__all__ = ["common_queries", "diagnostic_measures", "diagnostics_table"]
