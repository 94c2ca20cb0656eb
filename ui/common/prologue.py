"""The one page prologue: what a page needs loaded, else one line saying what to load, the
sample one click away, and the page ends there.

Every page that draws the visitor's data starts with :func:`needs` (the ranking pages through
:func:`ui.ranking.prologue.ranking_prologue`, which evaluates the loaded runs after it)::

    with page(_("Fusion")) as p:
        if not needs(has_runs(2), _("Load qrels and at least two runs first ..."),
                     key=fw.SAMPLE, sample=load_every_sample):
            p.stop()

The section knows what "loaded" means (``ready``) and which sample fills it (``sample``, a
function the caller passes: :mod:`ui.common` never imports a section).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui.common.i18n import gettext as _


def needs(
    ready: bool,
    hint: str,
    *,
    key: str | None = None,
    sample: Callable[[], None] | None = None,
    upload: Callable[[], bool] | None = None,
) -> bool:
    """True when the page has what it needs (``ready``); else draw ``hint`` (one line, in the
    visitor's language: what to load and where), then ``upload()`` (a drop zone drawn right
    here; it returning True, the page reruns with what was loaded), then the primary "Load
    sample data" button (``sample``, its on-click loader; ``key``, its widget key), and return
    False: the page stops (``p.stop()``), its other widgets not drawn."""
    if ready:
        return True
    st.info(hint)
    if upload is not None and upload():
        st.rerun()
    if sample is not None:
        st.button(_("Load sample data"), key=key, type="primary", on_click=sample)
    return False


__all__ = ["needs"]
