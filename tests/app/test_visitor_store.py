"""The visitor's data off the heap (:mod:`ui.common.store`): a loaded run or qrels, and a kept
ranking, lie in files of the session's own folder, memory-mapped back; folders and files are
the server's own (0700 / 0600), named by the server, never from what a visitor types; each
session has its own; a folder goes when its data is released (keep's purge, the reclaimer's
sweep, the server's exit), and the folders of a server that is gone are swept at start-up;
an upload's raw bytes leave the server once parsed."""

from __future__ import annotations

import fcntl
import stat
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.scale import spill
from ui.common import keep, store

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def _load_sample_page():
    import streamlit as st

    from ui.common import keep, state, store
    from ui.ranking.data import evaluate_loaded, load_sample_into_state

    keep.restore_or_start()  # as every page's frame does, and keep.save() at the end
    if st.session_state.get("load", True):
        load_sample_into_state()
    st.session_state["folder"] = str(store.session_folder())
    evs = evaluate_loaded(["AP", "nDCG@10"])
    st.session_state["aggregates"] = {n: dict(ev.aggregate) for n, ev in evs.items()}
    st.session_state["rankings"] = {n: ev.ranking for n, ev in evs.items()}
    st.write("runs: " + ",".join(st.session_state[state.RUNS]))
    keep.save()


def _run(page=_load_sample_page, **state) -> AppTest:
    at = AppTest.from_function(page, default_timeout=TIMEOUT)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def test_loaded_data_and_kept_rankings_lie_in_the_sessions_own_folder(sample):
    at = _run()
    folder = Path(at.session_state["folder"])
    assert folder.parent == store.server_folder() and folder.is_dir()
    assert len(folder.name) == 32 and folder.name.isalnum()  # named by the server
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    runs, qrels = at.session_state["ranklab.runs"], at.session_state["ranklab.qrels"]
    for data in [qrels, *runs.values()]:
        stem = spill.spilled(data)
        assert stem is not None and stem.parent == folder, stem
        assert not np.asarray(data.values).flags.writeable  # a view of the mapped file
    for ranking in at.session_state["rankings"].values():
        assert spill.spilled(ranking.lists).parent == folder
    files = sorted(p.name for p in folder.iterdir())
    assert files and all(p.startswith(("run-", "qrels-", "ranking-")) for p in files), files
    assert all(stat.S_IMODE((folder / f).stat().st_mode) == 0o600 for f in files)
    # the numbers are the library's on the same data in memory
    s_qrels, s_runs, _ = sample
    for name, agg in at.session_state["aggregates"].items():
        assert agg == mc.evaluate(s_qrels, s_runs[name], ["AP", "nDCG@10"]).aggregate


def test_each_session_has_its_own_folder():
    a, b = _run(), _run()
    assert a.session_state["folder"] != b.session_state["folder"]


def _upload_page():
    import streamlit as st

    from ui.common import state
    from ui.common.frame import page_setup
    from ui.ranking.upload import handle_upload

    class Upload:  # what st.file_uploader hands over
        def __init__(self, data: bytes, name: str):
            self._data, self.name, self.size, self.file_id = data, name, len(data), name

        def getvalue(self) -> bytes:
            return self._data

    page_setup()
    text = "".join(f"q{i % 7} Q0 d{i} 1 {i % 5}.0 tag\n" for i in range(3000)).encode()
    handle_upload("run", Upload(text, "../../etc/evil name.txt"), "auto")
    st.write("runs: " + ",".join(st.session_state[state.RUNS]))


def test_nothing_a_visitor_types_becomes_a_path():
    at = _run(_upload_page)
    (run,) = at.session_state["ranklab.runs"].values()
    stem = spill.spilled(run)
    assert stem is not None and "evil" not in str(stem) and ".." not in stem.parts
    assert stem.parent.parent == store.server_folder()
    assert run.source.endswith("evil name.txt")  # the name stays the visitor's, as text


