"""Session-state keys of the History page (namespaced ``ranklab.history.*``)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from metrics_core.history import default_store_path

STORE_PATH = "ranklab.history.store_path"        # str: the history store file
VIEW = "ranklab.history.view"                    # "Per evaluation" | "Per query"
SUITE = "ranklab.history.suite"                  # suite filter ("All suites" or a name)
DATES = "ranklab.history.dates"                  # date_input value: (from, to)
DELETE_ID = "ranklab.history.delete_id"          # evaluation id chosen for deletion
PENDING_DELETE = "ranklab.history.pending_delete"  # id awaiting confirmation, or None
SAVE_SUITE = "ranklab.history.save_suite"        # suite name typed in the save form

ALL_SUITES = "All suites"
VIEWS = ("Per evaluation", "Per query")


def store_path() -> str:
    """The store file chosen in this session (default: ``$RANKLAB_HOME`` or ``~/.ranklab``)."""
    if not st.session_state.get(STORE_PATH):
        st.session_state[STORE_PATH] = str(default_store_path())
    return str(Path(st.session_state[STORE_PATH]).expanduser())
