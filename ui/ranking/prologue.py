"""The ranking pages' prologue: evaluate the loaded runs, set aside the unusable ones with a
visible note, and hand the page what it draws.

Every ranking page (Overview, Breakdown, Per query, Compare, Comparative table) starts with
:func:`ranking_prologue`, so each handles the same cases the same way:

- nothing loaded: the hint and the sample button (:func:`ui.ranking.widgets.require_data`);
- a bad measure or option: its one-line message, never a traceback;
- a run that shares no query with the qrels, or none of whose documents is judged: named in
  one warning and left out (:func:`ui.ranking.data.unusable_runs`), the other runs keep their
  numbers; runs with few judged documents are kept with a note;
- fewer usable runs than the page needs: a line saying so.

It returns None when the page has nothing to draw (the page then stops), else
:class:`Loaded`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import streamlit as st

from metrics_core.errors import InputError
from ui.common import state
from ui.common.i18n import gettext as _
from ui.common.i18n import ngettext
from ui.common.sidebar import conventions as sidebar_conventions
from ui.common.style import md_join, md_text, say
from ui.ranking.data import (
    coverage_notes,
    evaluate_loaded,
    show_coverage_notes,
    show_unusable,
    unusable_runs,
)
from ui.ranking.widgets import require_data

if TYPE_CHECKING:
    import metrics_core as mc


@dataclass(frozen=True)
class Loaded:
    """What a ranking page draws: the usable runs' evaluations (load order), their measures
    (canonical names, in the order asked), the conventions, the runs set aside (name -> reason)
    and the query metadata (None when none is loaded)."""

    evaluations: dict[str, mc.Evaluation]
    measures: list[str]
    conventions: mc.Conventions
    unusable: dict[str, str] = field(default_factory=dict)
    meta: object = None

    @property
    def names(self) -> list[str]:
        return list(self.evaluations)


def too_few_runs(needed: int, usable: int, loaded: int) -> str:
    """What a page says when fewer than ``needed`` of the ``loaded`` runs share queries with
    the qrels (``usable`` do), each count with its own plural."""
    return md_join(
        (
            say(
                ngettext(
                    "This page needs {n} run that shares queries with the qrels.",
                    "This page needs {n} runs that share queries with the qrels.",
                    needed,
                ),
                n=needed,
            ),
            say(
                ngettext(
                    "Usable now: {k} of {total} loaded run.",
                    "Usable now: {k} of {total} loaded runs.",
                    loaded,
                ),
                k=usable,
                total=loaded,
            ),
            say(_("Load another run on the Data page.")),
        ),
        " ",
    )


def ranking_prologue(
    measures=None,
    conventions=None,
    *,
    sample: Callable[[], None],
    min_runs: int = 1,
    runs_upload: str | None = None,
    warning_slot=None,
    on_stop: Callable[[], None] | None = None,
    spinner: str | None = None,
) -> Loaded | None:
    """Evaluate the loaded runs on ``measures`` (default: the session's) under ``conventions``
    (default: the sidebar's), set aside the unusable ones with a visible warning (in
    ``warning_slot``, default the page) and return :class:`Loaded`, or None (after saying why)
    when the page has nothing to draw: no data, an error, or fewer than ``min_runs`` usable runs.

    ``sample``: the loader of the sample button (:func:`ui.samples.load_every_sample`: the
    page passes it). ``runs_upload``: the page offers a drop zone for runs when only the qrels are loaded.
    ``on_stop``: drawn before returning None (widgets that must keep their values).
    """

    def stop() -> None:
        if on_stop is not None:
            on_stop()

    if not require_data(sample, runs_upload=runs_upload):
        return None
    if conventions is None:
        conventions = sidebar_conventions()
    measures = list(measures or st.session_state.get(state.MEASURES) or state.DEFAULT_MEASURES)
    try:
        with st.spinner(spinner or _("Evaluating ...")):
            evaluations = evaluate_loaded(measures, conventions)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))  # uploaded names in the message stay text
        stop()
        return None
    unusable = unusable_runs(evaluations)
    show_unusable(unusable, warning_slot)
    show_coverage_notes(coverage_notes(evaluations))
    usable = {n: e for n, e in evaluations.items() if n not in unusable}
    if len(usable) < max(min_runs, 1):
        if evaluations:
            st.info(too_few_runs(max(min_runs, 1), len(usable), len(evaluations)))
        stop()
        return None
    first = next(iter(usable.values()))
    return Loaded(
        usable, list(first.measures), conventions, unusable, st.session_state.get(state.META)
    )


__all__ = ["Loaded", "ranking_prologue", "too_few_runs"]
