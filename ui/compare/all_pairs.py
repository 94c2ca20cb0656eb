"""The Compare page's all-pairs section: every run against every other, letters per measure
(``mc.compare(..., all_pairs=True)``), and its Markdown, LaTeX and HTML exports."""

from __future__ import annotations

import streamlit as st

from metrics_core.errors import InputError
from metrics_core.report.all_pairs import PAIR_TEST_NAMES
from metrics_core.stats.allpairs import PAIR_TESTS
from metrics_core.stats.significance import CORRECTIONS
from ui.common.downloads import download_buttons
from ui.common.i18n import gettext as _
from ui.common.style import MISSING, md_text
from ui.compare import state as cs
from ui.compare.data import all_pairs, correction_label, export_need, export_texts


def all_pairs_section(
    p, names, measure_options, default_measures, query_set, conventions, evaluate
) -> None:
    """Draw the all-pairs table and stop the page (the baseline view is not drawn).
    ``evaluate(measures, conventions)``: the loaded runs' evaluations (the page passes the
    ranking section's :func:`ui.ranking.data.evaluate_loaded`)."""
    c1, c2, c3 = st.columns([3, 1, 1])
    measures = c1.multiselect(
        _("Measures (any name, e.g. nDCG@10, P(rel=2)@5)"),
        options=measure_options,
        default=list(default_measures),
        accept_new_options=True,
        key=cs.PAIR_MEASURES,
        placeholder=_("Choose options"),
    )
    test = c2.selectbox(
        _("Test"), PAIR_TESTS, key=cs.PAIR_TEST, format_func=lambda t: _(PAIR_TEST_NAMES[t])
    )
    correction = c3.selectbox(
        _("Correction"),
        CORRECTIONS,
        format_func=correction_label,
        disabled=test == "tukey",
        key=cs.PAIR_TEST + ".correction",
        help=_("Tukey's HSD controls the error over all pairs itself."),
    )
    if not measures:
        st.warning(_("Pick at least one measure."))
        p.stop()
    try:
        evaluations = list(evaluate(measures, conventions).values())
        comparison = all_pairs(
            evaluations, list(evaluations[0].measures), test, correction, query_set, conventions
        )
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()
    st.subheader(_("Every run against every other"))
    board = comparison.paper()
    board.index.name = _("Run")  # the library's heading is "run", in English
    st.dataframe(board, width="stretch", placeholder=MISSING)
    st.caption(md_text(comparison.legend(gettext=_)))  # it names the baselines: as text
    download_buttons(
        export_texts(comparison), "all_pairs", key="all-pairs", need=export_need(comparison)
    )
    p.stop()
