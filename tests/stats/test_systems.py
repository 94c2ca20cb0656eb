"""Systems of several runs (seeds): per-query means, the seed spread, and the two-level
bootstrap over queries and runs (metrics_core.stats.systems), in mc.compare and
``ranklab compare --system``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import InputError
from metrics_core.stats.systems import parse_system, seed_t_test

IDX = pd.Index([f"q{i}" for i in range(40)], name="query_id")


def _seeds(rng, level, n_seeds, seed_sd, difficulty):
    """Runs of one system: a per-query level plus a per-seed shift (the seed's luck)."""
    out = []
    for _ in range(n_seeds):
        shift = rng.normal(0, seed_sd)
        out.append(
            pd.DataFrame(
                {"AP": difficulty + level + shift + rng.normal(0, 0.05, len(IDX))}, index=IDX
            )
        )
    return out


def test_a_system_is_compared_through_its_per_query_mean():
    rng = np.random.default_rng(0)
    diff = rng.random(len(IDX))
    a, b = _seeds(rng, 0.0, 3, 0.02, diff), _seeds(rng, 0.05, 4, 0.02, diff)
    runs = {f"a{i}": f for i, f in enumerate(a)} | {f"b{i}": f for i, f in enumerate(b)}
    c = mc.compare(runs, "A", systems={"A": ["a0", "a1", "a2"], "B": ["b0", "b1", "b2", "b3"]},
                   n_permutations=2000)  # fmt: skip
    row = c.to_frame().iloc[0]
    mean_a = pd.concat(a, axis=1).mean(axis=1).mean()
    mean_b = pd.concat(b, axis=1).mean(axis=1).mean()
    assert row["mean_baseline"] == pytest.approx(mean_a) and row["mean_run"] == pytest.approx(
        mean_b
    )
    plain = mc.compare(
        {"A": pd.concat(a, axis=1).mean(axis=1).to_frame("AP"),
         "B": pd.concat(b, axis=1).mean(axis=1).to_frame("AP")}, "A", n_permutations=2000,
    )  # fmt: skip
    for col in ("mean_delta", "p_permutation", "p_t", "ci_lo", "ci_hi"):
        assert row[col] == pytest.approx(plain.to_frame().iloc[0][col])
    assert (row["seeds_baseline"], row["seeds_run"]) == (3, 4)
    assert row["seed_sd_run"] == pytest.approx(np.std([f["AP"].mean() for f in b], ddof=1))
    assert row["ci_seeds_lo"] < row["mean_delta"] < row["ci_seeds_hi"]
    rec = c.records[0]["systems"]
    assert rec["runs"] == 4 and rec["p_seeds"] == row["p_seeds"]
    assert "queries and seeds" in c.legend() and "A (3 runs)" in c.legend()
    assert c.parameters()["systems"] == {"A": ["a0", "a1", "a2"], "B": ["b0", "b1", "b2", "b3"]}
    assert "seed_sd_run" in c.wide().columns
    assert "seed_sd_run" not in plain.wide().columns  # no systems: no systems' columns


def test_a_mapping_of_lists_is_a_set_of_systems():
    rng = np.random.default_rng(1)
    diff = rng.random(len(IDX))
    qrels = {q: {"d1": 1} for q in IDX}
    evs = {
        name: [
            mc.evaluate(qrels, {q: {"d1": float(rng.random()), "d2": float(rng.random())} for q in IDX}, ["RR"]).renamed(f"{name}-{k}")
            for k in range(3)
        ]
        for name in ("X", "Y")
    }  # fmt: skip
    del diff
    c = mc.compare(evs, "X", n_permutations=500)
    assert c.settings["systems"] == {"X": ["X-0", "X-1", "X-2"], "Y": ["Y-0", "Y-1", "Y-2"]}
    assert c.to_frame().iloc[0]["seeds_run"] == 3


def test_the_two_level_test_accounts_for_the_seed_variance():
    """Two systems equal in expectation whose runs differ by a seed's luck: a test on the
    per-query means alone rejects far too often (it takes the seeds' luck for a
    difference); the test on queries and seeds keeps to its level."""
    rng = np.random.default_rng(7)
    rejected_plain = rejected_two_level = 0
    trials = 200
    for _ in range(trials):
        diff = rng.random(len(IDX))
        a = np.column_stack(
            [diff + rng.normal(0, 0.03) + rng.normal(0, 0.02, len(IDX)) for _ in range(3)]
        )
        b = np.column_stack(
            [diff + rng.normal(0, 0.03) + rng.normal(0, 0.02, len(IDX)) for _ in range(3)]
        )
        plain = mc.stats.significance.permutation_test(a.mean(axis=1), b.mean(axis=1), 500, 0)
        rejected_plain += plain < 0.05
        rejected_two_level += seed_t_test(a, b, 0.95)[2] < 0.05
    assert rejected_plain / trials > 0.3
    assert rejected_two_level / trials <= 0.07


def test_one_run_per_system_is_the_paired_t_test():
    from scipy import stats

    rng = np.random.default_rng(3)
    a, b = rng.random((30, 1)), rng.random((30, 1)) + 0.1
    lo, hi, p = seed_t_test(a, b, 0.95)
    assert p == pytest.approx(stats.ttest_rel(b[:, 0], a[:, 0]).pvalue)
    ci = stats.ttest_rel(b[:, 0], a[:, 0]).confidence_interval(0.95)
    assert (lo, hi) == pytest.approx((ci.low, ci.high))


def test_bad_systems_are_one_clear_line():
    frames = {n: pd.DataFrame({"AP": np.linspace(0, 1, 40)}, index=IDX) for n in ("a", "b", "c")}
    for systems, words in (
        ({"S": ["a", "zz"]}, "not a run"),
        ({"S": ["a"], "T": ["a", "b"]}, "two systems"),
        ({"S": []}, "no runs"),
    ):
        with pytest.raises(InputError, match=words):
            mc.compare(frames, "a", systems=systems, n_permutations=10)
    with pytest.raises(InputError, match="NAME=RUN"):
        parse_system("justaname")
    with pytest.raises(InputError, match="one baseline"):
        mc.compare(frames, systems={"S": ["a", "b"]}, all_pairs=True)


def test_cli_system_option(tmp_path, capsys):
    from metrics_core.cli import main

    rng = np.random.default_rng(5)
    (tmp_path / "qrels.txt").write_text(
        "".join(f"q{q} 0 d{d} {int(d < 3)}\n" for q in range(20) for d in range(8))
    )
    paths = []
    for name in ("a1", "a2", "b1", "b2", "b3"):
        lines = []
        for q in range(20):
            for rank, d in enumerate(rng.permutation(8), 1):
                lines.append(f"q{q} Q0 d{d} {rank} {10 - rank} {name}\n")
        (tmp_path / f"{name}.txt").write_text("".join(lines))
        paths += ["--run", str(tmp_path / f"{name}.txt")]
    code = main(["compare", "--qrels", str(tmp_path / "qrels.txt"), *paths, "-m", "AP", "--baseline", "A",
                 "--system", "A=a1,a2", "--system", "B=b1,b2,b3", "--permutations", "300",
                 "--format", "json", "--quiet"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["comparison"]["systems"] == {"A": ["a1", "a2"], "B": ["b1", "b2", "b3"]}
    assert out["comparisons"][0]["systems"]["runs"] == 3
    assert main(["compare", "--qrels", str(tmp_path / "qrels.txt"), *paths, "--baseline", "A",
                 "--system", "A", "--quiet"]) == 2  # fmt: skip
    assert "NAME=RUN" in capsys.readouterr().err
