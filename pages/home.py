"""Home page: what RankLab is, and its four tasks, each with the sample one click away."""

import streamlit as st

from ui.common import state
from ui.common.frame import page, page_link
from ui.common.i18n import N_, _
from ui.ranking.data import has_data
from ui.ranking.state import Home
from ui.samples import load_every_sample

#: (task, title, what it answers, page it opens, icon, further links (path, label, icon))
TASKS = (
    (
        "rankings",
        N_("Rankings"),
        N_(
            "Score ranked results against relevance judgements: P@5, nDCG@10, RR, AP and more, "
            "exactly like trec_eval."
        ),
        "pages/overview.py",
        ":material/leaderboard:",
        (
            ("pages/data.py", N_("Upload your own qrels and runs"), ":material/upload_file:"),
            ("pages/table.py", N_("Comparative table for a thesis"), ":material/table_chart:"),
        ),
    ),
    (
        "detection",
        N_("Detection and calibration"),
        N_(
            "A yes/no gate on a score: ROC and PR curves, the threshold, calibration and dynamic K."
        ),
        "pages/detection.py",
        ":material/radar:",
        (
            ("pages/calibration.py", N_("Calibration"), ":material/tune:"),
            ("pages/dynamic_k.py", N_("Dynamic K"), ":material/filter_list:"),
        ),
    ),
    (
        "hashing",
        N_("Hash codes"),
        N_("Binary codes searched by Hamming distance: mAP and precision at each cutoff."),
        "pages/hashing.py",
        ":material/tag:",
        (),
    ),
    (
        "compare",
        N_("Comparing systems"),
        N_(
            "Is one system significantly better? Paired tests, corrected p-values and effect sizes."
        ),
        "pages/compare.py",
        ":material/compare_arrows:",
        (("pages/table.py", N_("Comparative table"), ":material/table_chart:"),),
    ),
)


def open_with_sample(path: str) -> None:
    """Load every bundled sample and open ``path`` (on a page run alone: say where to go)."""
    load_every_sample()
    try:
        st.switch_page(path)
    except st.errors.StreamlitAPIException:  # the page registry is not active (a test run)
        st.success(_("Sample data loaded: open the page from the menu."))


def task_card(task, title, text, path, icon, links) -> None:
    with st.container(border=True):
        st.subheader(_(title))
        st.write(_(text))
        if st.button(
            _("Open with the sample data"),
            key=f"{state.HOME_OPEN}.{task}",
            icon=icon,
            width="stretch",
        ):
            open_with_sample(path)
        for link_path, label, link_icon in links:
            page_link(link_path, _(label), link_icon)


with page("RankLab"):
    st.write(
        _(
            "Evaluation workbench for search and retrieval systems: exact like trec_eval, "
            "with every measure explained."
        )
    )
    for row in (TASKS[:2], TASKS[2:]):
        for column, task in zip(st.columns(2), row, strict=True):
            with column:
                task_card(*task)
    c1, c2 = st.columns(2)
    with c1:
        if st.button(
            _("Load sample data"),
            key=Home.SAMPLE,
            on_click=load_every_sample,
            help=_(
                "Every sample at once: 50 judged queries with three runs, query metadata, "
                "a click log, detection scores, dynamic-K candidates and hash codes."
            ),
        ):
            st.success(
                _(
                    "Sample loaded: 50 queries, runs bm25, dense and hybrid, query metadata, a click log, "
                    "detection scores, dynamic-K candidates and hash codes."
                )
            )
    with c2:
        if has_data():
            page_link("pages/overview.py", _("Overview of every run"), ":material/leaderboard:")
        page_link("pages/learn.py", _("How each measure is computed"), ":material/school:")
