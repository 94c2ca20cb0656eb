"""The interpretation thresholds of the whole app: one source, changed on the comparative table.

Every page that labels a value Good / Fair / Needs improvement (the comparative table, the
Overview's "each run on its own queries", Clicks, History's comparative report and trend)
reads :func:`session_thresholds`; only the comparative table's editor
(:func:`ui.compare.table.thresholds_editor`) changes them (:func:`set_thresholds`), and the
other pages say which thresholds they used and link to it (:func:`link_to_editor`).

The source is ``st.session_state[ui.common.state.THRESHOLDS]``: measure -> ``(good, fair)``
of each measure with a label (a measure absent has none). Defaults: the library's
(:data:`metrics_core.report.DEFAULT_GOOD_THRESHOLDS`, Fair from half of Good,
:data:`metrics_core.report.thesis.FAIR_RATIO`). A single number (an older session) reads as
its Good threshold with Fair from half of it (:func:`metrics_core.report.labels.bounds`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import streamlit as st

from metrics_core.report.labels import DEFAULT_GOOD_THRESHOLDS, bounds, interpret
from metrics_core.report.thesis import FAIR_RATIO, display_measure
from ui.common import state
from ui.common.frame import page_link
from ui.common.i18n import gettext as _
from ui.common.style import say

#: The comparative table's page, where the thresholds are changed.
EDITOR_PAGE = "pages/table.py"


def default_pair(measure: str) -> tuple[float | None, float | None]:
    """``(good, fair)`` of the library's defaults for ``measure`` (None, None: no default).

    >>> default_pair("RR"), default_pair("AP")
    ((0.7, 0.35), (None, None))
    """
    good = DEFAULT_GOOD_THRESHOLDS.get(measure)
    return (None, None) if good is None else (good, good * FAIR_RATIO)


def _raw() -> dict:
    raw = st.session_state.get(state.THRESHOLDS)
    return dict(DEFAULT_GOOD_THRESHOLDS) if raw is None else dict(raw)


def editor_start(measure: str) -> tuple[float | None, float | None]:
    """What the editor shows first for ``measure``: its thresholds in the session, (None,
    None) when it has none (no label)."""
    value = _raw().get(measure)
    return (None, None) if value is None else bounds(value, FAIR_RATIO)


def session_thresholds(measures: Iterable[str] | None = None) -> dict[str, tuple[float, float]]:
    """The session's thresholds: measure -> ``(good, fair)`` of every measure with a label
    (of ``measures`` only, when given)."""
    raw = _raw()
    wanted = list(raw) if measures is None else [m for m in measures if m in raw]
    return {m: bounds(raw[m], FAIR_RATIO) for m in wanted if raw[m] is not None}


def set_thresholds(chosen: Mapping[str, tuple[float | None, float | None]]) -> None:
    """Record the editor's thresholds (measure -> ``(good, fair)``; good None: no label; fair
    None: half of good); the other measures keep theirs."""
    raw = _raw()
    for m, (good, fair) in chosen.items():
        if good is None:
            raw.pop(m, None)
        else:
            raw[m] = (good, good * FAIR_RATIO if fair is None else fair)
    st.session_state[state.THRESHOLDS] = raw


def label(measure: str, value: float) -> str:
    """The translated label of ``value`` of ``measure`` ("" without a threshold or a value)."""
    pair = session_thresholds([measure]).get(measure)
    if pair is None:
        return ""
    word = interpret(float(value), pair)
    return _(word) if word else ""


def words(measures: Iterable[str] | None = None) -> str:
    """The thresholds in words: "MRR: Good ≥ 0.7, Fair ≥ 0.35; P@5: ..." ("" when none)."""
    return "; ".join(
        say(
            _("{measure}: Good ≥ {good}, Fair ≥ {fair}"),
            measure=display_measure(m),
            good=f"{g:.4g}",
            fair=f"{f:.4g}",
        )
        for m, (g, f) in session_thresholds(measures).items()
    )


def link_to_editor(measures: Iterable[str] | None = None, text: str | None = None) -> None:
    """Which thresholds labelled this page's values, and a link to the comparative table,
    the one place to change them (``text``: the link's words, when the page has its own)."""
    used = words(measures)
    if used:
        st.caption(say(_("Interpretation thresholds: {list}."), list=used))
    page_link(
        EDITOR_PAGE,
        text or _("Change the interpretation thresholds: Comparative table"),
        ":material/tune:",
    )


__all__ = [
    "EDITOR_PAGE",
    "default_pair",
    "editor_start",
    "label",
    "link_to_editor",
    "session_thresholds",
    "set_thresholds",
    "words",
]
