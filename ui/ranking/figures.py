"""Plotly figures of the ranking pages: pure functions, data in, ``go.Figure`` out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.common.colours import colours_for
from ui.common.i18n import gettext as _
from ui.common.style import PALETTE, in_sentence, plain, plot_text

RELEVANCE_COLOURS = ("#eeeeee", "#cfe8cf", "#8fd18f", "#3ca03c", "#1e6e1e")


def _layout(fig: go.Figure, title: str | None, **kw) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, y=0.98, yanchor="top") if title else None,
        template="plotly_white",
        margin=dict(l=40, r=20, t=80 if title else 30, b=40),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1, xanchor="right"),
        **kw,
    )
    return fig


def overview_bars(summary: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Grouped bars of the mean of each measure per run, with bootstrap CI error bars.

    Parameters
    ----------
    summary : DataFrame with columns ``run``, ``measure``, ``mean`` and optionally
        ``ci_low``, ``ci_high``.
    """
    fig = go.Figure()
    colours = colours_for(summary["run"].astype(str).unique())
    for run, part in summary.groupby("run", sort=False):
        err = None
        if {"ci_low", "ci_high"} <= set(part.columns):
            err = dict(
                type="data",
                symmetric=False,
                array=(part["ci_high"] - part["mean"]).to_numpy(),
                arrayminus=(part["mean"] - part["ci_low"]).to_numpy(),
                thickness=1.2,
            )
        fig.add_bar(
            x=part["measure"].astype(str).tolist(),
            y=part["mean"].to_numpy(),
            name=plot_text(run),
            error_y=err,
            marker_color=colours[str(run)],
            hovertemplate="%{x}: %{y:.4f}<extra>" + plot_text(run) + "</extra>",
        )
    return _layout(fig, title, barmode="group", yaxis_title=_("mean over queries"))


def distribution(values: dict[str, pd.Series], measure: str, kind: str = "box") -> go.Figure:
    """Distribution of one measure over queries, one trace per run (box or histogram)."""
    fig = go.Figure()
    colours = colours_for(values)
    for run, series in values.items():
        v = pd.Series(series).dropna().to_numpy(dtype=float)
        colour = colours[str(run)]
        if kind == "histogram":
            fig.add_histogram(x=v, name=plot_text(run), marker_color=colour, opacity=0.7, nbinsx=20)
        else:
            fig.add_box(
                y=v,
                name=plot_text(run),
                marker_color=colour,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                text=[plot_text(q) for q in pd.Series(series).dropna().index.astype(str)],
                hovertemplate="%{text}: %{y:.4f}<extra></extra>",
            )
    layout = (
        dict(barmode="overlay", xaxis_title=measure, yaxis_title=_("queries"))
        if kind == "histogram"
        else dict(yaxis_title=measure)
    )
    return _layout(fig, plain(_("{measure} per query"), measure=measure), **layout)


def group_bars(
    table: pd.DataFrame, measure: str, group_col: str, group_label: str | None = None
) -> go.Figure:
    """Mean of ``measure`` per group, one bar series per run.

    ``table``: long DataFrame with columns ``run``, ``group_col``, ``measure`` and ``count``;
    ``group_label``: the column's name on screen (``group_col`` when not given).
    """
    label = plot_text(group_label or group_col)
    fig = go.Figure()
    colours = colours_for(table["run"].astype(str).unique())
    for run, part in table.groupby("run", sort=False):
        fig.add_bar(
            x=[plot_text(g) for g in part[group_col].astype(str)],
            y=part[measure].to_numpy(),
            name=plot_text(run),
            marker_color=colours[str(run)],
            customdata=part["count"].to_numpy() if "count" in part else None,
            hovertemplate=plain(
                _("{group}: {mean} ({n} queries)"), group="%{x}", mean="%{y:.4f}", n="%{customdata}"
            )
            + "<extra>"
            + plot_text(run)
            + "</extra>",
        )
    return _layout(
        fig,
        plain(_("{measure} by {group}"), measure=measure, group=in_sentence(label)),
        barmode="group",
        xaxis_title=label,
        yaxis_title=plain(_("mean {measure}"), measure=measure),
    )


def gain_contributions(labels, discounts, gains, title: str | None = None) -> go.Figure:
    """Learn page: each rank's gain and its discounted contribution to DCG."""
    ranks = np.arange(1, len(labels) + 1)
    contrib = np.asarray(gains, dtype=float) * np.asarray(discounts, dtype=float)
    fig = go.Figure()
    fig.add_bar(x=ranks, y=np.asarray(gains, dtype=float), name=_("gain"), marker_color="#cfd8f6")
    fig.add_bar(x=ranks, y=contrib, name=_("gain × discount"), marker_color=PALETTE[0])
    return _layout(
        fig,
        title,
        barmode="overlay",
        xaxis_title=_("rank"),
        yaxis_title=_("value"),
        xaxis=dict(tickmode="linear", dtick=1),
    )


def first_click_ranks(per_impression: pd.DataFrame) -> go.Figure:
    """Click feedback: how many impressions had their first click at each rank (0 = none)."""
    counts = per_impression["first_click_rank"].value_counts().sort_index()
    labels = [_("no click") if r == 0 else str(r) for r in counts.index]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=counts.to_numpy(),
            marker_color=PALETTE[0],
            hovertemplate=plain(_("{rank}: {n} impressions"), rank="%{x}", n="%{y}")
            + "<extra></extra>",
        )
    )
    return _layout(
        fig,
        _("Rank of the first click"),
        xaxis_title=_("rank"),
        yaxis_title=_("impressions"),
        xaxis=dict(type="category"),
    )
