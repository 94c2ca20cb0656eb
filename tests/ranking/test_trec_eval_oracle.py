"""RankLab against NIST trec_eval itself, value for value at full precision.

trec_eval 10.0 and 9.0.8 are built from the NIST sources in the shared folder
(``reference/build-trec_eval.sh``, which prints values with ``%.17g`` instead of ``%6.4f``)
and run on generated collections: runs with ties (a few distinct scores, some equal only
in float32), labels -2..4, queries without a relevant document, queries judged but absent
from the run, run queries absent from the qrels. Every line of ``trec_eval -q -c -m
all_trec`` (with and without ``-J``, and with ``-l 2``) is compared with RankLab asked for
the same trec_eval name (through the registry's trec-name lookup): exact equality, NaN
equal to NaN. trec_eval 9.0.8 is compared with ``compat="trec_eval9"``.

Skipped, with the reason, where no C compiler is available to build trec_eval.
"""

from __future__ import annotations

import math
import subprocess
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.ranking.registry import from_trec_name
from tests.conftest import shared_dir

# random runs often share no query or no judged document with their qrels: the readers'
# coverage warning is expected here (tests/io/test_coverage.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore::metrics_core.io.coverage.CoverageWarning")

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

#: trec_eval output lines that are not numbers
NOT_MEASURES = {"runid", "relstring"}
#: scores: few distinct values (ties), two pairs equal only in float32 (trec_eval 9 ties them)
SCORES = (0.5, 1.0, 1.0000000001, 2.0, 2.00000003, 3.0, -1.25)


@lru_cache(maxsize=1)
def _binaries() -> tuple[str | None, str | None, str]:
    script = shared_dir() / "reference" / "build-trec_eval.sh"
    if not script.is_file():
        return None, None, f"{script} not found"
    try:
        out = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, None, f"building trec_eval failed: {exc}"
    if out.returncode == 3:
        return None, None, "no C compiler/make to build trec_eval: " + out.stderr.strip()
    if out.returncode != 0:
        return None, None, "building trec_eval failed: " + out.stderr.strip()[-300:]
    paths = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
    return paths.get("trec_eval10"), paths.get("trec_eval9"), ""


@pytest.fixture(scope="module")
def trec_eval10():
    path, _, why = _binaries()
    if not path:
        pytest.skip(why)
    return path


@pytest.fixture(scope="module")
def trec_eval9():
    _, path, why = _binaries()
    if not path:
        pytest.skip(why)
    return path


