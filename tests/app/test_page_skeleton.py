"""The page skeleton (``ui.common.frame.page``), the upload slot and the download helper, each
in a small script run by AppTest."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from tests.app.text import shown

TIMEOUT = 60


def _skeleton_script():
    import streamlit as st

    from ui.common.frame import page

    with page(
        "Skeleton",
        sidebar=st.session_state.get("sidebar_first", False),
        caption="under the title",
        status=st.session_state.get("status", True),
    ) as p:
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
        assert [m.value for m in at.markdown if m.value in ("the answer", "after the stop")] == [
            "the answer",
            "after the stop",
        ]


def test_stop_ends_the_page_after_its_sidebar():
    at = AppTest.from_function(_skeleton_script, default_timeout=TIMEOUT)
    at.session_state["stop"] = True
    at.run()
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    assert "the answer" in texts and "after the stop" not in texts
    assert len(at.sidebar.selectbox) > 0  # drawn by p.stop() before stopping
    assert any("Conventions" in c.value for c in at.caption)


def test_the_language_switch_is_drawn_once_first_on_the_page_in_every_order():
    for sidebar_first in (False, True):
        at = AppTest.from_function(_skeleton_script, default_timeout=TIMEOUT)
        at.session_state["sidebar_first"] = sidebar_first
        at.query_params["lang"] = "es"
        at.run()
        assert not at.exception, at.exception
        switches = [r for r in at.radio if r.key == "ranklab_language_switch"]
        assert len(switches) == 1 and switches[0].label == "Idioma" and switches[0].value == "es"
        assert (
            at.main.radio[0].key == "ranklab_language_switch"
        )  # first on the page, before the title
        # the frame's own words follow the language: the status line and the sidebar
        assert any("Convenciones" in c.value for c in at.caption)
        assert any(m.value == "**Convenciones**" for m in at.sidebar.markdown)
        assert any(b.label == "Restablecer los valores de trec_eval" for b in at.sidebar.button)


def test_the_status_line_only_where_asked_and_by_default_on_ranking_pages():
    at = AppTest.from_function(_skeleton_script, default_timeout=TIMEOUT)
    at.session_state["status"] = False
    at.run()
    assert not at.exception, at.exception
    assert not any("Conventions:" in c.value for c in at.caption)
    assert len(at.sidebar.selectbox) > 0  # the sidebar is still drawn
    at.session_state["status"] = None  # default: a script outside pages/ is no ranking page
    at.run()
    assert not any("Conventions:" in c.value for c in at.caption)


def test_the_ranking_status_pages_are_registered_pages():
    from ui.common.navigation import RANKING_STATUS_PAGES, SECTIONS

    stems = {path.rsplit("/", 1)[1][:-3] for entries in SECTIONS.values() for path, *_ in entries}
    assert RANKING_STATUS_PAGES <= stems
    assert (
        not {"home", "detection", "calibration", "dynamic_k", "hashing", "learn", "history"}
        & RANKING_STATUS_PAGES
    )


def test_the_sidebar_labels_mirror_the_conventions_descriptions():
    from metrics_core.conventions import DESCRIPTIONS
    from ui.common.sidebar import CONVENTION_LABELS

    assert CONVENTION_LABELS == DESCRIPTIONS


def test_the_sidebar_labels_start_with_a_capital_in_both_languages():
    for lang, first, depth in (
        ("en", "Order of equal scores", "Depth cut (trec_eval -M) (0 = all)"),
        (
            "es",
            "Orden de las puntuaciones iguales",
            "Corte de profundidad (trec_eval -M) (0 = todo)",
        ),
    ):
        at = AppTest.from_function(_skeleton_script, default_timeout=TIMEOUT)
        at.query_params["lang"] = lang
        at.run()
        assert not at.exception, at.exception
        labels = [shown(w.label) for w in (*at.sidebar.selectbox, *at.sidebar.number_input)]
        labels += [shown(c.label) for c in at.sidebar.checkbox]
        assert labels[0] == first and depth in labels, labels
        # every label a person reads starts with a capital (a name like nDCG as written)
        assert all(x[:1].isupper() or x.startswith("nDCG") for x in labels), labels
        assert lang == "es" or "nDCG gain" in labels  # the exception is exercised


def test_the_collapse_script_names_the_page():
    from ui.common.sidebar import NARROW_PX, collapse_script

    a, b = collapse_script("overview"), collapse_script("table")
    assert a != b and '"overview"' in a and '"table"' in b and str(NARROW_PX) in a
    assert '"page"' in collapse_script(None) and "<x>" not in collapse_script("<x>")


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

    upload_slot(
        "ranklab.test.slot",
        "A file",
        load,
        leave_on_error=st.session_state.get("leave", False),
        after_error=lambda e: f"{e}. Still loaded: {st.session_state.get('data')}.",
    )


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
    assert (
        len(at.error) == 1 and at.session_state["loads"] == 2
    )  # the message stays, nothing re-read


def _downloads_script():
    import pandas as pd

    from ui.common.downloads import download_table

    download_table(
        pd.DataFrame({"AP": [0.5]}, index=pd.Index(["bm25"], name="run")),
        "my table: 1",
        title="A table",
        key="t",
        seed=3,
    )
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


def test_a_spanish_session_downloads_the_csv_a_spanish_spreadsheet_opens():
    """Semicolons, decimal commas and a byte-order mark in Spanish (a Spanish spreadsheet
    opened the comma-separated file in one column); English keeps the standard CSV."""
    import csv
    import io

    from ui.common.downloads import export_texts, for_spreadsheet

    df = pd.DataFrame(
        {"AP": [0.5, 0.125], "note": ["=1+1", "a, b"]},
        index=pd.Index(["bm25", "dense"], name="run"),
    )
    plain = export_texts(df, None, "T", formats=("csv",))["csv"]
    spanish = for_spreadsheet(plain)
    assert spanish.startswith("\ufeff") and not plain.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(spanish[1:]), delimiter=";"))
    assert rows[0] == ["run", "AP", "note"]
    assert rows[1:] == [["bm25", "0,5", "'=1+1"], ["dense", "0,125", "a, b"]]
    lazy = for_spreadsheet(lambda: plain)
    assert callable(lazy) and lazy() == spanish
    es = AppTest.from_function(_downloads_script, default_timeout=TIMEOUT)
    es.query_params["lang"] = "es"
    es.run()
    assert not es.exception, es.exception
    helps = [b.proto.help for b in es.get("download_button")]
    assert "punto y coma" in helps[0] and "punto y coma" in helps[-1] and not helps[1]
    en = AppTest.from_function(_downloads_script, default_timeout=TIMEOUT).run()
    assert not any(b.proto.help for b in en.get("download_button"))
