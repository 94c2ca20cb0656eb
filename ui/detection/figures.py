"""Pure plotly figure builders for the detection, calibration and dynamic-K pages.

Data in, ``go.Figure`` out; no widgets (texts go through :func:`ui.common.i18n._`). Long curves are thinned for drawing only
(:func:`thin_indices`); every metric is computed on all points elsewhere.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from metrics_core.report.catalogs import N_
from metrics_core.report.cells import threshold_text
from ui.common.i18n import gettext as _
from ui.common.i18n import plotly_grouping
from ui.common.style import plain

BAND_COLOURS = {"baseline": "rgba(255, 193, 7, 0.18)", "good": "rgba(76, 175, 80, 0.18)"}
#: The reference bands' names (:data:`metrics_core.report.ranges.REFERENCE_RANGES`), marked for the catalogs.
BAND_NAMES = (N_("baseline"), N_("good"))
#: Legends in one row under the plot area: they never cover a curve, at any width.
LEGEND_BELOW = {"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top", "xanchor": "left"}


def thin_indices(x, y, max_points: int = 2000) -> np.ndarray:
    """Indices of a curve to draw: all of them when short; otherwise the first and
    last, evenly spaced indices, and the first index past each 1/max_points step of x
    and of y, so the shape at screen resolution is kept.

    >>> thin_indices(np.arange(5), np.arange(5)).tolist()
    [0, 1, 2, 3, 4]
    >>> len(thin_indices(np.linspace(0, 1, 10**6), np.linspace(0, 1, 10**6), 500)) <= 1500
    True
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    m = x.size
    if m <= max_points:
        return np.arange(m)
    grid = np.linspace(0, 1, max_points // 2)
    keep = [np.array([0, m - 1]), np.linspace(0, m - 1, max_points // 2).astype(np.int64)]
    for v in (x, y):
        lo, hi = np.nanmin(v), np.nanmax(v)
        if hi > lo and np.all(np.diff(v) >= 0):
            keep.append(np.searchsorted(v, lo + grid * (hi - lo)).clip(0, m - 1))
    return np.unique(np.concatenate(keep))


def roc_figure(
    fpr, tpr, *, marker: int | None = None, auroc: float | None = None, max_points: int = 2000
) -> go.Figure:
    """ROC curve (step points joined) with the chance diagonal and an optional marker."""
    idx = thin_indices(fpr, tpr, max_points)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name=_("chance"),
            line={"dash": "dot", "color": "grey"},
            hoverinfo="skip",
        )
    )
    name = "ROC" if auroc is None or auroc != auroc else f"ROC (AUROC {auroc:.4f})"
    fig.add_trace(
        go.Scatter(x=np.asarray(fpr)[idx], y=np.asarray(tpr)[idx], mode="lines", name=name)
    )
    if marker is not None:
        fig.add_trace(
            go.Scatter(
                x=[fpr[marker]],
                y=[tpr[marker]],
                mode="markers",
                name=_("operating point"),
                marker={"size": 12, "color": "red"},
            )
        )
    fig.update_layout(
        xaxis_title=_("False positive rate"),
        yaxis_title=_("True positive rate"),
        xaxis_range=[-0.01, 1.01],
        yaxis_range=[-0.01, 1.01],
        height=460,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend=LEGEND_BELOW,
    )
    return fig


def pr_figure(
    recall,
    precision,
    *,
    marker: int | None = None,
    auprc: float | None = None,
    positive_rate: float | None = None,
    max_points: int = 2000,
) -> go.Figure:
    """Precision-recall curve drawn as steps (as average precision sums it)."""
    idx = thin_indices(recall, precision, max_points)
    fig = go.Figure()
    if positive_rate is not None:
        fig.add_trace(
            go.Scatter(
                x=[0, 1],
                y=[positive_rate, positive_rate],
                mode="lines",
                name=_("chance"),
                line={"dash": "dot", "color": "grey"},
            )
        )
    name = "PR" if auprc is None or auprc != auprc else f"PR (AUPRC {auprc:.4f})"
    fig.add_trace(
        go.Scatter(
            x=np.asarray(recall)[idx],
            y=np.asarray(precision)[idx],
            mode="lines",
            line_shape="vh",
            name=name,
        )
    )
    if marker is not None:
        fig.add_trace(
            go.Scatter(
                x=[recall[marker]],
                y=[precision[marker]],
                mode="markers",
                name=_("operating point"),
                marker={"size": 12, "color": "red"},
            )
        )
    fig.update_layout(
        xaxis_title=_("Recall"),
        yaxis_title=_("Precision"),
        xaxis_range=[-0.01, 1.01],
        yaxis_range=[-0.01, 1.01],
        height=460,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend=LEGEND_BELOW,
    )
    return fig


def reliability_figure(
    bins: dict, probs=None, *, title: str | None = None, threshold: float | None = None
) -> go.Figure:
    """Reliability diagram (frequency vs mean confidence per bin, with each bin's 95 %
    Wilson interval as error bars) over a histogram of the confidences per bin; a
    decision ``threshold``, when given, is a vertical line across both.

    Built as one figure with two stacked y axes (domains) on a shared x axis rather than
    with ``make_subplots``, which is several times slower: the threshold slider redraws
    it on every step.
    """
    conf = np.asarray(bins["confidence"], dtype=float)
    freq = np.asarray(bins["frequency"], dtype=float)
    ok = ~np.isnan(conf)
    lower, upper = np.asarray(bins["lower"]), np.asarray(bins["upper"])
    data = [
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name=_("perfect calibration"),
            line={"dash": "dot", "color": "grey"},
            xaxis="x",
            yaxis="y",
        ),
        go.Scatter(
            x=conf[ok],
            y=freq[ok],
            mode="lines+markers",
            name=_("observed frequency (95% Wilson interval)"),
            customdata=np.column_stack(
                [
                    np.asarray(bins["freq_low"])[ok],
                    np.asarray(bins["freq_high"])[ok],
                    np.asarray(bins["count"])[ok],
                ]
            ),
            hovertemplate=plain(
                _(
                    "mean probability {x}<br>frequency {y}<br>95% interval [{low}, {high}]<br>{n} items"
                ),
                x="%{x:.4f}",
                y="%{y:.4f}",
                low="%{customdata[0]:.4f}",
                high="%{customdata[1]:.4f}",
                n="%{customdata[2]:" + plotly_grouping() + ".0f}",
            )
            + "<extra></extra>",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": (np.asarray(bins["freq_high"]) - freq)[ok],
                "arrayminus": (freq - np.asarray(bins["freq_low"]))[ok],
            },
            xaxis="x",
            yaxis="y",
        ),
        go.Bar(
            x=(lower + upper) / 2,
            y=bins["count"],
            width=(upper - lower),
            name=_("count"),
            marker_color="rgba(100, 100, 200, 0.6)",
            xaxis="x",
            yaxis="y2",
            hovertemplate="[%{customdata[0]:.4f}, %{customdata[1]:.4f}]: "
            + plain(_("{n} items"), n="%{y:" + plotly_grouping() + "d}")
            + "<extra></extra>",
            customdata=np.column_stack([lower, upper]),
        ),
    ]
    shapes, annotations = [], []
    if threshold is not None:
        t = float(threshold)
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": t,
                "x1": t,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#d62728", "width": 2},
            }
        )
        annotations.append(
            {
                "x": t,
                "y": 1.0,
                "xref": "x",
                "yref": "paper",
                "text": plain(_("threshold {t}"), t=threshold_text(t)),
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom",
                "font": {"color": "#d62728"},
            }
        )
    layout = go.Layout(
        height=600,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        title=title,
        bargap=0,
        legend={"orientation": "h", "x": 0, "y": -0.1, "yanchor": "top"},
        xaxis={"range": [0, 1], "title": {"text": _("Mean predicted probability")}, "anchor": "y2"},
        yaxis={
            "domain": [0.32, 1.0],
            "range": [-0.02, 1.02],
            "title": {"text": _("Frequency of positives")},
        },
        yaxis2={"domain": [0.0, 0.26], "title": {"text": _("Count")}},
        shapes=shapes,
        annotations=annotations,
    )
    return go.Figure(data=data, layout=layout)