@st.composite
def collections(draw):
    """(qrels lines, run lines) in TREC format."""
    nq = draw(st.integers(1, 5))
    qrels, run = [], []
    for q in range(nq):
        docs = [f"d{i:02d}" for i in range(draw(st.integers(1, 10)))]
        role = draw(st.sampled_from(["both", "both", "both", "qrels_only", "run_only"]))
        if role != "run_only":
            judged = draw(
                st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs), unique=True)
            )
            labels = st.integers(-2, 0) if draw(st.integers(0, 4)) == 0 else st.integers(-2, 4)
            values = [draw(labels) for _ in judged]
            if max(values) < 0:  # trec_eval 10 stops on a query whose every label is negative
                values[0] = 0
            qrels += [f"q{q} 0 {d} {v}" for d, v in zip(judged, values, strict=True)]
        if role != "qrels_only":
            retrieved = draw(
                st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs), unique=True)
            )
            run += [f"q{q} Q0 {d} 0 {draw(st.sampled_from(SCORES))!r} tag" for d in retrieved]
    if not qrels:
        qrels.append("qj 0 d00 1")
    if not any(line.split()[0] in {r.split()[0] for r in run} for line in qrels):
        run.append(f"{qrels[0].split()[0]} Q0 d00 0 1.0 tag")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def run_trec_eval(binary, qrels: str, run: str, flags, tmp_path) -> dict[tuple[str, str], float]:
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text(qrels)
    r.write_text(run)
    out = subprocess.run(
        [binary, "-q", "-c", *flags, "-m", "all_trec", str(q), str(r)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    values = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] not in NOT_MEASURES:
            values[(parts[0], parts[1])] = float(parts[2])
    return values


def ranklab_name(trec_name: str) -> str:
    """The RankLab measure for a trec_eval printed name."""
    name = from_trec_name(trec_name)
    assert name is not None, f"trec_eval measure {trec_name!r} has no RankLab name"
    return name


def compare(expected: dict, qrels: str, run: str, **conventions) -> list[str]:
    names = sorted({ranklab_name(m) for m, _ in expected})
    ev = mc.evaluate(
        mc.read_qrels(qrels.encode()),
        mc.read_run(run.encode()),
        names,
        missing_queries="zero",
        **conventions,
    )
    per_query = ev.per_query
    bad = []
    for (trec_name, qid), want in expected.items():
        if (
            (trec_name, qid) == ("num_rel", "all")
            and conventions.get("relevance_threshold", 1) != 1
            and conventions.get("compat") != "trec_eval9"
        ):
            # the one deliberate difference: trec_eval -c sums the labels above 0 of every
            # judged query whatever -l; RankLab's summary is the sum of its per-query
            # values (compat=trec_eval9 prints trec_eval's, tested below)
            continue
        name = mc.parse_measure(ranklab_name(trec_name)).name
        got = ev.aggregate[name] if qid == "all" else float(per_query.loc[qid, name])
        if not (got == want or (math.isnan(got) and math.isnan(want))):
            bad.append(f"{trec_name} {qid}: RankLab {got!r}, trec_eval {want!r}")
    return bad


FLAGS = {
    "plain": ((), {}),
    "J": (("-J",), {"judged_only": True}),
    "l2": (("-l", "2"), {"relevance_threshold": 2}),
    "J_l2": (("-J", "-l", "2"), {"judged_only": True, "relevance_threshold": 2}),
}


@pytest.mark.parametrize("variant", list(FLAGS))
@SETTINGS
@given(data=collections())
def test_all_trec_equals_trec_eval_10(trec_eval10, tmp_path, variant, data):
    flags, conventions = FLAGS[variant]
    expected = run_trec_eval(trec_eval10, *data, flags, tmp_path)
    assert not compare(expected, *data, **conventions)


@pytest.mark.parametrize("variant", ["plain", "J", "l2"])
@SETTINGS
@given(data=collections())
def test_all_trec_equals_trec_eval_9_under_compat(trec_eval9, tmp_path, variant, data):
    flags, conventions = FLAGS[variant]
    expected = run_trec_eval(trec_eval9, *data, flags, tmp_path)
    assert not compare(expected, *data, compat="trec_eval9", **conventions)


def test_every_all_trec_measure_is_reached(trec_eval10, tmp_path):
    """Each name trec_eval 10 prints for all_trec resolves to a RankLab measure."""
    qrels = "q1 0 a 2\nq1 0 b 0\nq1 0 c -2\nq2 0 a 1\n"
    run = "q1 Q0 a 0 2.0 t\nq1 Q0 b 0 1.0 t\nq1 Q0 x 0 1.0 t\nq3 Q0 a 0 1 t\n"
    expected = run_trec_eval(trec_eval10, qrels, run, (), tmp_path)
    printed = {m for m, _ in expected}
    assert len(printed) >= 98  # every all_trec measure trec_eval 10 prints (runid, relstring aside)
    for m in printed:
        mc.parse_measure(ranklab_name(m))
    assert not compare(expected, qrels, run)


def test_near_tie_differs_between_trec_eval_9_and_10(trec_eval10, trec_eval9, tmp_path):
    """Scores equal in float32 tie under trec_eval 9 (document id order), not under 10."""
    qrels = "q1 0 a 1\nq1 0 b 0\n"
    run = "q1 Q0 a 0 1.00000002 t\nq1 Q0 b 0 1.00000001 t\n"  # equal in float32: b first
    ten = run_trec_eval(trec_eval10, qrels, run, (), tmp_path)
    nine = run_trec_eval(trec_eval9, qrels, run, (), tmp_path)
    assert ten[("recip_rank", "q1")] == 1.0 and nine[("recip_rank", "q1")] == 0.5
    assert not compare(ten, qrels, run)
    assert not compare(nine, qrels, run, compat="trec_eval9")
