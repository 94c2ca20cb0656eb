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
loaded again. Tokens are 128-bit random: one visitor cannot name another's.
"""

from __future__ import annotations

import os
import secrets
import threading
import time

import streamlit as st

from ui.common import state
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
    """At the end of a script run: register the session's data and settings under its token
    (references, not copies)."""
    token = st.session_state.get(TOKEN)
    if token is None:
        return
    kept = {k: st.session_state[k] for k in _kept_keys() if k in st.session_state}
    with _lock:
        _kept[token] = (time.monotonic(), state.session_id(), kept)
        _gone.pop(token, None)


def purge(open_sessions: set[str] | None) -> int:
    """Release the entries whose session has been gone (not in ``open_sessions``) for more than
    :func:`keep_seconds` (with ``open_sessions`` None, unknown: since their last save). Returns
    how many were released."""
    now = time.monotonic()
    limit = now - keep_seconds()
    stale: list[str] = []
    with _lock:
        for t, (when, sid, _data) in list(_kept.items()):
            if open_sessions is not None and sid in open_sessions:
                continue
            if open_sessions is not None and t not in _gone:
                _gone[t] = now  # first seen without its session: the keeping time starts
            if _gone.get(t, when) <= limit:
                del _kept[t]
                _gone.pop(t, None)
                stale.append(t)
    return len(stale)


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
            "that it is released (nothing is stored on disk) and you load it again."
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
]
