"""All-pairs comparison: the pairs, the family correction, Tukey's HSD, letters, exports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metrics_core as mc
from metrics_core.stats.allpairs import all_pairs, beats, letters
from metrics_core.stats.significance import correct_pvalues


def _evals(seed=0, n=30):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i}" for i in range(n)], name="query_id")
    base = rng.random(n)
    return {
        "bm25": pd.DataFrame({"AP": base, "RR": rng.random(n)}, index=idx),
        "dense": pd.DataFrame(
            {"AP": np.clip(base + 0.3 + rng.normal(0, 0.05, n), 0, 1), "RR": rng.random(n)},
            index=idx,
        ),
        "hybrid": pd.DataFrame(
            {"AP": np.clip(base + 0.31 + rng.normal(0, 0.05, n), 0, 1), "RR": rng.random(n)},
            index=idx,
        ),
    }


def test_every_pair_once_with_the_family_correction():
    c = mc.compare(_evals(), all_pairs=True, test="t")
    frame = c.to_frame()
    assert len(frame) == 3 * 2  # three pairs, two measures
    expected = [
        stats.ttest_rel(_evals()[b][m], _evals()[a][m]).pvalue
        for m in ("AP", "RR")
        for a, b in [("bm25", "dense"), ("bm25", "hybrid"), ("dense", "hybrid")]
    ]
    np.testing.assert_allclose(frame["p"], expected, rtol=1e-10)
    np.testing.assert_allclose(frame["p_corrected"], correct_pvalues(expected, "holm"))
    won = beats(c._pairs)
    assert won[("dense", "AP")] == ["bm25"] and won[("hybrid", "AP")] == ["bm25"]
    assert won[("bm25", "AP")] == []


def test_tukey_hsd_is_scipys_and_not_corrected_again():
    ev = _evals(1)
    c = mc.compare(ev, all_pairs=True, test="tukey")
    p = stats.tukey_hsd(*[ev[n]["AP"].to_numpy() for n in ev]).pvalue
    ap = c.to_frame().query("measure == 'AP'")
    np.testing.assert_allclose(ap["p"], [p[0, 1], p[0, 2], p[1, 2]])
    np.testing.assert_allclose(ap["p_corrected"], ap["p"])
    assert "Tukey" in c.legend()


def test_several_baselines_test_only_their_pairs():
    ev = {**_evals(2), "other": _evals(3)["bm25"]}
    c = mc.compare(ev, baseline=["bm25", "dense"], test="t")
    pairs = {(r["run_a"], r["run_b"]) for r in c.records}
    assert ("hybrid", "other") not in pairs
    assert ("bm25", "other") in pairs and ("dense", "hybrid") in pairs
    assert "each baseline" in c.legend()


def test_letters_and_exports_show_who_beats_whom():
    c = mc.compare(_evals(), all_pairs=True, test="permutation", n_permutations=2000)
    assert letters(["x", "y"]) == {"x": "a", "y": "b"} and letters(list(range(27)))[26] == "aa"
    paper = c.paper(digits=3)
    assert paper.loc["b dense", "AP"].endswith("ᵃ") and "ᵃ" not in paper.loc["a bm25", "AP"]
    md = c.to_markdown()
    assert "| a bm25 |" in md and "corrected" not in md.splitlines()[0]
    tex = c.to_latex()
    assert "$^{a}$" in tex and r"\toprule" in tex
    html = c.to_html()
    assert "<sup>a</sup>" in html
    d = c.to_dict()
    assert (
        d["letters"] == {"bm25": "a", "dense": "b", "hybrid": "c"} and d["comparison"]["all_pairs"]
    )


def test_unknown_test_is_a_clear_error():
    with pytest.raises(mc.InputError):
        mc.compare(_evals(), all_pairs=True, test="anova")
    with pytest.raises(mc.InputError):
        all_pairs([], test="t")
