"""Run names from uploaded files: no run lost to a name clash, one run per content
(issue 29, item 1)."""

from __future__ import annotations

import random

from metrics_core.io.run_names import RunFile, base_run_name, unique_run_names


def test_base_name_is_the_stem_or_the_tag_of_a_generic_stem():
    assert base_run_name("sysA/test_run.txt") == "test_run"
    assert base_run_name("C:\\runs\\bm25.trec.gz") == "bm25"
    assert base_run_name("results.txt", "dense-v2") == "dense-v2"
    assert base_run_name("run.txt", None) == "run"
    assert base_run_name("run.txt", "  ") == "run"


def test_two_files_of_one_name_stay_two_runs_named_by_their_tags():
    naming = unique_run_names(
        [RunFile("test_run.txt", "sysA", "a"), RunFile("test_run.txt", "sysB", "b")]
    )
    assert naming.names == ["test_run", "test_run (sysB)"]
    assert naming.renamed == [(1, "test_run (sysB)", "test_run")]
    assert naming.repeats == []


def test_a_number_when_the_tag_does_not_tell_them_apart():
    files = [RunFile("test_run.txt", "same", c) for c in "abc"] + [
        RunFile("test_run.txt", None, "d")
    ]
    naming = unique_run_names(files)
    assert naming.names == ["test_run", "test_run (same)", "test_run (2)", "test_run (3)"]
    assert [r[0] for r in naming.renamed] == [1, 2, 3]


def test_the_same_file_twice_is_one_run_and_said_so():
    naming = unique_run_names(
        [RunFile("a.txt", "t", 1), RunFile("b.txt", "t", 2), RunFile("a.txt", "t", 1)]
    )
    assert naming.names == ["a", "b", "a"]
    assert naming.repeats == [(2, 0)] and naming.renamed == []


def test_names_held_by_other_runs_are_not_taken():
    naming = unique_run_names([RunFile("bm25.txt", "bm25", "x")], taken=["bm25", "bm25 (2)"])
    assert naming.names == ["bm25 (3)"]  # the tag equals the base: it tells nothing apart


def test_known_files_keep_their_names_when_another_is_removed():
    a, b = RunFile("test_run.txt", "sysA", "a"), RunFile("test_run.txt", "sysB", "b")
    first = unique_run_names([a, b])
    known = dict(zip(["a", "b"], first.names, strict=True))
    after = unique_run_names([b], known=known)  # the first file removed
    assert after.names == ["test_run (sysB)"]
    again = unique_run_names([b, RunFile("test_run.txt", None, "c")], known=known)
    assert again.names == [
        "test_run (sysB)",
        "test_run",
    ]  # the freed plain name goes to the new file


def test_random_drops_never_lose_a_run():
    rng = random.Random(7)
    for _ in range(200):
        contents = [rng.randrange(6) for _ in range(rng.randrange(1, 9))]
        files = [
            RunFile(rng.choice(["run.txt", "x.txt", "x.txt.gz"]), rng.choice([None, "t1", "x"]), c)
            for c in contents
        ]
        taken = rng.sample(["x", "t1", "x (2)", "run"], rng.randrange(3))
        naming = unique_run_names(files, taken=taken)
        by_content = {}
        for f, name in zip(files, naming.names, strict=True):
            assert by_content.setdefault(f.content, name) == name  # one content, one name
        assert len(set(by_content.values())) == len(by_content)  # distinct contents, distinct names
        assert not set(by_content.values()) & set(taken)
        assert len(naming.repeats) == len(files) - len(by_content)
