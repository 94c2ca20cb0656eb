"""The sidebar every page draws: what is loaded, and the conventions.

The conventions widgets are bound to ``st.session_state[ui.common.state.CONVENTIONS]`` (a
frozen :class:`metrics_core.Conventions`): before drawing, each widget's value is set from
the conventions object; a change rebuilds the object in a callback. So the object is the
single source of truth, whichever page (or cold deep link) draws the sidebar. The query-set
choice of the comparison pages is bound to the same object (``missing_queries``).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from metrics_core.conventions import CHOICES, DESCRIPTIONS, Conventions
from metrics_core.errors import InputError
from ui.common import state
from ui.common.i18n import N_, _, count, ngettext
from ui.common.style import heading, md_join, md_text, say

# Conventions shown first; the rest go in an expander.
MAIN_CONVENTIONS = ("ties", "missing_queries", "gain", "discount")
MORE_CONVENTIONS = ("duplicates", "p_denominator", "ap_normalizer", "ideal", "rr_miss")
_W = state.CONVENTION_WIDGET  # widget key prefix

#: The conventions' descriptions (metrics_core.conventions.DESCRIPTIONS, the same English
#: words) marked for translation: the sidebar's labels in the visitor's language.
CONVENTION_LABELS = {
    "ties": N_("order of equal scores"),
    "duplicates": N_("a (query, doc) pair given twice"),
    "missing_queries": N_("qrels query absent from the run"),
    "p_denominator": N_("P@k when fewer than k retrieved"),
    "ap_normalizer": N_("AP normalizer"),
    "gain": N_("nDCG gain"),
    "discount": N_("nDCG discount"),
    "ideal": N_("nDCG ideal ranking"),
    "rr_miss": N_("RR@k with no relevant in the top k"),
    "relevance_threshold": N_("relevance threshold of binary measures"),
    "depth": N_("depth cut (trec_eval -M)"),
    "labels": N_("fractional relevance labels"),
    "compat": N_("trec_eval version reproduced"),
    "judged_only": N_("judged documents only (trec_eval -J)"),
    "num_docs": N_("documents in the collection (trec_eval -N)"),
    "ignore_identical_ids": N_("drop a retrieved document whose id is the query's (BEIR)"),
}
#: choices the app's pages cannot use everywhere: ties="expected" refuses the measures the tie
#: report does not cover (Judged@10 of the Overview ...); the library and the command line offer it
_NOT_IN_APP = {"ties": ("expected",)}


def _choices(field: str) -> list:
    return [c for c in CHOICES[field] if c not in _NOT_IN_APP.get(field, ())]


#: Each convention's choices in words (the option names stay in the exports and the command line).
CHOICE_WORDS = {
    ("ties", "trec"): N_("score, then doc id descending (trec_eval)"),
    ("ties", "docid_asc"): N_("score, then doc id ascending"),
    ("ties", "input"): N_("score, then the run's own order"),
    ("missing_queries", "skip"): N_("skipped (trec_eval)"),
    ("missing_queries", "zero"): N_("scored 0 (trec_eval -c)"),
    ("gain", "linear"): N_("linear: the label"),
    ("gain", "exp"): N_("exponential: 2^label - 1"),
    ("discount", "log2"): N_("1 / log2(rank + 1)"),
    ("discount", "jarvelin"): N_("1 / max(1, log2 rank) (Järvelin-Kekäläinen)"),
    ("duplicates", "error"): N_("an error naming both lines"),
    ("duplicates", "first"): N_("keep the first"),
    ("duplicates", "max"): N_("keep the highest score"),
    ("duplicates", "last"): N_("keep the last"),
    ("duplicates", "count"): N_("count each"),
    ("p_denominator", "k"): N_("divide by k (trec_eval)"),
    ("p_denominator", "retrieved"): N_("divide by the number retrieved"),
    ("ap_normalizer", "num_rel"): N_("every relevant document (trec_eval)"),
    ("ap_normalizer", "min_rel_k"): N_("min(relevant, k)"),
    ("ap_normalizer", "rel_retrieved"): N_("relevant retrieved"),
    ("ideal", "qrels"): N_("from the qrels (trec_eval)"),
    ("ideal", "retrieved"): N_("from the retrieved list"),
    ("rr_miss", "zero"): N_("0 (trec_eval)"),
    ("rr_miss", "k_plus_1"): N_("1 / (k + 1)"),
}


def choice_words(field: str, value) -> str:
    """A convention's choice in the visitor's language (its option name when it has no words).

    >>> choice_words("ties", "trec"), choice_words("ties", "other")
    ('score, then doc id descending (trec_eval)', 'other')
    """
    words = CHOICE_WORDS.get((field, value))
    return _(words) if words else str(value)


def _choice_formatter(field: str):
    """The choices' words of ``field`` translated now, in this run (a formatter called later,
    outside the run, keeps the visitor's language)."""
    return {v: choice_words(field, v) for v in CHOICES[field]}.__getitem__


