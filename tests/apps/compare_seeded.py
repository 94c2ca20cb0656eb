"""Test harness for the browser check: seed session state, then run the Compare page."""

import runpy
import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.app.test_compare_page import _data  # noqa: E402  (the repository on the path first)
from ui.common import state  # noqa: E402

if st.session_state.get(state.QRELS) is None:
    qrels, runs, meta = _data()
    st.session_state[state.QRELS] = qrels
    st.session_state[state.RUNS] = runs
    st.session_state[state.META] = meta
runpy.run_path(str(ROOT / "pages" / "compare.py"), run_name="__main__")
