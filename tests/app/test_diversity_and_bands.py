"""The app's diversity measures, unjudged band and power figures: the Data page reads a
subtopic qrels file (recognised by its second column) and loads the diversity sample; the
picker offers the diversity measures only with subtopic qrels; the Overview's grid shows
the library's alpha-nDCG and, on the ranking sample, the unjudged band and the orders it
could reverse; both languages."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.report.leaderboard_grid import reversible_pairs, tie_band
from metrics_core.stats.comparison import aligned_values, leaderboard

ROOT = Path(__file__).resolve().parents[2]
DIVERSITY = ROOT / "sample_data" / "diversity"
TIMEOUT = 240


def _page(name: str, state: dict | None = None, lang: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    if lang:
        at.query_params["lang"] = lang
    return at.run()


def test_uploaded_subtopic_qrels_are_read_with_their_subtopics():
    from ui.ranking.data import parse_qrels

    q = parse_qrels((DIVERSITY / "subtopics.qrels").read_bytes(), "subtopics.qrels")
    assert isinstance(q, mc.SubtopicQrels) and len(q.subtopic_names) == 6
    plain = parse_qrels(b"q1 0 a 1\nq1 0 b 0\n", "qrels.txt")
    assert not isinstance(plain, mc.SubtopicQrels)


@pytest.mark.parametrize("lang", [None, "es"])
def test_data_page_loads_the_diversity_sample(lang):
    at = _page("data", lang=lang)
    label = "Muestra de diversidad" if lang else "Diversity sample"
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception
    assert isinstance(at.session_state["ranklab.qrels"], mc.SubtopicQrels)
    words = "Qrels por subtema" if lang else "Subtopic qrels"
    assert any(i.value.startswith(words) for i in at.info)
    assert at.session_state["ranklab.measures"][:3] == ["alpha-nDCG@10", "ERR-IA@10", "strec@10"]


def test_overview_on_the_diversity_sample_equals_the_library():
    qrels = mc.read_qrels(DIVERSITY / "subtopics.qrels", subtopics=True)
    runs = {n: mc.read_run(DIVERSITY / f"{n}.txt", name=n) for n in ("relevance", "diverse")}
    at = _page(
        "overview",
        {"ranklab.qrels": qrels, "ranklab.runs": runs, "ranklab.measures": ["alpha-nDCG@10"]},
    )
    assert not at.exception, at.exception
    grid = next(d.value for d in at.dataframe if "alpha-nDCG@10" in d.value.columns)
    evs = [mc.evaluate(qrels, r, ["alpha-nDCG@10"]).renamed(n) for n, r in runs.items()]
    common = aligned_values(evs, "alpha-nDCG@10")  # the board's one query set
    for name in runs:
        row = grid[grid["Run"].str.startswith(name)].iloc[0]
        assert row["alpha-nDCG@10"].split()[0] == f"{common[name].mean():.4f}"


def test_measure_options_follow_the_qrels(sample):
    """With plain qrels the picker leaves the diversity measures out (they would read one
    subtopic); with subtopic qrels it offers them."""
    qrels, runs, meta = sample
    at = _page("overview", {"ranklab.qrels": qrels, "ranklab.runs": dict(runs)})
    options = next(m for m in at.multiselect if m.label == "Measures").options
    assert options and not any("alpha-nDCG" in o for o in options)
    sub = mc.read_qrels(DIVERSITY / "subtopics.qrels", subtopics=True)
    div = {n: mc.read_run(DIVERSITY / f"{n}.txt", name=n) for n in ("relevance", "diverse")}
    at = _page("overview", {"ranklab.qrels": sub, "ranklab.runs": div})
    options = next(m for m in at.multiselect if m.label == "Measures").options
    assert "alpha-nDCG@20" in options and "ERR-IA@20" in options


@pytest.mark.parametrize("lang", [None, "es"])
def test_overview_unjudged_band_and_reversals(sample, lang):
    qrels, runs, meta = sample
    at = _page(
        "overview",
        {"ranklab.qrels": qrels, "ranklab.runs": dict(runs), "ranklab.meta": meta},
        lang=lang,
    )
    assert not at.exception, at.exception
    label = "banda sin juicio" if lang else "unjudged band"
    grid = next(d.value for d in at.dataframe if "AP" in d.value.columns)
    assert (grid.iloc[:, 0].str.strip() == label).sum() == 3
    measures = list(at.session_state["ranklab.measures"])
    evs = [
        mc.evaluate(qrels, r, measures, unjudged_report=True).renamed(n) for n, r in runs.items()
    ]
    board = leaderboard(evs, "bm25", measures, n_resamples=1000, seed=0)
    band = tie_band(
        board, {e.run_name: e.per_query for e in evs}, {e.run_name: e.unjudged_report for e in evs}
    )
    pairs = reversible_pairs(board, band)
    assert pairs  # the sample's runs leave many documents unjudged
    note = next(c.value for c in at.caption if c.value.startswith("⇅"))
    every = "cada par en" if lang else "every pair on"
    # the sample's runs leave so much unjudged that every order of every measure could turn
    assert len(pairs) == 3 * len(measures) and every in note


def test_reversal_note_names_pairs_by_measure():
    import pandas as pd

    from ui.ranking.board import reversal_note
    from ui.ranking.data import reversible

    board = pd.DataFrame(
        {
            "run": ["a", "b", "c"] * 2,
            "measure": ["AP"] * 3 + ["RR"] * 3,
            "mean": [0.5, 0.4, 0.1, 0.9, 0.8, 0.7],
        }
    )
    band = pd.DataFrame(
        {"low": [0.3, 0.6], "high": [0.55, 0.95]},
        index=pd.MultiIndex.from_tuples([("b", "AP"), ("c", "RR")], names=["run", "measure"]),
    )
    note = reversal_note(board, reversible(board, band))
    # AP: only b could pass a (c stays below); RR: c could pass both
    assert note == ("⇅ Orders the unjudged documents could reverse: AP: a > b; RR: a > c, b > c.")
    assert reversal_note(board, reversible(board, band.iloc[:0])) == ""
