"""One query's ranked list as the engine ranked it, and the relevant documents it missed.

Pure functions (no Streamlit): the per-query page and the tests call them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.ranking.figures import RELEVANCE_COLOURS


def ranked_list(ev, run, query_id: str) -> pd.DataFrame:
    """The ranking of ``query_id`` in engine order (ties and depth per the conventions).

    Columns: rank, doc_id, score, relevance (NaN when unjudged), judged.
    """
    ranked = ev.ranked
    try:
        i = ranked.query_ids.index(str(query_id))
    except ValueError:
        return pd.DataFrame(columns=["rank", "doc_id", "score", "relevance", "judged"])
    lo, hi = int(ranked.starts[i]), int(ranked.starts[i + 1])
    rows = ranked.run_rows(lo, hi)
    judged = ranked.judged[lo:hi]
    label = np.where(judged, ranked.label[lo:hi], np.nan)
    docs = run.docid.take(rows).to_numpy(zero_copy_only=False) if len(rows) else np.array([], dtype=object)
    return pd.DataFrame({"rank": np.arange(1, hi - lo + 1), "doc_id": docs,
                         "score": run.scores[rows], "relevance": label, "judged": judged})


def judgements(qrels, query_id: str) -> pd.DataFrame:
    """The qrels rows of one query (doc_id, relevance)."""
    mask = qrels.query_ids == str(query_id)
    return pd.DataFrame({"doc_id": qrels.doc_ids[mask], "relevance": qrels.relevance[mask]})


def missed_relevant(qrels, ranking: pd.DataFrame, query_id: str, threshold: float) -> pd.DataFrame:
    """Relevant documents (label >= threshold, >= 0) of the query that the ranking lacks."""
    judged = judgements(qrels, query_id)
    rel = judged[(judged["relevance"] >= threshold) & (judged["relevance"] >= 0)]
    out = rel[~rel["doc_id"].isin(set(ranking["doc_id"]))]
    return out.sort_values(["relevance", "doc_id"], ascending=[False, True]).reset_index(drop=True)


def relevance_colour(value, max_label: float = 3.0) -> str:
    """CSS for a relevance cell: grey when unjudged, greener when more relevant."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "color: #999999"
    if value <= 0:
        return f"background-color: {RELEVANCE_COLOURS[0]}"
    step = 1 + int(round((len(RELEVANCE_COLOURS) - 2) * min(float(value), max_label) / max(max_label, 1)))
    colour = RELEVANCE_COLOURS[min(step, len(RELEVANCE_COLOURS) - 1)]
    text = "white" if step >= len(RELEVANCE_COLOURS) - 2 else "black"
    return f"background-color: {colour}; color: {text}"


def styled_ranking(ranking: pd.DataFrame, max_label: float = 3.0):
    """pandas Styler of a ranked list: relevance coloured (no HTML from user text)."""
    def row_style(row):
        css = relevance_colour(row["relevance"], max_label)
        return [css] * len(row)

    return ranking.style.apply(row_style, axis=1).format({"score": "{:.4g}", "relevance": "{:g}"},
                                                         na_rep="unjudged")


TIE_COLUMN = "Tie-dependent"
TIE_RANGE_COLUMN = "Min–max over tie orders"


def tie_dependent_text(report: dict | None, query_ids, measures, ranges: bool = True) -> pd.Series:
    """Per query, the measures whose value depends on the order of tied scores (from a tie
    report, ``Evaluation.tie_report`` shape), each with its minimum–maximum over every order
    when ``ranges``: e.g. ``"AP 0.4854–0.4891"`` (``"AP"`` without); "" where no measure
    does (or the report lacks the query)."""
    index = pd.Index(query_ids)
    if report is None:
        return pd.Series("", index=index, dtype=object)
    per = report.get("per_query", {})
    shown = [m for m in measures if m in report.get("aggregate", {})]

    def text(q) -> str:
        entry = per.get(q, {})
        parts = [f"{m} {entry[m]['min']:.4f}–{entry[m]['max']:.4f}" if ranges else m for m in shown
                 if m in entry and entry[m]["min"] != entry[m]["max"]]
        return " · ".join(parts)

    return pd.Series([text(q) for q in index], index=index, dtype=object)


def tie_sizes(ranking: pd.DataFrame, compat: str = "trec_eval10") -> np.ndarray:
    """For each row of a ranked list (:func:`ranked_list`, rank order), the size of its group
    of equal scores (1: not tied). Under ``compat="trec_eval9"`` scores compare as float32,
    as that ranking compared them."""
    scores = np.asarray(ranking["score"], dtype=np.float64)
    if compat == "trec_eval9":
        scores = scores.astype(np.float32).astype(np.float64)
    n = len(scores)
    if not n:
        return np.zeros(0, dtype=np.int64)
    head = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1]])
    size = np.diff(np.r_[head, n])
    return np.repeat(size, size)
