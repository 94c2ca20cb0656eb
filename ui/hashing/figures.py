"""Plotly figures of the Hashing page: pure functions (numbers in, go.Figure out)."""

from __future__ import annotations

import plotly.graph_objects as go

from ui.common.i18n import gettext as _
from ui.common.style import plain

#: Titles stay above the plot, left-aligned in the figure's width, and wrap instead of being cut.
TITLE = {"x": 0, "xanchor": "left", "font": {"size": 15}}


def precision_at_k_figure(precision_at_k: dict) -> go.Figure:
    """P@k against k (log axis), one point per cut-off."""
    ks = sorted(int(k) for k in precision_at_k)
    values = [precision_at_k[k] if k in precision_at_k else precision_at_k[str(k)] for k in ks]
    fig = go.Figure(
        go.Scatter(
            x=ks,
            y=values,
            mode="lines+markers",
            name="P@k",
            hovertemplate="P@%{x}: %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={**TITLE, "text": _("Precision at k (Hamming ranking)")},
        xaxis_title="k",
        yaxis_title=_("precision"),
        yaxis_range=[0, 1.02],
        height=360,
        margin=dict(l=40, r=20, t=50, b=40),
    )
    fig.update_xaxes(type="log")
    return fig


def pr_by_radius_figure(pr_by_radius: dict, highlight_radius: int | None = 2) -> go.Figure:
    """Precision-recall curve over Hamming radius 0..K (each point labelled by its radius)."""
    radius = list(pr_by_radius["radius"])
    fig = go.Figure(
        go.Scatter(
            x=list(pr_by_radius["recall"]),
            y=list(pr_by_radius["precision"]),
            mode="lines+markers",
            text=[f"r={r}" for r in radius],
            name=_("radius 0..K"),
            hovertemplate="%{text}<br>"
            + _("recall")
            + " %{x:.4f}<br>"
            + _("precision")
            + " %{y:.4f}<extra></extra>",
        )
    )
    if highlight_radius is not None and highlight_radius in radius:
        i = radius.index(highlight_radius)
        fig.add_trace(
            go.Scatter(
                x=[pr_by_radius["recall"][i]],
                y=[pr_by_radius["precision"][i]],
                mode="markers",
                marker=dict(size=12, symbol="diamond"),
                name=plain(_("radius {r}"), r=highlight_radius),
            )
        )
    fig.update_layout(
        title={**TITLE, "text": _("Precision and recall within Hamming radius")},
        xaxis_title=_("recall"),
        yaxis_title=_("precision"),
        xaxis_range=[0, 1.02],
        yaxis_range=[0, 1.02],
        height=360,
        margin=dict(l=40, r=20, t=50, b=40),
    )
    return fig


def map_band_figure(map_value: float, band: list | tuple, ties: str) -> go.Figure:
    """mAP as a point on its tie band [pessimistic, optimistic]."""
    lo, hi = band
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[lo, hi],
            y=[0, 0],
            mode="lines+markers",
            line=dict(width=8),
            name=_("tie band (relevant last .. first)"),
            hovertemplate="%{x:.4f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[map_value],
            y=[0],
            mode="markers",
            marker=dict(size=14),
            name=f"mAP ({ties})",
            hovertemplate="%{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={**TITLE, "text": _("mAP and how much tie order can move it")},
        height=230,
        xaxis_title="mAP",
        yaxis_visible=False,
        margin=dict(l=40, r=20, t=50, b=40),
        legend={"orientation": "h", "x": 0, "y": -0.45, "yanchor": "top"},
    )
    return fig
