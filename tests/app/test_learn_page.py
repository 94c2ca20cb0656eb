"""The Learn page's reference section is the measure registry, shown whole."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from metrics_core.ranking.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]


def test_every_family_shows_its_formula_edge_cases_reference_and_example():
    at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60).run()
    assert not at.exception
    titles = [e.label for e in at.expander]
    text = "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)
    latex = {x.value.strip("$\n") for x in at.latex}
    for d in REGISTRY.values():
        assert f"{d.name}: {d.description}" in titles, d.name
        assert d.formula in latex, d.name
        for case in d.edge_cases:
            assert case in text, (d.name, case)
        assert d.reference in text, d.name
        assert d.example.explanation in text, d.name


def test_the_definitions_open_the_page_before_the_worked_example():
    """The page opened on an editor with the definitions two screens down."""
    at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60).run()
    assert [h.value for h in at.header] == ["Every measure", "Worked example", "Conventions"]
    es = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60)
    es.query_params["lang"] = "es"
    es.run()
    assert not es.exception
    assert es.header[0].value != "Every measure" and len(es.header) == 3