def convention_label(field: str) -> str:
    """The description of a convention in the visitor's language.

    >>> convention_label("ties")
    'order of equal scores'
    """
    return (
        _(CONVENTION_LABELS[field])
        if field in CONVENTION_LABELS
        else DESCRIPTIONS.get(field, field)
    )


def convention_heading(field: str) -> str:
    """A convention's description as a label a person reads (the sidebar's widgets, the
    Measures explained page): its first letter in upper case, a name like nDCG as written.

    >>> convention_heading("ties"), convention_heading("gain")
    ('Order of equal scores', 'nDCG gain')
    """
    return heading(convention_label(field))


def conventions() -> Conventions:
    """The active conventions."""
    state.ensure_defaults()
    return st.session_state[state.CONVENTIONS]


def _on_change(field: str) -> None:
    value = st.session_state.get(_W + field)
    if value is None and field in ("relevance_threshold", "depth"):
        # a number box emptied (its digits deleted, or a run that gave it no value): the
        # convention stays as it was, and the box shows it again
        _sync_widgets(conventions())
        return
    if field == "depth":
        value = int(value) if value else None
    elif field == "relevance_threshold":
        value = float(value)
        value = int(value) if value.is_integer() else value
    try:
        st.session_state[state.CONVENTIONS] = conventions().replace(**{field: value})
    except InputError as exc:
        st.session_state[state.MESSAGES].append(("error", md_text(exc.plain(_))))


def _reset() -> None:
    st.session_state[state.CONVENTIONS] = Conventions()


def _sync_widgets(conv: Conventions) -> None:
    for field in MAIN_CONVENTIONS + MORE_CONVENTIONS:
        st.session_state[_W + field] = getattr(conv, field)
    st.session_state[_W + "relevance_threshold"] = float(conv.relevance_threshold)
    st.session_state[_W + "depth"] = int(conv.depth or 0)
    st.session_state[_W + "ignore_identical_ids"] = bool(conv.ignore_identical_ids)


def _loaded_summary() -> None:
    qrels = st.session_state[state.QRELS]
    runs = st.session_state[state.RUNS] or {}
    meta = st.session_state[state.META]
    st.markdown("**" + _("Loaded") + "**")
    if qrels is None:
        st.caption(_("qrels: none"))
    else:
        st.caption(
            say(
                _("qrels: {queries} queries / {judgements} judgements"),
                queries=count(len(qrels.unique_query_ids())),
                judgements=count(len(qrels)),
            )
        )
    if runs:
        st.caption(
            say(
                _("runs: {runs}"),
                runs=md_join(
                    say(
                        ngettext("{name} ({n} line)", "{name} ({n} lines)", len(run)),
                        name=name,
                        n=count(len(run)),
                    )
                    for name, run in runs.items()
                ),
            )
        )
    else:
        st.caption(_("runs: none"))
    if meta is None:
        st.caption(_("metadata: none"))
    else:
        st.caption(
            say(
                ngettext(
                    "metadata: {n} query ({columns})",
                    "metadata: {n} queries ({columns})",
                    len(meta),
                ),
                n=len(meta),
                columns=md_join(meta.columns),
            )
        )


# Streamlit's initial_sidebar_state="auto" collapses the sidebar only up to 768 px wide, and
# closes it after a menu click only on such "mobile" widths. At 800-1000 px the open sidebar
# leaves the page too little room, so in a narrow window this closes it on a first visit and
# again each time another page is opened (the script names the page, so it runs again when the
# page changes); opened by hand on the same page, it stays open.
NARROW_PX = 1000
_COLLAPSE_JS = """<script>
(function () {
  const w = window.parent;
  try {
    if (w.innerWidth > NARROW_PX) return;
    const store = w.sessionStorage;
    if (store.getItem("FLAG") === "PAGE") return;
    store.setItem("FLAG", "PAGE");
    const d = w.document;
    const close = function (tries) {
      const side = d.querySelector('[data-testid="stSidebar"]');
      if (!side || side.getAttribute("aria-expanded") === "false") return;
      const btn = d.querySelector('[data-testid="stSidebarCollapseButton"] button')
               || d.querySelector('[data-testid="stSidebarCollapseButton"]');
      if (btn) { btn.click(); } else if (tries > 0) { setTimeout(function () { close(tries - 1); }, 100); }
    };
    close(20);
  } catch (e) { /* another origin: leave the sidebar as it is */ }
})();
</script>""".replace("NARROW_PX", str(NARROW_PX)).replace("FLAG", state.SIDEBAR_AUTO)


def collapse_script(page_name: str | None) -> str:
    """The script that closes the sidebar in a narrow window when ``page_name`` is opened
    (a fixed script of this module; the page name is reduced to letters, digits and ``_``)."""
    token = "".join(ch for ch in str(page_name or "page") if ch.isalnum() or ch == "_") or "page"
    return _COLLAPSE_JS.replace("PAGE", token)


