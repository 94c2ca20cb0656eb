"""The page skeleton (``ui.common.frame.page``), the upload slot and the download helper, each
in a small script run by AppTest."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

TIMEOUT = 60


def _skeleton_script():
    import streamlit as st

    from ui.common.frame import page

    with page("Skeleton", sidebar=st.session_state.get("sidebar_first", False),
              caption="under the title") as p:
        st.write("the answer")
        if st.session_state.get("stop"):
            p.stop()
        st.write("after the stop")


def test_page_draws_title_caption_and_sidebar_in_every_order():
    for sidebar_first in (False, True):
        at = AppTest.from_function(_skeleton_script, default_timeout=TIMEOUT)
        at.session_state["sidebar_first"] = sidebar_first
        at.run()
        assert not at.exception, at.exception
        assert at.title[0].value == "Skeleton"
        assert any(c.value == "under the title" for c in at.caption)
        assert any("Conventions" in c.value for c in at.caption)  # the status line
        assert len(at.sidebar.selectbox) > 0  # the conventions
        assert [m.value for m in at.markdown if m.value in ("the answer", "after the stop")] == \
            ["the answer", "after the stop"]


def test_stop_ends_the_page_after_its_sidebar():
    at = AppTest.from_function(_skeleton_script, default_timeout=TIMEOUT)
    at.session_state["stop"] = True
    at.run()
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    assert "the answer" in texts and "after the stop" not in texts
    assert len(at.sidebar.selectbox) > 0  # drawn by p.stop() before stopping
    assert any("Conventions" in c.value for c in at.caption)


def _slot_script():
    import streamlit as st

    from metrics_core.errors import InputError
    from ui.common.upload import upload_slot

    st.session_state.setdefault("loads", 0)

    def load(files):
        st.session_state["loads"] += 1
        text = files[0].getvalue().decode()
        if text.startswith("bad"):
            raise InputError("not a number", source=files[0].name, line=2)
        st.session_state["data"] = text

    upload_slot("ranklab.test.slot", "A file", load, leave_on_error=st.session_state.get("leave", False),
                after_error=lambda e: f"{e}. Still loaded: {st.session_state.get('data')}.")


def _slot(at):
    return next(u for u in at.get("file_uploader") if u.key.startswith("ranklab.test.slot."))


def test_upload_slot_reads_an_upload_once_and_keeps_its_error():
    at = AppTest.from_function(_slot_script, default_timeout=TIMEOUT).run()
    assert _slot(at).key == "ranklab.test.slot.0"
    _slot(at).set_value(("a.csv", b"one", "text/csv")).run()
    at.run()
    assert at.session_state["loads"] == 1 and at.session_state["data"] == "one"
    _slot(at).set_value(("b.csv", b"bad", "text/csv")).run()
    at.run()
    assert at.session_state["loads"] == 2 and at.session_state["data"] == "one"  # kept
    assert len(at.error) == 1 and "b.csv, line 2" in at.error[0].value
    assert _slot(at).key == "ranklab.test.slot.0"  # the file stays in the box


def test_upload_slot_can_empty_the_box_of_a_failed_file():
    at = AppTest.from_function(_slot_script, default_timeout=TIMEOUT)
    at.session_state["leave"] = True
    at.run()
    _slot(at).set_value(("a.csv", b"one", "text/csv")).run()
    _slot(at).set_value(("b.csv", b"bad", "text/csv")).run()
    assert not at.exception, at.exception
    assert _slot(at).key == "ranklab.test.slot.1"  # a new, empty box
    assert len(at.error) == 1 and at.error[0].value.endswith("Still loaded: one.")
    at.run()
    assert len(at.error) == 1 and at.session_state["loads"] == 2  # the message stays, nothing re-read


def _downloads_script():
    import pandas as pd

    from ui.common.downloads import download_table

    download_table(pd.DataFrame({"AP": [0.5]}, index=pd.Index(["bm25"], name="run")), "my table: 1",
                   title="A table", key="t", seed=3)
    download_table(pd.DataFrame({"AP": [0.5]}), "csv only", key="c", formats=("csv",), index=False)


def test_download_table_one_button_per_format_with_provenance():
    at = AppTest.from_function(_downloads_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["CSV", "JSON", "Markdown", "LaTeX", "CSV"]


def test_export_texts_state_the_settings_and_keep_the_index_when_asked():
    from ui.common.downloads import export_texts

    df = pd.DataFrame({"AP": [0.5]}, index=pd.Index(["bm25"], name="run"))
    texts = export_texts(df, None, "T", seed=3)
    assert set(texts) == {"csv", "json", "markdown", "latex"}
    assert "seed" in texts["json"] and "bm25" in texts["markdown"] and "bm25" in texts["csv"]
    assert "seed" not in texts["csv"]  # the CSV is the table alone
    assert "bm25" not in export_texts(df, None, "T", index=False, formats=("csv",))["csv"]
