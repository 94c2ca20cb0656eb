"""The style sheets that give Streamlit's uploader the visitor's words (the browser test,
tests/e2e/test_uploader_words_browser.py, checks what Chromium draws)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import streamlit as st
import tomllib

from ui.common import uploader_words
from ui.common.uploader_words import (
    css_string,
    limit_line,
    size_words,
    types_css,
    upload_limit_mb,
    uploader_css,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_examples_in_the_docstrings_hold():
    result = doctest.testmod(uploader_words)
    assert result.attempted >= 5 and result.failed == 0


def test_english_keeps_streamlits_words():
    assert uploader_css("en") is None
    assert types_css("ranklab.x.0", ["csv"], "en") is None


def test_the_limit_is_the_servers():
    with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
        configured = tomllib.load(fh)["server"]["maxUploadSize"]
    assert upload_limit_mb() == configured == st.get_option("server.maxUploadSize")
    assert limit_line(megabytes=1024, gettext=lambda t: t) == "Up to 1 GB per file"
    assert (
        limit_line(["csv", "txt"], 200, gettext=lambda t: t) == "Up to 200 MB per file • CSV, TXT"
    )


def test_spanish_sheet_hides_streamlits_words_and_shows_the_catalogs():
    css = uploader_css("es")
    contents = re.findall(r'content: "([^"]*)"', css)
    assert contents == [
        "Subir archivo",
        "Subir archivos",
        f"Hasta {size_words(upload_limit_mb())} por archivo",
        "Suelta el archivo aquí",
        "Suelta los archivos aquí",
    ]
    assert css.count("display: none") == 3 and css.count("visibility: hidden") == 2
    assert css.startswith("<style>") and css.endswith("</style>") and css.count("<") == 2


def test_a_box_with_types_gets_its_own_line_scoped_to_its_widget():
    css = types_css("ranklab.detection.cal_upload.0", ["csv", "tsv"], "es")
    assert ".st-key-ranklab-detection-cal_upload-0 " in css
    assert f'content: "Hasta {size_words(upload_limit_mb())} por archivo • CSV, TSV"' in css
    assert types_css("ranklab.x.0", None, "es") is None


def test_no_text_can_end_the_style_sheet():
    assert "</style>" not in css_string('x</style><script>alert("1")</script>')
    assert css_string('a"b\\c\nd') == '"a\\"b\\\\c\\A d"'