def dynamic_k_figure(curve, *, tau: float | None = None) -> go.Figure:
    """Recall, precision (left axis) and average K (right axis) over tau."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=curve["tau"], y=curve["recall"], name=_("evidence recall")))
    fig.add_trace(go.Scatter(x=curve["tau"], y=curve["precision"], name=_("evidence precision")))
    fig.add_trace(
        go.Scatter(x=curve["tau"], y=curve["avg_k"], name=_("average K"), line={"dash": "dash"}),
        secondary_y=True,
    )
    if tau is not None:
        fig.add_vline(x=tau, line_color="red")
    fig.update_xaxes(title_text=_("probability threshold"))
    fig.update_yaxes(title_text=_("recall / precision"), range=[0, 1.02], secondary_y=False)
    # its ticks sit on the left axis's grid (3.6, 4.54, 5.48 ...): one number of decimals
    fig.update_yaxes(title_text=_("average K"), tickformat=".2f", secondary_y=True)
    fig.update_layout(height=460, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend=LEGEND_BELOW)
    return fig


def reference_band_figure(values: dict, ranges: dict) -> go.Figure:
    """One row per metric: shaded reference bands and the measured value as a marker."""
    names = [n for n in values if n in ranges]
    fig = go.Figure()
    for i, name in enumerate(names):
        for band, (low, high) in ranges[name].items():
            fig.add_shape(
                type="rect",
                x0=low,
                x1=high,
                y0=i - 0.35,
                y1=i + 0.35,
                fillcolor=BAND_COLOURS.get(band, "rgba(150,150,150,0.2)"),
                line={"width": 0},
            )
            fig.add_annotation(
                x=(low + high) / 2, y=i + 0.42, text=_(band), showarrow=False, font={"size": 10}
            )
    fig.add_trace(
        go.Scatter(
            x=[values[n] for n in names],
            y=list(range(len(names))),
            mode="markers",
            marker={"size": 14, "color": "red", "symbol": "diamond"},
            name=_("measured"),
        )
    )
    fig.update_yaxes(
        tickvals=list(range(len(names))), ticktext=names, range=[-0.6, len(names) - 0.2]
    )
    fig.update_xaxes(range=[0, 1])
    fig.update_layout(
        height=80 + 70 * len(names), margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False
    )
    return fig
