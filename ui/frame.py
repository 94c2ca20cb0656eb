"""The shared frame every page calls first: state defaults and the sidebar."""

from __future__ import annotations

import streamlit as st

from ui import state


def page_setup() -> None:
    """Idempotent set-up for a page: safe on a cold deep link, safe when app.py ran first."""
    state.ensure_defaults()
    _sidebar()


def _sidebar() -> None:
    with st.sidebar:
        st.caption("RankLab")
