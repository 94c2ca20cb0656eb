"""Every measure the Learn page can show has its words in Spanish: the registry's one-line
descriptions, edge cases and worked examples are marked at their declarations and translated
in the catalogs; the page shows them (and the parameters' words) in the visitor's language.
Literature references stay as published."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from metrics_core.ranking.registry import PARAMS, REGISTRY
from metrics_core.report.catalogs import translations
from tests.app.text import shown
from tools.i18n_catalogs import template

ROOT = Path(__file__).resolve().parents[2]
#: a word of three letters or more that is not a measure name or a formula symbol
_WORD = re.compile(r"\b[a-z]{3,}\b")
#: a function of a formula: floor(...), round(...), min(...)
_FUNCTION = re.compile(r"\b[a-z]+\(")


@pytest.fixture(scope="module")
def marked() -> set[str]:
    """Every text the code marks for translation (the sources are read once for the module's
    tests: about a second each time)."""
    return {m.id for m in template()}


def _only_names_or_formula(text: str) -> bool:
    return not _WORD.search(_FUNCTION.sub("(", text))


def test_the_helper_tells_words_from_names_and_formulas():
    assert _only_names_or_formula("nDCG@k = DCG / IDCG")
    assert _only_names_or_formula("P@k, R@k")
    assert _only_names_or_formula("c = floor(2 * 3 + 0.9) = 6: 2/6.")
    assert not _only_names_or_formula("harmonic mean of P@k and R@k")
    assert not _only_names_or_formula("the best of max(a, b)")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_each_measure_description_has_its_spanish(name):
    description = REGISTRY[name].description
    spanish = translations("es").gettext(description)
    assert spanish.strip(), name
    if not _only_names_or_formula(description):
        assert spanish != description, (name, description)


def test_every_description_is_marked_where_it_is_declared(marked):
    for d in REGISTRY.values():
        assert d.description in marked, d.name


@pytest.mark.parametrize("name", list(REGISTRY))
def test_each_measure_edge_case_and_example_has_its_spanish(name, marked):
    d = REGISTRY[name]
    es = translations("es").gettext
    texts = [*d.edge_cases, *(d.example.parts or (d.example.explanation,))]
    assert d.example.explained() == d.example.explanation  # English: the declared text
    for text in texts:
        assert text in marked, (name, text)
        assert es(text).strip(), (name, text)
        if not _only_names_or_formula(text):
            assert es(text) != text, (name, text)
    assert d.example.explained(es) == " ".join(
        es(t) for t in d.example.parts or (d.example.explanation,)
    )


@pytest.mark.parametrize("name", list(REGISTRY))
def test_each_reference_keeps_its_literature_and_translates_the_words_around_it(name, marked):
    d = REGISTRY[name]
    es = translations("es").gettext
    assert d.referenced() == d.reference
    spanish = d.referenced(es)
    assert "(NIST; Buckley), measure" not in spanish and "Also called" not in spanish, spanish
    for part in d.reference_parts or (d.reference,):
        if part in marked:  # a note: translated
            assert es(part).strip(), (name, part)
        elif "trec_eval 10.0" not in part:  # literature: as published
            assert part in spanish, (name, part)


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
    marked = {m.id for m in template()}
    titles = [shown(e.label) for e in at.expander]
    for d in REGISTRY.values():
        assert f"{d.name}: {es(d.description)}" in titles, d.name
        assert f"{d.name}: {d.description}" not in titles, d.name
    captions = "\n".join(shown(c.value) for c in at.caption)
    assert "rel=un número" in captions and "a number" not in captions
    assert "Referencia:" in captions
    text = "\n".join(shown(m.value) for m in at.markdown)
    for d in REGISTRY.values():
        for case in d.edge_cases:
            assert f"- {es(case)}" in text, (d.name, case)
        assert d.example.explained(es) in text, d.name
        assert d.referenced(es) in captions, d.name
        for part in d.reference_parts:  # the literature as published
            if part not in marked and "trec_eval 10.0" not in part:
                assert part in captions, (d.name, part)
    assert "trec_eval 10.0 (NIST; Buckley), medida recip_rank." in captions
    assert "measure recip_rank" not in captions
    assert "Ranking d1, d2, d3; relevantes: d1, d3 y d4" in text
