"""One query's ranked list as the engine ranked it, and the relevant documents it missed.

Pure functions (no Streamlit): the per-query page and the tests call them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.figures_ranking import RELEVANCE_COLOURS


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
