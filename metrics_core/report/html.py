"""A self-contained HTML report of a comparison: tables, figures, conventions, versions, digests.

Pure: no plotly and no streamlit import. Figures are plotly *specifications* (plain dicts of
``data`` and ``layout``) built here from the tables; they are drawn by plotly.js, whose
source the caller passes in (:func:`plotly_js_source` reads the copy shipped inside the
plotly Python package without importing it). Without plotly.js the report holds the tables
only and says so. Every piece of text is HTML-escaped; the figure JSON is embedded with
``</`` escaped, so nothing in a run name or file name can close a tag.

The same function serves the command line (``python -m metrics_core report --lang``) and
the app's "Download report" button, so both give the same file for the same data and
language: every heading, legend, caption, column header and note goes through the
``gettext`` the caller passes (English without one), the page says its language in
``<html lang>``; names and numbers are never translated.
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
from typing import Any

import numpy as np
import pandas as pd

from metrics_core._version import __version__
from metrics_core.errors import N_
from metrics_core.report.cells import MISSING, format_cell, format_p
from metrics_core.report.exports import json_safe
from metrics_core.report.labels import PALETTE
from metrics_core.report.leaderboard_grid import BEST, CI_INDENT, leaderboard_grid
from metrics_core.report.legends import (
    CORRECTION_NAMES,
    QUERY_SET_LABELS,
    TEST_NAMES,
    leaderboard_legend,
    markers_legend,
    power_sentence,
)
from metrics_core.stats.comparison import (
    COLUMNS,
    MARKERS,
    POWER_COLUMNS,
    TESTS,
    compare_runs,
    leaderboard,
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


def _same(text: str) -> str:
    return text


def _english_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _fmt(v, digits: int = 4) -> str:
    """:func:`~metrics_core.report.cells.format_cell`, integers with thousands separators."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return f"{int(v):,}"
    return format_cell(v, digits)


