"""The shared frame every page calls first: page config, state defaults and the sidebar.

The sidebar shows what is loaded and the active conventions. The conventions widgets
are bound to ``st.session_state["ranklab.conventions"]`` (a frozen
:class:`metrics_core.Conventions`): before drawing, each widget's value is set from the
conventions object; a change rebuilds the object in a callback. So the object is the
single source of truth, whichever page (or cold deep link) draws the sidebar.
"""

from __future__ import annotations

import threading

import streamlit as st

from metrics_core.conventions import CHOICES, DESCRIPTIONS, Conventions
from metrics_core.errors import InputError
from ui import blas, state

PAGE_TITLE = "RankLab"
# An emoji favicon is drawn locally; a ":material/...:" page icon makes the browser fetch the
# favicon from a font server (fails offline). Page icons in the menu use the Material font
# that Streamlit bundles.
PAGE_ICON = "📊"

# Conventions shown first; the rest go in an expander.
MAIN_CONVENTIONS = ("ties", "missing_queries", "gain", "discount")
MORE_CONVENTIONS = ("duplicates", "p_denominator", "ap_normalizer", "ideal", "rr_miss")
_W = "ranklab.w.conv."  # widget key prefix


def configure_page() -> None:
    """st.set_page_config, safe to call from app.py and again from a page (calls are additive)."""
    # "auto": the sidebar starts collapsed on narrow screens (800 px), open on wide ones.
    st.set_page_config(page_title=PAGE_TITLE, page_icon=PAGE_ICON, layout="wide",
                       initial_sidebar_state="auto")


_CSS = """<style>
[data-testid="stMainBlockContainer"] {padding-top: 4rem; padding-bottom: 2rem;}
[data-testid="stMainBlockContainer"] h1 {padding-top: 0.2rem; padding-bottom: 0.4rem;}
</style>"""


def _compact_css() -> None:
    """A tighter top margin so the first screen holds the answer (a fixed style sheet: no
    user text is ever rendered as HTML)."""
    st.html(_CSS)


