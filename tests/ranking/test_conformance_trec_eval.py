"""RankLab reproduces NIST trec_eval 10.0's own test outputs, to the printed digits.

Every ``out.*`` file in the conformance folder (see its README.md for the trec_eval
command behind each) is re-computed with ``metrics_core.evaluate`` under the matching
conventions, and every line of every measure RankLab implements is compared with what
trec_eval printed: floats as ``f"{v:.4f}"``, counts as integers, per query and ``all``.
Each (file, measure) pair is one test id, so a broken measure shows up by name.

Names are mapped by the measure registry (each definition lists its trec_eval names); names
that are not measures are listed in ``SKIPPED`` with the reason;
``test_every_printed_measure_is_mapped_or_listed`` makes sure a name in the files is never
ignored silently.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

import numpy as np
import pytest

import metrics_core as mc
from metrics_core import cli
from metrics_core.ranking.registry import from_trec_name
from tests.conftest import (
    SKIP_NO_CONFORMANCE,
    conformance_available,
    conformance_dir,
    parse_trec_eval_output,
)

# --- trec_eval measure names to RankLab measure names: the registry's table -------------
# (metrics_core.ranking.registry.from_trec_name, built from each measure's definition)

# trec_eval names in the files that are not measures, or that RankLab does not compute.
SKIPPED: dict[str, str] = {
    r"runid": "the run's tag, not a measure",
    r"relstring(_\d+)?": "a string of relevance labels, not a number",
    r"(11pt_avg|utility|ndcg)_.*[=,].*": "trec_eval's own parameter syntax (-m name_params); RankLab "
    "writes parameters as NAME(param=value), tested in "
    "test_trec_eval_oracle.py",
}

# Measures printed only for `all` by trec_eval -q.
ALL_ONLY = {"num_q", "gm_map", "gm_bpref"}


def ranklab_name(trec_name: str) -> str | None:
    """RankLab's measure name for a trec_eval name, or None when it is not mapped."""
    return from_trec_name(trec_name)


def skip_reason(trec_name: str) -> str | None:
    for pattern, reason in SKIPPED.items():
        if re.fullmatch(pattern, trec_name):
            return reason
    return None


@dataclass(frozen=True)
class Case:
    """One trec_eval output file and how it was produced."""

    id: str
    expected: str
    qrels: str
    run: str
    per_query: bool
    conventions: dict = field(default_factory=dict)
    cli_flags: tuple = ()  # trec_eval's flags, as RankLab's command line spells them


CASES = [
    Case("out.test", "out.test", "qrels.test", "results.test", False),
    Case("out.test[with-comments]", "out.test", "qrels.test.with-comments", "results.test", False),
    Case(
        "out.comment.test", "out.comment.test", "qrels.comment.test", "results.comment.test", False
    ),
    Case("out.test.a", "out.test.a", "qrels.test", "results.test", False),
    Case("out.test.aq", "out.test.aq", "qrels.test", "results.test", True),
    Case(
        "out.test.aqc",
        "out.test.aqc",
        "qrels.test",
        "results.trunc",
        True,
        {"missing_queries": "zero"},
        ("-c",),
    ),
    Case(
        "out.test.aqcM",
        "out.test.aqcM",
        "qrels.test",
        "results.trunc",
        True,
        {"missing_queries": "zero", "depth": 100},
        ("-c", "-M", "100"),
    ),
    Case(
        "out.test.aql",
        "out.test.aql",
        "qrels.rel_level",
        "results.test",
        True,
        {"relevance_threshold": 2},
        ("-l", "2"),
    ),
    Case("out.test.meas_params", "out.test.meas_params", "qrels.test", "results.test", True),
]
CASES_BY_ID = {c.id: c for c in CASES}


@functools.cache
def expected_values(case_id: str) -> dict[tuple[str, str], str]:
    return parse_trec_eval_output(conformance_dir() / CASES_BY_ID[case_id].expected)


def mapped_measures(case_id: str) -> list[str]:
    """trec_eval names in the file that RankLab implements, in file order."""
    seen = dict.fromkeys(m for m, _ in expected_values(case_id))
    return [m for m in seen if ranklab_name(m) is not None]


@functools.cache
def evaluation(case_id: str):
    """RankLab's evaluation of a case: every mapped measure in one call."""
    case = CASES_BY_ID[case_id]
    folder = conformance_dir()
    trec_names = mapped_measures(case_id)
    requested = [ranklab_name(m) for m in trec_names]
    ev = mc.evaluate(folder / case.qrels, folder / case.run, requested, **case.conventions)
    assert len(ev.measures) == len(requested), "a requested measure was merged with another"
    canonical = dict(zip(requested, ev.measures, strict=True))
    return ev, {t: canonical[ranklab_name(t)] for t in trec_names}


def _params():
    if not conformance_available():
        return [
            pytest.param(
                None,
                None,
                marks=pytest.mark.skip(reason=SKIP_NO_CONFORMANCE),
                id="conformance-files-missing",
            )
        ]
    return [pytest.param(c.id, m, id=f"{c.id}-{m}") for c in CASES for m in mapped_measures(c.id)]