def table_html(
    df: pd.DataFrame, index: bool = False, best: set | None = None, ci_rows: set | None = None
) -> str:
    """An escaped HTML table; ``best`` = {(row position, column)} cells drawn bold."""
    best, ci_rows = best or set(), ci_rows or set()
    frame = df.reset_index() if index else df
    head = "".join(f"<th>{_esc(c)}</th>" for c in frame.columns)
    body = []
    best_attr, ci_attr = ' class="best"', ' class="ci"'
    for i, row in enumerate(frame.itertuples(index=False)):
        cells = "".join(
            f"<td{best_attr if (i, c) in best else ''}>{_esc(_fmt(v))}</td>"
            for c, v in zip(frame.columns, row, strict=True)
        )
        body.append(f"<tr{ci_attr if i in ci_rows else ''}>{cells}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def grid_table(board: pd.DataFrame, band: pd.DataFrame | None = None, gettext=None) -> str:
    """The leaderboard grid (:func:`metrics_core.report.leaderboard_grid.leaderboard_grid`, its
    words through ``gettext``) as HTML: best cells bold, interval and tie-band rows grey."""
    grid = leaderboard_grid(board, band, gettext=gettext)
    first = grid.columns[0]
    best = {
        (i, c)
        for i, row in enumerate(grid.itertuples(index=False))
        for c, v in zip(grid.columns, row, strict=True)
        if isinstance(v, str) and BEST in v
    }
    ci_rows = {i for i, label in enumerate(grid[first]) if str(label).startswith(CI_INDENT)}
    grid[first] = grid[first].str.strip()
    return table_html(grid, best=best, ci_rows=ci_rows)


#: The p-value columns of :func:`comparison_table`, per test (marked for the catalogs).
P_COLUMNS = {
    "t": N_("p t-test (corrected)"),
    "wilcoxon": N_("p Wilcoxon (corrected)"),
    "permutation": N_("p randomization (corrected)"),
}


def comparison_table(frame: pd.DataFrame, gettext=None) -> pd.DataFrame:
    """The comparison rows with plain headers (every test's corrected p, W/T/L, markers);
    ``gettext`` translates the headers."""
    _ = gettext or _same
    conf = frame.attrs.get("confidence", 0.95)
    out = pd.DataFrame(
        {
            _("Run"): frame["run"],
            _("Measure"): frame["measure"],
            _("Queries"): frame["n_queries"].astype(int),
            _("Baseline mean"): frame["mean_baseline"],
            _("Run mean"): frame["mean_run"],
            "Δ": frame["mean_delta"],
            _("Δ {level} CI").format(level=f"{conf:.0%}"): [
                "–"
                if pd.isna(lo)
                else _("{low} to {high}").format(low=f"{lo:.4f}", high=f"{hi:.4f}")
                for lo, hi in zip(frame["ci_lo"], frame["ci_hi"], strict=True)
            ],
        }
    )
    for t in TESTS:
        out[_(P_COLUMNS[t])] = frame[f"p_corrected_{t}"].map(format_p)
    out[_("W / T / L")] = [
        f"{w} / {t} / {l_}"
        for w, t, l_ in zip(frame["wins"], frame["ties"], frame["losses"], strict=True)
    ]
    out[_("Significant")] = frame["markers"]
    return out


def power_table(frame: pd.DataFrame, gettext=None) -> pd.DataFrame:
    """The topic set size figures of the comparison rows, with plain headers (the declared
    columns' headings, :data:`metrics_core.stats.comparison.COLUMNS`)."""
    _ = gettext or _same
    heading = {c.name: _(c.heading) for c in COLUMNS}
    out = pd.DataFrame(
        {
            _("Run"): frame["run"],
            _("Measure"): frame["measure"],
            _("Queries"): frame["n_queries"].astype(int),
            "Δ": frame["mean_delta"],
        }
    )
    for name in POWER_COLUMNS:
        values = frame[name]
        if name == "queries_needed_target" and values.isna().all():
            continue  # no chosen difference
        if name.startswith("queries_needed"):
            values = values.map(lambda v: "–" if not np.isfinite(v) else str(int(v)))
        out[heading[name]] = values
    return out


def _bar_spec(board: pd.DataFrame, colours: Mapping[str, str], _=_same) -> dict:
    data = []
    for run, part in board.groupby("run", sort=False):
        data.append(
            {
                "type": "bar",
                "name": str(run),
                "x": [str(m) for m in part["measure"]],
                "y": part["mean"].tolist(),
                "marker": {"color": colours.get(str(run), "#7f8c8d")},
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_hi"] - part["mean"]).tolist(),
                    "arrayminus": (part["mean"] - part["ci_lo"]).tolist(),
                },
                "hovertemplate": "%{x}: %{y:.4f}<extra>" + html.escape(str(run)) + "</extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            "barmode": "group",
            "template": None,
            "yaxis": {"title": {"text": _("mean")}},
            "margin": {"l": 50, "r": 20, "t": 30, "b": 40},
            "legend": {"orientation": "h"},
        },
    }


def _delta_spec(frame: pd.DataFrame, measure: str, colours: Mapping[str, str], _=_same) -> dict:
    rows = frame[frame["measure"] == measure]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "x": rows["mean_delta"].tolist(),
        "y": [str(r) for r in rows["run"]],
        "text": rows["markers"].tolist(),
        "marker": {"size": 11, "color": [colours.get(str(r), "#7f8c8d") for r in rows["run"]]},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": (rows["ci_hi"] - rows["mean_delta"]).tolist(),
            "arrayminus": (rows["mean_delta"] - rows["ci_lo"]).tolist(),
        },
        "hovertemplate": "%{y}: %{x:.4f} %{text}<extra></extra>",
    }
    title = _("Δ {measure} vs {baseline}").format(
        measure=measure, baseline=frame.attrs.get("baseline")
    )
    return {
        "data": [trace],
        "layout": {
            "xaxis": {"title": {"text": title}, "zeroline": True},
            "margin": {"l": 80, "r": 20, "t": 30, "b": 50},
            "height": 140 + 40 * max(len(rows), 1),
            "shapes": [
                {
                    "type": "line",
                    "x0": 0,
                    "x1": 0,
                    "y0": 0,
                    "y1": 1,
                    "yref": "paper",
                    "line": {"dash": "dot", "color": "#6b7280"},
                }
            ],
        },
    }


