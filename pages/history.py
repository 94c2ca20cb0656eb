"""History: saved evaluations of test suites, runs saved together side by side, and
each run's trend over time."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from ui.frame import page_setup

page_setup()

from metrics_core.errors import InputError  # noqa: E402
from metrics_core.history import REPORT_MEASURES, HistoryStore, load_sample_history  # noqa: E402
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS, format_table, provenance  # noqa: E402
from ui import history_state as hs  # noqa: E402
from ui.figures_history import batch_figure, trend_figure, trend_groups  # noqa: E402
from ui.history_actions import open_store  # noqa: E402

THRESHOLDS = {m: DEFAULT_GOOD_THRESHOLDS[m] for m in REPORT_MEASURES}
HEADERS = {"RR": "MRR (mean RR)"}

st.title("History")
st.caption("Every saved evaluation of a test suite (queries with their ground truth). Runs saved together "
           "are one batch, shown side by side; a trend joins the evaluations of the same run on the same "
           "suite over time. A value is **Good** at or above its threshold (MRR 0.7, nDCG@10 0.6, P@5 0.5), "
           "**Fair** at or above half of it, else **Needs improvement**; a row gets its worst label. The "
           "summary is **Efficient** when every mean is Good, **Needs improvement** when any mean is, else "
           "**Acceptable**.")


def keep_and_restore(store: HistoryStore) -> None:
    """Where the history lives; download it, or upload a saved one (session history only)."""
    shared = hs.is_shared()
    with st.container(border=True):
        if shared:
            st.markdown("**Shared history.** This app keeps one history for every visitor, set up by whoever "
                        "deployed it.")
        else:
            st.markdown("**Your history lives in this browser session only.** It is gone when the session "
                        "ends: download it as one file to keep it, and upload that file to continue later.")
        c1, c2 = st.columns([1, 2])
        # the file is made when the button is clicked, not on every rerun
        c1.download_button("Download history", _history_bytes(store), file_name="ranklab_history.sqlite3",
                           mime="application/vnd.sqlite3", icon=":material/download:",
                           disabled=store.count_evaluations() == 0, key="ranklab.history.download")
        if shared:
            return
        nonce = st.session_state.get(hs.UPLOAD_NONCE, 0)
        up = c2.file_uploader("Upload a saved history (replaces this session's history)",
                              type=["sqlite3", "sqlite", "db"], key=f"{hs.UPLOAD}.{nonce}")
        if up is not None and st.session_state.get(hs.UPLOAD_SEEN) != up.file_id:
            st.session_state[hs.UPLOAD_SEEN] = up.file_id
            try:
                loaded = HistoryStore.from_bytes(up.getvalue(), source=up.name)
            except InputError as exc:
                st.session_state[hs.UPLOAD_ERROR] = str(exc)
                st.session_state[hs.UPLOAD_NONCE] = nonce + 1  # a new key empties the uploader
                st.rerun()
            hs.replace_session_store(loaded)
            st.session_state[hs.UPLOAD_ERROR] = None
            st.toast(f"Loaded {loaded.count_evaluations()} saved evaluations from {up.name}.")
            st.rerun()
        error = st.session_state.get(hs.UPLOAD_ERROR)
        if error:
            n = store.count_evaluations()
            st.error(f"{error}. The history already here is unchanged ({n} evaluation{'s' if n != 1 else ''}).")


def _history_bytes(store: HistoryStore):
    """The download's data, deferred: this session's store (it stays open), or a shared store
    opened again at click time (the page closes its own connection when it has run)."""
    path = hs.deployer_store_path()
    if path is None:
        return store.to_bytes

    def shared() -> bytes:
        with HistoryStore(path) as again:
            return again.to_bytes()

    return shared


def sample_view() -> HistoryStore:
    """The sample history shown while nothing is saved: built once per session (read only)."""
    view = st.session_state.get(hs.SAMPLE_VIEW)
    if view is None:
        view = HistoryStore(":memory:")
        load_sample_history(view)
        st.session_state[hs.SAMPLE_VIEW] = view
    return view


def render(store: HistoryStore) -> None:
    """Everything below the store line (the caller closes a shared store)."""
    keep_and_restore(store)
    showing_sample = store.count_evaluations() == 0
    _render(store, sample_view() if showing_sample else store, showing_sample)


def _render(store: HistoryStore, view: HistoryStore, showing_sample: bool) -> None:
    if showing_sample:
        st.info("Nothing is saved in this history yet, so this is the **sample history** (one suite, six "
                "versions of a search system). Save evaluations with the Overview page's "
                "“Save this evaluation” form.", icon=":material/info:")
        if st.button("Load sample history into my history", icon=":material/download:"):
            load_sample_history(store)
            st.rerun()

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
        evals = view.list_evaluations(suite, date_from, date_to)
    except InputError as exc:
        st.error(str(exc))
        return

    summary = report.attrs["summary"]
    what = "query evaluations" if per_query else "evaluations"
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen
    row.metric(what.capitalize(), summary["count"], width=150)
    for m in REPORT_MEASURES:
        mean = summary["means"][m]
        row.metric("MRR" if m == "RR" else m, "–" if mean != mean else f"{mean:.4f}", width=130,
                   help=f"mean over the rows; label: {summary['labels'].get(m) or '–'}")
    row.metric("Overall", summary["label"] or "–", width=260)

    st.subheader("Comparative report")
    batch_of = dict(zip(evals["id"], evals["batch"], strict=True)) if len(evals) else {}
    shown = report.astype({"ID": str})
    shown.insert(1, "Batch", [str(batch_of.get(int(i), "")) if i.isdigit() else "" for i in shown["ID"]])
    st.dataframe(shown, hide_index=True, width="stretch",
                 column_config={"ID": st.column_config.TextColumn(width=50),
                                "Batch": st.column_config.TextColumn(width=55),
                                "Interpretation": st.column_config.TextColumn(width=160),
                                **{m: st.column_config.NumberColumn(HEADERS.get(m, m), format="%.4f")
                                   for m in REPORT_MEASURES}})

    prov = provenance(None, store="sample history" if showing_sample else "saved history", thresholds=THRESHOLDS)
    e1, e2, _ = st.columns([1, 1, 2])
    e1.download_button("CSV", format_table(report, "csv", prov=prov, title="Comparative report", index=False),
                       file_name="ranklab_history.csv", mime="text/csv", icon=":material/download:")
    e2.download_button("Markdown", format_table(report, "markdown", prov=prov, title="Comparative report",
                                                index=False, digits=4),
                       file_name="ranklab_history.md", mime="text/markdown", icon=":material/download:")

    batches(evals)
    trend(evals)
    if not showing_sample and len(evals):
        delete_form(store, report[report["ID"] != "Summary"])


def batches(evals) -> None:
    """The runs of one batch (saved together) side by side."""
    if evals.empty:
        return
    sizes = evals.groupby("batch")["id"].count()
    if sizes.max() < 2:
        return
    st.subheader("Runs saved together")
    info = evals.groupby("batch").agg(suite=("suite", "first"), when=("timestamp", "first"),
                                      runs=("run", lambda r: ", ".join(map(str, r))))
    options = [b for b in info.index[::-1] if sizes[b] >= 2]
    chosen = st.selectbox("Batch", options, key=hs.BATCH,
                          format_func=lambda b: f"batch {b} · {info.loc[b, 'suite']} · "
                                                f"{info.loc[b, 'when'][:16].replace('T', ' ')} · {info.loc[b, 'runs']}")
    rows = evals[evals["batch"] == chosen]
    measures = [m for m in REPORT_MEASURES if m in rows.columns]
    table = rows[["run", *measures]].rename(columns={"run": "Run", **HEADERS})
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={HEADERS.get(m, m): st.column_config.NumberColumn(format="%.4f") for m in measures})
    st.plotly_chart(batch_figure(rows, measures, HEADERS), width="stretch", key="ranklab.history.batch_chart")


def trend(evals) -> None:
    st.subheader("Trend")
    groups = trend_groups(evals)
    if not groups:
        st.caption("No trend to draw: a trend joins evaluations of the same run on the same suite saved at "
                   "different times, and no run has two such evaluations here. Runs saved together are "
                   "different systems at one moment; compare them above.")
        return
    measure = st.selectbox("Measure", list(REPORT_MEASURES), index=1, key=hs.TREND_MEASURE,
                           format_func=lambda m: HEADERS.get(m, m))
    st.plotly_chart(trend_figure(evals, measure, THRESHOLDS), width="stretch", key="ranklab.history.trend")


def delete_form(store: HistoryStore, body) -> None:
    st.subheader("Delete an evaluation")
    options = [int(i) for i in body["ID"].tolist()]
    labels = {int(i): f"#{i} · {r} · {d} · {s}" for i, r, d, s in zip(body["ID"], body["Run"], body["Date"],
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
    _opened = open_store()
    _store = _opened.__enter__()
except InputError as exc:
    # a deployer's store that cannot be opened: say what is wrong, never its path
    st.error(f"The shared history cannot be opened: {exc.problem}. Ask whoever deployed this app to check "
             "its history_store setting.")
    st.stop()
try:
    render(_store)
finally:
    _opened.__exit__(None, None, None)