def _leave_pages_directory_mode() -> None:
    """On a cold deep link Streamlit runs ``pages/<x>.py`` directly (its old multipage mode,
    chosen because a ``pages/`` folder exists and ``st.navigation`` has not run yet), with a
    menu made from file names and without app.py. Switch that mode off, as app.py's
    ``st.navigation`` would, and rerun: the rerun executes app.py, whose navigation resolves
    the same URL path to the same page, with the real menu."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without this internal: nothing to fix
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


_late = threading.local()  # this script run's status-line slot, filled by page_end()


def page_setup(sidebar: bool = True) -> None:
    """Idempotent set-up for a page: safe on a cold deep link, safe when app.py ran first.

    ``sidebar=False``: the sidebar and the status line are drawn by :func:`page_end`, at the
    end of the run (the status line in its place at the top): the page's answer reaches the
    browser first, and what a page loads during its run (an upload) is listed in the same
    run, without a second one."""
    _leave_pages_directory_mode()
    configure_page()
    blas.limit_threads_once()  # once per server process
    state.ensure_defaults()
    _compact_css()
    if sidebar:
        _late.status = None
        _sidebar()
        status_line()
    else:
        _late.status = st.empty()


def page_end() -> None:
    """The sidebar and the status line of a page set up with ``page_setup(sidebar=False)``:
    call it last, and before any ``st.stop()``."""
    slot = getattr(_late, "status", None)
    _sidebar()
    if slot is not None:
        with slot.container():
            status_line()
        _late.status = None


def status_text() -> str:
    """One line: what is loaded and the active conventions (shown at the top of every page)."""
    qrels = st.session_state.get(state.QRELS)
    runs = st.session_state.get(state.RUNS) or {}
    meta = st.session_state.get(state.META)
    parts = []
    if qrels is None and not runs:
        parts.append("No rankings loaded")
    else:
        if qrels is not None:
            parts.append(f"{len(qrels.unique_query_ids()):,} queries judged")
        if runs:
            parts.append(f"{len(runs)} run{'s' if len(runs) != 1 else ''}: " + ", ".join(runs))
        if meta is not None:
            parts.append("query metadata")
    if st.session_state.get(state.CLICKS) is not None:
        parts.append("click log")
    if st.session_state.get("ranklab.hashing.data") is not None:
        parts.append("hash codes")
    conv = conventions()
    changed = {k: v for k, v in conv.differences().items() if k != "missing_queries"}
    queries = ("tables on every qrels query (a run's absent query scores 0)"
               if conv.missing_queries == "zero" else "tables on the queries every run answered")
    rules = ("trec_eval defaults" if not changed else
             "changed from trec_eval: " + ", ".join(f"{DESCRIPTIONS.get(k, k)} = {v}"
                                                    for k, v in changed.items()))
    return " · ".join(parts) + f"  |  Conventions: {rules}; {queries}"


def status_line() -> None:
    """The compact status line at the top of the page."""
    st.caption(":material/info: " + status_text())


def conventions() -> Conventions:
    """The active conventions."""
    state.ensure_defaults()
    return st.session_state[state.CONVENTIONS]


def _on_change(field: str) -> None:
    value = st.session_state.get(_W + field)
    if field == "depth":
        value = int(value) if value else None
    elif field == "relevance_threshold":
        value = float(value)
        value = int(value) if value.is_integer() else value
    try:
        st.session_state[state.CONVENTIONS] = conventions().replace(**{field: value})
    except InputError as exc:
        st.session_state[state.MESSAGES].append(("error", str(exc)))


def _reset() -> None:
    st.session_state[state.CONVENTIONS] = Conventions()


def _sync_widgets(conv: Conventions) -> None:
    for field in MAIN_CONVENTIONS + MORE_CONVENTIONS:
        st.session_state[_W + field] = getattr(conv, field)
    st.session_state[_W + "relevance_threshold"] = float(conv.relevance_threshold)
    st.session_state[_W + "depth"] = int(conv.depth or 0)


def _loaded_summary() -> None:
    qrels = st.session_state[state.QRELS]
    runs = st.session_state[state.RUNS] or {}
    meta = st.session_state[state.META]
    st.markdown("**Loaded**")
    if qrels is None:
        st.caption("qrels: none")
    else:
        st.caption(f"qrels: {len(qrels.unique_query_ids()):,} queries / {len(qrels):,} judgements")
    if runs:
        st.caption("runs: " + ", ".join(f"{name} ({len(run):,} lines)" for name, run in runs.items()))
    else:
        st.caption("runs: none")
    if meta is None:
        st.caption("metadata: none")
    else:
        st.caption(f"metadata: {len(meta)} queries ({', '.join(map(str, meta.columns))})")


# Streamlit's initial_sidebar_state="auto" collapses the sidebar only up to 768 px wide. At
# 800-1000 px the open sidebar leaves tables too little room, so on a first visit to a narrow
# window (once per browser tab) this collapses it; the user can open it again as usual.
NARROW_PX = 1000
_COLLAPSE_JS = """<script>
(function () {
  const w = window.parent;
  try {
    if (w.innerWidth > %d || w.sessionStorage.getItem("ranklab.sidebar.auto")) return;
    w.sessionStorage.setItem("ranklab.sidebar.auto", "1");
    const d = w.document;
    const side = d.querySelector('[data-testid="stSidebar"]');
    if (!side || side.getAttribute("aria-expanded") === "false") return;
    const btn = d.querySelector('[data-testid="stSidebarCollapseButton"] button')
             || d.querySelector('[data-testid="stSidebarCollapseButton"]');
    if (btn) btn.click();
  } catch (e) { /* another origin: leave the sidebar as it is */ }
})();
</script>""" % NARROW_PX


def _collapse_when_narrow() -> None:
    # a fixed script of this module (never user text), in a zero-height same-origin iframe
    if hasattr(st, "iframe"):
        st.iframe(_COLLAPSE_JS, height=1)
    else:  # older Streamlit
        import streamlit.components.v1 as components

        components.html(_COLLAPSE_JS, height=0)


def _sidebar() -> None:
    conv = conventions()
    _sync_widgets(conv)
    with st.sidebar:
        _loaded_summary()
        st.markdown("**Conventions**")
        for field in MAIN_CONVENTIONS:
            st.selectbox(DESCRIPTIONS[field], CHOICES[field], key=_W + field,
                         on_change=_on_change, args=(field,))
        st.number_input(DESCRIPTIONS["relevance_threshold"], min_value=-10.0, max_value=100.0,
                        step=1.0, key=_W + "relevance_threshold", on_change=_on_change,
                        args=("relevance_threshold",), help="relevant when label >= this (trec_eval -l)")
        st.number_input(DESCRIPTIONS["depth"] + " (0 = all)", min_value=0, step=10,
                        key=_W + "depth", on_change=_on_change, args=("depth",))
        with st.expander("More conventions"):
            for field in MORE_CONVENTIONS:
                st.selectbox(DESCRIPTIONS[field], CHOICES[field], key=_W + field,
                             on_change=_on_change, args=(field,))
        changed = conv.differences()
        st.caption("trec_eval defaults" if not changed else
                   "changed: " + ", ".join(f"{k}={v}" for k, v in changed.items()))
        st.button("Reset to trec_eval defaults", key="ranklab.w.reset_conventions",
                  on_click=_reset, disabled=not changed)
        _collapse_when_narrow()
    messages = st.session_state[state.MESSAGES]
    while messages:
        level, text = messages.pop(0)
        getattr(st, level, st.info)(text)


def page_link(path: str, label: str, icon: str | None = None) -> None:
    """st.page_link that degrades to a caption when the page registry is not active
    (a page run on its own: AppTest, or a cold deep link before st.navigation ran)."""
    try:
        st.page_link(path, label=label, icon=icon)
    except Exception:  # StreamlitAPIException / page not found: only the link is lost
        st.caption(f"{label}: open it from the menu.")


QUERY_SET_OPTIONS = {"common": "Queries every run answered",
                     "qrels": "Every qrels query (absent = 0, trec_eval -c)"}


def _on_query_set(key: str) -> None:
    choice = st.session_state.get(key)
    st.session_state[state.CONVENTIONS] = conventions().replace(
        missing_queries="zero" if choice == "qrels" else "skip")


def query_set() -> str:
    """The query set of every comparison table: "qrels" when absent queries score 0, else "common"."""
    return "qrels" if conventions().missing_queries == "zero" else "common"


def query_set_choice(key: str, container=None) -> str:
    """A radio choosing the query set of the page's tables, bound to the conventions'
    ``missing_queries`` (so every page and the sidebar agree); returns "common" or "qrels"."""
    st.session_state[key] = query_set()
    (container or st).radio(
        "Queries in the tables", list(QUERY_SET_OPTIONS), format_func=QUERY_SET_OPTIONS.get,
        key=key, on_change=_on_query_set, args=(key,), horizontal=True,
        help="One query set for every row of a table. 'Every qrels query' scores a query a run "
             "did not answer 0 (trec_eval -c); 'queries every run answered' leaves out the queries "
             "some run has no ranking for. Same setting as 'qrels query absent from the run' "
             "in the sidebar.")
    return query_set()
