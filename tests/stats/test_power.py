"""How many queries a comparison needs (topic set size design for the paired t-test): the
noncentral-t power against an independent numerical integration, the sample sizes Cohen's
tables (and G*Power) publish for the paired t-test, Sakai's tool's method (Nagata's
approximation) beside the exact one, and the figures in mc.compare, its exports and
``ranklab compare --power``."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import metrics_core as mc
from metrics_core import cli
from metrics_core.stats import power as pw


def integrated_power(n: int, effect: float, alpha: float = 0.05) -> float:
    """P(|T| > t_crit) for T = (Z + lambda) / sqrt(V / df), V chi-square(df): the noncentral t
    written out and integrated over V (no noncentral t routine)."""
    df = n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)
    lam = math.sqrt(n) * effect

    def rejected(v):
        s = crit * math.sqrt(v / df)
        return (stats.norm.sf(s - lam) + stats.norm.cdf(-s - lam)) * stats.chi2.pdf(v, df)

    lo, hi = stats.chi2.ppf(1e-16, df), stats.chi2.isf(1e-16, df)
    return integrate.quad(rejected, lo, hi, limit=400, epsabs=1e-13, epsrel=1e-12)[0]


@pytest.mark.parametrize(("n", "effect"), [(5, 1.2), (15, 0.8), (34, 0.5), (199, 0.2), (60, 0.0)])
def test_noncentral_t_power_equals_numerical_integration(n, effect):
    assert pw.power(n, effect) == pytest.approx(integrated_power(n, effect), abs=1e-9)


def test_paired_sample_sizes_published_by_cohen():
    """Cohen (1988), one-sample / paired t-test at alpha 0.05 (two-sided), power 0.80: d = 0.2,
    0.5, 0.8 need 199, 34 and 15 pairs (G*Power gives the same)."""
    assert [pw.queries_needed(d) for d in (0.2, 0.5, 0.8)] == [199.0, 34.0, 15.0]
    # and at power 0.90: 265, 44, 19
    assert [pw.queries_needed(d, target=0.9) for d in (0.2, 0.5, 0.8)] == [265.0, 44.0, 19.0]


def test_sample_size_is_the_smallest_with_enough_power():
    for effect in (0.05, 0.13, 0.3, 1.0, 2.5):
        for target in (0.5, 0.8, 0.95):
            n = int(pw.queries_needed(effect, target=target))
            assert pw.power(n, effect) >= target
            assert n == 2 or pw.power(n - 1, effect) < target


def test_sakai_tool_method():
    """Sakai's samplesizeTTEST2: the start ((z_{a/2} + z_b) / minDelta)^2 + z_{a/2}^2 / 2, then
    Nagata's normal approximation of the noncentral t. It agrees with the exact noncentral t
    within a query."""
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    assert pw.normal_start(0.5) == pytest.approx((za + zb) ** 2 / 0.25 + za**2 / 2)
    for effect in (0.1, 0.2, 0.35, 0.5, 0.8, 1.2):
        exact = pw.queries_needed(effect)
        sakai = pw.queries_needed(effect, method="nagata")
        assert abs(exact - sakai) <= 1, effect
        assert abs(pw.power(exact, effect, method="nagata") - pw.power(exact, effect)) < 0.005


def test_min_detectable_is_the_difference_at_the_target_power():
    for n in (10, 50, 300):
        d = pw.min_detectable(n, 0.2)
        assert pw.power(n, d / 0.2) == pytest.approx(0.8, abs=1e-10)
    assert math.isnan(pw.min_detectable(1, 0.2)) and math.isnan(pw.min_detectable(10, 0.0))


def frames(seed=0, n=30):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"q{i}" for i in range(n)], name="query_id")
    base = rng.random(n)
    return {
        "a": pd.DataFrame({"AP": base}, index=idx),
        "b": pd.DataFrame({"AP": np.clip(base + rng.normal(0.05, 0.1, n), 0, 1)}, index=idx),
        "c": pd.DataFrame({"AP": np.clip(base + rng.normal(0.0, 0.2, n), 0, 1)}, index=idx),
    }


def test_compare_reports_the_figures():
    runs = frames()
    c = mc.compare(runs, "a", power=True, power_delta=0.05, n_permutations=200)
    row = c.to_frame().iloc[0]
    d = runs["b"]["AP"] - runs["a"]["AP"]
    sd = float(np.std(d, ddof=1))
    assert row["sd_delta"] == pytest.approx(sd)
    assert row["queries_needed"] == pw.queries_needed(d.mean() / sd)
    assert row["queries_needed_target"] == pw.queries_needed(0.05 / sd)
    assert row["min_detectable"] == pytest.approx(pw.min_detectable(30, sd))
    out = c.to_dict()
    assert out["comparison"]["power"]["power"] == 0.8
    assert "Sakai" in out["comparison"]["power"]["method_text"]
    assert out["comparisons"][0]["power"]["queries_needed"] == row["queries_needed"]
    assert "queries_needed" in c.wide().columns
    plain = mc.compare(runs, "a", n_permutations=200)
    assert "power" not in plain.to_dict()["comparisons"][0]
    assert "queries_needed" not in plain.wide().columns
    assert np.isnan(plain.to_frame()["queries_needed"]).all()
    pairs = mc.compare(runs, all_pairs=True, test="t", power=0.9).to_frame()
    assert pairs["queries_needed"].notna().all()


def test_command_line_power(tmp_path, capsys):
    root = "sample_data/ranking"
    args = [
        "compare",
        "--qrels",
        f"{root}/qrels.txt",
        "--run",
        f"{root}/bm25.txt",
        "--run",
        f"{root}/dense.txt",
        "--baseline",
        "bm25",
        "-m",
        "AP",
        "--permutations",
        "200",
        "--quiet",
    ]
    assert cli.main(args + ["--power", "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)["comparisons"][0]["power"]
    assert rec["queries_needed"] >= 2 and rec["min_detectable"] > 0
    assert cli.main(args + ["--power", "0.9", "--power-delta", "0.02"]) == 0
    text = capsys.readouterr().out
    assert "queries_needed" in text and "Sakai" in text


def test_html_report_has_the_table_and_its_method_in_both_languages():
    from metrics_core.report.catalogs import translations
    from metrics_core.report.html import comparison_report

    root = "sample_data/ranking"
    evs = mc.evaluate_many(
        f"{root}/qrels.txt", {n: f"{root}/{n}.txt" for n in ("bm25", "dense")}, ["AP"]
    )
    page = comparison_report(evs, n_permutations=100, n_resamples=100, power_delta=0.05)
    assert "How many queries" in page and "Topic set size design" in page
    assert "Queries needed (chosen Δ)" in page
    es = translations("es")
    page = comparison_report(
        evs, n_permutations=100, n_resamples=100, gettext=es.gettext, ngettext=es.ngettext
    )
    assert "Cuántas consultas" in page and "Consultas necesarias" in page
    assert "How many queries" not in comparison_report(
        evs, n_permutations=100, n_resamples=100, power=None
    )


@pytest.mark.parametrize("effect", [1e-5, 1e-7, 3e-8, 1e-12, 3e-3, 0.2])
def test_queries_needed_takes_few_steps_for_any_difference(monkeypatch, effect):
    """Power grows with the number of queries: the answer is bracketed around Nagata's
    estimate and bisected, a few dozen evaluations whatever the difference. (Stepping down
    64 queries at a time from an estimate that overshot took 1.5 s at 1e-5 and grew without
    bound as the difference shrank: the Compare page of two near-identical runs never ended.)
    The answer is the smallest n whose power reaches the target."""
    from metrics_core.stats import power as P

    calls = []
    real = P.power

    def counted(n, e, alpha=0.05, method="exact"):
        calls.append(n)
        return real(n, e, alpha, method)

    monkeypatch.setattr(P, "power", counted)
    n = P.queries_needed(effect)
    assert len(calls) <= 200, len(calls)
    if n == float("inf"):  # more than 2**53 queries: no count a float holds exactly
        assert effect < 1e-7 and real(2**53, effect) < 0.8
        return
    assert n <= 2**53 and real(n, effect) >= 0.8
    assert n == 2 or real(n - 1, effect) < 0.8


def test_queries_needed_for_a_difference_no_count_can_detect_is_infinite():
    from metrics_core.stats.power import queries_needed

    assert queries_needed(1e-300) == float("inf")
    assert queries_needed(1e-9) == float("inf")  # about 8e16 queries: past 2**53
    assert queries_needed(5e-324) == float("inf")


@pytest.mark.parametrize("shift", [1e-9, 1e-13])
def test_compare_of_two_nearly_identical_runs_ends_and_its_wide_table_reads(shift):
    """Two runs whose per-query values differ by a hair (a run against a copy of itself
    rescored): the topic set size is a count no float holds exactly, so ``inf`` (shown as
    missing), and the comparison's wide table reads. (Before: the Compare page never ended;
    then its table raised 'cannot safely cast non-equivalent float64 to int64'.)"""
    runs = frames()
    a = runs["a"]["AP"]
    near = a + 0.01 * np.where(np.arange(len(a)) % 2, 1.0, -1.0)  # 30 queries: a mean of 0
    near.iloc[0] += shift  # ... but for a hair
    c = mc.compare(
        {"a": runs["a"], "near": pd.DataFrame({"AP": near}, index=a.index)},
        "a",
        power=True,
        n_permutations=200,
    )
    needed = c.to_frame().iloc[0]["queries_needed"]
    assert needed == float("inf") or np.isnan(needed), needed  # nan: rounding left no mean
    wide = c.wide()
    assert wide.filter(like="queries_needed").isna().all().all()
