"""RankLab against NIST trec_eval itself, value for value at full precision.

trec_eval 10.0 and 9.0.8 are built from the NIST sources in the shared folder
(``reference/build-trec_eval.sh``, which prints values with ``%.17g`` instead of ``%6.4f``)
and run on generated collections: runs with ties (a few distinct scores, some equal only
in float32), labels -2..4, queries without a relevant document, queries judged but absent
from the run, run queries absent from the qrels; and on NIST's own test files. Every line of
``trec_eval -q -c -m all_trec`` (with and without ``-J``, and with ``-l 2``) is compared with
RankLab asked for the same trec_eval name (through the registry's trec-name lookup): exact
equality, NaN equal to NaN. trec_eval 9.0.8 is compared with ``compat="trec_eval9"``.

Seeded collections (:class:`tests.oracle.StableRandom`) and NIST's files run in every clone:
trec_eval's outputs for them are recorded (``tests/oracle.py``; live where trec_eval is built,
and then checked against the recording). Collections drawn by Hypothesis need the built
trec_eval and skip, with the reason, without it.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc
from metrics_core.ranking.registry import from_trec_name
from tests import oracle
from tests.conftest import conformance_dir

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


@pytest.fixture(scope="module")
def trec_eval10():
    """trec_eval 10, built (the Hypothesis draws cannot be recorded: skipped without it)."""
    oracle.require_live("10")
    return "10"


@pytest.fixture(scope="module")
def trec_eval9():
    oracle.require_live("9")
    return "9"


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


def run_trec_eval(
    kind, qrels: str, run: str, flags, tmp_path, record: bool = False
) -> dict[tuple[str, str], float]:
    """trec_eval ``-q -c FLAGS -m all_trec``'s values; ``record``: a deterministic case (run
    in every clone from its recording, see tests/oracle.py)."""
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text(qrels)
    r.write_text(run)
    stdout, status = oracle.run(
        kind, ["-q", "-c", *flags, "-m", "all_trec", str(q), str(r)], record=record
    )
    assert status == 0, stdout
    return oracle.values(stdout, NOT_MEASURES)


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


def test_every_all_trec_measure_is_reached(tmp_path):
    """Each name trec_eval 10 prints for all_trec resolves to a RankLab measure."""
    qrels = "q1 0 a 2\nq1 0 b 0\nq1 0 c -2\nq2 0 a 1\n"
    run = "q1 Q0 a 0 2.0 t\nq1 Q0 b 0 1.0 t\nq1 Q0 x 0 1.0 t\nq3 Q0 a 0 1 t\n"
    expected = run_trec_eval("10", qrels, run, (), tmp_path, record=True)
    printed = {m for m, _ in expected}
    assert len(printed) >= 98  # every all_trec measure trec_eval 10 prints (runid, relstring aside)
    for m in printed:
        mc.parse_measure(ranklab_name(m))
    assert not compare(expected, qrels, run)


def test_near_tie_differs_between_trec_eval_9_and_10(tmp_path):
    """Scores equal in float32 tie under trec_eval 9 (document id order), not under 10."""
    qrels = "q1 0 a 1\nq1 0 b 0\n"
    run = "q1 Q0 a 0 1.00000002 t\nq1 Q0 b 0 1.00000001 t\n"  # equal in float32: b first
    ten = run_trec_eval("10", qrels, run, (), tmp_path, record=True)
    nine = run_trec_eval("9", qrels, run, (), tmp_path, record=True)
    assert ten[("recip_rank", "q1")] == 1.0 and nine[("recip_rank", "q1")] == 0.5
    assert not compare(ten, qrels, run)
    assert not compare(nine, qrels, run, compat="trec_eval9")


# --- recorded cases: every clone -------------------------------------------------------

#: seeds of the recorded collections; every fourth one has rankings of up to 120 documents
RECORDED_SEEDS = range(16)
#: the variants each version is compared under (trec_eval 9 without -J -l 2, as above)
VARIANTS = {"10": list(FLAGS), "9": ["plain", "J", "l2"]}


def stable_collection(seed: int) -> tuple[str, str]:
    """(qrels, run) text, drawn as :func:`collections` draws them but by
    :class:`tests.oracle.StableRandom`: the same text in every clone."""
    rng = oracle.StableRandom(seed)
    most = 120 if seed % 4 == 3 else 10
    qrels, run = [], []
    for q in range(rng.integer(1, 5)):
        docs = [f"d{i:02d}" for i in range(rng.integer(1, most))]
        role = rng.choice(["both", "both", "both", "qrels_only", "run_only"])
        if role != "run_only":
            judged = rng.sample(docs, rng.integer(1, len(docs)))
            low = rng.integer(0, 4) == 0
            values = [rng.integer(-2, 0) if low else rng.integer(-2, 4) for _ in judged]
            if max(values) < 0:  # trec_eval 10 stops on a query whose every label is negative
                values[0] = 0
            qrels += [f"q{q} 0 {d} {v}" for d, v in zip(judged, values, strict=True)]
        if role != "qrels_only":
            retrieved = rng.sample(docs, rng.integer(1, len(docs)))
            run += [f"q{q} Q0 {d} 0 {rng.choice(SCORES)!r} tag" for d in retrieved]
    if not qrels:
        qrels.append("qj 0 d00 1")
    if not any(line.split()[0] in {r.split()[0] for r in run} for line in qrels):
        run.append(f"{qrels[0].split()[0]} Q0 d00 0 1.0 tag")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _recorded_params():
    return [
        pytest.param(version, variant, seed, id=f"{version}-{variant}-{seed}")
        for version, variants in VARIANTS.items()
        for variant in variants
        for seed in RECORDED_SEEDS
    ]


def _conventions(version: str, variant: str) -> tuple[tuple, dict]:
    flags, conventions = FLAGS[variant]
    if version == "9":
        conventions = {**conventions, "compat": "trec_eval9"}
    return flags, conventions


@pytest.mark.parametrize(("version", "variant", "seed"), _recorded_params())
def test_seeded_collections_equal_trec_eval(version, variant, seed, tmp_path):
    flags, conventions = _conventions(version, variant)
    qrels, run = stable_collection(seed)
    expected = run_trec_eval(version, qrels, run, flags, tmp_path, record=True)
    assert expected, "trec_eval printed no value"
    assert not compare(expected, qrels, run, **conventions)


#: NIST's test files (tests/data/trec_eval/nist), at full precision; the 31 queries of the
#: comment files without variants (their output is ten times the others')
NIST_PAIRS = {
    "test": ("qrels.test", "results.test", None),
    "trunc": ("qrels.test", "results.trunc", None),
    "rel_level": ("qrels.rel_level", "results.test", None),
    "comment": ("qrels.comment.test", "results.comment.test", ["plain"]),
}


def _nist_params():
    return [
        pytest.param(pair, version, variant, id=f"{pair}-{version}-{variant}")
        for pair, (_, _, only) in NIST_PAIRS.items()
        for version, variants in VARIANTS.items()
        for variant in (only or variants)
    ]


@pytest.mark.parametrize(("pair", "version", "variant"), _nist_params())
def test_nist_files_equal_trec_eval_at_full_precision(pair, version, variant):
    qrels_name, run_name, _ = NIST_PAIRS[pair]
    folder = conformance_dir()
    flags, conventions = _conventions(version, variant)
    args = ["-q", "-c", *flags, "-m", "all_trec", str(folder / qrels_name), str(folder / run_name)]
    stdout, status = oracle.run(version, args)
    assert status == 0, stdout
    expected = oracle.values(stdout, NOT_MEASURES)
    assert len(expected) > 100
    qrels = (folder / qrels_name).read_text(encoding="utf-8")
    run = (folder / run_name).read_text(encoding="utf-8")
    assert not compare(expected, qrels, run, **conventions)
