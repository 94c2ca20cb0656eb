"""The sidebar every page draws: what is loaded, and the conventions.

The conventions widgets are bound to ``st.session_state[ui.common.state.CONVENTIONS]`` (a
frozen :class:`metrics_core.Conventions`): before drawing, each widget's value is set from
the conventions object; a change rebuilds the object in a callback. So the object is the
single source of truth, whichever page (or cold deep link) draws the sidebar. The query-set
choice of the comparison pages is bound to the same object (``missing_queries``).
"""

from __future__ import annotations

import streamlit as st

from metrics_core.conventions import CHOICES, DESCRIPTIONS, Conventions
from metrics_core.errors import InputError
from ui.common import state

# Conventions shown first; the rest go in an expander.
MAIN_CONVENTIONS = ("ties", "missing_queries", "gain", "discount")
MORE_CONVENTIONS = ("duplicates", "p_denominator", "ap_normalizer", "ideal", "rr_miss")
_W = state.CONVENTION_WIDGET  # widget key prefix


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
    if (w.innerWidth > NARROW_PX || w.sessionStorage.getItem("FLAG")) return;
    w.sessionStorage.setItem("FLAG", "1");
    const d = w.document;
    const side = d.querySelector('[data-testid="stSidebar"]');
    if (!side || side.getAttribute("aria-expanded") === "false") return;
    const btn = d.querySelector('[data-testid="stSidebarCollapseButton"] button')
             || d.querySelector('[data-testid="stSidebarCollapseButton"]');
    if (btn) btn.click();
  } catch (e) { /* another origin: leave the sidebar as it is */ }
})();
</script>""".replace("NARROW_PX", str(NARROW_PX)).replace("FLAG", state.SIDEBAR_AUTO)


def _collapse_when_narrow() -> None:
    # a fixed script of this module (never user text), in a zero-height same-origin iframe
    if hasattr(st, "iframe"):
        st.iframe(_COLLAPSE_JS, height=1)
    else:  # older Streamlit
        import streamlit.components.v1 as components

        components.html(_COLLAPSE_JS, height=0)


def sidebar() -> None:
    """The sidebar: what is loaded, the conventions, and the messages waiting to be shown."""
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
        st.button("Reset to trec_eval defaults", key=state.RESET_CONVENTIONS,
                  on_click=_reset, disabled=not changed)
        _collapse_when_narrow()
    messages = st.session_state[state.MESSAGES]
    while messages:
        level, text = messages.pop(0)
        getattr(st, level, st.info)(text)


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


__all__ = ["sidebar", "conventions", "query_set", "query_set_choice", "QUERY_SET_OPTIONS", "MAIN_CONVENTIONS",
           "MORE_CONVENTIONS"]
