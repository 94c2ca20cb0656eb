"""RankLab's Streamlit entry point: the page registry and the shared frame, nothing else."""

from __future__ import annotations

import streamlit as st

from ui.frame import configure_page
from ui.navigation import SECTIONS


def navigation() -> st.navigation:
    pages = {
        section: [st.Page(path, title=title, icon=icon, url_path=url,
                          default=(path == "pages/home.py"))
                  for path, title, icon, url in entries]
        for section, entries in SECTIONS.items()
        if entries
    }
    return st.navigation(pages)


configure_page()
navigation().run()
