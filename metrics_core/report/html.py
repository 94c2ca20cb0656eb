"""A self-contained HTML report of a comparison: tables, figures, conventions, versions, digests.

Pure: no plotly and no streamlit import. Figures are plotly *specifications* (plain dicts of
``data`` and ``layout``) built here from the tables; they are drawn by plotly.js, whose
source the caller passes in (:func:`plotly_js_source` reads the copy shipped inside the
plotly Python package without importing it). Without plotly.js the report holds the tables
only and says so. Every piece of text is HTML-escaped; the figure JSON is embedded with
``</`` escaped, so nothing in a run name or file name can close a tag.

The same function serves the command line (``python -m metrics_core report``) and the
app's "Download report" button, so both give the same file for the same data.
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import json
import platform
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core import __version__
from metrics_core.report import PALETTE, json_safe
from metrics_core.report.cells import format_cell, format_p
from metrics_core.report.leaderboard import BEST, CI_INDENT, leaderboard_grid
from metrics_core.stats.comparison import (
    MARKERS,
    QUERY_SET_LABELS,
    TESTS,
    compare_runs,
    leaderboard,
    leaderboard_legend,
    markers_legend,
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1100px;
color:#1f2937;padding:0 1rem;line-height:1.45}
h1{margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #e5e7eb;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #e5e7eb;padding:.3rem .6rem;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f3f4f6}
td.best{font-weight:bold;background:#e4f4e4}tr.ci td{color:#6b7280;font-size:.85em}
.legend,.note{color:#4b5563;font-size:.9rem;max-width:60rem}.figure{width:100%;height:420px}
.scroll{overflow-x:auto}
"""


def plotly_js_source() -> str | None:
    """The plotly.js bundled in the installed plotly Python package (its text), or None.

    Found with :func:`importlib.util.find_spec`, which locates the package without importing it.
    """
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "package_data" / "plotly.min.js"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def data_digest(obj) -> str:
    """A short, stable digest of a Qrels/Run (its rows) or of bytes: the report's data fingerprint.

    Examples
    --------
    >>> len(data_digest(b"q1 0 d1 1")), data_digest(b"a") == data_digest(b"a")
    (16, True)
    """
    if isinstance(obj, (bytes, bytearray)):
        return hashlib.sha256(bytes(obj)).hexdigest()[:16]
    frame = obj.to_frame() if hasattr(obj, "to_frame") else pd.DataFrame(obj)
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()[:16]


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _fmt(v, digits: int = 4) -> str:
    """:func:`~metrics_core.report.cells.format_cell`, integers with thousands separators."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return f"{int(v):,}"
    return format_cell(v, digits)


def table_html(df: pd.DataFrame, index: bool = False, best: set | None = None,
               ci_rows: set | None = None) -> str:
    """An escaped HTML table; ``best`` = {(row position, column)} cells drawn bold."""
    best, ci_rows = best or set(), ci_rows or set()
    frame = df.reset_index() if index else df
    head = "".join(f"<th>{_esc(c)}</th>" for c in frame.columns)
    body = []
    best_attr, ci_attr = ' class="best"', ' class="ci"'
    for i, row in enumerate(frame.itertuples(index=False)):
        cells = "".join(
            f"<td{best_attr if (i, c) in best else ''}>{_esc(_fmt(v))}</td>"
            for c, v in zip(frame.columns, row, strict=True))
        body.append(f"<tr{ci_attr if i in ci_rows else ''}>{cells}</tr>")
    return f"<div class=\"scroll\"><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def grid_table(board: pd.DataFrame, band: pd.DataFrame | None = None) -> str:
    """The leaderboard grid (:func:`metrics_core.report.leaderboard.leaderboard_grid`) as
    HTML: best cells bold, interval and tie-band rows grey."""
    grid = leaderboard_grid(board, band)
    best = {(i, c) for i, row in enumerate(grid.itertuples(index=False))
            for c, v in zip(grid.columns, row, strict=True) if isinstance(v, str) and BEST in v}
    ci_rows = {i for i, label in enumerate(grid["Run"]) if str(label).startswith(CI_INDENT)}
    grid["Run"] = grid["Run"].str.strip()
    return table_html(grid, best=best, ci_rows=ci_rows)


def comparison_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparison rows with plain headers (every test's corrected p, W/T/L, markers)."""
    conf = frame.attrs.get("confidence", 0.95)
    out = pd.DataFrame({
        "Run": frame["run"], "Measure": frame["measure"], "Queries": frame["n_queries"].astype(int),
        "Baseline mean": frame["mean_baseline"], "Run mean": frame["mean_run"], "Δ": frame["mean_delta"],
        f"Δ {conf:.0%} CI": [("–" if pd.isna(lo) else f"{lo:.4f} to {hi:.4f}")
                             for lo, hi in zip(frame["ci_lo"], frame["ci_hi"], strict=True)],
    })
    names = {"t": "p t-test", "wilcoxon": "p Wilcoxon", "permutation": "p randomization"}
    for t in TESTS:
        out[f"{names[t]} (corrected)"] = frame[f"p_corrected_{t}"].map(format_p)
    out["W / T / L"] = [f"{w} / {t} / {l_}" for w, t, l_ in zip(frame["wins"], frame["ties"], frame["losses"],
                                                                  strict=True)]
    out["Significant"] = frame["markers"]
    return out


