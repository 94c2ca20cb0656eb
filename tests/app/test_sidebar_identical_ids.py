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
