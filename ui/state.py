"""Session-state keys and defaults shared by every page.

Keys are namespaced ``ranklab.*``. State holds arrays and small objects, never
re-parsed files: parsing is cached by upload digest elsewhere.
"""

from __future__ import annotations

import streamlit as st

from metrics_core.conventions import Conventions

QRELS = "ranklab.qrels"          # metrics_core Qrels or None
RUNS = "ranklab.runs"            # dict: run name -> metrics_core Run
META = "ranklab.meta"            # pandas DataFrame of query metadata (index: query id) or None
CONVENTIONS = "ranklab.conventions"  # metrics_core Conventions
MESSAGES = "ranklab.messages"    # list of (level, text) shown once

DEFAULTS = {
    QRELS: None,
    RUNS: dict,
    META: None,
    CONVENTIONS: Conventions,
    MESSAGES: list,
}


def ensure_defaults() -> None:
    """Create every missing key with its default; never overwrites loaded data."""
    for key, default in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = default() if callable(default) else default
