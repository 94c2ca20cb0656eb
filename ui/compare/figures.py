"""Pure figure builders for the Compare page: data in, ``go.Figure`` out (no Streamlit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metrics_core.report.thesis import display_measure
from ui.common.colours import colours_for
from ui.common.i18n import gettext as _
from ui.common.style import in_sentence, plain, plot_text

WIN, LOSS, TIE = "#2a9d8f", "#e76f51", "#9e9e9e"


def delta_bar_figure(
    deltas: pd.Series, run: str, baseline: str, measure: str, tolerance: float = 1e-9
) -> go.Figure:
    """Per-query difference bars sorted by delta; each bar's customdata is its query id."""
    values = deltas.to_numpy(dtype=float)
    qids = deltas.index.astype(str).to_numpy()
    colors = np.where(values > tolerance, WIN, np.where(values < -tolerance, LOSS, TIE))
    fig = go.Figure(
        go.Bar(
            x=list(range(len(values))),
            y=values,
            marker_color=colors.tolist(),
            customdata=qids,
            text=[plot_text(q) for q in qids],
            textposition="none",  # the hover's text; customdata picks the query
            hovertemplate=_("query") + " %{text}<br>" + _("delta") + " %{y:.4f}<extra></extra>",
        )
    )
    wins = int((values > tolerance).sum())
    losses = int((values < -tolerance).sum())
    fig.update_layout(
        title=plain(
            _(
                "{measure}: {run} - {baseline} per query ({wins} wins, {ties} ties, {losses} losses)"
            ),
            measure=measure,
            run=plot_text(run),
            baseline=plot_text(baseline),
            wins=wins,
            ties=len(values) - wins - losses,
            losses=losses,
        ),
        xaxis_title=_("queries, sorted by delta (click a bar to open the query)"),
        yaxis_title=plain(_("delta {measure}"), measure=measure),
        bargap=0.05,
        showlegend=False,
        clickmode="event+select",
    )
    fig.update_xaxes(showticklabels=False)
    return fig


def delta_ci_figure(frame: pd.DataFrame, measure: str) -> go.Figure:
    """Mean delta of every run vs the baseline with its bootstrap interval (one measure)."""
    rows = frame[frame["measure"] == measure]
    colours = colours_for(rows["run"].astype(str))
    fig = go.Figure(
        go.Scatter(
            x=rows["mean_delta"],
            y=[plot_text(r) for r in rows["run"]],
            mode="markers",
            marker={"size": 11, "color": [colours[str(r)] for r in rows["run"]]},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": (rows["ci_hi"] - rows["mean_delta"]).tolist(),
                "arrayminus": (rows["mean_delta"] - rows["ci_lo"]).tolist(),
            },
            text=rows["markers"],
            hovertemplate="%{y}: %{x:.4f} %{text}<extra></extra>",
        )
    )
    fig.add_vline(x=0, line_dash="dot")
    base = rows["baseline"].iloc[0] if len(rows) else ""
    fig.update_layout(
        title=plain(
            _("{measure}: mean difference vs {baseline} (bootstrap CI)"),
            measure=display_measure(measure),
            baseline=plot_text(base),
        ),
        xaxis_title=f"Δ {display_measure(measure)}",
        yaxis_title=_("run"),
        template="plotly_white",
        height=120 + 50 * max(len(rows), 1),
        margin=dict(l=40, r=20, t=60, b=40),
    )
    return fig


def fold_figure(values: dict[str, pd.DataFrame], measure: str, fold_column: str) -> go.Figure:
    """Grouped bars: the measure's mean in each fold, one bar group per fold, one colour per run.

    ``values`` maps run name -> :func:`metrics_core.stats.folds.fold_values` output.
    """
    fig = go.Figure()
    colours = colours_for(values)
    for run, table in values.items():
        fig.add_bar(
            name=plot_text(run),
            x=[plot_text(f) for f in table.index],
            y=table[measure].tolist(),
            marker_color=colours[str(run)],
        )
    fig.update_layout(
        barmode="group",
        title=plain(
            _("{measure} per {column}"),
            measure=display_measure(measure),
            column=in_sentence(plot_text(fold_column)),
        ),
        xaxis_title=plot_text(fold_column),
        yaxis_title=display_measure(measure),
    )
    return fig


def criterion_figure(
    tables: dict[str, pd.DataFrame], measure: str, criterion_column: str
) -> go.Figure:
    """Grouped bars per criterion plus the micro and macro averages, one colour per run.

    ``tables`` maps run name -> :func:`metrics_core.stats.folds.criterion_averages` output.
    """
    fig = go.Figure()
    colours = colours_for(tables)
    for run, table in tables.items():
        fig.add_bar(
            name=plot_text(run),
            x=[plot_text(c) for c in table.index],
            y=table[measure].tolist(),
            marker_color=colours[str(run)],
        )
    fig.update_layout(
        barmode="group",
        title=plain(
            _("{measure} per {column} (micro, macro last)"),
            measure=display_measure(measure),
            column=in_sentence(plot_text(criterion_column)),
        ),
        xaxis_title=plot_text(criterion_column),
        yaxis_title=display_measure(measure),
    )
    return fig


__all__ = ["delta_bar_figure", "delta_ci_figure", "fold_figure", "criterion_figure"]
