"""Implicit feedback: mean reciprocal rank from a click log (the first click stands in for the first relevant result).

A click log has one row per impression (a query as one user saw it): the query, the
result ids shown in rank order, and the ids the user clicked, in click order. The first
click stands in for the first relevant result:

.. math::

    RR_j = \\frac{1}{\\mathrm{rank}_j(c_j)}, \\qquad
    MRR = \\frac{1}{|J|} \\sum_{j \\in J} RR_j

where ``c_j`` is the first click of impression ``j`` and ``rank_j`` its 1-based position
in the shown list.

Edge cases (decided here, and stated in every output):

* an impression without clicks has ``RR = 0`` (no click: nothing relevant was shown);
* a clicked id that is not among the shown results (an ad, a stale log line) is
  **ignored** and counted in ``ignored_clicks``; when none of an impression's clicks
  was shown, its RR is 0. Pass ``strict=True`` to refuse such logs with an InputError;
* an id shown twice takes the position of its first occurrence;
* ``rule="first"`` (default) uses the chronologically first click;
  ``rule="top"`` uses the best-ranked clicked result.

Reference: Voorhees (1999), "The TREC-8 Question Answering Track Report" (MRR);
Joachims et al. (2005), "Accurately interpreting clickthrough data as implicit feedback"
(clicks as relevance, and their position bias).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.io.clicks import read_click_log  # noqa: F401  (the reader lives with the others)

RULES = ("first", "top")


@dataclass
class ClickEvaluation:
    """Result of :func:`click_mrr`.

    Attributes
    ----------
    per_impression : DataFrame
        One row per impression: ``query``, ``shown`` (count), ``clicks``,
        ``ignored_clicks``, ``first_click_rank`` (0 when none) and ``RR``.
    per_query : DataFrame
        Mean RR and number of impressions per query (index: query).
    mrr : float
        Mean of RR over impressions (NaN for an empty log).
    ignored_clicks : int
        Clicks on ids that were not shown.
    rule : str
    """

    per_impression: pd.DataFrame
    per_query: pd.DataFrame
    mrr: float
    ignored_clicks: int
    rule: str


def first_click_ranks(frame: pd.DataFrame, rule: str = "first", strict: bool = False):
    """The rank of each impression's counted click (0 when none) and its ignored clicks.

    ``frame`` has one row per impression with the lists ``shown`` and ``clicked``. The
    lists are flattened once into (impression, id) arrays and joined; the counted click
    is a grouped minimum of the click order (``rule="first"``) or of the rank
    (``rule="top"``). An id shown twice takes its first position.

    Returns
    -------
    first_rank, ignored : ndarray of int64, one per impression

    Examples
    --------
    >>> f = pd.DataFrame({"query": ["q"], "shown": [["a", "b", "c"]], "clicked": [["x", "c", "b"]]})
    >>> [r.tolist() for r in first_click_ranks(f)], first_click_ranks(f, "top")[0].tolist()
    ([[3], [1]], [2])
    """
    n = len(frame)
    shown_lists = frame["shown"].tolist()
    click_lists = frame["clicked"].tolist()
    shown_len = np.fromiter((len(s) for s in shown_lists), dtype=np.int64, count=n)
    click_len = np.fromiter((len(c) for c in click_lists), dtype=np.int64, count=n)

    # Flatten: (impression, id, position) for shown; (impression, id, order) for clicks.
    shown = pd.DataFrame(
        {
            "imp": np.repeat(np.arange(n), shown_len),
            "doc": [str(d) for s in shown_lists for d in s],
        }
    )
    shown["pos"] = (
        np.arange(len(shown)) - np.repeat(np.cumsum(shown_len) - shown_len, shown_len) + 1
    )
    shown = shown.drop_duplicates(["imp", "doc"], keep="first")  # first occurrence wins
    clicks = pd.DataFrame(
        {
            "imp": np.repeat(np.arange(n), click_len),
            "doc": [str(d) for c in click_lists for d in c],
        }
    )
    clicks["order"] = np.arange(len(clicks))
    joined = clicks.merge(shown, on=["imp", "doc"], how="left", sort=False)
    unseen = joined["pos"].isna().to_numpy()
    if strict and unseen.any():
        row = joined.loc[unseen].iloc[0]
        raise InputError(
            N_(
                "impression {number} (query {query!r}): clicked id {doc!r} is not among the "
                "shown results"
            ),
            hint=N_("Fix the log, or evaluate with strict=False to ignore such clicks"),
            params={
                "number": int(row["imp"]) + 1,
                "query": frame["query"].iloc[int(row["imp"])],
                "doc": row["doc"],
            },
        )
    ignored = np.bincount(joined["imp"].to_numpy()[unseen], minlength=n)
    hits = joined.loc[~unseen]
    first_rank = np.zeros(n, dtype=np.int64)
    if len(hits):
        imp = hits["imp"].to_numpy()
        pos = hits["pos"].to_numpy().astype(np.int64)
        key = hits["order"].to_numpy() if rule == "first" else pos
        order = np.lexsort((key, imp))
        imp, pos = imp[order], pos[order]
        head = np.r_[True, imp[1:] != imp[:-1]]
        first_rank[imp[head]] = pos[head]
    return first_rank, ignored


def click_mrr(log, rule: str = "first", strict: bool = False) -> ClickEvaluation:
    """MRR of the first click of every impression (implicit feedback).

    Parameters
    ----------
    log : DataFrame or any source :func:`read_click_log` accepts
    rule : {"first", "top"}
        ``"first"``: the chronologically first (shown) click; ``"top"``: the best-ranked
        clicked result.
    strict : bool
        Raise :class:`~metrics_core.errors.InputError` when a clicked id was not shown,
        instead of ignoring that click.

    Returns
    -------
    ClickEvaluation

    Notes
    -----
    The computation is columnar: the shown lists and clicks are flattened once into
    (impression, id) arrays and joined; the first click per impression is a grouped
    minimum. See the module docstring for the formula and edge cases.

    Examples
    --------
    Three impressions whose first clicks are at positions 2, 1 and 4:

    >>> log = [{"query": "envíos a Quito", "shown": ["HAW001", "HAW002", "HAW003"], "clicked": ["HAW002"]},
    ...        {"query": "celulares", "shown": ["HAW010", "HAW011"], "clicked": ["HAW010"]},
    ...        {"query": "electrónicos", "shown": ["HAW020", "HAW021", "HAW022", "HAW023"], "clicked": ["HAW023"]}]
    >>> round(click_mrr(log).mrr, 4)
    0.5833
    >>> click_mrr([{"query": "q", "shown": ["a", "b"], "clicked": []}]).mrr
    0.0
    """
    if rule not in RULES:
        raise InputError(
            N_("unknown click rule {rule!r}"),
            hint=N_("accepted: {choices}"),
            params={"rule": rule, "choices": ", ".join(RULES)},
        )
    frame = (
        log
        if isinstance(log, pd.DataFrame) and {"query", "shown", "clicked"} <= set(log.columns)
        else read_click_log(log)
    )
    n = len(frame)
    shown_len = np.fromiter((len(s) for s in frame["shown"]), dtype=np.int64, count=n)
    click_len = np.fromiter((len(c) for c in frame["clicked"]), dtype=np.int64, count=n)
    first_rank, ignored = first_click_ranks(frame, rule, strict)
    rr = np.where(first_rank > 0, 1.0 / np.maximum(first_rank, 1), 0.0)
    per_imp = pd.DataFrame(
        {
            "query": frame["query"].astype(str).to_numpy(),
            "shown": shown_len,
            "clicks": click_len,
            "ignored_clicks": ignored,
            "first_click_rank": first_rank,
            "RR": rr,
        }
    )
    per_imp.index.name = "impression"
    per_query = per_imp.groupby("query", sort=True).agg(
        impressions=("RR", "size"), MRR=("RR", "mean")
    )
    return ClickEvaluation(
        per_imp, per_query, float(rr.mean()) if n else float("nan"), int(ignored.sum()), rule
    )