def _collapse_when_narrow(page_name: str | None) -> None:
    # a fixed script of this module (never user text), in a zero-height same-origin iframe
    script = collapse_script(page_name)
    if hasattr(st, "iframe"):
        st.iframe(script, height=1)
    else:  # older Streamlit
        import streamlit.components.v1 as components

        components.html(script, height=0)


def sidebar(
    page_name: str | None = None, own_summary: Callable[[], list[str]] | None = None
) -> None:
    """The sidebar: what is loaded, the conventions, and the messages waiting to be shown.
    ``page_name`` (the page's file stem) lets a narrow window close the sidebar when another
    page is opened. ``own_summary``: on a page whose data is not the rankings (Detection,
    Calibration, Dynamic K, Hash codes), the lines saying what its own section has loaded,
    shown instead of the rankings' state and conventions."""
    if own_summary is not None:
        with st.sidebar:
            st.markdown("**" + _("Loaded") + "**")
            for line in own_summary():
                st.text(line)  # file names are the visitor's text: shown as text, never Markdown
            _collapse_when_narrow(page_name)
        _show_messages()
        return
    conv = conventions()
    _sync_widgets(conv)
    with st.sidebar:
        _loaded_summary()
        st.markdown("**" + _("Conventions") + "**")
        for field in MAIN_CONVENTIONS:
            st.selectbox(
                convention_heading(field),
                _choices(field),
                key=_W + field,
                on_change=_on_change,
                args=(field,),
                format_func=_choice_formatter(field),
            )
        st.number_input(
            convention_heading("relevance_threshold"),
            min_value=-10.0,
            max_value=100.0,
            step=1.0,
            key=_W + "relevance_threshold",
            on_change=_on_change,
            args=("relevance_threshold",),
            help=_("relevant when label >= this (trec_eval -l)"),
        )
        st.number_input(
            say(_("{label} (0 = all)"), label=convention_heading("depth")),
            min_value=0,
            step=10,
            key=_W + "depth",
            on_change=_on_change,
            args=("depth",),
        )
        with st.expander(_("More conventions")):
            for field in MORE_CONVENTIONS:
                st.selectbox(
                    convention_heading(field),
                    _choices(field),
                    key=_W + field,
                    on_change=_on_change,
                    args=(field,),
                    format_func=_choice_formatter(field),
                )
            st.checkbox(
                convention_heading("ignore_identical_ids"),
                key=_W + "ignore_identical_ids",
                on_change=_on_change,
                args=("ignore_identical_ids",),
            )
        changed = conv.differences()
        st.caption(
            _("trec_eval defaults")
            if not changed
            else say(
                _("changed: {changes}"), changes=md_join(f"{k}={v}" for k, v in changed.items())
            )
        )
        st.button(
            _("Reset to trec_eval defaults"),
            key=state.RESET_CONVENTIONS,
            on_click=_reset,
            disabled=not changed,
        )
        _collapse_when_narrow(page_name)
    _show_messages()


def _show_messages() -> None:
    messages = st.session_state[state.MESSAGES]
    while messages:
        level, text = messages.pop(0)
        getattr(st, level, st.info)(text)


QUERY_SET_OPTIONS = {
    "common": N_("Queries every run answered"),
    "qrels": N_("Every qrels query (absent = 0, trec_eval -c)"),
}


def _on_query_set(key: str) -> None:
    choice = st.session_state.get(key)
    st.session_state[state.CONVENTIONS] = conventions().replace(
        missing_queries="zero" if choice == "qrels" else "skip"
    )


def query_set() -> str:
    """The query set of every comparison table: "qrels" when absent queries score 0, else "common"."""
    return "qrels" if conventions().missing_queries == "zero" else "common"


def query_set_choice(key: str, container=None) -> str:
    """A radio choosing the query set of the page's tables, bound to the conventions'
    ``missing_queries`` (so every page and the sidebar agree); returns "common" or "qrels"."""
    st.session_state[key] = query_set()
    (container or st).radio(
        _("Queries in the tables"),
        list(QUERY_SET_OPTIONS),
        format_func=lambda o: _(QUERY_SET_OPTIONS[o]),
        key=key,
        on_change=_on_query_set,
        args=(key,),
        horizontal=True,
        help=_(
            "One query set for every row of a table. 'Every qrels query' scores a query a run "
            "did not answer 0 (trec_eval -c); 'queries every run answered' leaves out the queries "
            "some run has no ranking for. Same setting as 'qrels query absent from the run' "
            "in the sidebar."
        ),
    )
    return query_set()


__all__ = [
    "CHOICES",
    "sidebar",
    "conventions",
    "choice_words",
    "CHOICE_WORDS",
    "query_set",
    "query_set_choice",
    "QUERY_SET_OPTIONS",
    "MAIN_CONVENTIONS",
    "MORE_CONVENTIONS",
    "CONVENTION_LABELS",
    "convention_heading",
    "convention_label",
    "collapse_script",
    "NARROW_PX",
]
