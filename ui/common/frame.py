"""The page skeleton: every page is one ``with page(...)`` block.

``page()`` sets the page up (page config, state defaults, the compact style, the language
switch pinned at the top right of the page, the sidebar of :mod:`ui.common.sidebar` and, on the
ranking pages, the status line) and ends it; a page's imports stay at the top of its file.
``sidebar=False`` draws the sidebar and the status line (in its place at the top) last,
when the page's answer has reached the browser, and lists what the page loaded in the same
run. The language switch is drawn first in every case, once per run.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import streamlit as st

from ui.common import blas, budget, keep, reclaim, state
from ui.common.i18n import _, count, current_language, language_switch, ngettext
from ui.common.navigation import RANKING_STATUS_PAGES
from ui.common.sidebar import convention_label, conventions, query_set, query_set_choice
from ui.common.sidebar import sidebar as draw_sidebar
from ui.common.style import md_join, say
from ui.common.upload import show_refused
from ui.common.uploader_words import show_uploader_words

PAGE_TITLE = "RankLab"
# An emoji favicon is drawn locally; a ":material/...:" page icon makes the browser fetch the
# favicon from a font server (fails offline). Page icons in the menu use the Material font
# that Streamlit bundles.
PAGE_ICON = "📊"


def configure_page() -> None:
    """st.set_page_config, safe to call from app.py and again from a page (calls are additive)."""
    # "auto": the sidebar starts collapsed on narrow screens (800 px), open on wide ones.
    st.set_page_config(
        page_title=PAGE_TITLE, page_icon=PAGE_ICON, layout="wide", initial_sidebar_state="auto"
    )


#: The key of the language switch's box: pinned in the page's header bar, at the top right of
#: every page and every width (the sidebar is shut on a narrow screen).
SWITCH_BOX = "ranklab-language"
_CSS = """<style>
[data-testid="stMainBlockContainer"] {padding-top: 4rem; padding-bottom: 2rem;}
[data-testid="stMainBlockContainer"] h1 {padding-top: 0.2rem; padding-bottom: 0.4rem;}
[data-testid="stLayoutWrapper"]:has(> .st-key-SWITCH_BOX) {position: absolute;}
.st-key-SWITCH_BOX {position: fixed; top: 0.85rem; right: 3.75rem; z-index: 999991;
  width: auto !important; background: transparent;}
.st-key-SWITCH_BOX [data-testid="stWidgetLabel"] {position: absolute; width: 1px; height: 1px;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;}
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"],
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] button [data-testid="stMarkdownContainer"],
[data-testid="stMain"] button [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] label [data-testid="stMarkdownContainer"],
[data-testid="stMain"] label [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stPageLink"] span {white-space: normal;
  overflow: visible; text-overflow: clip; overflow-wrap: break-word;}
