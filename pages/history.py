"""History: saved evaluations of controlled test suites and seed 001's comparative report."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from ui.frame import page_setup

page_setup()

from metrics_core.errors import InputError  # noqa: E402
from metrics_core.history import REPORT_MEASURES, HistoryStore, load_sample_history  # noqa: E402
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS, format_table, provenance  # noqa: E402
from ui import history_state as hs  # noqa: E402
from ui.figures_history import trend_figure  # noqa: E402
from ui.history_actions import open_store  # noqa: E402

THRESHOLDS = {m: DEFAULT_GOOD_THRESHOLDS[m] for m in REPORT_MEASURES}

st.title("History")
st.caption("Every saved evaluation of a test suite (queries with their ground truth), compared over time. "
           "A value is **Good** at or above its threshold (MRR 0.7, nDCG@10 0.6, P@5 0.5), **Fair** at or "
           "above half of it, else **Needs improvement**; a row gets its worst label. The summary is "
           "**Efficient** when every mean is Good, **Needs improvement** when any mean is, else **Acceptable**.")

with st.expander("History store", icon=":material/database:"):
    new_path = st.text_input("Store file", value=hs.store_path(),
                             help="A SQLite file, created on first use. The command line uses the same "
                                  "file by default: python -m metrics_core history report")
    if new_path.strip() and new_path.strip() != st.session_state[hs.STORE_PATH]:
        st.session_state[hs.STORE_PATH] = new_path.strip()
        st.session_state[hs.PENDING_DELETE] = None


def render(store: HistoryStore) -> None:
    """Everything below the store picker (the caller closes the store)."""
    showing_sample = store.count_evaluations() == 0
    view = HistoryStore(":memory:") if showing_sample else store
    try:
        _render(store, view, showing_sample)
    finally:
        if view is not store:
            view.close()


def _render(store: HistoryStore, view: HistoryStore, showing_sample: bool) -> None:
    if showing_sample:
        st.info(f"Your history store ({store.path}) is empty, so this is the **sample history** "
                "(one suite, six versions of a search system). Save evaluations from the Overview page or with "
                "`python -m metrics_core history add`.", icon=":material/info:")
        if st.button("Load sample history into my store", icon=":material/download:"):
            load_sample_history(store)
            st.rerun()
        load_sample_history(view)

    everything = view.list_evaluations()
    suites = view.suite_names()
    c1, c2, c3 = st.columns([2, 2, 3])
    suite_choice = c1.selectbox("Suite", [hs.ALL_SUITES, *suites], key=hs.SUITE)
    per_query = c2.radio("Rows", hs.VIEWS, key=hs.VIEW, horizontal=True) == hs.VIEWS[1]
    first = dt.date.fromisoformat(everything["timestamp"].min()[:10]) if len(everything) else dt.date.today()
    last = dt.date.fromisoformat(everything["timestamp"].max()[:10]) if len(everything) else dt.date.today()
    dates = c3.date_input("Dates (UTC, inclusive)", value=(first, last), key=hs.DATES)
    date_from, date_to = (tuple(dates) + (None, None))[:2] if isinstance(dates, (tuple, list)) else (dates, dates)

    suite = None if suite_choice == hs.ALL_SUITES else suite_choice
    try:
        report = view.report(suite, date_from, date_to, per_query=per_query, thresholds=THRESHOLDS)
        by_evaluation = report if not per_query else view.report(suite, date_from, date_to, thresholds=THRESHOLDS)
    except InputError as exc:
        st.error(str(exc))
        return

    summary = report.attrs["summary"]
    what = "query evaluations" if per_query else "evaluations"
    cols = st.columns([1] * (len(REPORT_MEASURES) + 1) + [2])
    cols[0].metric(what.capitalize(), summary["count"])
    for col, m in zip(cols[1:], REPORT_MEASURES, strict=False):
        mean = summary["means"][m]
        col.metric("MRR" if m == "RR" else m, "–" if mean != mean else f"{mean:.3f}",
                   help=f"mean over the rows; label: {summary['labels'].get(m) or '–'}")
    cols[-1].metric("Overall", summary["label"] or "–")

    st.subheader("Comparative report")
    st.dataframe(report.astype({"ID": str}), hide_index=True, width="stretch",
                 column_config={"ID": st.column_config.TextColumn(width=80),
                                "Interpretation": st.column_config.TextColumn(width=150),
                                **{m: st.column_config.NumberColumn("MRR (RR)" if m == "RR" else m,
                                                                    format="%.3f") for m in REPORT_MEASURES}})

    prov = provenance(None, store=str(store.path) if not showing_sample else "sample history", thresholds=THRESHOLDS)
    e1, e2, _ = st.columns([1, 1, 2])
    e1.download_button("CSV", format_table(report, "csv", prov=prov, title="Comparative report", index=False),
                       file_name="ranklab_history.csv", mime="text/csv", icon=":material/download:")
    e2.download_button("Markdown", format_table(report, "markdown", prov=prov, title="Comparative report",
                                                index=False, digits=3),
                       file_name="ranklab_history.md", mime="text/markdown", icon=":material/download:")

    st.subheader("Trend")
    body = by_evaluation.iloc[:-1]
    if len(body):
        st.plotly_chart(trend_figure(body, REPORT_MEASURES, THRESHOLDS), width="stretch")
    else:
        st.caption("No evaluation in this range.")

    if not showing_sample and len(body):
        st.subheader("Delete an evaluation")
        options = body["ID"].tolist()
        labels = {i: f"#{i} · {r} · {d} · {s}" for i, r, d, s in zip(body["ID"], body["Run"], body["Date"],
                                                                      body["Suite"], strict=True)}
        d1, d2 = st.columns([3, 1])
        chosen = d1.selectbox("Evaluation", options, format_func=labels.get, key=hs.DELETE_ID)
        if d2.button("Delete…", icon=":material/delete:"):
            st.session_state[hs.PENDING_DELETE] = chosen
        pending = st.session_state.get(hs.PENDING_DELETE)
        if pending is not None:
            st.warning(f"Delete evaluation {labels.get(pending, pending)} and its per-query values? "
                       "This cannot be undone.")
            y, n, _ = st.columns([1, 1, 4])
            if y.button("Yes, delete", type="primary"):
                try:
                    store.delete_evaluation(pending)
                    st.session_state[hs.PENDING_DELETE] = None
                    st.toast(f"Deleted evaluation {pending}.")
                    st.rerun()
                except InputError as exc:
                    st.session_state[hs.PENDING_DELETE] = None
                    st.error(str(exc))
            if n.button("Cancel"):
                st.session_state[hs.PENDING_DELETE] = None
                st.rerun()


try:
    _store = open_store()
except InputError as exc:
    st.error(str(exc))
    st.stop()
try:
    render(_store)
finally:
    _store.close()
