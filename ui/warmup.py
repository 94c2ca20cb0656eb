"""Warm the server once, in the background: import what the pages will need, and give
its matrix products one BLAS thread.

The first visit to a page pays for its imports (pandas' Styler compiles its Jinja
templates, plotly, the statistics modules): about 0.2 s on the Overview, on the path
from an upload to the leaderboard. :func:`start` runs those imports on a daemon thread
the first time any page is drawn, while the visitor is still choosing files; the pages
import the same modules as before (an import that is already running is waited for, not
done twice). Only modules the pages import anyway: the hash-code page's torch is not
among them (the hosting budget keeps torch out until hash codes are evaluated).
"""

from __future__ import annotations

import importlib
import threading

#: What the pages import on first use, most wanted first.
MODULES = (
    "pandas.io.formats.style",       # st.dataframe of a Styler: the leaderboard grid
    "metrics_core.stats.comparison",
    "metrics_core.stats.bootstrap",
    "metrics_core.report.leaderboard",
    "metrics_core.ranking.ties",
    "plotly.graph_objects",
    "ui.ranking_widgets",
    "ui.figures_ranking",
    "ui.exports",
)

_started = threading.Event()
_lock = threading.Lock()


def _run() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional module: the page will say so itself
            continue
    limit_blas_threads()


def limit_blas_threads() -> None:
    """One BLAS thread for the server's matrix products (the bootstrap's and the
    permutation test's counts @ values). The server is shared by its visitors, and on a
    small host OpenBLAS's spinning worker threads compete with the other sessions and the
    server itself: the Overview's leaderboard of a 1 M-line run took 0.6 s in the running
    app, against 0.09 s with one thread (0.16 s with the default threads in a fresh
    process, 0.09 s with one). The command line and the library keep the default."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
    except Exception:  # no threadpoolctl, or a BLAS it does not know: leave the default
        pass


def start() -> bool:
    """Start the warm-up once per process; True when this call started it."""
    with _lock:
        if _started.is_set():
            return False
        _started.set()
    threading.Thread(target=_run, name="ranklab-warmup", daemon=True).start()
    return True


__all__ = ["MODULES", "limit_blas_threads", "start"]
