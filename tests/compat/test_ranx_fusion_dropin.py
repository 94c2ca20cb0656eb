"""The ranx drop-in's fuse, normalize, optimize_fusion and compare against the real ranx
0.3, on runs read from TREC files with many equal scores: the fused runs' scores AND
order, the normalised runs, the chosen parameters and every trial's score, the printed
report, its LaTeX and its dict; and a script from ranx's notebooks (comparison and report,
fusion) run under both, printing the same lines."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

# numba compiles ranx's functions (and its own argsort) once per process, tens of seconds
# in a fresh environment: the tests that call them run in one process of pytest -n 2
pytestmark = pytest.mark.xdist_group("numba")

from metrics_core.compat import ranx as shim  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402
from metrics_core.fusion import FusionOrderWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """qrels and five runs (30 queries, 20-50 documents, scores with many ties)."""
    d = tmp_path_factory.mktemp("ranx")
    rng = np.random.default_rng(0)
    with open(d / "qrels.trec", "w") as f:
        for q in range(30):
            for doc in range(60):
                if rng.random() < 0.25:
                    f.write(f"q{q} 0 d{doc} {int(rng.integers(0, 3))}\n")
    for r in range(1, 6):
        with open(d / f"run_{r}.trec", "w") as f:
            for q in range(30):
                docs = rng.permutation(60)[: int(rng.integers(20, 50))]
                scores = np.sort(rng.integers(0, 15, len(docs)) / 2 + r * 0.1)[::-1]
                for rank, (doc, s) in enumerate(zip(docs, scores, strict=True), 1):
                    f.write(f"q{q} Q0 d{doc} {rank} {s} run{r}\n")
    return d


_LOADED: dict = {}


def _load(module, d):
    """The qrels and the five runs read by ``module`` (read once per module and folder: no
    test changes them in place)."""
    key = (module.__name__, str(d))
    if key not in _LOADED:
        qrels = module.Qrels.from_file(str(d / "qrels.trec"))
        runs = [module.Run.from_file(str(d / f"run_{i}.trec")) for i in range(1, 6)]
        _LOADED[key] = (qrels, runs)
    return _LOADED[key]


def _ordered(run):
    return {q: list(docs.items()) for q, docs in run.to_dict().items()}


def test_runs_read_from_files_hold_ranx_order(files):
    (_, theirs), (_, ours) = _load(ranx, files), _load(shim, files)
    for a, b in zip(ours, theirs, strict=True):
        assert _ordered(a) == _ordered(b)
        assert a.name == b.name


METHODS = [
    ("sum", {}), ("mnz", {}), ("anz", {}), ("max", {}), ("min", {}), ("med", {}),
    ("gmnz", {"gamma": 0.5}), ("wsum", {"weights": [0.3, 0.7]}),
    ("wmnz", {"weights": [0.3, 0.7]}), ("mixed", {"weights": [0.3, 0.7]}), ("rrf", {}),
    ("isr", {}), ("log_isr", {}), ("logn_isr", {}), ("rbc", {"phi": 0.7}), ("bordafuse", {}),
    ("w_bordafuse", {"weights": [0.3, 0.7]}), ("condorcet", {}),
    ("w_condorcet", {"weights": [0.3, 0.7]}),
]  # fmt: skip


@pytest.mark.parametrize(
    "norm", ["min-max", "max", "sum", "zmuv", "rank", "min-max-inverted", None]
)
@pytest.mark.parametrize(("method", "params"), METHODS)
def test_fuse_gives_ranx_scores_and_order(files, method, params, norm):
    (_, theirs), (_, ours) = _load(ranx, files), _load(shim, files)
    expected = ranx.fuse(theirs[3:], norm=norm, method=method, params=params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = shim.fuse(ours[3:], norm=norm, method=method, params=params)
    named = {
        q for w in caught if issubclass(w.category, FusionOrderWarning) for q in w.message.queries
    }
    assert got.name == expected.name
    a, b = _ordered(got), _ordered(expected)
    assert list(a) == list(b)
    for q in a:
        if q in named:
            continue  # ranx's answer there depends on Python's set order (named)
        assert a[q] == b[q], (q, a[q][:5], b[q][:5])


@pytest.mark.parametrize("norm", ["min-max", "max", "sum", "zmuv", "rank", "min-max-inverted"])
def test_normalize_gives_ranx_values_in_ranx_order(files, norm):
    (_, theirs), (_, ours) = _load(ranx, files), _load(shim, files)
    got, expected = shim.normalize(ours[0], norm), ranx.normalize(theirs[0], norm)
    assert _ordered(got) == _ordered(expected)
    qrels = ranx.Qrels.from_file(str(files / "qrels.trec"))
    assert shim.evaluate(shim.Qrels(qrels.to_dict()), got, "ndcg@10") == float(
        ranx.evaluate(qrels, expected, "ndcg@10")
    )


# ranx's weighted Borda and Condorcet grids take 2-25 s each (left out of the quick tier)
_GRID = pytest.mark.slow
OPTIMISED = [
    ("wsum", {}), ("mixed", {}), ("wmnz", {}),
    pytest.param("w_bordafuse", {}, marks=_GRID), pytest.param("w_condorcet", {}, marks=_GRID),
    ("rrf", {}), ("rbc", {"step": 0.05}), ("gmnz", {"step": 0.05}), ("logn_isr", {"step": 0.1}),
    ("slidefuse", {"max_w": 12}), ("probfuse", {"max_n_segments": 12}),
]  # fmt: skip


@pytest.mark.parametrize(("method", "kwargs"), OPTIMISED)
@pytest.mark.parametrize("norm", ["min-max", "zmuv"])
def test_optimize_fusion_chooses_ranx_parameters(files, method, kwargs, norm):
    (q1, theirs), (q2, ours) = _load(ranx, files), _load(shim, files)
    best, report = ranx.optimize_fusion(
        q1, theirs[:3], norm=norm, method=method, metric="ndcg@10",
        return_optimization_report=True, show_progress=False, **kwargs,
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mine, my_report = shim.optimize_fusion(
            q2, ours[:3], norm=norm, method=method, metric="ndcg@10",
            return_optimization_report=True, **kwargs,
        )  # fmt: skip
    assert list(my_report.configs) == [str(c) for c in report.configs]
    if any(issubclass(w.category, FusionOrderWarning) for w in caught):
        assert method in ("w_bordafuse", "w_condorcet")  # Python's set order: named, skipped
        return
    assert [float(x) for x in my_report.results] == [float(x) for x in report.results]
    for key, value in best.items():
        a = mine[key] if isinstance(mine[key], list) else [mine[key]]
        b = value if isinstance(value, list) else [value]
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(np.asarray(x, dtype=float), np.asarray(y, dtype=float)), key


@pytest.mark.parametrize("method", ["posfuse", "segfuse", "bayesfuse", "mapfuse"])
def test_optimize_fusion_trains_as_ranx(files, method):
    (q1, theirs), (q2, ours) = _load(ranx, files), _load(shim, files)
    expected = ranx.optimize_fusion(q1, theirs[:2], method=method)
    got = shim.optimize_fusion(q2, ours[:2], method=method)
    (key, value), (key2, mine) = next(iter(expected.items())), next(iter(got.items()))
    assert key == key2
    for a, b in zip(mine, value, strict=True):
        assert np.ravel(a).tolist() == np.ravel(b)[: np.size(a)].tolist()


@pytest.mark.parametrize("stat_test", ["student", "tukey"])
def test_compare_prints_ranx_report(files, stat_test):
    (q1, theirs), (q2, ours) = _load(ranx, files), _load(shim, files)
    metrics = ["map@100", "mrr@100", "ndcg@10"]
    expected = ranx.compare(q1, theirs, metrics, stat_test=stat_test, max_p=0.05)
    got = shim.compare(q2, ours, metrics, stat_test=stat_test, max_p=0.05)
    assert str(got) == str(expected)
    for digits, pct in ((4, False), (3, True), (2, False)):
        got.rounding_digits = expected.rounding_digits = digits
        got.show_percentages = expected.show_percentages = pct
        assert str(got) == str(expected)
        assert got.to_latex() == expected.to_latex()
    a, b = got.to_dict(), expected.to_dict()
    assert json.dumps(a, sort_keys=True, default=float) == json.dumps(
        b, sort_keys=True, default=float
    )
    assert got.win_tie_loss == expected.win_tie_loss
    assert got.to_dataframe().equals(expected.to_dataframe())


def test_compare_fisher_is_the_randomization_test_with_a_warning(files, tmp_path):
    _, ours = _load(shim, files)
    q = shim.Qrels.from_file(str(files / "qrels.trec"))
    with pytest.warns(UserWarning, match="numba"):
        report = shim.compare(q, ours[:3], "ndcg@10", stat_test="fisher", n_permutations=2000)
    p = report.comparisons["run1", "run2"]["ndcg@10"]["p_value"]
    assert 0.0 <= p <= 1.0
    report.save(str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text())["stat_test"] == "fisher"


def test_refusals_are_one_line(files):
    _, ours = _load(shim, files)
    for call in (
        lambda: shim.plot(),
        lambda: shim.Run.from_ranxhub("x"),
        lambda: shim.normalize(ours[0], "borda"),
        lambda: shim.optimize_fusion(shim.Qrels({"q0": {"d1": 1}}), ours[:2], method="sum"),
    ):
        with pytest.raises(InputError) as info:
            call()
        assert "\n" not in str(info.value)
    assert set(shim.__all__) == set(ranx.__all__)


SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
if sys.argv[1] == "ranx":
    from ranx import Qrels, Run, compare, evaluate, fuse, optimize_fusion
else:
    from metrics_core.compat.ranx import Qrels, Run, compare, evaluate, fuse, optimize_fusion
d = sys.argv[2]
qrels = Qrels.from_file(f"{d}/qrels.trec")
run_1, run_2, run_3, run_4, run_5 = (Run.from_file(f"{d}/run_{i}.trec", kind="trec") for i in range(1, 6))
# notebooks/4_comparison_and_report.ipynb (the t-test: ranx's Fisher draws are numba's)
report = compare(qrels, runs=[run_1, run_2, run_3, run_4, run_5],
                 metrics=["map@100", "mrr@100", "ndcg@10"], max_p=0.01)
print(report)
report.rounding_digits = 4
print(report)
report.rounding_digits = 3
report.show_percentages = True
print(report)
report.rounding_digits = 4
report.show_percentages = False
print(report.to_latex())
print(report.win_tie_loss[("run1", "run2")])
print(json.dumps(report.to_dict(), indent=4, default=float))
# notebooks/5_fusion.ipynb
run_4.name = "System A"
run_5.name = "System B"
print(run_4.name, evaluate(qrels, run_4, "ndcg@100"))
print(run_5.name, evaluate(qrels, run_5, "ndcg@100"))
for method in ["min", "max", "med", "sum", "anz", "mnz"]:
    combined_run = fuse(runs=[run_4, run_5], norm="min-max", method=method)
    print(combined_run.name, evaluate(qrels, combined_run, "ndcg@100"))
for norm in ["min-max", "max", "sum", "zmuv", "rank"]:
    combined_run = fuse(runs=[run_4, run_5], norm=norm, method="sum")
    print(norm, evaluate(qrels, combined_run, "ndcg@100"))
best_params = optimize_fusion(qrels=qrels, runs=[run_4, run_5], norm="min-max", method="wsum",
                              metric="ndcg@100", show_progress=False)
combined_run = fuse(runs=[run_4, run_5], norm="min-max", method="wsum", params=best_params)
print(best_params, combined_run.name, evaluate(qrels, combined_run, "ndcg@100"))
best_params, optimization_report = optimize_fusion(
    qrels=qrels, runs=[run_4, run_5], norm="min-max", method="wsum", metric="ndcg@100",
    return_optimization_report=True, step=0.05, show_progress=False)
print(best_params, optimization_report.results)
"""


def test_a_script_from_ranx_notebooks_prints_ranx_lines(files, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    outputs = []
    for tool in ("ranx", "ranklab"):
        out = subprocess.run(
            [sys.executable, str(script), tool, str(files)],
            capture_output=True, text=True, cwd=ROOT, timeout=600,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        outputs.append(out.stdout)
    assert outputs[0].splitlines() == outputs[1].splitlines()
