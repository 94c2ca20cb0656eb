"""The ranking pages' one prologue (:func:`ui.ranking.prologue.ranking_prologue`): with a run that
shares no query with the qrels loaded beside the sample's runs, every ranking page (Overview,
Breakdown, Per query, Compare systems, Comparative table) names it in one warning, leaves it out,
and shows every other run's numbers (never "None" in a cell). Compare showed "None" in every
cell, for every run, before it went through the prologue."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
#: a run of another collection: its query ids are not the qrels' ones
STRANGER = b"zz1 Q0 D01195 1 3.5 x\nzz2 Q0 D00364 1 1.0 x\n"
PAGES = ("overview", "breakdown", "per_query", "compare", "table")


def _with_stranger(sample):
    qrels, runs, meta = sample
    bad = mc.read_run(STRANGER)
    bad.name = "stranger"
    # the stranger first: it was the baseline Compare chose by default
    return qrels, {"stranger": bad} | dict(runs), meta


def _page(name: str, data) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    qrels, runs, meta = data
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    return at.run()


def _cells(at) -> list[str]:
    out = []
    for frame in at.dataframe:
        value = frame.value
        data = value.data if hasattr(value, "data") else value  # a Styler or a frame
        out += [str(v) for v in pd.DataFrame(data).astype(object).to_numpy().ravel()]
    return out


@pytest.mark.parametrize("name", PAGES)
def test_every_ranking_page_sets_the_stranger_aside_and_keeps_the_other_runs(name, sample):
    at = _page(name, _with_stranger(sample))
    assert not at.exception, [e.message for e in at.exception]
    warnings = [w.value for w in at.warning]
    assert any("stranger" in w and "shares no query with the qrels" in w for w in warnings), (
        warnings
    )
    cells = _cells(at)
    assert cells, "the page drew no table"
    assert "None" not in cells
    shown = " ".join(cells)
    # the runs named in the cells (Compare names its baseline in a header, Per query shows one run)
    expected = {"compare": ("dense", "hybrid"), "per_query": ()}.get(
        name, ("bm25", "dense", "hybrid")
    )
    for other in expected:
        assert other in shown, (other, name)
    assert not any(c.startswith("stranger") for c in cells)


def test_compare_shows_every_other_runs_numbers(sample):
    qrels, runs, _meta = sample
    at = _page("compare", _with_stranger(sample))
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[0].value
    table = table.data if hasattr(table, "data") else table
    assert set(table["run"]) == {"dense", "hybrid"}  # every usable run against the first usable one
    assert table[["mean_baseline", "mean_run", "mean_delta"]].notna().all().all()
    evs = {n: mc.evaluate(qrels, r, ["AP"]).per_query["AP"] for n, r in runs.items()}
    common = evs["bm25"].index.intersection(evs["dense"].index).intersection(evs["hybrid"].index)
    ap = table[table["measure"] == "AP"].set_index("run")
    for name in ("dense", "hybrid"):  # the means on the queries every usable run answered
        assert ap.loc[name, "mean_run"] == pytest.approx(evs[name].loc[common].mean())
    assert ap["mean_baseline"].to_numpy() == pytest.approx(evs["bm25"].loc[common].mean())
    assert any("baseline is bm25" in i.value for i in at.info), [i.value for i in at.info]


def test_compare_with_one_usable_run_says_what_it_needs(sample):
    qrels, runs, meta = sample
    bad = mc.read_run(STRANGER)
    bad.name = "stranger"
    at = _page("compare", (qrels, {"stranger": bad, "bm25": runs["bm25"]}, meta))
    assert not at.exception
    assert any("needs 2 runs" in i.value for i in at.info), [i.value for i in at.info]
    assert not at.dataframe


# --- the one page prologue (ui.common.prologue.needs) -----------------------------------------
PAGE_DIR = ROOT / "pages"
#: the pages whose first screen offers the sample as an action of its own (not a prologue)
SAMPLE_ACTION_PAGES = {"home", "data"}


def _calls(tree, name: str):
    import ast

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if called == name:
                yield node


def test_no_page_draws_the_prologue_by_hand():
    """The hint, the sample button and the stop were copied in Compare, Fusion and the
    Comparative table: a page says what it needs through ``needs`` only."""
    import ast

    copied = []
    for path in sorted(PAGE_DIR.glob("*.py")):
        if path.stem in SAMPLE_ACTION_PAGES:
            continue
        tree = ast.parse(path.read_text())
        for call in _calls(tree, "button"):
            words = [a.value for a in ast.walk(call) if isinstance(a, ast.Constant)]
            if "Load sample data" in words:
                copied.append(f"{path.name}:{call.lineno}")
    assert copied == []


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("compare", "at least two runs"),
        ("fusion", "at least two runs"),
        ("table", "No runs loaded"),
        ("overview", "No data loaded yet"),
        ("breakdown", "No data loaded yet"),
        ("per_query", "No data loaded yet"),
    ],
)
def test_an_empty_ranking_page_says_what_to_load_and_offers_the_sample(name, hint):
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any(hint in i.value for i in at.info), [i.value for i in at.info]
    sample = [b for b in at.button if b.label == "Load sample data"]
    assert len(sample) == 1
    assert not at.dataframe  # the page stopped after its prologue
    sample[0].click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.dataframe, "the sample loaded and the page drew its answer"


def test_compare_with_one_run_asks_for_a_second():
    at = AppTest.from_file(str(ROOT / "pages" / "compare.py"), default_timeout=TIMEOUT)
    qrels = mc.read_qrels(b"q1 0 d1 1\n")
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = {"a": mc.read_run(b"q1 Q0 d1 1 1.0 a\n")}
    at.run()
    assert not at.exception
    assert any("at least two runs" in i.value for i in at.info)
    assert not [b for b in at.selectbox if b.label == "Baseline"]  # the page stopped
