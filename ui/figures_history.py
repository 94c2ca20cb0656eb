"""Plotly figures of the History page (pure: data in, ``go.Figure`` out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def evaluation_labels(rows: pd.DataFrame) -> list[str]:
    """One x-axis label per evaluation: ``#ID date run`` (unique even on the same day)."""
    return [f"#{i} {d} {r}" for i, d, r in zip(rows["ID"], rows["Date"], rows["Run"], strict=True)]


def trend_figure(rows: pd.DataFrame, measures: Sequence[str],
                 thresholds: Mapping[str, float] | None = None) -> go.Figure:
    """Each measure over the evaluations, in the order of ``rows`` (oldest first).

    ``rows`` are the per-evaluation rows of :meth:`metrics_core.history.HistoryStore.report`
    without the summary row (columns ``ID, Suite, Run, Date`` and the measures). One line
    per measure (and per suite when there are several); each measure's "Good" threshold
    is a dotted line of the same colour.
    """
    thresholds = dict(thresholds or {})
    rows = rows[rows["ID"] != "Summary"] if "ID" in rows.columns else rows
    fig = go.Figure()
    x_all = evaluation_labels(rows)
    suites = list(dict.fromkeys(rows["Suite"])) if len(rows) else []
    for k, m in enumerate(measures):
        color = COLORS[k % len(COLORS)]
        if m not in rows.columns:
            continue
        for suite in suites:
            mask = (rows["Suite"] == suite).to_numpy()
            y = rows.loc[mask, m].to_numpy(dtype=float)
            fig.add_trace(go.Scatter(
                x=list(np.asarray(x_all, dtype=object)[mask]), y=y, mode="lines+markers",
                name=m if len(suites) == 1 else f"{m} · {suite}", line={"color": color},
                customdata=rows.loc[mask, ["Run", "Suite"]].to_numpy(dtype=object),
                hovertemplate=f"{m}: %{{y:.4f}}<br>run %{{customdata[0]}}<br>suite %{{customdata[1]}}"
                              "<extra></extra>"))
        if m in thresholds:
            fig.add_hline(y=thresholds[m], line={"color": color, "dash": "dot", "width": 1},
                          annotation_text=f"{m} good ≥ {thresholds[m]:g}", annotation_position="top left")
    fig.update_layout(title="Measures over evaluations", xaxis_title="evaluation (oldest first)",
                      yaxis_title="value", yaxis_range=[0, 1.05], hovermode="closest",
                      legend_title_text="measure", margin={"t": 50, "b": 40})
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=x_all)
    return fig