</style>""".replace("SWITCH_BOX", SWITCH_BOX)


def _compact_css() -> None:
    """A tighter top margin so the first screen holds the answer, the words of metric labels,
    buttons, widget labels and page links wrap instead of being cut in a narrow column
    ("Predichos positivos" at 800 px with the sidebar open), and the file uploaders' words in the visitor's language (fixed style sheets: no user text is ever rendered as
    HTML)."""
    st.html(_CSS)
    show_uploader_words(current_language())


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


def current_page() -> str | None:
    """The file stem of the page script being run (``"overview"`` for ``pages/overview.py``),
    or None when the code is not run by a page of ``pages/`` (a test script)."""
    frame = inspect.currentframe()
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.parent.name == "pages" and path.suffix == ".py":
            return path.stem
        frame = frame.f_back
    return None


def shows_status(status: bool | None = None) -> bool:
    """Whether this page shows the ranking status line: ``status`` when given, else True on
    the pages of :data:`ui.common.navigation.RANKING_STATUS_PAGES`."""
    return (current_page() in RANKING_STATUS_PAGES) if status is None else bool(status)


def page_setup(sidebar: bool = True, status: bool | None = None, summary=None) -> None:
    """Idempotent set-up for a page: safe on a cold deep link, safe when app.py ran first.

    The language switch comes first, once per run, in a box pinned to the page's header
    bar (:data:`SWITCH_BOX`; its label is kept for screen readers). ``sidebar=False``:
    the sidebar and the status line are drawn by :func:`page_end`, at the end of the run
    (the status line in its place at the top): the page's answer reaches the browser first,
    and what a page loads during its run (an upload) is listed in the same run, without a
    second one. ``status``: show the ranking status line (default: on the ranking pages,
    :func:`shows_status`)."""
    _leave_pages_directory_mode()
    configure_page()
    blas.limit_threads_once()  # once per server process
    reclaim.start()  # once per server process: memory goes back after visitors leave
    budget.guard_uploads()  # once per server process: no upload past the memory budget
    keep.restore_or_start()  # a reload takes back the data its address names
    state.ensure_defaults()
    _compact_css()
    language_switch(st.container(key=SWITCH_BOX))
    show = shows_status(status)
    _late.summary = summary
    if sidebar:
        _late.status = None
        draw_sidebar(current_page(), summary)
        if show:
            status_line()
    else:
        _late.status = st.empty() if show else None


def page_end() -> None:
    """The sidebar and the status line of a page set up with ``page_setup(sidebar=False)``:
    call it last, and before any ``st.stop()``."""
    slot = getattr(_late, "status", None)
    draw_sidebar(current_page(), getattr(_late, "summary", None))
    if slot is not None:
        with slot.container():
            status_line()
        _late.status = None


class Page:
    """The page being drawn, as ``with page(...) as p`` gives it."""

    def __init__(self, sidebar_last: bool):
        self._sidebar_last, self._ended = sidebar_last, False

    def end(self) -> None:
        """Draw what a ``sidebar=False`` page draws last (once); nothing for other pages."""
        if self._sidebar_last and not self._ended:
            self._ended = True
            page_end()

    def stop(self) -> NoReturn:
        """End the page here (``st.stop()``), its sidebar drawn first when it comes last."""
        self.end()
        st.stop()
        raise AssertionError("st.stop() returned")  # pragma: no cover  (outside a script run)


@contextmanager
def page(
    title: str | None = None,
    *,
    sidebar: bool = True,
    caption: str | None = None,
    status: bool | None = None,
    summary=None,
) -> Iterator[Page]:
    """The skeleton of every page: set-up, title, the page's body, end.

    Parameters
    ----------
    title, caption : str, optional
        The page's title (``st.title``) and the line under it (``st.caption``).
    sidebar : bool
        True: the sidebar and the status line first (:func:`page_setup`). False: the status
        line keeps its place at the top but is filled, with the sidebar, when the block ends
        or at ``p.stop()`` (:func:`page_end`): the page's answer reaches the browser first,
        and what the page loaded in this run (an upload) is listed in this run.
    status : bool, optional
        Show the status line of the loaded rankings (default: on the ranking pages only).
    summary : callable, optional
        On a page whose data is not the rankings: returns the lines that say what its own
        section has loaded; the sidebar shows them instead of the rankings' state and
        conventions (best with ``sidebar=False``, so they describe what the page loaded).

    Examples
    --------
    A page file::

        import streamlit as st
        from ui.common.frame import page
        from ui.common.i18n import _

        with page(_("Overview"), sidebar=False) as p:
            if nothing_loaded:
                p.stop()
            st.dataframe(board)
    """
    budget.page_run_started()  # counted by the memory gate until the run ends (finally below)
    page_setup(sidebar=sidebar, status=status, summary=summary)
    current = Page(sidebar_last=not sidebar)
    if title:
        st.title(title)
    if caption:
        st.caption(caption)
    show_refused()  # this visitor's files the server refused at its door, one line each
    try:
        yield current
        current.end()
    finally:  # also at p.stop(): the data a reload brings back
        budget.page_run_ended()  # the memory gate's door, held for this page's next step, opens
        keep.save()


def status_text() -> str:
    """One line: what is loaded and the active conventions (shown at the top of the ranking
    pages), in the visitor's language."""
    qrels = st.session_state.get(state.QRELS)
    runs = st.session_state.get(state.RUNS) or {}
    meta = st.session_state.get(state.META)
    parts = []
    if qrels is None and not runs:
        parts.append(_("No rankings loaded"))
    else:
        if qrels is not None:
            n = len(qrels.unique_query_ids())
            parts.append(say(ngettext("{n} query judged", "{n} queries judged", n), n=count(n)))
        if runs:
            parts.append(
                say(
                    "{count}: {names}",
                    count=say(ngettext("{n} run", "{n} runs", len(runs)), n=len(runs)),
                    names=md_join(runs),
                )
            )
        if meta is not None:
            parts.append(_("query metadata"))
    if st.session_state.get(state.CLICKS) is not None:
        parts.append(_("click log"))
    if st.session_state.get(state.HASH_CODES) is not None:
        parts.append(_("hash codes"))
    conv = conventions()
    changed = {k: v for k, v in conv.differences().items() if k != "missing_queries"}
    queries = (
        _("tables on every qrels query (a run's absent query scores 0)")
        if conv.missing_queries == "zero"
        else _("tables on the queries every run answered")
    )
    rules = (
        _("trec_eval defaults")
        if not changed
        else say(
            _("changed from trec_eval: {changes}"),
            changes=md_join(f"{convention_label(k)} = {v}" for k, v in changed.items()),
        )
    )
    return say(
        "{parts}  |  {conventions}",
        parts=md_join(parts, " · "),
        conventions=say(_("Conventions: {rules}; {queries}"), rules=rules, queries=queries),
    )


def status_line() -> None:
    """The compact status line at the top of the page."""
    st.caption(say(":material/info: {status}", status=status_text()))


def page_link(path: str, label: str, icon: str | None = None) -> None:
    """st.page_link that degrades to a caption when the page registry is not active
    (a page run on its own: AppTest, or a cold deep link before st.navigation ran)."""
    try:
        st.page_link(path, label=label, icon=icon)
    except Exception:  # StreamlitAPIException / page not found: only the link is lost
        st.caption(say(_("{label}: open it from the menu."), label=label))


__all__ = [
    "page",
    "Page",
    "page_setup",
    "page_end",
    "configure_page",
    "status_text",
    "status_line",
    "page_link",
    "current_page",
    "shows_status",
    "conventions",
    "query_set",
    "query_set_choice",
]
