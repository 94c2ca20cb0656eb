"""Issue 41 (the explorer, word for word) under AppTest: what a careful visitor tripped on,
each in English and Spanish where it has words. The browser's side (what lies on the first
screen, the slider's thumb, what fits) is tests/e2e/test_explorer_41_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.hashing import state as hs

ROOT = Path(__file__).resolve().parents[2]
HASH_SAMPLE = ROOT / "sample_data" / "hashing"
HASH_FILES = ("query_codes.npy", "db_codes.npy", "query_labels.csv", "db_labels.csv")
TIMEOUT = 120


def _page(name: str, lang: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if lang:
        at.query_params["lang"] = lang
    return at


def _hash_uploaders(at) -> list:
    return [u for u in at.get("file_uploader") if u.key.startswith("hash_upload_")]


@pytest.mark.parametrize("lang", [None, "es"])
def test_hash_codes_data_panel_closes_once_the_four_uploads_are_read(lang):
    """Item 1: after the fourth upload the Data panel stayed open and pushed mAP below the
    first screen; it closes once the codes are read (and opens again at the visitor's wish)."""
    at = _page("hashing", lang).run()
    panel = at.get("expander")[0]
    assert panel.proto.expanded  # nothing loaded: open, with the uploads
    for i, name in enumerate(HASH_FILES):
        data = (HASH_SAMPLE / name).read_bytes()
        _hash_uploaders(at)[i].set_value((name, data, "application/octet-stream")).run()
        assert not at.exception, at.exception
    assert at.session_state[hs.DATA] is not None
    assert not at.get("expander")[0].proto.expanded, "the Data panel is still open"
    assert at.metric[0].label == "mAP"


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            None,
            "Still to upload: database codes, query labels, database labels. Upload the four "
            "files, or load the sample.",
        ),
        (
            "es",
            "Falta subir: códigos de la base, etiquetas de consulta, etiquetas de la base. "
            "Sube los cuatro archivos o carga el ejemplo.",
        ),
    ],
)
def test_hash_codes_one_upload_of_four_is_said_in_a_sentence(lang, said):
    """Item 3: "missing database codes, query labels, database labels. upload all four files,
    or load the sample" began lower case (an error box for a box not filled yet)."""
    at = _page("hashing", lang).run()
    name = HASH_FILES[0]
    data = (HASH_SAMPLE / name).read_bytes()
    _hash_uploaders(at)[0].set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == []
    assert said in [i.value for i in at.info]
    for text in [i.value for i in at.info]:
        assert text[0].isupper(), text
        for sentence in text.split(". ")[1:]:
            assert sentence[0].isupper(), text
