"""RankLab's Streamlit entry point: the page registry and the shared frame, nothing else."""

from __future__ import annotations

import streamlit as st

from ui.common.frame import configure_page
from ui.common.i18n import _
from ui.common.navigation import SECTIONS


def navigation() -> st.navigation:
    """The menu, its sections and titles in the visitor's language."""
    pages = {
        _(section): [st.Page(path, title=_(title), icon=icon, url_path=url,
                             default=(path == "pages/home.py"))
                     for path, title, icon, url in entries]
        for section, entries in SECTIONS.items()
        if entries
    }
    # every page listed: with fifteen pages the default menu hides some behind "View more"
    return st.navigation(pages, expanded=True)


configure_page()
navigation().run()
