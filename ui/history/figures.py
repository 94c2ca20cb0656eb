"""Plotly figures of the History page (pure: data in, ``go.Figure`` out)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from ui.common.colours import colours_for
from ui.common.i18n import gettext as _
from ui.common.style import plain, plot_text


def trend_groups(evals: pd.DataFrame) -> dict:
    """``{(suite, run): rows}`` of the series a trend may join: the evaluations of the
    same run on the same suite, oldest first, saved at two times or more.

    ``evals`` is :meth:`metrics_core.history.HistoryStore.list_evaluations` (columns
    ``id, suite, run, timestamp, batch`` and the measures). Runs saved together (one
    batch) are different systems at one moment, never a trend.
    """
    out = {}
    if evals.empty:
        return out
    for (suite, run), rows in evals.sort_values(["timestamp", "id"]).groupby(
        ["suite", "run"], sort=False
    ):
        if rows["timestamp"].nunique() >= 2:
            out[(suite, run)] = rows
    return out


def trend_figure(
    evals: pd.DataFrame, measure: str, thresholds: Mapping[str, float] | None = None
) -> go.Figure:
    """``measure`` over time: one line per (suite, run) evaluated at two times or more.

    The x axis is the evaluation time (UTC); evaluations of other runs are not joined
    to them. The measure's "Good" threshold, when given, is a dotted line.
    """
    thresholds = dict(thresholds or {})
    fig = go.Figure()
    groups = trend_groups(evals)
    several_suites = len({s for s, _ in groups}) > 1
    colours = colours_for(run for _, run in groups)  # a run keeps its colour on every page
    for (suite, run), rows in groups.items():
        if measure not in rows.columns:
            continue
        fig.add_trace(
            go.Scatter(
                x=pd.to_datetime(rows["timestamp"], utc=True),
                y=rows[measure].to_numpy(dtype=float),
                mode="lines+markers",
                name=plot_text(f"{run} · {suite}" if several_suites else run),
                line={"color": colours[str(run)]},
                customdata=rows[["id", "suite"]]
                .assign(suite=rows["suite"].map(plot_text))
                .to_numpy(dtype=object),
                hovertemplate=f"{measure}: %{{y:.4f}}<br>%{{x|%Y-%m-%d %H:%M}} UTC<br>"
                + plain(
                    _("evaluation #{id}<br>suite {suite}"),
                    id="%{customdata[0]}",
                    suite="%{customdata[1]}",
                )
                + "<extra></extra>",
            )
        )
    if measure in thresholds:
        fig.add_hline(
            y=thresholds[measure],
            line={"color": "#555", "dash": "dot", "width": 1},
            annotation_text=plain(_("Good ≥ {value}"), value=f"{thresholds[measure]:g}"),
            annotation_position="top left",
        )
    fig.update_layout(
        title=plain(_("{measure} over time, per run"), measure=measure),
        xaxis_title=_("saved (UTC)"),
        yaxis_title=measure,
        yaxis_range=[0, 1.05],
        hovermode="closest",
        legend_title_text=_("run"),
        margin={"t": 50, "b": 40},
    )
    return fig


def batch_figure(
    batch: pd.DataFrame, measures, labels: Mapping[str, str] | None = None
) -> go.Figure:
    """The runs of one batch side by side: grouped bars, one group per measure
    (``labels`` renames measures on the axis, e.g. RR as MRR)."""
    fig = go.Figure()
    names = [(labels or {}).get(m, m) for m in measures]
    colours = colours_for(batch["run"])
    for _i, row in batch.iterrows():
        fig.add_trace(
            go.Bar(
                x=names,
                y=[float(row[m]) if m in row else None for m in measures],
                name=plot_text(row["run"]),
                marker_color=colours[str(row["run"])],
                hovertemplate=plot_text(row["run"]) + "<br>%{x}: %{y:.4f}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        yaxis_range=[0, 1.05],
        yaxis_title=_("mean over queries"),
        legend_title_text=_("run"),
        margin={"t": 30, "b": 40},
        height=320,
    )
    return fig
