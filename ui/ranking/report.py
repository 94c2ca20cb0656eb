"""The "Download report" button of the Overview: one self-contained HTML file."""

from __future__ import annotations

import streamlit as st

from ui.common import state
from ui.common.i18n import gettext as _
from ui.common.style import run_colours


def report_html(evaluations: list, baseline: str, measures: list, query_set: str, conventions,
                qrels=None, runs: dict | None = None, **settings) -> str:
    """The "Download report" HTML: metrics_core's report assembler, with this app's run colours
    and the plotly.js shipped with the plotly package inlined (opens offline)."""
    from metrics_core.report.html import comparison_report, data_digest, plotly_js_source

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
    qrels = st.session_state.get(state.QRELS)
    runs = dict(st.session_state.get(state.RUNS) or {})
    evaluations, measures = list(evaluations), list(measures)

    def build() -> str:
        return report_html(evaluations, baseline, measures, query_set, conventions, qrels, runs, **settings)

    st.download_button(_("Download report (HTML)"), build, file_name="ranklab_report.html", mime="text/html",
                       key=f"{state.REPORT}.{key}", icon=":material/description:", on_click="ignore",
                       help=_("One self-contained HTML file: tables, figures, conventions, versions and "
                              "data digests; it opens offline in any browser."))


__all__ = ["report_html", "report_button"]
