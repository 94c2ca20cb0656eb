"""Test harness for the browser check: seed session state, then run the Compare page."""

import runpy
import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.app.test_compare_page import _data  # noqa: E402

if "ranklab.qrels" not in st.session_state or st.session_state["ranklab.qrels"] is None:
    qrels, runs, meta = _data()
    st.session_state["ranklab.qrels"] = qrels
    st.session_state["ranklab.runs"] = runs
    st.session_state["ranklab.meta"] = meta
runpy.run_path(str(ROOT / "pages" / "compare.py"), run_name="__main__")