def figure_specs(
    board: pd.DataFrame, frame: pd.DataFrame, colours: Mapping[str, str], gettext=None
) -> list[tuple[str, dict]]:
    """(title, plotly spec) of the report's figures: means with CIs, and Δ with CI per
    measure; titles and axis titles through ``gettext``."""
    _ = gettext or _same
    specs = [(_("Mean of each measure with its interval"), _bar_spec(board, colours, _))]
    for m in dict.fromkeys(frame["measure"]):
        specs.append(
            (
                _("{measure}: difference from the baseline with its interval").format(measure=m),
                _delta_spec(frame, m, colours, _),
            )
        )
    return specs


def _script_json(obj) -> str:
    return json.dumps(json_safe(obj)).replace("</", "<\\/").replace("<!--", "<\\!--")


def render_html(
    title: str,
    blocks: Sequence[tuple[str, str]],
    figures: Sequence[tuple[str, dict]] = (),
    plotly_js: str | None = None,
    subtitle: str = "",
    *,
    gettext=None,
    lang: str = "en",
) -> str:
    """Assemble the page: ``blocks`` are (heading, trusted HTML fragment made here); the
    figures follow the first block, drawn with the inline plotly.js, or replaced by a note
    when it is missing. ``gettext`` translates the page's own words ("Figures" and the
    note); ``lang`` is the page's language (``<html lang>``)."""
    _ = gettext or _same
    parts = [f"<h1>{_esc(title)}</h1>"]
    if subtitle:
        parts.append(f'<p class="note">{_esc(subtitle)}</p>')
    figs_html = []
    if figures and plotly_js:
        for i, (fig_title, spec) in enumerate(figures):
            height = int(spec["layout"].get("height", 420))
            figs_html.append(
                f'<h3>{_esc(fig_title)}</h3><div class="figure" id="fig{i}" '
                f'style="height:{height}px"></div>'
                f'<script>Plotly.newPlot("fig{i}", {_script_json(spec["data"])}, '
                f'{_script_json(spec["layout"])}, {{"responsive": true, "displaylogo": false}});'
                f"</script>"
            )
    elif figures:
        figs_html.append(f'<p class="note">{_esc(_(FIGURES_LEFT_OUT))}</p>')
    heading = _("Figures")
    figures_block = f"<h2>{_esc(heading)}</h2>" + "".join(figs_html) if figs_html else ""
    for i, (heading, fragment) in enumerate(blocks):
        parts.append(f"<h2>{_esc(heading)}</h2>{fragment}")
        if i == 0 and figures_block:
            parts.append(figures_block)
    if not blocks and figures_block:
        parts.append(figures_block)
    head_js = f"<script>{plotly_js}</script>" if figures and plotly_js else ""
    return (
        f'<!DOCTYPE html><html lang="{_esc(lang)}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_esc(title)}</title>'
        f"<style>{_CSS}</style>{head_js}</head><body>{''.join(parts)}</body></html>"
    )


FIGURES_LEFT_OUT = N_(
    "Figures left out: plotly is not installed, so plotly.js could not be embedded. "
    "The tables above hold every number."
)
OWN_QUERIES_NOTE = N_(
    "Each run's value over the queries it answered (sums for counts, geometric mean for "
    "GMAP); runs that missed queries are on different query sets in this table only."
)
#: The settings table's rows, in order (marked for the catalogs).
SETTING_NAMES = (
    N_("query set"),
    N_("baseline"),
    N_("test for the markers"),
    N_("multiple-comparison correction"),
    N_("permutations (sign flips)"),
    N_("bootstrap resamples (run means)"),
    N_("bootstrap resamples (differences)"),
    N_("confidence"),
    N_("alpha"),
    N_("seed"),
)


