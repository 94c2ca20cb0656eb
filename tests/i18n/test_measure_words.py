"""Every measure the Learn page can show has its words in Spanish: the registry's one-line
descriptions are marked at their declarations and translated in the catalogs; the page shows
them (and the parameters' words) in the visitor's language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core.ranking.registry import PARAMS, REGISTRY
from metrics_core.report.catalogs import translations
from tools.i18n_catalogs import template

ROOT = Path(__file__).resolve().parents[2]
#: a word of three letters or more that is not a measure name or a formula symbol
_WORD = re.compile(r"\b[a-z]{3,}\b")


def _only_names_or_formula(text: str) -> bool:
    return not _WORD.search(text)


def test_the_helper_tells_words_from_names_and_formulas():
    assert _only_names_or_formula("nDCG@k = DCG / IDCG")
    assert _only_names_or_formula("P@k, R@k")
    assert not _only_names_or_formula("harmonic mean of P@k and R@k")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_each_measure_description_has_its_spanish(name):
    description = REGISTRY[name].description
    spanish = translations("es").gettext(description)
    assert spanish.strip(), name
    if not _only_names_or_formula(description):
        assert spanish != description, (name, description)


def test_every_description_is_marked_where_it_is_declared():
    marked = {m.id for m in template()}
    for d in REGISTRY.values():
        assert d.description in marked, d.name


def test_the_parameters_value_words_have_their_spanish():
    es = translations("es").gettext
    words = {p.accepted() for p in PARAMS.values() if p.choices is None}
    assert words == {"a number", "label:gain,..."}
    for w in words:
        assert es(w) != w, w


def test_the_learn_page_names_every_measure_in_spanish():
    at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=90)
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception, at.exception
    es = translations("es").gettext
    titles = [e.label for e in at.expander]
    for d in REGISTRY.values():
        assert f"{d.name}: {es(d.description)}" in titles, d.name
        assert f"{d.name}: {d.description}" not in titles, d.name
    captions = "\n".join(c.value for c in at.caption)
    assert "rel=un número" in captions and "a number" not in captions
    assert "Referencia:" in captions
