"""Session-state keys and defaults shared by every page, and the two helpers of every
loader: the digest of an upload (its cache key) and whether code runs in a script run.

Keys are namespaced ``ranklab.*``. State holds arrays and small objects, never
re-parsed files: parsing is cached by upload digest elsewhere.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from metrics_core.conventions import Conventions
from metrics_core.ranking.registry import EXPLORER_MEASURES
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS

QRELS = "ranklab.qrels"  # metrics_core Qrels or None
RUNS = "ranklab.runs"  # dict: run name -> metrics_core Run
META = "ranklab.meta"  # pandas DataFrame of query metadata (index: query id) or None
CONVENTIONS = "ranklab.conventions"  # metrics_core Conventions
MESSAGES = "ranklab.messages"  # list of (level, text) shown once
MEASURES = "ranklab.measures"  # list of measure names chosen for the ranking pages
SELECTED_QUERY = "ranklab.selected_query"  # query id the per-query page shows, or None
THRESHOLDS = "ranklab.thresholds"  # measure -> (good, fair) or good: ui.common.thresholds
CLICKS = "ranklab.clicks"  # click log DataFrame (query, shown, clicked) or None
#: the Hash codes page's data (ui.hashing.state.DATA): named here, where the status line reads it
HASH_CODES = "ranklab.hashing.data"  # dict of arrays or None

# --- the shared frame (ui.common.frame), the upload slot and the downloads -------------------
CONVENTION_WIDGET = "ranklab.w.conv."  # prefix + field: the sidebar's convention widgets
RESET_CONVENTIONS = "ranklab.w.reset_conventions"
SIDEBAR_AUTO = "ranklab.sidebar.auto"  # the browser's sessionStorage flag (narrow window)
UPLOAD_NONCES = "ranklab.upload.nonces"  # dict: upload slot -> nonce of its widget key
UPLOAD_MESSAGES = "ranklab.upload.messages"  # dict: upload slot -> message of its last failure
READ_ONCE = "ranklab.upload.read"  # dict: key -> (upload signature, error text or None)
UPLOAD_REFUSED = "ranklab.upload.refused"  # dict: file name -> when it was refused at the door
DOWNLOAD = "ranklab.dl"  # prefix of the download buttons' keys
REPORT = "ranklab.report"  # prefix of the "Download report" buttons' keys

DEFAULT_MEASURES = list(EXPLORER_MEASURES)  # the registry's explorer defaults
DEFAULT_THRESHOLDS = dict(DEFAULT_GOOD_THRESHOLDS)  # the library's interpretation thresholds

DEFAULTS = {
    QRELS: None,
    RUNS: dict,
    META: None,
    CONVENTIONS: Conventions,
    MESSAGES: list,
    MEASURES: lambda: list(DEFAULT_MEASURES),
    SELECTED_QUERY: None,
    THRESHOLDS: lambda: dict(DEFAULT_THRESHOLDS),
    CLICKS: None,
}


def ensure_defaults() -> None:
    """Create every missing key with its default; never overwrites loaded data."""
    for key, default in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = default() if callable(default) else default


def digest(data: bytes) -> str:
    """Content digest of an upload (the cache key of its parse)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def loaded_run_names() -> list[str]:
    """Names of the runs loaded in this session, in load order (empty outside a script run)."""
    if not in_app():
        return []
    return list(st.session_state.get(RUNS) or {})


def in_app() -> bool:
    """True inside a script run (where session-scoped caches exist); False in plain Python
    (tests, tools), where loaders run uncached."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True) is not None


def session_id() -> str:
    """The visitor's session (Streamlit's id), or "" outside a script run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else ""


def page_id() -> str:
    """The page of the visitor's current run (Streamlit's page script hash), or "" outside a
    script run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return str(getattr(ctx, "page_script_hash", "") or "") if ctx is not None else ""


# --- Home's task cards (pages/home.py) --------------------------------------------------------
HOME_OPEN = "ranklab.home.open"  # prefix + "." + task: "open with the sample" buttons
HOME_TASKS = ("rankings", "detection", "hashing", "compare")
