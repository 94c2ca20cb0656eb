"""The Learn page's reference section is the measure registry, shown whole."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from metrics_core.ranking.registry import REGISTRY
from tests.app.text import shown

ROOT = Path(__file__).resolve().parents[2]


def test_every_family_shows_its_formula_edge_cases_reference_and_example():
    at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60).run()
    assert not at.exception
    titles = [shown(e.label) for e in at.expander]
    text = "\n".join(shown(m.value) for m in at.markdown) + "\n".join(
        shown(c.value) for c in at.caption
    )
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


def test_worked_example_speaks_words_not_option_names():
    """The worked example's pickers read "linear", "log2", "qrels", "k" (the options' names)
    under lower-case labels, and its tables were headed "relevance label", "rank", "gain"."""
    import json

    es = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60)
    es.query_params["lang"] = "es"
    es.run()
    assert not es.exception
    gain = next(s for s in es.selectbox if s.label == "Ganancia de nDCG")
    assert gain.value == "linear" and "linear" not in gain.options
    mine = [s for s in es.selectbox if s.key and s.key.startswith("ranklab.learn.")]  # 4 + examples
    assert len(mine) == 5 and all(s.label[:1].isupper() for s in mine), [s.label for s in mine]
    heads = {}
    for frame in es.dataframe:
        for column, config in json.loads(frame.proto.columns).items():
            if column != "_index" and config.get("label"):
                heads[column] = config["label"]
    assert heads["rank"] == "Puesto" and heads["gain"] == "Ganancia"
    assert heads["gain × discount"] == "Ganancia × descuento"


def test_weighted_fusion_methods_named_in_spanish():
    """The Spanish page listed "weighted Condorcet" (English, lower case) among the methods."""
    es = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60)
    es.query_params["lang"] = "es"
    es.run()
    labels = [e.label for e in es.expander]
    assert any(label.startswith("Condorcet ponderado: ") for label in labels)
    assert any(label.startswith("BordaFuse ponderado: ") for label in labels)
    assert not any("weighted" in label for label in labels)


def test_the_example_buttons_stand_one_above_the_other_in_one_column():
    """Side by side, the longer example name wrapped and its button stood taller."""
    from ui.ranking.state import Learn

    for lang in ("en", "es"):
        at = AppTest.from_file(str(ROOT / "pages" / "learn.py"), default_timeout=60)
        at.query_params["lang"] = lang
        at.run()
        assert not at.exception
        keys = [Learn.GRADED, Learn.FOUR_RESULTS]
        holding = [
            [b.key for b in c.button]
            for c in at.columns
            if Learn.GRADED in {b.key for b in c.button}
        ]
        assert holding == [keys], holding  # one column, the two examples in order
