"""The benchmark's scripts work: data generation, peer scripts, harness helpers.

No timing is asserted; peers that are not installed are skipped.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import bench_ranking  # noqa: E402
import make_data  # noqa: E402


def _parse(path: Path, width: int) -> list[list[str]]:
    rows = [line.split(" ") for line in path.read_text().splitlines()]
    assert rows and all(len(r) == width for r in rows), path
    return rows


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_data")
    argv = [
        "--queries",
        "30",
        "--depth",
        "40",
        "--judged-min",
        "20",
        "--judged-max",
        "60",
        "--name",
        "tiny",
        "--out",
        str(out),
        "--shuffle",
    ]
    assert make_data.main(argv) == 0
    return out


def test_run_file_is_trec_in_rank_order(tiny):
    rows = _parse(tiny / "tiny.run", 6)
    assert len(rows) == 30 * 40
    by_query = defaultdict(list)
    for qid, q0, doc, rank, score, tag in rows:
        assert q0 == "Q0" and tag == "bench"
        assert doc.startswith("doc") and len(doc) == 10 and doc[3:].isdigit()
        by_query[qid].append((int(rank), float(score), doc))
    assert len(by_query) == 30
    for entries in by_query.values():
        ranks = [r for r, _, _ in entries]
        scores = [s for _, s, _ in entries]
        assert ranks == list(range(1, 41))
        assert all(np.diff(scores) <= 0)  # written in rank order
        assert len({d for _, _, d in entries}) == 40  # no duplicate docs in a query


def test_qrels_graded_and_partly_retrieved(tiny):
    run_pairs = {(r[0], r[2]) for r in _parse(tiny / "tiny.run", 6)}
    rows = _parse(tiny / "tiny.qrels", 4)
    per_query = defaultdict(int)
    grades = set()
    retrieved = 0
    for qid, it, doc, rel in rows:
        assert it == "0"
        grades.add(int(rel))
        per_query[qid] += 1
        retrieved += (qid, doc) in run_pairs
    assert grades <= {0, 1, 2, 3} and {0, 1} <= grades
    assert len(set((r[0], r[2]) for r in rows)) == len(rows)  # no duplicate judgements
    assert set(per_query) == {r[0] for r in run_pairs}
    assert all(20 <= n <= 60 for n in per_query.values())
    assert 0 < retrieved < len(rows)  # some judged docs retrieved, some not


def test_shuffled_run_has_same_lines_in_other_order(tiny):
    ordered = (tiny / "tiny.run").read_text().splitlines()
    shuffled = (tiny / "tiny.shuf.run").read_text().splitlines()
    assert sorted(ordered) == sorted(shuffled) and ordered != shuffled


def test_generation_is_seeded():
    a_run, a_qrels = make_data.generate(5, 10, judged_min=5, judged_max=8, seed=3)
    b_run, b_qrels = make_data.generate(5, 10, judged_min=5, judged_max=8, seed=3)
    c_run, _ = make_data.generate(5, 10, judged_min=5, judged_max=8, seed=4)
    assert a_run.equals(b_run) and a_qrels.equals(b_qrels)
    assert not a_run.equals(c_run)


def test_ties_preset_rounding_makes_ties():
    run, _ = make_data.generate(50, 100, decimals=1, judged_min=10, judged_max=40)
    scores = run.column("score").to_numpy().reshape(50, 100)
    assert (np.diff(scores, axis=1) == 0).sum() > 500
    assert np.all(np.diff(scores, axis=1) <= 0)


def test_compare_flags_differences():
    ref = {"P@5": 0.5, "AP": 0.25}
    text, diffs = bench_ranking.compare({"P@5": 0.5, "AP": 0.2502}, ref)
    assert text.startswith("differs: AP") and diffs["AP"] == pytest.approx(2e-4)
    text, _ = bench_ranking.compare({"P@5": 0.50000001, "AP": 0.25}, ref)
    assert text.startswith("ok")


def test_write_section_replaces_only_ranking(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("# Benchmarks\n\n## Hashing\nkeep me\n\n## Ranking\nold\n\n## Other\nx\n")
    bench_ranking.write_section(md, "## Ranking\n\nnew table\n\n")
    text = md.read_text()
    assert "old" not in text and "new table" in text
    assert "## Hashing\nkeep me" in text and "## Other\nx" in text


def _ranklab_means(tiny, tmp_path) -> dict:
    """RankLab's CLI as the benchmark runs it, parsed as the benchmark parses it."""
    if not bench_ranking.available("ranklab"):
        pytest.skip("metrics_core evaluate command not present")
    out = tmp_path / "ranklab.json"
    cmd = bench_ranking.tool_command("ranklab", tiny / "tiny.qrels", tiny / "tiny.run", out)
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True)
    return json.loads(out.read_text())["runs"][0]["aggregate"]


# ir_measures takes RR@10 from its msmarco provider, which orders tied scores by doc id
# ascending (trec_eval: descending); the tiny run has 4-decimal scores, so ties are rare
# but possible: RR@10 is compared loosely there.
PEERS = [("pytrec_eval", "pytrec_eval", set()), ("ir_measures", "ir_measures", {"RR@10"})]


@pytest.mark.parametrize("tool,module,tie_sensitive", PEERS)
def test_peer_script_matches_ranklab(tiny, tmp_path, tool, module, tie_sensitive):
    """Peer scripts run and return the seven means, equal to RankLab's (trec_eval's)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} not installed")
    expected = _ranklab_means(tiny, tmp_path)
    out = tmp_path / "out.json"
    cmd = bench_ranking.tool_command(tool, tiny / "tiny.qrels", tiny / "tiny.run", out)
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True)
    result = json.loads(out.read_text())["aggregate"]
    from peers import MEASURES

    assert list(result) == MEASURES
    assert result["P@5"] > 0  # relevant docs are placed near the top
    for measure in MEASURES:
        tol = 0.02 if measure in tie_sensitive else 1e-9
        assert result[measure] == pytest.approx(expected[measure], abs=tol), measure


def test_bench_scripts_find_the_shared_folder_relative_to_the_repository(monkeypatch, tmp_path):
    """No script names an absolute path of one machine; the trec_eval build script is looked
    up beside the repository, or under ``$RANKLAB_SHARED``, so the bench runs from any clone."""
    for path in BENCH.glob("*.py"):
        text = path.read_text()
        assert "/work/" not in text, f"{path.name} names an absolute path"
    spec = importlib.util.spec_from_file_location(
        "bench_streaming_probe", BENCH / "bench_streaming.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.BUILD == ROOT.parent / "shared" / "reference" / "build-trec_eval.sh"
    monkeypatch.setenv("RANKLAB_SHARED", str(tmp_path))
    assert module.shared_dir() == tmp_path
