"""The app's one cache: results kept in the visitor's session, keyed, bounded and dropped
with the session.

Every page that keeps a computed result between reruns (a ranking, an evaluation, a tie
report, a leaderboard, a parsed upload, a curve, a bootstrap) calls :func:`remember`. Entries
live in the visitor's ``st.session_state`` (one table per name), so

- no visitor ever sees another's entries, and nothing is pickled or copied (the very object
  built is handed back);
- each table holds at most ``size`` entries (the oldest leaves first);
- when Streamlit drops the session (the visitor left), everything it held goes with it.

Objects the result was computed from are passed as ``held``: the entry is keyed by their
identity and a hit is checked against the very objects (``is``), so a result never outlives
the data it describes (data replaced or removed: a new key; :func:`forget` drops a table).
Hashing a large run to look it up on every rerun is avoided.

Every build computed from the visitor's loaded data (``held`` given) runs within the server's
memory budget (:func:`ui.common.budget.work`): it reserves the temporaries a computation on
that data may take, and waits its turn (a spinner says so) while other visitors' computations
hold the server's free memory; refused (nothing else in flight, or waited too long), an
evaluation raises the InputError for its page to show, any other build ends the page's run
with that one line.

Outside a script run (tests, tools) :func:`remember` just builds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import ExitStack
from typing import Any, TypeVar

import streamlit as st

from metrics_core.errors import InputError
from ui.common import budget
from ui.common.state import in_app

T = TypeVar("T")
#: The session-state key of the cache's tables (name -> OrderedDict of entries).
CACHE = "ranklab.cache"


def _tables() -> dict:
    return st.session_state.setdefault(CACHE, {})


def remember(
    name: str,
    key: Hashable,
    build: Callable[[], T],
    *,
    held: tuple = (),
    size: int = 8,
    fresh: bool = False,
    evaluating: str | None = None,
    need: int | Callable[[], int] | None = None,
) -> T:
    """``build()``'s result for ``key`` in the table ``name`` of this session: built once,
    handed back on every later call with the same key and the very same ``held`` objects.

    ``size`` bounds the table (first in, first out). ``build`` raising leaves nothing behind.
    ``fresh=True`` builds again and replaces the entry (a result that must grow).
    ``evaluating``: the run the build evaluates (named when the server's budget refuses it).
    ``need``: the bytes the build may take at its peak (a number, or a function that says it,
    asked only when the build runs); default: ranking and evaluating the largest loaded run
    (:func:`ui.common.budget.work_need` without statistics) when ``held`` is given, else 0; a
    build that runs the leaderboard's or Compare's statistics passes
    ``need=budget.work_need`` (with them). Every build runs inside the gate
    (:func:`ui.common.budget.work`), whatever its need.
    """
    if not in_app():
        return build()
    table: OrderedDict = _tables().setdefault(name, OrderedDict())
    full_key = (key, tuple(id(h) for h in held))
    hit = None if fresh else table.get(full_key)
    if (
        hit is not None
        and len(hit[0]) == len(held)
        and all(a is b for a, b in zip(hit[0], held, strict=True))
    ):
        table.move_to_end(full_key)
        return hit[1]
    with ExitStack() as stack:
        # within the server's memory budget: a build on the ranking data reserves ranking and
        # evaluating its largest run; one that runs statistics (the leaderboard's, Compare's)
        # states it (``need=budget.work_need``), as does any other build with its own need
        want = need() if callable(need) else need
        if want is None:
            want = budget.work_need(statistics=False) if held else 0
        try:
            stack.enter_context(budget.work(want, evaluating))
        except InputError as exc:
            if evaluating is not None:
                raise  # the page shows an evaluation's refusal with its other errors
            from ui.common.i18n import gettext as _
            from ui.common.style import md_text

            st.error(md_text(exc.plain(_)), icon=":material/memory:")
            st.stop()
        value = build()
    table.pop(full_key, None)
    while len(table) >= max(size, 1):
        table.popitem(last=False)
    table[full_key] = (tuple(held), value)
    return value


def peek(name: str, key: Hashable, *, held: tuple = ()) -> tuple[bool, Any]:
    """``(True, value)`` when :func:`remember` would return at once for this key, else
    ``(False, None)``; builds nothing."""
    if not in_app():
        return False, None
    hit = _tables().get(name, {}).get((key, tuple(id(h) for h in held)))
    if (
        hit is not None
        and len(hit[0]) == len(held)
        and all(a is b for a, b in zip(hit[0], held, strict=True))
    ):
        return True, hit[1]
    return False, None


def forget(*names: str) -> None:
    """Drop the tables ``names`` (every table when none is named): their data was replaced."""
    if not in_app():
        return
    tables = _tables()
    for name in names or list(tables):
        tables.pop(name, None)


def keep_only(name: str, alive: Callable[[Hashable, tuple], bool]) -> None:
    """Drop the entries of table ``name`` for which ``alive(key, held)`` is false (data no
    longer loaded: its rankings and evaluations go with it)."""
    if not in_app():
        return
    table = _tables().get(name)
    if table:
        for stale in [k for k, (held, _v) in table.items() if not alive(k[0], held)]:
            del table[stale]


__all__ = ["CACHE", "remember", "peek", "forget", "keep_only"]
