"""Run colours keyed by the session's loaded runs, so a run has one colour on every page.

The palette and the pure mapping are :mod:`ui.common.style`'s; this module adds the one
thing they cannot know: the order of the runs loaded in this session
(:data:`ui.common.state.RUNS`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ui.common.state import loaded_run_names
from ui.common.style import run_colours


def colours_for(names: Iterable[str]) -> dict[str, str]:
    """Colours keyed by the session's loaded runs; runs not loaded follow them in order
    (outside a script run: by the order of ``names``)."""
    names = [str(n) for n in names]
    order = loaded_run_names()
    return run_colours(order + [n for n in names if n not in order])


__all__ = ["colours_for"]
