"""The History page's parts: where the history lives (download, upload), the comparative
report of the saved evaluations, the runs saved together, each run's trend, deletion."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import streamlit as st

from metrics_core.errors import InputError
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS, REPORT_MEASURES
from metrics_core.report.catalogs import N_
from metrics_core.report.cells import MISSING
from ui.common.downloads import download_table
from ui.common.i18n import gettext as _
from ui.common.i18n import ngettext
from ui.common.style import md_text, plain, say
from ui.common.thresholds import link_to_editor, session_thresholds
from ui.common.upload import upload_slot
from ui.history import data as hd
from ui.history import state as hs
from ui.history.figures import batch_figure, trend_figure, trend_groups

if TYPE_CHECKING:
    from metrics_core.history import HistoryStore

THRESHOLDS = {m: DEFAULT_GOOD_THRESHOLDS[m] for m in REPORT_MEASURES}
HEADERS = {"RR": N_("MRR (mean RR)")}


def header(measure: str) -> str:
    """A measure's column heading in the page's language (RR's is MRR (mean RR))."""
    return _(HEADERS[measure]) if measure in HEADERS else measure


#: Short names of the measures on the summary cards and in the exports' provenance.
SHORT = {"RR": "MRR"}
#: The report's labels (:data:`metrics_core.report.LABELS`, the history's overall labels),
#: marked for the catalogs and translated where shown.
LABEL_WORDS = (N_("Good"), N_("Fair"), N_("Needs improvement"), N_("Efficient"), N_("Acceptable"))
#: The comparative report's columns (:meth:`metrics_core.history.HistoryStore.report`) on screen.
COLUMN_WORDS = {
    "ID": N_("ID"),
    "Batch": N_("Batch"),
    "Suite": N_("Suite"),
    "Run": N_("Run"),
    "Date": N_("Date"),
    "Query": N_("Query"),
    "Interpretation": N_("Interpretation"),
}
CAPTION = N_(
    "Every saved evaluation of a test suite (queries with their ground truth). Runs saved together "
    "are one batch, shown side by side; a trend joins the evaluations of the same run on the same "
    "suite over time. A value is **Good** at or above its threshold (the comparative table's, by "
    "default MRR 0.7, nDCG@10 0.6, P@5 0.5), **Fair** at or above its fair threshold (by default half "
    "of it), else **Needs improvement**; a row gets its worst label. The "
    "summary is **Efficient** when every mean is Good, **Needs improvement** when any mean is, else "
    "**Acceptable**."
)


def thresholds_words(thresholds=THRESHOLDS) -> str:
    """The thresholds in words for an export's provenance ("MRR ≥ 0.7, nDCG@10 ≥ 0.6, P@5 ≥ 0.5");
    a measure given as a pair ``(good, fair)`` adds its fair threshold.

    >>> thresholds_words({"RR": 0.7, "P@5": 0.5})
    'Good: MRR ≥ 0.7, P@5 ≥ 0.5'
    >>> thresholds_words({"RR": (0.7, 0.35)})
    'Good: MRR ≥ 0.7; Fair: MRR ≥ 0.35'
    """
    goods = {m: v[0] if isinstance(v, (tuple, list)) else v for m, v in thresholds.items()}
    fairs = {m: v[1] for m, v in thresholds.items() if isinstance(v, (tuple, list))}
    text = plain(
        _("Good: {list}"), list=", ".join(f"{SHORT.get(m, m)} ≥ {v:g}" for m, v in goods.items())
    )
    if fairs:
        text += "; " + plain(
            _("Fair: {list}"),
            list=", ".join(f"{SHORT.get(m, m)} ≥ {v:g}" for m, v in fairs.items()),
        )
    return text


def unchanged(store: HistoryStore) -> str:
    """What a failed upload leaves: the history already here, and its size."""
    n = hd.count(store)
    return say(
        ngettext(
            "The history already here is unchanged ({n} evaluation).",
            "The history already here is unchanged ({n} evaluations).",
            n,
        ),
        n=n,
    )


def use_uploaded_history(files) -> None:
    """A downloaded history file as this session's history (raises InputError for anything else)."""
    up = files[0]
    loaded = hd.import_history(up.getvalue(), up.name)
    hd.replace_session_store(loaded)
    st.toast(say(_("Loaded {n} saved evaluations from {file}."), n=hd.count(loaded), file=up.name))
    st.rerun()


def keep_and_restore(store: HistoryStore) -> None:
    """Where the history lives; download it, or upload a saved one (session history only)."""
    shared = hs.is_shared()
    with st.container(border=True):
        if shared:
            st.markdown(
                _(
                    "**Shared history.** This app keeps one history for every visitor, set up by whoever "
                    "deployed it."
                )
            )
        else:
            st.markdown(
                _(
                    "**Your history lives in this browser session only.** It is gone when the session "
                    "ends: download it as one file to keep it, and upload that file to continue later."
                )
            )
        c1, c2 = st.columns([1, 2])
        # the file is made when the button is clicked, not on every rerun
        c1.download_button(
            _("Download history"),
            hd.history_bytes(store),
            file_name="ranklab_history.sqlite3",
            mime="application/vnd.sqlite3",
            icon=":material/download:",
            disabled=hd.count(store) == 0,
            key=hs.DOWNLOAD,
        )
        if shared:
            return
        upload_slot(
            hs.UPLOAD,
            _("Upload a saved history (replaces this session's history)"),
            use_uploaded_history,
            types=["sqlite3", "sqlite", "db"],
            container=c2,
            leave_on_error=True,
            after_error=lambda error: f"{error}. {unchanged(store)}",
        )


def render(store: HistoryStore) -> None:
    """Everything below the store line (the caller closes a shared store)."""
    keep_and_restore(store)
    showing_sample = hd.count(store) == 0
    draw_history(store, hd.sample_view() if showing_sample else store, showing_sample)


def draw_history(store: HistoryStore, view: HistoryStore, showing_sample: bool) -> None:
    if showing_sample:
        st.info(
            _(
                "Nothing is saved in this history yet, so this is the **sample history** (one suite, six "
                "versions of a search system). Save evaluations with the Overview page's "
                "“Save this evaluation” form."
            ),
            icon=":material/info:",
        )
        if st.button(_("Load sample history into my history"), icon=":material/download:"):
            hd.load_sample_into(store)
            st.rerun()

    everything = hd.evaluations(view)
    suites = hd.suites(view)
    # one row that wraps on a narrow screen, each box wide enough for its value (not cut)
    c1 = c2 = c3 = st.container(horizontal=True, gap="medium")
    suite_choice = c1.selectbox(
        _("Suite"),
        [hs.ALL_SUITES, *suites],
        key=hs.SUITE,
        format_func=lambda v: _(v) if v == hs.ALL_SUITES else v,
        width=220,
    )
    per_query = (
        c2.radio(_("Rows"), hs.VIEWS, key=hs.VIEW, horizontal=True, format_func=_, width="content")
        == hs.VIEWS[1]
    )
    first = (
        dt.date.fromisoformat(everything["timestamp"].min()[:10])
        if len(everything)
        else dt.date.today()
    )
    last = (
        dt.date.fromisoformat(everything["timestamp"].max()[:10])
        if len(everything)
        else dt.date.today()
    )
    dates = c3.date_input(_("Dates (UTC, inclusive)"), value=(first, last), key=hs.DATES, width=260)
    date_from, date_to = (
        (tuple(dates) + (None, None))[:2] if isinstance(dates, (tuple, list)) else (dates, dates)
    )

    suite = None if suite_choice == hs.ALL_SUITES else suite_choice
    current = session_thresholds(REPORT_MEASURES)  # the comparative table's (one source)
    try:
        report = hd.report(
            view,
            suite,
            date_from,
            date_to,
            per_query=per_query,
            thresholds=current,
            ngettext=ngettext,
        )
        evals = hd.evaluations(view, suite, date_from, date_to)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        return

    summary = report.attrs["summary"]
    what = _("Query evaluations") if per_query else _("Evaluations")
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen
    row.metric(what, summary["count"], width=150)
    for m in REPORT_MEASURES:
        mean = summary["means"][m]
        label = summary["labels"].get(m)
        row.metric(
            SHORT.get(m, m),
            "–" if mean != mean else f"{mean:.4f}",
            width=130,
            help=say(_("mean over the rows; label: {label}"), label=_(label) if label else "–")
            if mean == mean
            else _("“–”: no row has a value for this measure."),
        )
    overall = summary["label"]
    row.metric(
        _("Overall"),
        _(overall) if overall else "–",
        width=260,
        help=None if overall else _("“–”: no row to label."),
    )

    st.subheader(_("Comparative report"))
    link_to_editor(
        REPORT_MEASURES,
        _(
            "Labels with your own thresholds and names, or each query of a loaded run: "
            "Comparative table"
        ),
    )
    batch_of = dict(zip(evals["id"], evals["batch"], strict=True)) if len(evals) else {}
    shown = report.astype({"ID": str})
    shown.insert(
        1, "Batch", [str(batch_of.get(int(i), "")) if i.isdigit() else "" for i in shown["ID"]]
    )
    shown["Interpretation"] = [_(v) if v else v for v in shown["Interpretation"]]
    shown["ID"] = [_("Summary") if v == "Summary" else v for v in shown["ID"]]
    # a column that says nothing is left off screen (nine columns were 832 px on a 766 px page,
    # the last cut): the suite when every row has the same one (named above the table), the
    # batch when every batch is one evaluation (then it repeats the ID)
    rows = shown[shown["ID"] != _("Summary")]
    suites = rows["Suite"].dropna().unique() if "Suite" in rows.columns else []
    one_per_batch = len(evals) == 0 or evals["batch"].nunique() == len(evals)
    hidden = {"Batch"} if one_per_batch else set()
    if len(suites) == 1:
        hidden.add("Suite")
        st.caption(say(_("Suite: {suite}"), suite=suites[0]))
    st.dataframe(
        shown.style.format(
            {m: "{:.4f}" for m in REPORT_MEASURES if m in shown.columns}, na_rep="–"
        ),
        hide_index=True,
        width="stretch",
        column_order=[c for c in shown.columns if c not in hidden],
        column_config={
            "ID": st.column_config.TextColumn(_("ID"), width=80),  # "Resumen" was cut at 50
            "Batch": st.column_config.TextColumn(_("Batch"), width=55),
            "Interpretation": st.column_config.TextColumn(_("Interpretation"), width=160),
            **{
                c: st.column_config.TextColumn(_(w))
                for c, w in COLUMN_WORDS.items()
                if c in shown.columns and c not in ("ID", "Batch", "Interpretation")
            },
            **{m: st.column_config.NumberColumn(header(m)) for m in REPORT_MEASURES},
        },
        placeholder=MISSING,
    )
    if shown[[m for m in REPORT_MEASURES if m in shown.columns]].isna().any().any():
        st.caption(_("“–”: the evaluation was saved without this measure."))

    exported = shown.rename(
        columns=lambda c: _(COLUMN_WORDS[c]) if c in COLUMN_WORDS else header(c)
    )
    download_table(
        exported,
        "ranklab_history",
        title=_("Comparative report"),
        key="history",
        index=False,
        store=_("sample history") if showing_sample else _("saved history"),
        thresholds=thresholds_words(current),
    )

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
    st.subheader(_("Runs saved together"))
    info = evals.groupby("batch").agg(
        suite=("suite", "first"),
        when=("timestamp", "first"),
        runs=("run", lambda r: ", ".join(map(str, r))),
    )
    options = [b for b in info.index[::-1] if sizes[b] >= 2]
    chosen = st.selectbox(
        _("Batch"),
        options,
        key=hs.BATCH,
        format_func=lambda b: (
            plain(_("batch {b}"), b=b) + f" · {info.loc[b, 'suite']} · "
            f"{info.loc[b, 'when'][:16].replace('T', ' ')} · {info.loc[b, 'runs']}"
        ),
    )
    rows = evals[evals["batch"] == chosen]
    measures = [m for m in REPORT_MEASURES if m in rows.columns]
    table = rows[["run", *measures]].rename(
        columns={"run": _("Run"), **{m: header(m) for m in measures}}
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={header(m): st.column_config.NumberColumn(format="%.4f") for m in measures},
        placeholder=MISSING,
    )
    st.plotly_chart(
        batch_figure(rows, measures, {m: header(m) for m in HEADERS}),
        width="stretch",
        key=hs.BATCH_CHART,
    )


def trend(evals) -> None:
    st.subheader(_("Trend"))
    groups = trend_groups(evals)
    if not groups:
        st.caption(
            _(
                "No trend to draw: a trend joins evaluations of the same run on the same suite saved at "
                "different times, and no run has two such evaluations here. Runs saved together are "
                "different systems at one moment; compare them above."
            )
        )
        return
    measure = st.selectbox(
        _("Measure"),
        list(REPORT_MEASURES),
        index=1,
        key=hs.TREND_MEASURE,
        format_func=header,
    )
    goods = {m: good for m, (good, _fair) in session_thresholds(REPORT_MEASURES).items()}
    st.plotly_chart(trend_figure(evals, measure, goods), width="stretch", key=hs.TREND_CHART)


def delete_form(store: HistoryStore, body) -> None:
    st.subheader(_("Delete an evaluation"))
    options = [int(i) for i in body["ID"].tolist()]
    labels = {
        int(i): f"#{i} · {r} · {d} · {s}"
        for i, r, d, s in zip(body["ID"], body["Run"], body["Date"], body["Suite"], strict=True)
    }
    d1, d2 = st.columns([3, 1])
    chosen = d1.selectbox(_("Evaluation"), options, format_func=labels.get, key=hs.DELETE_ID)
    if d2.button(_("Delete…"), icon=":material/delete:"):
        st.session_state[hs.PENDING_DELETE] = chosen
    pending = st.session_state.get(hs.PENDING_DELETE)
    if pending is not None:
        st.warning(
            say(
                _(
                    "Delete evaluation {evaluation} and its per-query values? This cannot be undone."
                ),
                evaluation=labels.get(pending, pending),
            )
        )
        y, n, _spacer = st.columns([1, 1, 4])
        if y.button(_("Yes, delete"), type="primary"):
            try:
                hd.delete(store, pending)
                st.session_state[hs.PENDING_DELETE] = None
                st.toast(say(_("Deleted evaluation {id}."), id=pending))
                st.rerun()
            except InputError as exc:
                st.session_state[hs.PENDING_DELETE] = None
                st.error(md_text(exc.plain(_)))
        if n.button(_("Cancel")):
            st.session_state[hs.PENDING_DELETE] = None
            st.rerun()


def save_evaluation_form(evaluations, qrels, meta=None, *, key: str = "overview") -> int | None:
    """A "Save this evaluation" form: suite name, run choice, note, button.

    ``evaluations`` is a list of ``mc.Evaluation`` (one per run); the chosen runs are
    saved as one batch. Shows success or the error message (never a traceback); returns
    the last saved id or None.
    """
    evaluations = list(evaluations)
    if not evaluations:
        return None
    with st.form(f"{hs.SAVE_FORM}.{key}"):
        suite = st.text_input(
            _("Test suite name"),
            key=f"{hs.SAVE_SUITE}.{key}",
            help=_("Evaluations of the same suite are compared over time on the History page."),
        )
        names = [ev.run_name for ev in evaluations]
        chosen = st.multiselect(
            _("Runs to save"), names, default=names, placeholder=_("Choose options")
        )
        note = st.text_input(_("Note (optional)"))
        submitted = st.form_submit_button(_("Save this evaluation"), icon=":material/save:")
    if not submitted:
        return None
    picked = [ev for ev in evaluations if ev.run_name in chosen]
    if not picked:
        st.error(_("Choose at least one run to save."))
        return None
    try:
        ids = hd.save_current_evaluations(picked, suite, qrels, meta, note=note or None)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        return None
    if hs.is_shared():
        st.success(
            say(
                ngettext(
                    "Saved {n} run to the shared history.",
                    "Saved {n} runs as one batch to the shared history.",
                    len(ids),
                ),
                n=len(ids),
            )
        )
    else:
        st.success(
            say(
                ngettext(
                    "Saved {n} run to this session's history (download it on the History page to keep it).",
                    "Saved {n} runs as one batch to this session's history (download it on the History "
                    "page to keep it).",
                    len(ids),
                ),
                n=len(ids),
            )
        )
    return ids[-1]


__all__ = [
    "CAPTION",
    "THRESHOLDS",
    "HEADERS",
    "header",
    "LABEL_WORDS",
    "COLUMN_WORDS",
    "thresholds_words",
    "render",
    "draw_history",
    "keep_and_restore",
    "save_evaluation_form",
    "batches",
    "trend",
    "delete_form",
    "unchanged",
    "use_uploaded_history",
]