def test_a_big_run_is_read_in_batches_into_the_folder_with_the_numbers_of_a_whole_read(
    monkeypatch,
):
    """Above ui.ranking.data.STREAM_PARSE_BYTES a TREC run is read batch by batch straight to
    its files: the same run (ids, scores, name, tag) as the whole reader gives."""
    from ui.ranking import data as rd

    monkeypatch.setattr(rd, "STREAM_PARSE_BYTES", 10_000)
    at = _run(_upload_page)
    (run,) = at.session_state["ranklab.runs"].values()
    text = "".join(f"q{i % 7} Q0 d{i} 1 {i % 5}.0 tag\n" for i in range(3000)).encode()
    whole = mc.read_run(text)
    assert spill.spilled(run) is not None and run.rows_are_lines
    assert run.query_ids.tolist() == whole.query_ids.tolist()
    assert run.doc_ids.tolist() == whole.doc_ids.tolist()
    assert np.array_equal(run.scores, whole.scores) and run.tags == whole.tags == "tag"
    qrels = "".join(f"q{i % 7} 0 d{i} {i % 3}\n" for i in range(0, 3000, 11)).encode()
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    assert (
        mc.evaluate(qrels, run, measures).aggregate == mc.evaluate(qrels, whole, measures).aggregate
    )


def test_a_run_put_in_the_state_by_any_page_leaves_the_heap_and_its_files_go_with_it():
    """A run a page puts in the state itself (a fused run, a History import) is moved at the
    end of the script run; the files of a run removed go at the end of the next."""

    def page():
        import streamlit as st

        import metrics_core as mc
        from ui.common import keep, state

        keep.restore_or_start()
        if "made" not in st.session_state:
            st.session_state[state.RUNS] = {
                "fused": mc.Run(["q1", "q1"], ["a", "b"], [2.0, 1.0], name="fused")
            }
            st.session_state["made"] = True
        elif st.session_state.get("drop"):
            st.session_state[state.RUNS] = {}
        keep.save()

    at = _run(page)
    run = at.session_state["ranklab.runs"]["fused"]
    stem = spill.spilled(run)
    assert stem is not None and spill.files_of(stem)
    at.session_state["drop"] = True
    del run
    at.run()
    import gc

    gc.collect()
    at.run()  # the next end of a run deletes the files of what is gone
    assert not spill.files_of(stem)


def test_a_released_sessions_folder_is_removed_and_its_data_still_reads(monkeypatch):
    at = _run()
    folder = Path(at.session_state["folder"])
    run = at.session_state["ranklab.runs"]["bm25"]
    before = mc.evaluate(at.session_state["ranklab.qrels"], run, ["AP"]).aggregate
    monkeypatch.setattr(keep, "keep_seconds", lambda: 0.0)
    keep.purge(set())  # no session open: its keeping time starts ...
    time.sleep(0.01)
    keep.purge(set())  # ... and is over: released, its folder removed
    assert not folder.exists()
    # whatever still holds the data reads it from the mapping (the files are gone)
    assert mc.evaluate(at.session_state["ranklab.qrels"], run, ["AP"]).aggregate == before


def test_a_folder_an_open_session_uses_stays_when_another_tabs_data_is_released(monkeypatch):
    at = _run()
    folder = Path(at.session_state["folder"])
    users = store._users[folder.name]
    assert store.release([folder.name], open_sessions=set(users)) == 0
    assert folder.is_dir()
    assert store.release([folder.name], open_sessions=set()) == 1
    assert not folder.exists()


def test_the_reclaimer_sweeps_folders_nothing_names(monkeypatch):
    at = _run()
    folder = Path(at.session_state["folder"])
    monkeypatch.setattr(store, "SWEEP_AFTER_S", 0.0)
    users = set(store._users[folder.name])
    store.sweep(users, set())
    assert folder.is_dir()  # its session is open
    store.sweep(set(), {folder.name})
    assert folder.is_dir()  # kept for a reload
    assert store.sweep(None, set()) == 0 and folder.is_dir()  # sessions unknown: nothing
    assert store.sweep(set(), set()) >= 1 and not folder.exists()


def test_the_folders_of_a_server_that_is_gone_are_swept_at_start_up(tmp_path):
    root = store.root()
    gone = root / (store.SERVER_PREFIX + "gone-test")
    alive = root / (store.SERVER_PREFIX + "alive-test")
    for f in (gone, alive):
        (f / "abc").mkdir(parents=True, exist_ok=True)
        (f / "owner.lock").write_text("")
    held = open(alive / "owner.lock")  # a live server holds its lock
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        assert store.sweep_stale_servers() >= 1
        assert not gone.exists() and alive.is_dir()
        assert store.server_folder().is_dir()  # this server's own is never swept
    finally:
        held.close()
    assert store.sweep_stale_servers() >= 1 and not alive.exists()


