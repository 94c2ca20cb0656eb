"""Sessions that survive a reload: the visitor's data and settings come back after a reload, or
in another tab opened at the same address.

Streamlit starts a new session (empty state) on every reload. Each session gets a random token,
written in the address (``?s=<token>``); at the end of every script run the session's data and
settings (:data:`KEPT_KEYS`: the loaded qrels, runs, metadata, click log, scores, candidates,
hash codes, conventions, measures, thresholds) are registered under the token, by reference
(nothing is copied: while the session lives this costs nothing). A new session whose address
names a registered token takes them back.

Held within the memory budget: an entry outlives its session (which Streamlit drops
``server.disconnectedSessionTTL`` = 60 s after its tab closed) by ``RANKLAB_KEEP_SECONDS``
(default :data:`DEFAULT_KEEP_SECONDS`), then the data is released
(:func:`purge`, run by the memory reclaimer of :mod:`ui.common.budget`). The Data page says so
(:func:`keep_note`); an address whose data was released says that too, before anything is
loaded again. Tokens are 128-bit random: one visitor cannot name another's. The data itself lies off the
heap, in the session's folder (:mod:`ui.common.store`), which is removed when the data is
released.
"""

from __future__ import annotations

import os
import secrets
import threading
import time

import streamlit as st

from ui.common import state, store
from ui.common.style import say

#: The address's query parameter that names the session's token.
QUERY_PARAM = "s"
#: The session-state key of this session's token.
TOKEN = "ranklab.keep.token"
#: Set when the address named a token whose data was released (the page says so once).
EXPIRED = "ranklab.keep.expired"
DEFAULT_KEEP_SECONDS = 60


#: The session-state keys a reload brings back: the shared data and settings here; each section's
#: state module adds its own (:func:`keep_keys`: scores, candidates, hash codes, upload sources).
_KEYS: dict[str, None] = dict.fromkeys(
    (
        state.QRELS,
        state.RUNS,
        state.META,
        state.CONVENTIONS,
        state.MEASURES,
        state.THRESHOLDS,
        state.CLICKS,
        state.SELECTED_QUERY,
        store.FOLDER,
    )
)


def keep_keys(*keys: str) -> None:
    """Add session-state keys that a reload brings back (a section's data)."""
    _KEYS.update(dict.fromkeys(keys))


def _kept_keys() -> tuple[str, ...]:
    return tuple(_KEYS)


_lock = threading.Lock()
#: token -> (monotonic time of the last save, session id, {key: value})
_kept: dict[str, tuple[float, str, dict]] = {}
#: token -> monotonic time its session was first found gone
_gone: dict[str, float] = {}


def keep_seconds() -> float:
    """How long data outlives its session (``RANKLAB_KEEP_SECONDS``, default 60)."""
    try:
        return max(float(os.environ.get("RANKLAB_KEEP_SECONDS", DEFAULT_KEEP_SECONDS)), 0.0)
    except ValueError:
        return float(DEFAULT_KEEP_SECONDS)


def _valid(token) -> bool:
    return (
        isinstance(token, str)
        and 16 <= len(token) <= 64
        and token.replace("-", "").replace("_", "").isalnum()
    )


def restore_or_start() -> None:
    """At the start of a script run: a new session takes back the data its address names (or is
    told that it was released) and gets a token; the address always names the session's token."""
    token: str | None = st.session_state.get(TOKEN)
    store.settle()  # data put in the state by any path lies off the heap before pages use it
    if token is None:
        asked = st.query_params.get(QUERY_PARAM) or ""
        with _lock:
            entry = _kept.get(asked) if _valid(asked) else None
        if entry is not None:
            for key, value in entry[2].items():
                st.session_state[key] = value
            token = asked
        else:
            if _valid(asked):
                st.session_state[EXPIRED] = True
            token = secrets.token_urlsafe(16)
        st.session_state[TOKEN] = token
    if token is not None and st.query_params.get(QUERY_PARAM) != token:
        st.query_params[QUERY_PARAM] = token


def save() -> None:
    """At the end of a script run: the session's data off the heap (:func:`ui.common.store.settle`),
    then registered with its settings under the session's token (references, not copies)."""
    store.settle(release=True)
    token = st.session_state.get(TOKEN)
    if token is None:
        return
    kept = {k: st.session_state[k] for k in _kept_keys() if k in st.session_state}
    with _lock:
        _kept[token] = (time.monotonic(), state.session_id(), kept)
        _gone.pop(token, None)


def purge(open_sessions: set[str] | None) -> int:
    """Release the entries whose session has been gone (not in ``open_sessions``) for more than
    :func:`keep_seconds` (with ``open_sessions`` None, unknown: since their last save), and
    remove their folders of data (:func:`ui.common.store.release`; a folder an open session
    still uses stays). Returns how many entries were released."""
    now = time.monotonic()
    limit = now - keep_seconds()
    stale: list[str] = []
    folders: list[str] = []
    with _lock:
        for t, (when, sid, data) in list(_kept.items()):
            if open_sessions is not None and sid in open_sessions:
                continue
            if open_sessions is not None and t not in _gone:
                _gone[t] = now  # first seen without its session: the keeping time starts
            if _gone.get(t, when) <= limit:
                del _kept[t]
                _gone.pop(t, None)
                stale.append(t)
                if data.get(store.FOLDER):
                    folders.append(data[store.FOLDER])
        kept = {d.get(store.FOLDER) for _w, _s, d in _kept.values()}
    store.release([f for f in folders if f not in kept], open_sessions)
    return len(stale)


def kept_folders() -> set[str]:
    """The folder names of the data kept for a reload (:mod:`ui.common.store`)."""
    with _lock:
        return {d[store.FOLDER] for _w, _s, d in _kept.values() if d.get(store.FOLDER)}


def kept_count() -> int:
    with _lock:
        return len(_kept)


def kept_after_leaving() -> float:
    """Seconds a visitor's data is kept after the tab closed: Streamlit keeps the session
    ``server.disconnectedSessionTTL`` seconds, then this module :func:`keep_seconds` more."""
    try:
        ttl = float(st.get_option("server.disconnectedSessionTTL"))
    except Exception:  # an option this Streamlit does not have
        ttl = 0.0
    return ttl + keep_seconds()


def keep_note() -> str:
    """The warning the Data page shows: how long the data comes back after a reload."""
    from ui.common.i18n import gettext as _

    minutes = max(round(kept_after_leaving() / 60), 1)
    return say(
        _(
            "A reload, or this address in another tab, brings your data back for {n} min after you leave; after "
            "that it is released (its files on this server are deleted) and you load it again."
        ),
        n=minutes,
    )


def expired_note() -> str | None:
    """Once, after an address whose data was released: what happened."""
    from ui.common.i18n import gettext as _

    if st.session_state.pop(EXPIRED, None):
        return say(
            _(
                "The data of this address was released after {n} min without a visit: load it again."
            ),
            n=max(round(kept_after_leaving() / 60), 1),
        )
    return None


__all__ = [
    "QUERY_PARAM",
    "TOKEN",
    "keep_keys",
    "restore_or_start",
    "save",
    "purge",
    "keep_seconds",
    "keep_note",
    "expired_note",
    "kept_count",
    "kept_folders",
]