def _bar_spec(board: pd.DataFrame, colours: Mapping[str, str]) -> dict:
    data = []
    for run, part in board.groupby("run", sort=False):
        data.append({"type": "bar", "name": str(run), "x": [str(m) for m in part["measure"]],
                     "y": part["mean"].tolist(), "marker": {"color": colours.get(str(run), "#7f8c8d")},
                     "error_y": {"type": "data", "symmetric": False,
                                 "array": (part["ci_hi"] - part["mean"]).tolist(),
                                 "arrayminus": (part["mean"] - part["ci_lo"]).tolist()},
                     "hovertemplate": "%{x}: %{y:.4f}<extra>" + html.escape(str(run)) + "</extra>"})
    return {"data": data, "layout": {"barmode": "group", "template": None, "yaxis": {"title": {"text": "mean"}},
                                     "margin": {"l": 50, "r": 20, "t": 30, "b": 40},
                                     "legend": {"orientation": "h"}}}


def _delta_spec(frame: pd.DataFrame, measure: str, colours: Mapping[str, str]) -> dict:
    rows = frame[frame["measure"] == measure]
    trace = {"type": "scatter", "mode": "markers", "x": rows["mean_delta"].tolist(),
             "y": [str(r) for r in rows["run"]], "text": rows["markers"].tolist(),
             "marker": {"size": 11, "color": [colours.get(str(r), "#7f8c8d") for r in rows["run"]]},
             "error_x": {"type": "data", "symmetric": False,
                         "array": (rows["ci_hi"] - rows["mean_delta"]).tolist(),
                         "arrayminus": (rows["mean_delta"] - rows["ci_lo"]).tolist()},
             "hovertemplate": "%{y}: %{x:.4f} %{text}<extra></extra>"}
    return {"data": [trace], "layout": {
        "xaxis": {"title": {"text": f"Δ {measure} vs {frame.attrs.get('baseline')}"}, "zeroline": True},
        "margin": {"l": 80, "r": 20, "t": 30, "b": 50}, "height": 140 + 40 * max(len(rows), 1),
        "shapes": [{"type": "line", "x0": 0, "x1": 0, "y0": 0, "y1": 1, "yref": "paper",
                    "line": {"dash": "dot", "color": "#6b7280"}}]}}


def figure_specs(board: pd.DataFrame, frame: pd.DataFrame, colours: Mapping[str, str]) -> list[tuple[str, dict]]:
    """(title, plotly spec) of the report's figures: means with CIs, and Δ with CI per measure."""
    specs = [("Mean of each measure with its interval", _bar_spec(board, colours))]
    for m in dict.fromkeys(frame["measure"]):
        specs.append((f"{m}: difference from the baseline with its interval", _delta_spec(frame, m, colours)))
    return specs


def _script_json(obj) -> str:
    return json.dumps(json_safe(obj)).replace("</", "<\\/").replace("<!--", "<\\!--")


def render_html(title: str, blocks: Sequence[tuple[str, str]], figures: Sequence[tuple[str, dict]] = (),
                plotly_js: str | None = None, subtitle: str = "") -> str:
    """Assemble the page: ``blocks`` are (heading, trusted HTML fragment made here); figures
    are drawn with the inline plotly.js, or replaced by a note when it is missing."""
    parts = [f"<h1>{_esc(title)}</h1>"]
    if subtitle:
        parts.append(f"<p class=\"note\">{_esc(subtitle)}</p>")
    figs_html = []
    if figures and plotly_js:
        for i, (fig_title, spec) in enumerate(figures):
            height = int(spec["layout"].get("height", 420))
            figs_html.append(f"<h3>{_esc(fig_title)}</h3><div class=\"figure\" id=\"fig{i}\" "
                             f"style=\"height:{height}px\"></div>"
                             f"<script>Plotly.newPlot(\"fig{i}\", {_script_json(spec['data'])}, "
                             f"{_script_json(spec['layout'])}, {{\"responsive\": true, \"displaylogo\": false}});"
                             f"</script>")
    elif figures:
        figs_html.append("<p class=\"note\">Figures left out: plotly is not installed, so plotly.js could "
                         "not be embedded. The tables above hold every number.</p>")
    for heading, fragment in blocks:
        parts.append(f"<h2>{_esc(heading)}</h2>{fragment}")
        if heading.startswith("Leaderboard") and figs_html:
            parts.append("<h2>Figures</h2>" + "".join(figs_html))
            figs_html = []
    if figs_html:
        parts.append("<h2>Figures</h2>" + "".join(figs_html))
    head_js = f"<script>{plotly_js}</script>" if figures and plotly_js else ""
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{_esc(title)}</title>"
            f"<style>{_CSS}</style>{head_js}</head><body>{''.join(parts)}</body></html>")