def _plotly_version(plotly_js: str | None, _=_same) -> str:
    if not plotly_js:
        return _("not embedded")
    head, marker = plotly_js[:200], "plotly.js v"
    return head[head.find(marker) + len(marker) :].split()[0] if marker in head else _("inline")


def _context_blocks(
    conventions, settings: Sequence, data: Mapping | None, plotly_js: str | None, _=_same
) -> list[tuple[str, str]]:
    """Conventions and settings, data digests and versions (the report's provenance)."""
    import scipy

    conv = conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions or {})
    # names and values are the options' own (like measure names); no depth cut reads "all"
    values = [
        (_("all") if k == "depth" else MISSING) if v is None else str(v) for k, v in conv.items()
    ]
    conv_rows = pd.DataFrame(
        {_("Convention"): [k.replace("_", " ") for k in conv], _("Value"): values}
    )
    rows = pd.DataFrame(
        {_("Setting"): [_(n) for n in SETTING_NAMES], _("Value"): [str(v) for v in settings]}
    )
    blocks = [(_("Conventions and settings"), table_html(conv_rows) + table_html(rows))]
    if data:
        blocks.append(
            (
                _("Data"),
                table_html(
                    pd.DataFrame(
                        {
                            _("Input"): list(data),
                            _("Digest (SHA-256, first 16)"): list(data.values()),
                        }
                    )
                ),
            )
        )
    versions = {
        "RankLab": __version__,
        "Python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scipy": scipy.__version__,
        "plotly.js": _plotly_version(plotly_js, _),
    }
    blocks.append(
        (
            _("Versions"),
            table_html(
                pd.DataFrame({_("Software"): list(versions), _("Version"): list(versions.values())})
            ),
        )
    )
    return blocks