def printed(value: float, trec_value: str) -> str:
    """RankLab's value as trec_eval prints it: integers for counts, else 4 decimals."""
    if re.fullmatch(r"-?\d+", trec_value):
        assert float(value).is_integer(), f"count measure has a fractional value {value!r}"
        return str(int(value))
    return f"{value:.4f}"


@pytest.mark.parametrize(("case_id", "trec_measure"), _params())
def test_reproduces_trec_eval(case_id, trec_measure):
    case = CASES_BY_ID[case_id]
    expected = {q: v for (m, q), v in expected_values(case_id).items() if m == trec_measure}
    ev, names = evaluation(case_id)
    name = names[trec_measure]

    got = {"all": printed(ev.aggregate[name], expected["all"])}
    per_query_expected = {q: v for q, v in expected.items() if q != "all"}
    if case.per_query and trec_measure not in ALL_ONLY:
        # The evaluated queries must be exactly trec_eval's: skipped without -c, all the
        # qrels queries with it.
        assert sorted(ev.per_query.index) == sorted(per_query_expected), "evaluated queries differ"
    assert not case.per_query or per_query_expected or trec_measure in ALL_ONLY
    column = ev.per_query[name]
    for qid, trec_value in per_query_expected.items():
        got[qid] = printed(column.loc[qid], trec_value)
    assert got == expected


def test_every_printed_measure_is_mapped_or_listed(conformance_path):
    unknown = set()
    for case in CASES:
        for measure, _ in expected_values(case.id):
            if ranklab_name(measure) is None and skip_reason(measure) is None:
                unknown.add(measure)
            assert not (ranklab_name(measure) and skip_reason(measure)), measure
    assert not unknown, (
        f"trec_eval measures neither mapped nor listed as skipped: {sorted(unknown)}"
    )


def test_cases_cover_every_output_file(conformance_path):
    files = {p.name for p in conformance_path.glob("out.*")}
    assert files == {c.expected for c in CASES}


def test_with_comments_qrels_equal_plain_qrels(conformance_path):
    """Lines starting with '#' are skipped; a '#' inside a doc id is data. The file
    differs from qrels.test by three comment lines and one doc id, CR#93E-1860."""
    plain = mc.read_qrels(conformance_path / "qrels.test").to_frame()
    commented = mc.read_qrels(conformance_path / "qrels.test.with-comments").to_frame()
    assert "CR#93E-1860" in set(commented["doc_id"])
    commented["doc_id"] = commented["doc_id"].replace({"CR#93E-1860": "CR93E-1860"})
    key = ["query_id", "doc_id"]
    a = plain.sort_values(key).reset_index(drop=True)
    b = commented.sort_values(key).reset_index(drop=True)
    assert a.equals(b)


def test_comment_run_keeps_hash_in_doc_ids(conformance_path):
    """A '#' inside a line is data (msmarco passage ids), only a leading '#' is a comment."""
    run = mc.read_run(conformance_path / "results.comment.test")
    assert len(run) == sum(
        1
        for line in open(conformance_path / "results.comment.test")
        if line.strip() and not line.startswith("#")
    )
    assert np.char.find(run.doc_ids.astype(str), "#").max() > 0


def test_extra_and_missing_queries_are_reported(conformance_path):
    """out.comment.test: run topics absent from the qrels are ignored and reported;
    results.trunc lacks 302, which is reported as missing (skipped by default)."""
    ev, _ = evaluation("out.comment.test")
    qrels_q = {
        line.split()[0] for line in open(conformance_path / "qrels.comment.test") if line.strip()
    }
    run_q = {
        line.split()[0] for line in open(conformance_path / "results.comment.test") if line.strip()
    }
    assert sorted(ev.diagnostics["extra_queries"]) == sorted(run_q - qrels_q)
    assert sorted(ev.per_query.index) == sorted(qrels_q & run_q)
    skipped = mc.evaluate(
        conformance_path / "qrels.test", conformance_path / "results.trunc", ["AP"]
    )
    assert skipped.diagnostics["missing_queries"] == ["302"]
    assert sorted(skipped.per_query.index) == ["301", "303"]


@pytest.mark.parametrize(
    "case_id", ["out.test", "out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql"]
)
def test_command_line_reproduces_trec_eval(case_id, conformance_path, capsys):
    """The same numbers through ``python -m metrics_core evaluate`` with trec_eval's
    measure names and flags (-c, -M, -l), read back from its JSON."""
    case = CASES_BY_ID[case_id]
    expected = expected_values(case_id)
    _, names = evaluation(case_id)
    args = [
        "evaluate",
        "--qrels",
        str(conformance_path / case.qrels),
        "--run",
        str(conformance_path / case.run),
        "--format",
        "json",
        "--per-query",
        *case.cli_flags,
    ]
    for trec_name in names:
        args += ["-m", trec_name]
    assert cli.main(args) == 0
    (result,) = json.loads(capsys.readouterr().out)["runs"]
    mismatches = []
    for (trec_name, qid), value in expected.items():
        if trec_name not in names:
            continue
        name = names[trec_name]
        got = result["aggregate"][name] if qid == "all" else result["per_query"][qid][name]
        if printed(got, value) != value:
            mismatches.append((trec_name, qid, value, got))
    assert not mismatches
