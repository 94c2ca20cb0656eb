"""``python -m metrics_core trec_eval`` prints, byte for byte, what trec_eval prints.

The oracles are NIST trec_eval 10.0 and 9.0.8 with their stock output (``%6.4f``), built
from the sources in the shared folder by ``reference/build-trec_eval.sh`` where it exists, and
recorded for every clone (``tests/oracle.py``: each case's output is committed; where trec_eval
is built, the case runs live and must equal its recording). Compared: every ``out.*`` case of
the conformance folder (its README gives each command), and random collections with tied
scores, graded and negative labels, queries without relevant documents, qrels queries absent
from the run and run queries absent from the qrels, under several option sets; stdout bytes
and exit status must be equal.
"""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from metrics_core import cli
from tests import oracle
from tests.conftest import SKIP_NO_CONFORMANCE, conformance_available, conformance_dir

CASES = {  # expected file -> trec_eval arguments (the conformance README's commands)
    "out.test": ["qrels.test", "results.test"],
    "out.comment.test": ["qrels.comment.test", "results.comment.test"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": [
        "-m",
        "all_trec",
        "-mrelstring.20",
        "-q",
        "-l2",
        "qrels.rel_level",
        "results.test",
    ],
    "out.test.meas_params": [
        "-q",
        "-miprec_at_recall..10,.20,.25,.75,.50",
        "-m",
        "P.5,7,3",
        "-m",
        "recall.20,2000",
        "-m",
        "Rprec_mult.5.0,0.2,0.35",
        "-mutility.2,-1,0,0",
        "-m",
        "11pt_avg..25,.5,.75",
        "-mndcg.1=3,2=9,4=4.5",
        "-mndcg_cut.10,20,23.4",
        "-msuccess.2,5,20",
        "qrels.test",
        "results.test",
    ],
}


