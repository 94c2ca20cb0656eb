"""Download buttons for every table: CSV, JSON, Markdown and LaTeX with provenance."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from metrics_core.report import format_table, provenance

EXPORTS = (("csv", "CSV", "text/csv", "csv"), ("json", "JSON", "application/json", "json"),
           ("markdown", "Markdown", "text/markdown", "md"), ("latex", "LaTeX", "application/x-tex", "tex"))


def export_texts(df: pd.DataFrame, conventions=None, title: str | None = None, **extra) -> dict[str, str]:
    """The four export texts of a table (pure; tests call it without Streamlit)."""
    prov = provenance(conventions, **extra)
    df = _plain(df)
    return {fmt: format_table(df, fmt, prov=prov, title=title) for fmt, *_ in EXPORTS}


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Dates as ISO text (report.json_safe does not know Timestamps)."""
    dated = [c for c in df.columns if pd.api.types.is_datetime64_any_dtype(df[c])]
    if not dated:
        return df
    out = df.copy()
    for c in dated:
        out[c] = out[c].dt.strftime("%Y-%m-%d").where(out[c].notna(), "")
    return out


def download_table(df: pd.DataFrame, name: str, conventions=None, title: str | None = None,
                   key: str | None = None, **extra) -> None:
    """A row of download buttons (CSV, JSON, Markdown, LaTeX) for ``df``."""
    texts = export_texts(df, conventions, title, **extra)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "table"
    cols = st.columns(len(EXPORTS))
    for col, (fmt, label, mime, ext) in zip(cols, EXPORTS, strict=True):
        col.download_button(f"{label}", texts[fmt], file_name=f"{slug}.{ext}", mime=mime,
                            key=f"ranklab.dl.{key or slug}.{fmt}", icon=":material/download:",
                            on_click="ignore")


def report_html(evaluations: list, baseline: str, measures: list, query_set: str, conventions,
                qrels=None, runs: dict | None = None, **settings) -> str:
    """The "Download report" HTML: metrics_core's report assembler, with this app's run colours
    and the plotly.js shipped with the plotly package inlined (opens offline)."""
    from metrics_core.report.html import comparison_report, data_digest, plotly_js_source
    from ui.style import run_colours

    names = [ev.run_name for ev in evaluations]
    data = {}
    if qrels is not None:
        data["qrels"] = data_digest(qrels)
    for name, run in (runs or {}).items():
        data[f"run {name}"] = data_digest(run)
    return comparison_report(evaluations, baseline, measures, query_set=query_set, conventions=conventions,
                             data=data, colours=run_colours(list(runs or names)), plotly_js=plotly_js_source(),
                             **settings)


def report_button(evaluations: list, baseline: str, measures: list, query_set: str, conventions,
                  key: str, **settings) -> None:
    """A "Download report" button; the HTML is built only when clicked (deferred data)."""
    qrels = st.session_state.get("ranklab.qrels")
    runs = dict(st.session_state.get("ranklab.runs") or {})
    evaluations, measures = list(evaluations), list(measures)

    def build() -> str:
        return report_html(evaluations, baseline, measures, query_set, conventions, qrels, runs, **settings)

    st.download_button("Download report (HTML)", build, file_name="ranklab_report.html", mime="text/html",
                       key=f"ranklab.report.{key}", icon=":material/description:", on_click="ignore",
                       help="One self-contained HTML file: tables, figures, conventions, versions and "
                            "data digests; it opens offline in any browser.")
