"""RankLab's Streamlit entry point: the page registry and the shared frame, nothing else."""

from __future__ import annotations

import streamlit as st

from ui.common.frame import configure_page
from ui.common.i18n import _, current_language
from ui.common.navigation import HOME, SECTIONS


def opening(home: st.Page):
    """The app's root URL: it opens Home at its own address (``/home``), so that every page,
    Home included, has one URL that a link can name (Streamlit serves its default page only
    at the root). The language a link names (``?lang=es``) is kept for the visitor first."""

    def open_home() -> None:
        current_language()
        st.switch_page(home)

    return open_home


def navigation() -> st.navigation:
    """The menu, its sections and titles in the visitor's language, and the root URL's page."""
    pages = {
        _(section): [
            st.Page(path, title=_(title), icon=icon, url_path=url)
            for path, title, icon, url in entries
        ]
        for section, entries in SECTIONS.items()
        if entries
    }
    home = next(p for entries in pages.values() for p in entries if p.url_path == HOME)
    first = next(iter(pages))
    pages[first].append(
        st.Page(opening(home), title=_("Home"), url_path="start", default=True, visibility="hidden")
    )
    # every page listed: with fifteen pages the default menu hides some behind "View more"
    return st.navigation(pages, expanded=True)


configure_page()
navigation().run()