def comparison_report(evaluations, baseline: str | None = None, measures=None, *, query_set: str = "common",
                      conventions=None, data: Mapping[str, str] | None = None,
                      colours: Mapping[str, str] | None = None, plotly_js: str | None = None,
                      n_permutations: int = 10000, n_resamples: int = 1000, seed: int = 0,
                      correction: str = "holm", confidence: float = 0.95, alpha: float = 0.05,
                      test: str = "permutation", title: str = "RankLab report") -> str:
    """The whole report as one HTML string.

    Parameters
    ----------
    evaluations : list of Evaluation
        Every run, evaluated with the same measures (and, for ``query_set="qrels"``, with
        ``missing_queries="zero"``).
    baseline : str, optional
        Run the others are tested against (default: the first).
    query_set : {"common", "qrels"}
        The one query set of every table (see :mod:`metrics_core.stats.comparison`).
    data : mapping, optional
        What was evaluated: label (e.g. "qrels qrels.txt") -> digest (:func:`data_digest`).
    colours : mapping, optional
        Run name -> colour (the app passes its palette so the report matches the screen).
    plotly_js : str, optional
        plotly.js source to inline (:func:`plotly_js_source`); without it, tables only.
    """
    evaluations = list(evaluations)
    names = [ev.run_name for ev in evaluations]
    baseline = baseline or names[0]
    measures = list(measures or evaluations[0].measures)
    colours = dict(colours or {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)})
    frame = compare_runs(evaluations, baseline, measures, n_permutations=n_permutations, seed=seed,
                         correction=correction, confidence=confidence, alpha=alpha, query_set=query_set)
    board = leaderboard(evaluations, baseline, measures, query_set=query_set, n_resamples=n_resamples,
                        confidence=confidence, seed=seed, n_permutations=n_permutations, correction=correction,
                        alpha=alpha, test=test, comparison=frame)
    legend = leaderboard_legend(board)
    blocks = [("Leaderboard", grid_table(board) + f"<p class=\"legend\">{_esc(legend)}</p>")]
    blocks.append((f"Every run against {baseline}",
                   table_html(comparison_table(frame))
                   + f"<p class=\"legend\">{_esc(markers_legend(frame, tests=TESTS, paper=False))}</p>"))
    own = pd.DataFrame([{"Run": ev.run_name, **{m: ev.aggregate.get(m, np.nan) for m in measures}}
                        for ev in evaluations])
    blocks.append(("Each run on its own queries (as trec_eval reports it)",
                   table_html(own) + "<p class=\"note\">Each run's value over the queries it answered "
                   "(sums for counts, geometric mean for GMAP); runs that missed queries are on different "
                   "query sets in this table only.</p>"))
    conv = conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions or {})
    conv_rows = pd.DataFrame({"Convention": [k.replace("_", " ") for k in conv],
                              "Value": [str(v) for v in conv.values()]})
    settings = pd.DataFrame({"Setting": ["query set", "baseline", "test for the markers",
                                         "multiple-comparison correction", "permutations (sign flips)",
                                         "bootstrap resamples (run means)", "bootstrap resamples (differences)",
                                         "confidence", "alpha", "seed"],
                             "Value": [QUERY_SET_LABELS[query_set], baseline, test, correction, n_permutations,
                                       n_resamples, n_permutations, confidence, alpha, seed]})
    blocks.append(("Conventions and settings", table_html(conv_rows) + table_html(settings.astype(str))))
    if data:
        blocks.append(("Data", table_html(pd.DataFrame({"Input": list(data), "Digest (SHA-256, first 16)":
                                                        list(data.values())}))))
    plotly_version = ""
    if plotly_js:
        head = plotly_js[:200]
        marker = "plotly.js v"
        plotly_version = head[head.find(marker) + len(marker):].split()[0] if marker in head else "inline"
    import scipy

    versions = {"RankLab": __version__, "Python": platform.python_version(), "numpy": np.__version__,
                "pandas": pd.__version__, "scipy": scipy.__version__,
                "plotly.js": plotly_version or "not embedded"}
    blocks.append(("Versions", table_html(pd.DataFrame({"Software": list(versions),
                                                        "Version": list(versions.values())}))))
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    subtitle = (f"{len(names)} runs, baseline {baseline}; queries: {QUERY_SET_LABELS[query_set]}. "
                f"Markers: {', '.join(f'{v} {k}' for k, v in MARKERS.items())}. Made {stamp}.")
    return render_html(title, blocks, figure_specs(board, frame, colours), plotly_js, subtitle)


__all__ = ["comparison_report", "render_html", "figure_specs", "plotly_js_source", "data_digest",
           "table_html", "grid_table", "comparison_table"]