def comparison_report(
    evaluations,
    baseline: str | None = None,
    measures=None,
    *,
    query_set: str = "common",
    conventions=None,
    data: Mapping[str, str] | None = None,
    colours: Mapping[str, str] | None = None,
    plotly_js: str | None = None,
    n_permutations: int = 10000,
    n_resamples: int = 1000,
    seed: int = 0,
    correction: str = "holm",
    confidence: float = 0.95,
    alpha: float = 0.05,
    test: str = "permutation",
    title: str | None = None,
    gettext=None,
    ngettext=None,
    lang: str = "en",
    all_pairs: bool | None = None,
    power: float | None = 0.8,
    power_delta: float | None = None,
) -> str:
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
    title : str, optional
        The page's title (default "RankLab report", translated).
    gettext, ngettext : callable, optional
        Translation functions (``gettext(text)``, ``ngettext(singular, plural, n)``, e.g.
        those of :func:`metrics_core.report.catalogs.translations`) for every heading,
        legend, caption, column header and note; English without them. Run names, file
        names, measure names and numbers are never translated; measures go by their
        canonical names (``RR``), as in the app.
    lang : str
        The page's language for ``<html lang>`` (the language of ``gettext``).
    all_pairs : bool, optional
        Add the table of every run against every other
        (:class:`~metrics_core.report.all_pairs.AllPairsComparison`, the same ``test``,
        correction and query set; each mean with the letters of the runs it beats). Default:
        with three runs or more.
    power, power_delta : float, optional
        The table of how many queries each comparison needs (topic set size design,
        :mod:`metrics_core.stats.power`): at this power (default 0.8; None leaves it out),
        for the observed difference and, when given, the chosen ``power_delta``.

    Returns
    -------
    str
        The page. Every text that comes from the data (run and file names, conventions) is
        HTML-escaped; the figures' JSON cannot close its script element.
    """
    _ = gettext or _same
    ngettext = ngettext or _english_plural
    evaluations = list(evaluations)
    names = [ev.run_name for ev in evaluations]
    baseline = baseline or names[0]
    measures = list(measures or evaluations[0].measures)
    colours = dict(colours or {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)})
    # the settings every table of the report shares, named once
    shared: dict[str, Any] = {
        "query_set": query_set,
        "seed": seed,
        "n_permutations": n_permutations,
        "correction": correction,
        "alpha": alpha,
    }
    frame = compare_runs(
        evaluations,
        baseline,
        measures,
        confidence=confidence,
        power=power,
        power_delta=power_delta,
        **shared,
    )
    board = leaderboard(
        evaluations,
        baseline,
        measures,
        n_resamples=n_resamples,
        confidence=confidence,
        test=test,
        comparison=frame,
        **shared,
    )
    legend = leaderboard_legend(board, gettext=gettext)
    blocks = [
        (
            _("Leaderboard"),
            grid_table(board, gettext=gettext) + f'<p class="legend">{_esc(legend)}</p>',
        )
    ]
    markers = markers_legend(frame, tests=TESTS, paper=False, gettext=gettext)
    blocks.append(
        (
            _("Every run against {baseline}").format(baseline=baseline),
            table_html(comparison_table(frame, gettext)) + f'<p class="legend">{_esc(markers)}</p>',
        )
    )
    if power is not None:
        blocks.append(
            (
                _("How many queries"),
                table_html(power_table(frame, gettext))
                + f'<p class="legend">{_esc(power_sentence(frame.attrs["power"], gettext))}</p>',
            )
        )
    if all_pairs if all_pairs is not None else len(names) >= 3:
        from metrics_core.report.all_pairs import compare_all_pairs

        pairs = compare_all_pairs(
            evaluations, measures=measures, test=test, conventions=conventions, **shared
        )
        blocks.append((_("Every run against every other"), pairs.to_html(gettext=gettext)))
    own = pd.DataFrame(
        [
            {
                _("Run"): ev.run_name,
                **{m: ev.aggregate.get(m, np.nan) for m in measures},
            }
            for ev in evaluations
        ]
    )
    blocks.append(
        (
            _("Each run on its own queries (as trec_eval reports it)"),
            table_html(own) + f'<p class="note">{_esc(_(OWN_QUERIES_NOTE))}</p>',
        )
    )
    correction_name = _(CORRECTION_NAMES[correction]) if correction != "none" else _("none")
    settings = [
        _(QUERY_SET_LABELS[query_set]),
        baseline,
        _(TEST_NAMES[test]),
        correction_name,
        n_permutations,
        n_resamples,
        n_permutations,
        confidence,
        alpha,
        seed,
    ]
    blocks += _context_blocks(conventions, settings, data, plotly_js, _)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    subtitle = _(
        "{runs}, baseline {baseline}; queries: {queries}. Markers: {markers}. Made {stamp}."
    ).format(
        runs=ngettext("{n} run", "{n} runs", len(names)).format(n=len(names)),
        baseline=baseline,
        queries=_(QUERY_SET_LABELS[query_set]),
        stamp=stamp,
        markers=", ".join(f"{v} {_(TEST_NAMES[k])}" for k, v in MARKERS.items()),
    )
    return render_html(
        _("RankLab report") if title is None else title,
        blocks,
        figure_specs(board, frame, colours, gettext),
        plotly_js,
        subtitle,
        gettext=gettext,
        lang=lang,
    )


__all__ = [
    "comparison_report",
    "render_html",
    "figure_specs",
    "plotly_js_source",
    "data_digest",
    "table_html",
    "grid_table",
    "comparison_table",
    "power_table",
    "P_COLUMNS",
    "SETTING_NAMES",
]
