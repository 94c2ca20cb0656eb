"""History: saved evaluations of test suites, runs saved together side by side, and
each run's trend over time."""

import streamlit as st

from metrics_core.errors import InputError
from ui.common.frame import page
from ui.common.i18n import gettext as _
from ui.common.style import say
from ui.history.data import open_store
from ui.history.widgets import CAPTION, render

with page(_("History"), caption=_(CAPTION)) as p:
    try:
        opened = open_store()
        store = opened.__enter__()
    except InputError as exc:
        # a deployer's store that cannot be opened: say what is wrong, never its path
        st.error(
            say(
                _(
                    "The shared history cannot be opened: {problem}. Ask whoever deployed this app to check "
                    "its history_store setting."
                ),
                problem=exc.phrase().translate(_),
            )
        )
        p.stop()
    try:
        render(store)
    finally:
        opened.__exit__(None, None, None)