def test_the_chosen_place_is_on_a_disk_when_one_can_be_written():
    assert store.root().is_dir()
    assert store.on_disk() == (not spill.memory_backed(store.root()))


def test_an_uploads_raw_bytes_leave_the_server_once_parsed():
    """Streamlit keeps an upload in its upload manager for the session, and the file object the
    box hands over shares those bytes (the widget's state keeps it into the next run): once
    parsed, both let go."""

    def page():
        import streamlit as st
        from streamlit.proto.Common_pb2 import FileURLs
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

        from ui.ranking.upload import parse_once

        ctx = get_script_run_ctx()
        text = "".join(f"q{i % 5} Q0 d{i} 1 {i}.0 t\n" for i in range(500)).encode()
        rec = UploadedFileRec(file_id="f1", name="mine.txt", type="text/plain", data=text)
        ctx.uploaded_file_mgr.add_file(ctx.session_id, rec)
        f = UploadedFile(rec, FileURLs())
        changed, error = parse_once("run", f)
        st.session_state["out"] = (
            changed,
            error,
            f.closed,
            ctx.uploaded_file_mgr.get_files(ctx.session_id, ["f1"]),
        )

    at = _run(page)
    changed, error, closed, left = at.session_state["out"]
    assert changed and error is None
    assert closed and left == []


@pytest.fixture(autouse=True)
def _quiet_gate(monkeypatch):
    """A roomy budget: these tests are about where the data lies, not the gate."""
    monkeypatch.setenv("RANKLAB_SERVER_MB", "100000")


def _fusion_kept(sample):
    """The Fusion page run on the sample: (the page, what its session's cache keeps)."""
    qrels, runs, _ = sample
    at = AppTest.from_file(str(ROOT / "pages" / "fusion.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.conventions"] = mc.Conventions()
    at.run()
    assert not at.exception, at.exception
    assert at.dataframe, "no fusion drawn"
    [(_key, (_held, got))] = at.session_state["ranklab.cache"]["fusion.results"].items()
    return at, got


def test_the_fused_run_the_fusion_page_keeps_lies_in_the_sessions_folder(sample):
    """The Fusion page keeps its fused run between reruns (the session's cache): off the heap,
    in the session's own folder, like the loaded runs (the same lines and scores); a fused run
    on the heap held 11.6 MB a load-test visitor (two runs of 100,000 lines) while idle."""
    _qrels, runs, _ = sample
    at, got = _fusion_kept(sample)
    stem = spill.spilled(got.run)
    assert stem is not None and stem.parent.name == at.session_state[store.FOLDER], stem
    expected = mc.fuse({"bm25": runs["bm25"], "dense": runs["dense"]}, method="rrf")
    assert list(got.run.doc_ids) == list(expected.doc_ids)
    assert np.array_equal(np.asarray(got.run.scores), np.asarray(expected.scores))


def test_the_fusion_pages_comparison_keeps_values_not_rankings(sample):
    """The comparison the Fusion page keeps holds each run's per-query values (as the Compare
    page's does: RunValues), not the evaluations' rankings: three runs' ranked lists on the
    heap held 14.5 MB a load-test visitor while idle. The board's numbers are the library's
    comparison of the full evaluations."""
    qrels, runs, _ = sample
    at, got = _fusion_kept(sample)
    assert all(getattr(r, "ranking", None) is None for r in got.comparison.runs)
    chosen = {"bm25": runs["bm25"], "dense": runs["dense"]}
    fused = mc.fuse(chosen, method="rrf", name=got.name)
    measures = list(got.comparison.paper().columns)  # the page's measure first, then AP, nDCG@10
    evs = [mc.evaluate(qrels, r, measures, mc.Conventions()) for r in (*chosen.values(), fused)]
    full = mc.compare(evs, baseline=list(chosen), test="permutation", n_permutations=2000)
    assert got.comparison.paper().equals(full.paper())
    assert got.comparison.to_frame().equals(full.to_frame())
