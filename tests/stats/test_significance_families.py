"""The correction family holds tests of effectiveness only, with its scope a named option:
every (run, measure) pair, or each measure apart as PyTerrier's ``Experiment`` does (its
``correction`` applies statsmodels' ``multipletests`` to each measure's column of p-values;
Holm's step-down is written out here from its definition)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import metrics_core as mc
from metrics_core.report.comparison import compare
from metrics_core.report.legends import family_sentence
from metrics_core.stats.comparison import (
    DEFAULT_FAMILY,
    compare_runs,
    correction_family,
)


def holm(p):
    """Holm's step-down adjusted p-values (Holm 1979)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def runs(seed=0, n_runs=3, n_queries=40):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i}" for i in range(n_queries)], name="query_id")
    base = rng.random(n_queries)
    out = {}
    for r in range(n_runs):
        shift = 0.05 * r
        out[f"r{r}"] = pd.DataFrame(
            {
                "nDCG@10": np.clip(base + shift + rng.normal(0, 0.1, n_queries), 0, 1),
                "AP": np.clip(base * 0.8 + shift + rng.normal(0, 0.1, n_queries), 0, 1),
                "NumRet": rng.integers(90, 101, n_queries).astype(float),
                "Judged@10": rng.random(n_queries),
            },
            index=idx,
        )
    return out


def evaluations(frames):
    from types import SimpleNamespace as NS

    return [NS(run_name=name, per_query=frame) for name, frame in frames.items()]


def test_per_measure_family_equals_pyterrier_style_per_measure_holm():
    frames = runs()
    frame = compare_runs(
        evaluations(frames),
        "r0",
        tests=("t",),
        interval=False,
        n_permutations=10,
        family="per_measure",
    )
    for measure in ("nDCG@10", "AP"):
        rows = frame[frame["measure"] == measure]
        raw = [
            stats.ttest_rel(frames[r][measure], frames["r0"][measure]).pvalue for r in rows["run"]
        ]
        np.testing.assert_allclose(rows["p_t"], raw, rtol=1e-10)
        np.testing.assert_allclose(rows["p_corrected_t"], holm(raw), rtol=1e-10)
    counts = frame[frame["measure"].isin(["NumRet", "Judged@10"])]
    assert counts["p_corrected_t"].isna().all() and (counts["markers"] == "").all()
    assert counts["p_t"].notna().all()  # the raw p-value is still shown


def test_all_pairs_family_holds_only_effectiveness_measures():
    frames = runs(1)
    frame = compare_runs(evaluations(frames), "r0", tests=("t",), interval=False, n_permutations=10)
    assert frame.attrs["family"] == DEFAULT_FAMILY == "all"
    inside = frame[frame["measure"].isin(["nDCG@10", "AP"])]
    np.testing.assert_allclose(inside["p_corrected_t"], holm(inside["p_t"]), rtol=1e-10)
    family = correction_family(frame)
    assert family["n"] == 4 and family["excluded"] == ["NumRet", "Judged@10"]
    sentence = family_sentence(frame)
    assert "over the 4 comparisons" in sentence and "NumRet, Judged@10" in sentence
    per = compare_runs(
        evaluations(frames),
        "r0",
        tests=("t",),
        interval=False,
        n_permutations=10,
        family="per_measure",
    )
    assert "per measure" in family_sentence(per) and correction_family(per)["n"] == 2
    # per measure corrects over fewer tests: never a larger corrected p-value
    assert (
        per["p_corrected_t"].dropna().to_numpy()
        <= frame["p_corrected_t"].dropna().to_numpy() + 1e-15
    ).all()


def test_exports_and_command_line_state_the_family(tmp_path, capsys):
    import json

    from metrics_core import cli

    frames = runs(2, n_runs=2)
    c = compare(frames, "r0", n_permutations=50, family="per_measure")
    assert c.to_dict()["comparison"]["family"] == "per_measure"
    assert "per measure" in c.legend()
    assert compare(frames, "r0", n_permutations=50).to_dict()["comparison"]["family"] == "all"
    with pytest.raises(mc.InputError, match="family"):
        compare(frames, "r0", n_permutations=50, family="everything")
    (tmp_path / "q.txt").write_text(
        "".join(f"q{i} 0 d{j} {int((i + j) % 3 == 0)}\n" for i in range(8) for j in range(5))
    )
    for name, shift in (("a", 0), ("b", 1)):
        (tmp_path / f"{name}.txt").write_text(
            "".join(
                f"q{i} Q0 d{j} {j + 1} {float((j * 7 + i + shift) % 5)} t\n"
                for i in range(8)
                for j in range(5)
            )
        )
    args = [
        "compare",
        "--qrels",
        str(tmp_path / "q.txt"),
        "--run",
        str(tmp_path / "a.txt"),
        "--run",
        str(tmp_path / "b.txt"),
        "--baseline",
        "a",
        "-m",
        "AP,nDCG@10,NumRet",
        "--permutations",
        "100",
        "--format",
        "json",
    ]
    assert cli.main([*args, "--family", "per_measure"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["comparison"]["family"] == "per_measure"
