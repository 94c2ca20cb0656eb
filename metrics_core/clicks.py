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

import io
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import InputError
from metrics_core.io.source import check_text, read_source

QUERY_NAMES = ("query", "query_id", "qid", "consulta", "question")
SHOWN_NAMES = ("shown", "results", "resultados", "impressions", "ranking", "retrieved", "docs")
CLICK_NAMES = ("clicked", "clicks", "click", "clicked_ids")
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


def _as_list(value) -> list[str]:
    """One cell of the shown/clicked columns as a list of id strings."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value]
    if isinstance(value, float) and np.isnan(value):
        return []
    text = str(value).strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    for sep in ("|", ";", ",", " "):
        if sep in text:
            return [t for t in (p.strip() for p in text.split(sep)) if t]
    return [text]


def _find(columns, names, role, source):
    lower = {str(c).lower().strip(): c for c in columns}
    for n in names:
        if n in lower:
            return lower[n]
    raise InputError(f"no {role} column found in the click log", source=source,
                     hint="columns found: " + ", ".join(map(str, columns))
                     + f". Name it one of: {', '.join(names)}")


def read_click_log(source, name: str | None = None) -> pd.DataFrame:
    """Read a click log into a DataFrame with columns ``query``, ``shown``, ``clicked``.

    Accepted: a DataFrame; a list of dicts; CSV/TSV (lists in a cell as JSON arrays or
    separated by ``|``, ``;``, ``,`` or spaces); JSON (a list of objects, or
    ``{"rows": [...]}``) or JSON Lines; a path, bytes or file object (``.gz`` ok).
    Column names are matched case-insensitively (Spanish names such as ``consulta``,
    ``resultados`` and ``clicks`` work too).

    Examples
    --------
    >>> log = read_click_log([{"consulta": "q1", "resultados": ["a", "b"], "clicks": ["b"]}])
    >>> log.to_dict(orient="records")
    [{'query': 'q1', 'shown': ['a', 'b'], 'clicked': ['b']}]
    >>> read_click_log(b"query,shown,clicked\\nq1,a|b|c,c\\n").loc[0, "shown"]
    ['a', 'b', 'c']
    """
    label = name or "<click log>"
    if isinstance(source, pd.DataFrame):
        frame = source
    elif isinstance(source, list):
        if not all(isinstance(r, dict) for r in source):
            raise InputError("a click log list must hold one object per impression", source=label)
        frame = pd.DataFrame(source)
    else:
        raw = read_source(source, name)
        label = raw.name
        check_text(raw)
        text = raw.data.decode("utf-8").lstrip("\ufeff")
        if not text.strip():
            raise InputError("the click log is empty", source=label)
        head = text.lstrip()[:1]
        if head in ("[", "{"):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError:
                obj = None
                try:
                    obj = [json.loads(line) for line in text.splitlines() if line.strip()]
                except json.JSONDecodeError as exc:
                    raise InputError(f"invalid JSON ({exc.msg})", source=label) from None
            if isinstance(obj, dict):
                obj = next((obj[k] for k in ("rows", "data", "records", "impressions", "log")
                            if isinstance(obj.get(k), list)), None)
            if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
                raise InputError("unrecognised JSON shape for a click log", source=label,
                                 hint='use [{"query": ..., "shown": [...], "clicked": [...]}, ...]')
            frame = pd.DataFrame(obj)
        else:
            first = text.split("\n", 1)[0]
            sep = "\t" if "\t" in first and "," not in first else ","
            try:
                frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
            except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
                raise InputError(f"malformed table ({str(exc).split('.')[0]})", source=label,
                                 hint="Put lists in a cell as JSON arrays or separated by |") from None
    if len(frame) == 0:
        raise InputError("the click log has no rows", source=label)
    qcol = _find(frame.columns, QUERY_NAMES, "query", label)
    scol = _find(frame.columns, SHOWN_NAMES, "shown-results", label)
    ccol = _find(frame.columns, CLICK_NAMES, "clicked-ids", label)
    return pd.DataFrame({"query": frame[qcol].astype(str).to_numpy(),
                         "shown": [_as_list(v) for v in frame[scol]],
                         "clicked": [_as_list(v) for v in frame[ccol]]})


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
        raise InputError(f"unknown click rule {rule!r}", hint="accepted: " + ", ".join(RULES))
    frame = log if isinstance(log, pd.DataFrame) and {"query", "shown", "clicked"} <= set(log.columns) \
        else read_click_log(log)
    n = len(frame)
    shown_lists = frame["shown"].tolist()
    click_lists = frame["clicked"].tolist()
    shown_len = np.fromiter((len(s) for s in shown_lists), dtype=np.int64, count=n)
    click_len = np.fromiter((len(c) for c in click_lists), dtype=np.int64, count=n)

    # Flatten: (impression, id, position) for shown; (impression, id, order) for clicks.
    shown = pd.DataFrame({
        "imp": np.repeat(np.arange(n), shown_len),
        "doc": [str(d) for s in shown_lists for d in s],
    })
    shown["pos"] = np.arange(len(shown)) - np.repeat(np.cumsum(shown_len) - shown_len, shown_len) + 1
    shown = shown.drop_duplicates(["imp", "doc"], keep="first")  # first occurrence wins
    clicks = pd.DataFrame({
        "imp": np.repeat(np.arange(n), click_len),
        "doc": [str(d) for c in click_lists for d in c],
    })
    clicks["order"] = np.arange(len(clicks))
    joined = clicks.merge(shown, on=["imp", "doc"], how="left", sort=False)
    unseen = joined["pos"].isna().to_numpy()
    if strict and unseen.any():
        row = joined.loc[unseen].iloc[0]
        raise InputError(f"impression {int(row['imp']) + 1} (query {frame['query'].iloc[int(row['imp'])]!r}): "
                         f"clicked id {row['doc']!r} is not among the shown results",
                         hint="Fix the log, or evaluate with strict=False to ignore such clicks")
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
    rr = np.where(first_rank > 0, 1.0 / np.maximum(first_rank, 1), 0.0)
    per_imp = pd.DataFrame({
        "query": frame["query"].astype(str).to_numpy(),
        "shown": shown_len, "clicks": click_len, "ignored_clicks": ignored,
        "first_click_rank": first_rank, "RR": rr,
    })
    per_imp.index.name = "impression"
    per_query = per_imp.groupby("query", sort=True).agg(impressions=("RR", "size"), MRR=("RR", "mean"))
    return ClickEvaluation(per_imp, per_query, float(rr.mean()) if n else float("nan"),
                           int(ignored.sum()), rule)
