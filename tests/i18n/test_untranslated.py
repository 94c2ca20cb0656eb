"""No user-visible text of the app bypasses the translation layer (AST scan of app.py,
pages/ and ui/; see tests/i18n/scan.py for the rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.i18n.scan import scan_paths, scan_source

ROOT = Path(__file__).resolve().parents[2]


def test_scanner_flags_every_way_of_showing_a_bare_text():
    source = """
import streamlit as st
col = st.columns(2)[0]
st.title("Overview")
col.button("Run it", help="Evaluates the runs")
st.sidebar.header(f"Runs of {name}")
st.caption("Queries: " + str(n))
st.info("{n} queries".format(n=3))
st.selectbox(label="Measure", options=opts)
st.tabs(["Table", _("Chart")])
st.radio(_("Mode"), modes, captions=["Fast", "Exact"])
st.markdown("Good" if ok else "Needs improvement")
fig.update_layout(title="ROC curve", xaxis_title="False positive rate", height=300)
fig.add_vline(x=t, annotation_text="threshold")
cfg = {"p": st.column_config.NumberColumn("p-value", help="Holm-corrected", format="%.4f")}
download_table(board, "leaderboard", conv, title="Leaderboard. " + legend, key="lb")
download_table(board, "diagnostics", conv, "Data diagnostics")
"""
    found = {(f.line, f.text) for f in scan_source(source)}
    assert found == {
        (4, "Overview"),
        (5, "Run it"),
        (5, "Evaluates the runs"),
        (6, "Runs of "),
        (7, "Queries: "),
        (8, "{n} queries"),
        (9, "Measure"),
        (10, "Table"),
        (11, "Fast"),
        (11, "Exact"),
        (12, "Good"),
        (12, "Needs improvement"),
        (13, "ROC curve"),
        (13, "False positive rate"),
        (14, "threshold"),
        (15, "p-value"),
        (15, "Holm-corrected"),
        (16, "Leaderboard. "),
        (17, "Data diagnostics"),
    }


def test_scanner_accepts_translated_and_wordless_texts():
    source = """
import logging
import streamlit as st
st.title(_("Overview"))
st.caption(ngettext("{n} run", "{n} runs", n).format(n=n))
st.button(_("Run it"), help=_("Evaluates the runs"))
st.markdown(f"**{name}**")
st.markdown("—")
st.metric("nDCG@10", value)
st.markdown("<style>.block {padding: 0}</style>", unsafe_allow_html=True)
logging.warning("not for the visitor")
st.radio("Language", ["en", "es"])  # i18n: ignore
st.write(value)
fig.update_layout(title=_("ROC curve"), height=300, template="plotly_white")
st.column_config.NumberColumn(_("p-value"), format="%.4f")
download_table(board, "leaderboard", conv, title=_("Leaderboard") + ". " + legend)
"""
    assert scan_source(source) == []


#: The shared frame (ui/common), the entry point, Home and the comparative table: checked
#: strictly on their own while the rest of the app is being wrapped.
FRAME_FILES = ("app.py", "ui/common", "pages/home.py", "pages/table.py", "ui/compare/table.py")


def test_the_frame_home_and_the_comparative_table_have_no_bare_text():
    findings = scan_paths(ROOT, FRAME_FILES)
    assert [str(f) for f in findings] == []


def test_scanner_checks_a_subset_and_refuses_a_missing_name(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "a.py").write_text('import streamlit as st\nst.title("Alpha")\n')
    (tmp_path / "pages" / "b.py").write_text('import streamlit as st\nst.title("Beta")\n')
    assert [f.text for f in scan_paths(tmp_path, ("pages/b.py",))] == ["Beta"]
    assert sorted(f.text for f in scan_paths(tmp_path, ("pages",))) == ["Alpha", "Beta"]
    with pytest.raises(FileNotFoundError, match="pages/c.py"):
        scan_paths(tmp_path, ("pages/c.py",))


def test_scanner_reads_page_links_label_and_skips_icons():
    source = """
import streamlit as st
st.page_link("pages/data.py", "Upload a run")
st.page_link("pages/data.py", label=_("Upload a run"), icon=":material/upload:")
page_link("pages/learn.py", _("How each measure is computed"), ":material/school:")
st.Page("pages/home.py", title="Home")
st.caption(":material/info: " + text)
"""
    assert {(f.line, f.text) for f in scan_source(source)} == {(3, "Upload a run"), (6, "Home")}


def test_the_translation_layer_itself_has_no_bare_text():
    assert [str(f) for f in scan_paths(ROOT, ("ui/common/i18n.py",))] == []


def test_every_visible_text_of_the_app_goes_through_the_translation_layer():
    findings = scan_paths(ROOT)
    assert not findings, f"{len(findings)} visible texts without _():\n" + "\n".join(
        map(str, findings[:60])
    )
