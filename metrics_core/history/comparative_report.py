"""The comparative report of saved evaluations (:meth:`metrics_core.history.HistoryStore.report`):
its rows, their labels and the summary row.

A value is *Good* at or above its threshold, *Fair* at or above half of it, else *Needs
improvement* (:func:`metrics_core.report.interpret`); a row's label is the worst label of
its measures; the summary's overall label is *Efficient* when every mean is Good, *Needs
improvement* when any mean is, else *Acceptable*.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import N_
from metrics_core.report.labels import (
    DEFAULT_GOOD_THRESHOLDS,
    LABELS,
    REPORT_MEASURES,
    Threshold,
    interpret,
    row_label,
    worst_labels,
)

__all__ = [
    "REPORT_MEASURES",
    "OVERALL_LABELS",
    "overall_label",
    "summarize_rows",
    "row_label",
    "DEFAULT_GOOD_THRESHOLDS",
    "comparative_report",
    "query_texts",
    "summary_text",
]

#: The overall verdict of the summary row, by the worst label of its means.
OVERALL_LABELS = {
    LABELS[0]: N_("Efficient"),
    LABELS[1]: N_("Acceptable"),
    LABELS[2]: N_("Needs improvement"),
}


def _english_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def summary_text(count: int, suites: int, per_query: bool = False, ngettext=None) -> str:
    """The summary row's words: how many rows and suites, e.g. "6 evaluations (1 suite)".

    ``ngettext``: a plural-aware translation function ``ngettext(singular, plural, n)``
    (the app's, or :func:`metrics_core.report.catalogs.translations`'s); English without it.

    >>> summary_text(6, 1), summary_text(1, 2, per_query=True)
    ('6 evaluations (1 suite)', '1 query evaluation (2 suites)')
    >>> from metrics_core.report.catalogs import translations
    >>> summary_text(6, 1, ngettext=translations("es").ngettext)
    '6 evaluaciones (1 conjunto)'
    """
    ngettext = ngettext or _english_plural
    rows = (
        ngettext("{n} query evaluation", "{n} query evaluations", count)
        if per_query
        else ngettext("{n} evaluation", "{n} evaluations", count)
    ).format(n=count)
    return rows + " " + ngettext("({n} suite)", "({n} suites)", suites).format(n=suites)


def overall_label(means: Mapping[str, float], thresholds: Mapping[str, Threshold]) -> str:
    """Efficient (every mean Good), Needs improvement (any mean Needs improvement),
    else Acceptable; "" when no measure has a threshold.

    >>> overall_label({"RR": 0.694, "nDCG@10": 0.66, "P@5": 0.533}, DEFAULT_GOOD_THRESHOLDS)
    'Acceptable'
    """
    worst = row_label(means, thresholds)
    return OVERALL_LABELS.get(worst, "")


def summarize_rows(
    rows: pd.DataFrame,
    measures: Iterable[str],
    thresholds: Mapping[str, Threshold],
    per_query: bool = False,
) -> dict:
    """``{"count", "means", "labels", "label"}`` of report rows (NaN cells are skipped)."""
    measures = list(measures)
    means = {}
    for m in measures:
        col = rows[m].to_numpy(dtype=float) if m in rows.columns and len(rows) else np.array([])
        col = col[~np.isnan(col)]
        means[m] = float(col.mean()) if col.size else float("nan")
    labels = {m: interpret(means[m], thresholds[m]) for m in measures if m in thresholds}
    return {
        "count": int(len(rows)),
        "per_query": bool(per_query),
        "means": means,
        "labels": labels,
        "label": overall_label(means, thresholds),
    }


def comparative_report(
    store,
    suite: str | None = None,
    date_from=None,
    date_to=None,
    *,
    per_query: bool = False,
    measures: Sequence[str] = REPORT_MEASURES,
    thresholds: Mapping[str, Threshold] | None = None,
    summary: bool = True,
    ngettext=None,
) -> pd.DataFrame:
    """The comparative report of a :class:`~metrics_core.history.HistoryStore` (what
    :meth:`~metrics_core.history.HistoryStore.report` returns; see it for the columns).

    Rows: one per saved evaluation (its aggregate values) or, with ``per_query=True``, per
    query and evaluation, each with the worst label of its measures; then, when
    ``summary``, a row ``ID == "Summary"`` (:func:`summarize_rows`), also kept in
    ``df.attrs["summary"]`` (with ``suites``, the number of suites of the rows). The
    summary row's Run cell is :func:`summary_text` (through ``ngettext``); the ``ID``
    "Summary", the column names and the labels stay English keys for the caller to show
    in its language (they are marked for the catalogs). ``thresholds``: measure -> its "Good"
    threshold (Fair from half of it) or the pair ``(good, fair)``
    (:func:`metrics_core.report.labels.bounds`); default :data:`DEFAULT_GOOD_THRESHOLDS`.
    """
    thresholds = dict(DEFAULT_GOOD_THRESHOLDS if thresholds is None else thresholds)
    measures = list(measures)
    evals = store.list_evaluations(suite, date_from, date_to)
    head = ["ID", "Suite", "Run", "Date"] + (["Query ID", "Query"] if per_query else [])
    if evals.empty:
        rows = pd.DataFrame(columns=head + measures + ["Interpretation"])
    elif not per_query:
        rows = pd.DataFrame(
            {
                "ID": evals["id"],
                "Suite": evals["suite"],
                "Run": evals["run"],
                "Date": evals["timestamp"],
            }
        )
        for m in measures:
            rows[m] = evals[m].astype(float) if m in evals.columns else np.nan
    else:
        long = store.query_values(evals["id"].tolist())
        long = long[long["measure"].isin(measures)]
        wide = long.pivot_table(
            index=["evaluation_id", "query_id"],
            columns="measure",
            values="value",
            aggfunc="first",
            dropna=False,
        ).reset_index()
        info = evals.set_index("id")
        rows = pd.DataFrame(
            {
                "ID": wide["evaluation_id"].to_numpy(),
                "Suite": info.loc[wide["evaluation_id"], "suite"].to_numpy(),
                "Run": info.loc[wide["evaluation_id"], "run"].to_numpy(),
                "Date": info.loc[wide["evaluation_id"], "timestamp"].to_numpy(),
                "Query ID": wide["query_id"].astype(str).to_numpy(),
            }
        )
        rows["Query"] = query_texts(store, rows)
        for m in measures:
            rows[m] = wide[m].astype(float).to_numpy() if m in wide.columns else np.nan
        order = {e: i for i, e in enumerate(evals["id"])}
        rows = rows.sort_values(
            ["ID", "Query ID"], key=lambda s: s.map(order) if s.name == "ID" else s, kind="stable"
        ).reset_index(drop=True)
    rows["Interpretation"] = worst_labels({m: rows[m] for m in measures}, thresholds)
    rows["Date"] = rows["Date"].astype(str).str.slice(0, 10)
    summ = summarize_rows(rows, measures, thresholds, per_query=per_query)
    summ["suites"] = int(rows["Suite"].nunique())
    if summary:
        text = summary_text(summ["count"], summ["suites"], per_query, ngettext)
        extra = {
            "ID": "Summary",
            "Suite": "",
            "Run": text,
            "Date": "",
            **({"Query ID": "", "Query": ""} if per_query else {}),
            **{m: summ["means"][m] for m in measures},
            "Interpretation": summ["label"],
        }
        rows = pd.concat([rows.astype({"ID": object}), pd.DataFrame([extra])], ignore_index=True)
        rows["ID"] = rows["ID"].astype(object)
    rows.attrs["summary"] = summ
    return rows


def query_texts(store, rows: pd.DataFrame) -> list:
    """The query text of each report row (from its suite's metadata; "" when none)."""
    texts = {}
    for name in rows["Suite"].unique():
        meta = store.get_suite_meta(name)
        if "query" in meta.columns:
            texts.update({(name, q): t for q, t in meta["query"].items()})
    return [texts.get((s, q)) or "" for s, q in zip(rows["Suite"], rows["Query ID"], strict=True)]
