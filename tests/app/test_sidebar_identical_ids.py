"""The sidebar offers BEIR's ignore_identical_ids (a checkbox under "More conventions"); the
ties choices are the library's, without "expected" (the app's pages show measures the tie
report does not cover)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

import metrics_core as mc

ROOT = Path(__file__).resolve().parents[2]


def test_ignore_identical_ids_checkbox_sets_the_convention():
    at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    box = at.checkbox(key="ranklab.w.conv.ignore_identical_ids")
    assert box.value is False
    box.check().run()
    assert at.session_state["ranklab.conventions"].ignore_identical_ids is True
    ties = at.selectbox(key="ranklab.w.conv.ties")
    from ui.common.sidebar import choice_words

    assert list(ties.options) == [
        choice_words("ties", c) for c in mc.conventions.CHOICES["ties"] if c != "expected"
    ]
    at.button(key="ranklab.w.reset_conventions").click().run()
    assert at.session_state["ranklab.conventions"] == mc.Conventions()
    assert at.checkbox(key="ranklab.w.conv.ignore_identical_ids").value is False


def _emptied(field: str) -> None:  # AppTest script: the sidebar's callback on an empty box
    import streamlit as st

    from ui.common import sidebar, state

    st.session_state[state.CONVENTION_WIDGET + field] = None
    sidebar._on_change(field)


def test_an_emptied_number_box_keeps_the_convention_it_had():
    """A number box of the sidebar whose value comes empty (None: the visitor deleted its
    digits, or a rerun gave it no value) keeps the convention as it was and shows it again;
    the callback raised a TypeError on it (seen in the 50-visitor load test's server log)."""
    for field, shown in (("relevance_threshold", 1.0), ("depth", 0)):
        at = AppTest.from_function(_emptied, args=(field,), default_timeout=60).run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.session_state["ranklab.conventions"] == mc.Conventions()
        assert at.session_state["ranklab.w.conv." + field] == shown
