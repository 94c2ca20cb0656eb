"""The benchmark's scripts work: data generation, peer scripts, harness helpers.

No timing is asserted; peers that are not installed are skipped.
"""

from __future__ import annotations

import importlib.util
import json
import re
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


# --- bench/load_test.py: the parts that need no browser --------------------------------------


@pytest.fixture(scope="module")
def load_test():
    spec = importlib.util.spec_from_file_location("load_test_probe", BENCH / "load_test.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_load_test_data_is_seeded_and_names_its_visitor(load_test, tmp_path):
    a = load_test.make_visitor_data(3, 200, 10, 50, out=tmp_path / "a")
    b = load_test.make_visitor_data(3, 200, 10, 50, out=tmp_path / "b")
    other = load_test.make_visitor_data(4, 200, 10, 50, out=tmp_path / "a")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert [p.stem for p in a[1:]] == ["v03a", "v03b"]
    qrels, run_a, run_b = (p.read_text().splitlines() for p in a)
    assert len(qrels) == 50 and len(run_a) == len(run_b) == 200
    assert all(line.count("v03") >= 2 for line in qrels + run_a + run_b)
    assert run_a != run_b and a[0].read_bytes() != other[0].read_bytes()
    found = {int(x or y) for p in a + other for x, y in load_test.NAMES.findall(p.read_text())}
    assert found == {3, 4}  # the isolation check reads every visitor's names


def _visit(i, board=None, waits=(), refusals=(), error=None, loaded=True):
    r = {"visitor": i, "stage": "done", "refusals": list(refusals), "waits": list(waits)}
    if board is not None:
        r["board s"] = board
    if loaded:
        r["runs s"] = 1.0
    if error:
        r["error"], r["stage"] = error, "Overview"
    return r


def test_load_test_summary_counts_boards_waits_refusals_and_isolation(load_test):
    placed = {"s": 3.0, "text": "Waiting for memory: you are 2nd in line (about 20 s)."}
    unplaced = {"s": 4.0, "text": "Waiting for memory: other visitors' work is using it."}
    results = [
        _visit(0, board=10.0),
        _visit(1, board=30.0, waits=[placed]),
        _visit(2, waits=[placed, unplaced], refusals=["v02a.txt: too large. Use the CLI."]),
        _visit(3, error="Overview: TimeoutError: 900 s", loaded=False),
    ]
    texts = {0: "v00a v00-q00001 v01b", 1: "v01a", 2: "v02b", 3: ""}
    s = load_test.summarise(results, texts, 4)
    assert s["got their leaderboard"] == 2 and s["loaded"] == 3
    assert s["leaderboard p50 s"] == 30.0  # nearest rank over all four visitors
    assert s["leaderboard p95 s"] is None  # it falls on a visitor who never got one
    assert [x["visitor"] for x in s["without a leaderboard"]] == [2, 3]
    assert s["waited"] == 2 and s["waited with their place shown"] == 1
    assert s["waited without their place"] == [2]
    assert s["refused"] == 1 and s["refusals"][0]["one line"] is True
    assert s["isolated"] is False and s[load_test.OTHERS] == {0: [1]}
    assert s["saw their own data"] == 3
    report = {"scenario": "visitors", "summary": s, "server": {"alive at the end": True}}
    met = {t["target"].split(":")[0]: t["met"] for t in load_test.targets(report)}
    assert met["4 visitors"] is False and met["no visitor sees another's data"] is False
    assert met["the server never killed"] is True


def test_the_p95_floor_is_the_work_before_the_boards_over_the_cores(load_test):
    """The 24th of 25 visitors waits for 24 visitors' work before their boards: 24 x 4.5 CPU s
    on 2 cores is 54 s at least; other processes on the machine are not counted."""
    before = {
        "server": 1.5,
        "chromium renderers": 2.5,
        "chromium browser and others": 0.4,
        "chromium GPU process": 0.1,
        "everything else": 30.0,
    }
    f = load_test.board_floor(before, 25, 2)
    assert (f["visitors"], f["CPU s a visitor"], f["s"]) == (24, 4.5, 54.0)
    assert f["browsers share"] == round(3.0 / 4.5, 2)
    assert load_test.board_floor(before, 20, 4)["s"] == round(19 * 4.5 / 4, 1)  # 21.4
    assert load_test.board_floor({}, 25, 2)["browsers share"] is None


def test_cpu_spent_by_kind_leaves_out_kinds_whose_processes_ended(load_test):
    """A visitor alone's CPU by kind between two readings; a kind whose sum fell (a renderer
    that ended in between) says nothing about the interval and is left out."""
    c0 = {"server": 10.0, "chromium renderers": 5.0, "chromium GPU process": 1.0}
    c1 = {
        "server": 11.25,
        "chromium renderers": 4.0,
        "chromium GPU process": 1.0,
        "this script": 0.5,
    }
    assert load_test.cpu_spent(c0, c1) == {"server": 1.25, "this script": 0.5}


def test_the_p95_target_says_its_floor_when_a_visitor_went_alone(load_test):
    s = load_test.summarise([_visit(i, board=float(70 + i)) for i in range(25)], {}, 25)
    report = {
        "scenario": "visitors",
        "summary": s,
        "server": {"alive at the end": True},
        "machine": {"cpus": 2},
    }
    line = load_test.targets(report)[0]
    assert line["met"] is False and "allows" not in line["seen"]
    report["visitor alone"] = {"CPU s before its board": {"server": 2.0, "chromium renderers": 3.0}}
    seen = load_test.targets(report)[0]["seen"]
    assert "no p95 under 60.0 s" in seen and "24 visitors" in seen and "60% of it" in seen, seen


def test_bare_app_floor_takes_each_kinds_median():
    """bench/bare_app_floor.py: per kind of process, the median over the visitors (a kind a
    visitor did not use counts 0 for it), and the floor of the load test from those medians."""
    import bare_app_floor

    samples = [
        {"server": 1.0, "chromium renderers": 2.0},
        {"server": 3.0, "chromium renderers": 2.6, "chromium GPU process": 0.3},
        {"server": 2.0, "chromium renderers": 2.2},
    ]
    cost = bare_app_floor.medians(samples)
    assert cost == {"chromium GPU process": 0.0, "chromium renderers": 2.2, "server": 2.0}
    assert bare_app_floor.lt.board_floor(cost, 25, 2)["s"] == round(24 * 4.2 / 2, 1)


def test_an_alerts_icon_name_is_not_a_second_line(load_test):
    """innerText reads an alert's Material icon as its name, then a blank line: the refusal
    "memory / this computation would need ..." is one line; two lines of text are not."""
    icon = "memory\n\nthis computation would need about 70 MB; the server has 0.0 MB free."
    s = load_test.summarise([_visit(0, refusals=[icon, "a\nb"])], {}, 1)
    assert [x["one line"] for x in s["refusals"]] == [True, False]


def test_load_test_percentiles_with_every_board(load_test):
    s = load_test.summarise([_visit(i, board=float(i + 1)) for i in range(20)], {}, 20)
    assert (s["leaderboard p50 s"], s["leaderboard p95 s"]) == (10.0, 19.0)
    assert s["isolated"] is True and s["waited"] == 0


def test_load_test_reads_a_place_in_the_waiting_line(load_test):
    for text in (
        "Waiting for memory: you are 3rd in line, about 40 s",
        "In line: place 2 of 5",
        "Waiting: 4 visitors ahead of you",
        "Waiting for memory (#2 in the queue)",
        "Waiting for memory: you are number 3 in line, behind 2 computations that need 48 MB.",
        "Waiting for memory: yours is next; it starts when the computations running now give "
        "their memory back. About 10 s to go.",
    ):
        assert load_test.PLACE.search(text), text
    assert not load_test.PLACE.search(
        "Waiting for memory: other visitors' work is using this server's memory now; yours "
        "starts as soon as there is room."
    )
    assert re.search(load_test.WAIT_PATTERN, "Waiting for memory", re.I)


def test_load_test_cgroup_says_why_it_cannot_and_reads_its_kills(load_test, monkeypatch, tmp_path):
    off = load_test.MemoryCgroup(0)
    assert not off.make() and "--cgroup-mb 0" in off.why and off.prefix() == []
    monkeypatch.setattr(load_test.os, "geteuid", lambda: 1000)
    user = load_test.MemoryCgroup(1024)
    assert not user.make() and "root" in user.why
    assert user.describe() == {"made": False, "why": user.why, "limit MB": None}
    # a v1 hierarchy (a folder standing in for /sys/fs/cgroup/memory)
    monkeypatch.setattr(load_test.os, "geteuid", lambda: 0)
    monkeypatch.setattr(load_test.MemoryCgroup, "V1", tmp_path)
    (tmp_path / "memory.limit_in_bytes").write_text("9223372036854771712")
    cg = load_test.MemoryCgroup(1024)
    assert cg.make(), cg.why
    assert (cg.path / "memory.limit_in_bytes").read_text() == str(1024 * 2**20)
    assert cg.describe()["limit MiB"] == 1024 and cg.describe()["version"] == 1
    assert cg.prefix()[-1] == str(cg.path / "cgroup.procs")
    (cg.path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert cg.new_oom_kills() == 2