def ours(args: list[str], stdin: bytes | None = None) -> tuple[bytes, int, str]:
    """stdout bytes, exit status and stderr of ``python -m metrics_core trec_eval ARGS``."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = cli.main(["trec_eval", *args])
    finally:
        sys.stdin = old_stdin
    return out.getvalue().encode(), status, err.getvalue()


def stock(version: int) -> str:
    """The oracle: trec_eval ``version`` with its stock output (live or recorded)."""
    return f"{version}_stock"


def theirs(kind: str, args: list[str]) -> tuple[bytes, int]:
    return oracle.run(kind, args)


@pytest.mark.parametrize("case", sorted(CASES))
def test_conformance_outputs_byte_for_byte(case):
    if not conformance_available():
        pytest.skip(SKIP_NO_CONFORMANCE)
    folder = conformance_dir()
    args = [str(folder / a) if (folder / a).is_file() else a for a in CASES[case]]
    got, status, err = ours(args)
    assert (status, err) == (0, "")
    assert got == (folder / case).read_bytes()


@pytest.mark.parametrize("version", [10, 9])
@pytest.mark.parametrize("case", sorted(CASES))
def test_conformance_commands_equal_trec_eval(case, version):
    """The same commands against the built trec_eval 10 and 9 (9 has no unj/rbp)."""
    if not conformance_available():
        pytest.skip(SKIP_NO_CONFORMANCE)
    kind = stock(version)
    folder = conformance_dir()
    args = [str(folder / a) if (folder / a).is_file() else a for a in CASES[case]]
    expected, status = theirs(kind, args)
    got, got_status, _ = ours(["--compat", f"trec_eval{version}", *args])
    assert (got_status, got) == (status, expected)


def random_collection(seed: int) -> tuple[str, str]:
    """qrels and run text: tied scores (few distinct values, some equal only in float32),
    labels -2..4, queries without a relevant document, qrels-only and run-only queries.
    Drawn by :class:`tests.oracle.StableRandom`: the same text in every clone."""
    rng = oracle.StableRandom(seed)
    scores = [0.5, 1.0, 1.0000000001, 2.0, 2.00000003, 3.0, -1.25, 7.5]
    qrels, run = [], []
    for q in range(rng.integer(2, 8)):
        docs = [f"d{i:03d}" for i in range(rng.integer(2, 39))]
        role = rng.choice(["both", "both", "both", "both", "qrels_only", "run_only"])
        if role != "run_only":
            judged = rng.sample(docs, rng.integer(1, len(docs)))
            if rng.random() < 0.7:
                labels = [rng.integer(-2, 4) for _ in judged]
            else:
                labels = [rng.integer(-1, 0) for _ in judged]
            # trec_eval 10 stops on a query whose every label is negative
            labels[0] = max(labels[0], 0)
            qrels += [f"q{q} 0 {d} {v}" for d, v in zip(judged, labels, strict=True)]
        if role != "qrels_only":
            retrieved = rng.sample(docs, rng.integer(1, len(docs)))
            run += [
                f"q{q} Q0 {d} {i} {rng.choice(scores)!r} tag{seed}" for i, d in enumerate(retrieved)
            ]
    if not run:
        first = qrels[0].split()
        run.append(f"{first[0]} Q0 {first[2]} 0 1.0 tag{seed}")
    if not any(line.split()[0] in {r.split()[0] for r in run} for line in qrels):
        qrels.append(f"{run[0].split()[0]} 0 {run[0].split()[2]} 1")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


OPTION_SETS = [
    ["-q", "-c", "-m", "all_trec"],
    ["-q", "-c", "-J", "-m", "all_trec"],
    ["-q", "-c", "-l2", "-M5", "-m", "all_trec", "-m", "relstring.7"],
    ["-c", "-n", "-q", "-m", "P.1,3", "-m", "ndcg_cut.3,10", "-m", "map_cut.5"],
    ["-q", "-c", "-N", "1000", "-m", "utility.2,-1,0,1", "-m", "set_F.0.5", "-m", "official"],
    ["-q", "-m", "official"],  # trec_eval 10 stops at the first qrels query without results
    [
        "-c",
        "-m",
        "ndcg.1=3,2=9",
        "-m",
        "Rprec_mult.0.5,1.5",
        "-m",
        "success.2",
        "-m",
        "11pt_avg.0.2,0.5,0.8",
    ],
    # trec_eval 9 has none of rbp, rbp_resid, dcg: both stop with status 1. rbp is not
    # combined with parameters, dcg or G: trec_eval 10 rescales rbp's gains with
    # uninitialised bounds, so its value depends on what ran before (see the README)
    ["-q", "-c", "-m", "rbp", "-m", "rbp_resid.p=0.8", "-m", "relstring"],
    [
        "-q",
        "-c",
        "-J",
        "-m",
        "rbp_resid.p=0.8",
        "-m",
        "utility.1,-2,0.5,0",
        "-m",
        "unj.3,7",
        "-m",
        "dcg.1=2,2=5",
        "-m",
        "G",
    ],
]


@pytest.mark.parametrize("version", [10, 9])
@pytest.mark.parametrize("options", range(len(OPTION_SETS)))
@pytest.mark.parametrize("seed", range(6))
def test_random_collections_equal_trec_eval(seed, options, version, tmp_path):
    kind = stock(version)
    qrels, run = random_collection(seed * 31 + options)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    args = [*OPTION_SETS[options], str(tmp_path / "qrels"), str(tmp_path / "run")]
    expected, status = theirs(kind, args)
    got, got_status, err = ours(["--compat", f"trec_eval{version}", *args])
    assert got_status == status, err
    assert got == expected


def test_run_from_standard_input(tmp_path):
    kind = stock(10)
    qrels, run = random_collection(5)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    expected, _ = theirs(kind, ["-q", "-c", str(tmp_path / "qrels"), str(tmp_path / "run")])
    got, status, _ = ours(["-q", "-c", str(tmp_path / "qrels"), "-"], stdin=run.encode())
    assert (status, got) == (0, expected)


@pytest.mark.parametrize(
    ("args", "status", "needle"),
    [
        (["-R", "prefs"], 1, "relevance format 'prefs'"),
        (["-R", "qrels_jg"], 1, "relevance format 'qrels_jg'"),
        (["-m", "all_prefs"], 1, "preference or jg"),
        (["-m", "prefs_simp"], 1, "not served"),
        (["-m", "bogus"], 1, "illegal measure 'bogus'"),
        (["-m", "P.0,5"], 2, "Negative cutoff"),
        (["-m", "P.5,5"], 2, "duplicate cutoffs"),
        (["-M0"], 1, "-M 0 keeps no document"),
    ],
)
def test_unservable_options_are_one_line(args, status, needle, tmp_path):
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 t\n")
    got, got_status, err = ours([*args, str(tmp_path / "q"), str(tmp_path / "r")])
    assert (got, got_status) == (b"", status)
    assert needle in err and err.count("\n") == 1


def test_bad_run_line_names_file_and_line(tmp_path):
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 notanumber t\n")
    got, status, err = ours([str(tmp_path / "q"), str(tmp_path / "r")])
    assert (got, status) == (b"", 2)  # trec_eval's status for a file it cannot read
    assert "r, line 2" in err and err.count("\n") == 1


def test_official_is_the_default_and_order_is_trec_evals(tmp_path):
    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 mytag\nq1 Q0 d2 2 1.0 mytag\n")
    got, status, _ = ours(["-m", "P.2", "-m", "map", str(tmp_path / "q"), str(tmp_path / "r")])
    assert status == 0
    assert got == b"map                   \tall\t1.0000\nP_2                   \tall\t0.5000\n"
    default, _, _ = ours([str(tmp_path / "q"), str(tmp_path / "r")])
    names = [line.split()[0] for line in default.decode().splitlines()]
    assert names[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert default.decode().splitlines()[0] == "runid                 \tall\tmytag"


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_duplicate_documents_stop_with_trec_evals_status(which, tmp_path):
    qrels, run = "q1 0 d1 1\nq1 0 d2 0\n", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"
    if which == "run":
        run += "q1 Q0 d1 3 0.5 t\n"
    else:
        qrels += "q1 0 d1 0\n"
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    args = [str(tmp_path / "q"), str(tmp_path / "r")]
    got, status, err = ours(args)
    assert (got, status) == (b"", 4) and "duplicate" in err and err.count("\n") == 1
    expected, expected_status = theirs(stock(10), args)
    assert (got, status) == (expected, expected_status)


@pytest.mark.parametrize("version", [10, 9])
@pytest.mark.parametrize("flags", [[], ["-c"], ["-q", "-c"]])
def test_no_common_query(flags, version, tmp_path):
    """trec_eval 10 stops on the unanswered qrels query (4) unless -c; trec_eval 9 finds no
    query with both results and judgements (7)."""
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q9 Q0 d1 1 2.0 t\n")
    args = [*flags, str(tmp_path / "q"), str(tmp_path / "r")]
    expected, status = theirs(stock(version), args)
    got, got_status, _ = ours(["--compat", f"trec_eval{version}", *args])
    assert (got_status, got) == (status, expected)


@pytest.mark.parametrize("version", [10, 9])
@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize(
    "flags",
    [
        ["-q"],
        ["-q", "-c"],
        ["-q", "-m", "P.3", "-m", "relstring"],
        ["-q", "-m", "runid", "-m", "num_q"],
    ],
)
def test_query_with_only_negative_labels(flags, first, version, tmp_path):
    """trec_eval stops (status 4) when the first query it ranks has only negative
    judgements, naming the first measure that ranks documents; a later such query (labels
    -1) is measured."""
    q1 = "q1 0 d1 -1\nq1 0 d2 -1\n"
    others = "a1 0 d1 1\nq2 0 d1 1\n" if not first else "r1 0 d1 1\nr2 0 d1 1\n"
    (tmp_path / "q").write_text(q1 + others)
    ids = [line.split()[0] for line in (q1 + others).splitlines()]
    (tmp_path / "r").write_text("".join(f"{q} Q0 d1 1 2.0 t\n" for q in dict.fromkeys(ids)))
    args = [*flags, str(tmp_path / "q"), str(tmp_path / "r")]
    expected, status = theirs(stock(version), args)
    got, got_status, _ = ours(["--compat", f"trec_eval{version}", *args])
    assert (got_status, got) == (status, expected)
