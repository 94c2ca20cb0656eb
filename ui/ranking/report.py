"""The "Download report" button of the Overview: one self-contained HTML file."""

from __future__ import annotations

import streamlit as st

from ui.common import state
from ui.common.i18n import current_language
from ui.common.i18n import gettext as _
from ui.ranking.data import report_html


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


__all__ = ["report_button"]
