"""The "Download report" button of the Overview: one self-contained HTML file."""

from __future__ import annotations

import streamlit as st

from metrics_core.report.catalogs import translations
from ui.common import state
from ui.common.i18n import N_, current_language
from ui.common.i18n import gettext as _
from ui.common.style import run_colours

#: The label of a run's digest in the report's Data table.
_RUN_LABEL = N_("run {name}")


def report_html(
    evaluations: list,
    baseline: str,
    measures: list,
    query_set: str,
    conventions,
    qrels=None,
    runs: dict | None = None,
    lang: str | None = None,
    **settings,
) -> str:
    """The "Download report" HTML: metrics_core's report assembler, with this app's run colours,
    the plotly.js shipped with the plotly package inlined (opens offline) and the words in
    ``lang`` (default the visitor's language)."""
    from metrics_core.report.html import comparison_report, data_digest, plotly_js_source

    lang = lang or current_language()
    tr = translations(lang)
    names = [ev.run_name for ev in evaluations]
    data = {}
    if qrels is not None:
        data["qrels"] = data_digest(qrels)
    for name, run in (runs or {}).items():
        data[tr.gettext(_RUN_LABEL).format(name=name)] = data_digest(run)
    return comparison_report(
        evaluations,
        baseline,
        measures,
        query_set=query_set,
        conventions=conventions,
        data=data,
        colours=run_colours(list(runs or names)),
        plotly_js=plotly_js_source(),
        gettext=tr.gettext,
        ngettext=tr.ngettext,
        lang=lang,
        **settings,
    )


def report_button(
    evaluations: list,
    baseline: str,
    measures: list,
    query_set: str,
    conventions,
    key: str,
    **settings,
) -> None:
    """A "Download report" button; the HTML is built only when clicked (deferred data)."""
    qrels = st.session_state.get(state.QRELS)
    runs = dict(st.session_state.get(state.RUNS) or {})
    evaluations, measures = list(evaluations), list(measures)
    lang = current_language()  # the file is built on the click, in the language shown now

    def build() -> str:
        return report_html(
            evaluations, baseline, measures, query_set, conventions, qrels, runs, lang, **settings
        )

    st.download_button(
        _("Download report (HTML)"),
        build,
        file_name="ranklab_report.html",
        mime="text/html",
        key=f"{state.REPORT}.{key}",
        icon=":material/description:",
        on_click="ignore",
        help=_(
            "One self-contained HTML file: tables, figures, conventions, versions and "
            "data digests; it opens offline in any browser."
        ),
    )


__all__ = ["report_html", "report_button"]
