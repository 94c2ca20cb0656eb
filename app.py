"""RankLab's Streamlit entry point: the page registry and the shared frame, nothing else."""

from __future__ import annotations

import streamlit as st

from ui.navigation import SECTIONS


def navigation() -> st.navigation:
    pages = {
        section: [st.Page(path, title=title, icon=icon, url_path=url) for path, title, icon, url in entries]
        for section, entries in SECTIONS.items()
        if entries
    }
    return st.navigation(pages)


st.set_page_config(page_title="RankLab", page_icon=":material/leaderboard:", layout="wide")
navigation().run()
