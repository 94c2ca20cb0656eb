"""Loading and evaluating ranking data for the app: parsing, sample data, evaluations.

Each upload is parsed once per session (:mod:`ui.ranking.upload`). Rankings, evaluations and the
leaderboard are cached per session, keyed by the objects in state, the conventions and the
measures, so moving between pages never recomputes.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core.io.coverage import BLOCK_ROWS as COVERAGE_BLOCK_ROWS
from metrics_core.io.coverage import coverage_report
from metrics_core.io.limits import using_limits
from metrics_core.io.metadata import read_metadata  # noqa: F401  (the pages' reader)
from metrics_core.io.run_names import base_run_name
from metrics_core.ranking.registry import parse_measures, rank_cutoffs
from metrics_core.report.diagnostics import (
    common_queries,
    diagnostic_measures,  # noqa: F401  (the Data page's)
)
from ui.common import budget, state, store
from ui.common.cache import forget, keep_only, peek, remember
from ui.common.i18n import N_, count, current_language, ngettext
from ui.common.i18n import gettext as _
from ui.common.state import in_app
from ui.common.style import difficulty_order, md_join, md_text, plain, run_colours, say
from ui.ranking.state import CLICKS_SOURCE

#: The section's tables in the session cache (:mod:`ui.common.cache`).
RANKINGS, EVALUATIONS, COVERAGE = "ranking.rankings", "ranking.evaluations", "ranking.coverage"
TIE_BOUNDS = "ranking.tie_bounds"
UNJUDGED_BOUNDS, UNJUDGED_BANDS = "ranking.unjudged_bounds", "overview.unjudged_bands"
REVERSALS = "overview.reversals"
SHARED, ONE_QUERY, BREAKDOWNS = "ranking.shared", "ranking.one_query", "ranking.breakdowns"
BOARDS, BANDS, BOOTSTRAPS = "overview.boards", "overview.bands", "ranking.bootstrap"
EXAMPLES, DIAGNOSTICS, CLICK_MRR = "learn.examples", "data.diagnostics", "clicks.mrr"

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "sample_data" / "ranking"
SAMPLE_RUNS = ("bm25", "dense", "hybrid")
META_COLUMNS = ("query", "category", "difficulty", "date", "criterion", "fold")
#: Headers of the metadata columns, marked for the catalogs (shown through ``_()``).
META_HEADERS = (
    N_("Category"),
    N_("Difficulty"),
    N_("Criterion"),
    N_("Fold"),
    N_("Date"),
    N_("Query text"),
)
_EVAL_CACHE_SIZE = 32
#: Rankings kept per session (each about 30 bytes a run row): the loaded runs under a few conventions.
_RANKED_CACHE_SIZE = 8
#: Runs of more rows than this are evaluated in blocks of this many rows (streaming, same
#: numbers): the engine's memory stays bounded whatever a visitor uploads.
STREAM_ROWS = 2_000_000
#: The tie report (about one more evaluation's time) is computed for runs up to this many rows.
TIE_ROWS = STREAM_ROWS


class _Named:
    """Bytes with a file name, so readers see the extension and name errors after the file."""

    def __init__(self, data: bytes, name: str):
        self._data, self.name = data, name

    def read(self) -> bytes:
        return self._data


#: A TREC run upload of at least this many bytes is read batch by batch straight into the
#: session's folder (:func:`_read_in_batches`): its reading needs a batch's memory and 12 bytes
#: a line, not the whole text's columns at once (5 M lines: +437 MB read whole). The library's
#: own threshold for reading a run file in blocks (``metrics_core.scale.streaming``'s 64 MiB);
#: below it the whole read is faster (1 M lines: 0.7 s against 1.8 s) and its peak small
#: (+54 MB against +43 MB).
STREAM_PARSE_BYTES = budget.STREAM_UPLOAD_BYTES


def parse_run(data: bytes, filename: str, fmt: str = "auto", columns: dict | None = None) -> mc.Run:
    """Parse run bytes (the run is named after the file stem or tag by the caller), within
    the server's memory gate (:func:`ui.common.budget.reserve`: refused before reading when it
    could never fit, in line while other work holds the memory), into the session's folder
    (:mod:`ui.common.store`: off the heap, mapped back).

    A large TREC run is read batch by batch (:func:`_read_in_batches`), any other whole.
    Not cached here: each upload is parsed once per session by :func:`ui.ranking.upload.parse_once`,
    and a cross-session cache (``st.cache_data``) would pickle every parsed run into the
    server's memory and hand out unpickled copies (0.25 s and a second copy for 1 M lines)."""
    if len(data) >= STREAM_PARSE_BYTES and fmt in ("auto", "trec") and not columns:
        with budget.reserve(data, "run-stream", filename) as limits, using_limits(limits):
            run = _read_in_batches(data, filename, fmt)
        if run is not None:
            return run
    with budget.reserve(data, "run", filename) as limits, using_limits(limits):
        return store.put(  # off the heap, in the session's folder (mapped back)
            mc.read_run(
                _Named(data, filename) if filename else data,
                fmt=fmt,
                columns=dict(columns or {}) or None,
            )
        )


def _read_in_batches(data: bytes, filename: str, fmt: str) -> mc.Run | None:
    """A plain-text TREC run read batch by batch (the library's streamed reader,
    :func:`metrics_core.io.open_run_stream`) straight into the session's folder
    (:meth:`ui.common.store.writer`): the same Run as :func:`metrics_core.read_run` gives
    (its name, source and tag from the reader's own reading of the first lines). None when
    the upload is not such a run, or outside a script run: it is then read whole."""
    from metrics_core.io import NotStreamable, open_run_stream
    from metrics_core.io.source import compression_of

    if compression_of(data[:16]) is not None:
        return None
    cut = data.rfind(b"\n", 0, 1 << 16)
    head = data[: cut + 1] if cut > 0 else data[: 1 << 16]
    try:
        first = mc.read_run(_Named(head, filename), fmt=fmt)  # the name, source and tag
        stream = open_run_stream(_Named(data, filename), fmt=fmt)
    except (NotStreamable, mc.InputError):
        return None  # read whole: its reader names any problem
    writer = store.writer("run")
    if writer is None:
        return None
    try:
        with writer:
            for batch in stream.batches():
                writer.add(
                    batch.column("qid"),
                    batch.column("docid"),
                    batch.column("score"),
                    batch.column("line"),
                )
            run = writer.finish(name=first.name, source=first.source, tags=first.tags)
    except NotStreamable:
        writer.discard()
        return None
    except BaseException:
        writer.discard()
        raise
    store.adopt(run)
    return run


def parse_qrels(
    data: bytes, filename: str, fmt: str = "auto", columns: dict | None = None
) -> mc.Qrels:
    """Parse qrels bytes (once per upload, within the memory gate, into the session's folder,
    as :func:`parse_run`). A TREC qrels file whose second column names several subtopics
    for one (query, document) -- ndeval's ``qid subtopic docid relevance`` -- is read with
    its subtopics (:class:`metrics_core.SubtopicQrels`): the diversity measures read them,
    every other measure sees one row per (query, document)."""
    from metrics_core.io.subtopics import looks_like_subtopics

    subtopics = fmt in ("auto", "trec") and looks_like_subtopics(data)
    with budget.reserve(data, "qrels", filename) as limits, using_limits(limits):
        return store.put(
            mc.read_qrels(
                _Named(data, filename),
                fmt=fmt,
                columns=dict(columns or {}) or None,
                subtopics=subtopics,
            )
        )


def has_subtopics(qrels=None) -> bool:
    """Whether the loaded qrels (or ``qrels``) judge per subtopic (the diversity measures'
    qrels)."""
    qrels = st.session_state.get(state.QRELS) if qrels is None else qrels
    return isinstance(qrels, mc.SubtopicQrels)


def subtopic_summary(qrels):
    """One line on a subtopic qrels: its subtopics and what reads them (empty otherwise)."""
    if not has_subtopics(qrels):
        return ""
    return say(
        _(
            "Subtopic qrels: {judgements} judgements over {subtopics} subtopics; the diversity "
            "measures (alpha-nDCG, ERR-IA, NRBP, P-IA, MAP-IA, strec) read them, the others see "
            "one row per query and document (its highest label)."
        ),
        judgements=count(int(qrels.pair_ptr[-1])),
        subtopics=count(len(qrels.subtopic_names)),
    )


def measure_options() -> list[str]:
    """The measure picker's list: every family's common instances, the diversity measures only
    when the loaded qrels judge per subtopic (on other qrels they would read one subtopic)."""
    from metrics_core.ranking.registry import COMMON_MEASURES

    if has_subtopics():
        return list(COMMON_MEASURES)
    return [m for m in COMMON_MEASURES if not mc.parse_measure(m).definition.subtopics]


def run_name_for(run: mc.Run, filename: str) -> str:
    """The system's name before any clash: :func:`metrics_core.io.run_names.base_run_name` (the
    file stem; a TREC run's tag when the stem is generic). The upload boxes make clashing names
    unique (:mod:`ui.ranking.run_files`)."""
    return base_run_name(filename, getattr(run, "tags", None))


def sample_files() -> dict[str, Path]:
    """Paths of the bundled ranking samples."""
    files = {
        "qrels": SAMPLE_DIR / "qrels.txt",
        "meta": SAMPLE_DIR / "queries.csv",
        "clicks": SAMPLE_DIR / "clicks.csv",
    }
    files.update({name: SAMPLE_DIR / f"{name}.txt" for name in SAMPLE_RUNS})
    return files


def load_sample() -> tuple[mc.Qrels, dict[str, mc.Run], pd.DataFrame]:
    """The bundled sample: qrels, three runs and the query metadata."""
    files = sample_files()
    qrels = parse_qrels(files["qrels"].read_bytes(), files["qrels"].name)
    runs = {name: parse_run(files[name].read_bytes(), files[name].name) for name in SAMPLE_RUNS}
    for name, run in runs.items():
        run.name = name
    meta = read_metadata(files["meta"].read_bytes(), files["meta"].name)
    return qrels, runs, meta


#: What reading a bundled sample reserves: nothing. It is the app's own data (about 1 MB while
#: read, the same for every visitor), not a visitor's input: it runs inside the gate, and a
#: full server does not refuse the sample button.
SAMPLE_NEED = 0


def load_sample_into_state() -> None:
    """Put the ranking section's sample into session state (replacing what was loaded):
    qrels, runs, query metadata and the click log. "Load sample data" loads every section's
    (:func:`ui.samples.load_every_sample`)."""
    # imported here: the ranking pages do not load the click-log reader until it is asked for
    from metrics_core.clicks import read_click_log

    with budget.work(SAMPLE_NEED):  # the bundled sample: the app's own, not a visitor's
        qrels, runs, meta = load_sample()
        clicks = sample_files()["clicks"]
        log = read_click_log(clicks.read_bytes(), clicks.name)
    st.session_state[state.QRELS] = qrels
    st.session_state[state.RUNS] = runs
    st.session_state[state.META] = meta
    forget()
    st.session_state[state.SELECTED_QUERY] = None
    st.session_state[state.CLICKS] = log
    st.session_state[CLICKS_SOURCE] = clicks.name


IN_FLIGHT: dict = {}  # (session id, ranking key) -> Future: rankings being built now
IN_FLIGHT_LOCK = threading.Lock()


def rank_once(key, build):
    """``build()``, or the result of the same build already running for this session.

    Streamlit starts a page's run at once when the visitor switches pages, while the
    previous page's run may still be ranking the same run (a library call is not
    interrupted): the new run waits for that ranking instead of building it again on the
    other core (on a 1 M-line run this was 0.3 s twice, side by side).

    A build that did not finish because its own page run was stopped (Streamlit's stop or
    rerun, which are not errors: the visitor opened another page) is not the waiter's answer:
    the waiter builds it itself. Before, the waiter re-raised the other run's stop and its
    page ended silently, half drawn (a 1 M-line run dropped on the Data page, the Overview
    opened as soon as the run was listed: no board, ever)."""
    from concurrent.futures import Future

    token = (state.session_id(), key)
    while True:
        with IN_FLIGHT_LOCK:
            running = IN_FLIGHT.get(token)
            mine = running is None
            if mine:
                running = IN_FLIGHT[token] = Future()
        if mine:
            break
        try:
            return running.result()
        except Exception:
            raise
        except BaseException:  # the other page run was stopped, not failed: build here
            continue
    try:
        result = build()
    except BaseException as exc:
        running.set_exception(exc)
        raise
    else:
        running.set_result(result)
        return result
    finally:
        with IN_FLIGHT_LOCK:
            IN_FLIGHT.pop(token, None)


#: The diversity sample: ndeval subtopic qrels and two runs (sample_data/diversity).
DIVERSITY_DIR = ROOT / "sample_data" / "diversity"
DIVERSITY_RUNS = ("relevance", "diverse")
#: What the Overview shows first with the diversity sample.
DIVERSITY_MEASURES = ("alpha-nDCG@10", "ERR-IA@10", "strec@10", "nDCG@10", "P@10")


def load_diversity_sample_into_state() -> None:
    """Put the diversity sample into the ranking section (replacing its qrels and runs): the
    subtopic qrels, the runs "relevance" and "diverse", and diversity measures chosen."""
    with budget.work(SAMPLE_NEED):  # the bundled sample: the app's own, not a visitor's
        qrels_file = DIVERSITY_DIR / "subtopics.qrels"
        qrels = parse_qrels(qrels_file.read_bytes(), qrels_file.name)
        runs = {}
        for name in DIVERSITY_RUNS:
            path = DIVERSITY_DIR / f"{name}.txt"
            runs[name] = parse_run(path.read_bytes(), path.name)
            runs[name].name = name
    st.session_state[state.QRELS] = qrels
    st.session_state[state.RUNS] = runs
    st.session_state[state.META] = None
    st.session_state[state.MEASURES] = list(DIVERSITY_MEASURES)
    forget()
    st.session_state[state.SELECTED_QUERY] = None


def _loaded_data() -> tuple:
    """The loaded qrels and runs (what every ranking-section cache entry is held against)."""
    return st.session_state.get(state.QRELS), list(
        (st.session_state.get(state.RUNS) or {}).values()
    )


def drop_unloaded() -> None:
    """Drop the section's cached results of data no longer loaded (replaced or removed)."""
    qrels, loaded = _loaded_data()
    for table in (RANKINGS, EVALUATIONS, COVERAGE):
        keep_only(table, lambda _key, held: held[0] is qrels and any(held[1] is r for r in loaded))
    evs = {id(ev) for name in (EVALUATIONS,) for ev in _held_values(name)}
    for table in (TIE_BOUNDS, UNJUDGED_BOUNDS, SHARED):
        keep_only(table, lambda _key, held: id(held[0]) in evs)


def _held_values(name: str) -> list:
    from ui.common.cache import CACHE

    return [value for _held, value in (st.session_state.get(CACHE, {}).get(name) or {}).values()]


def _ranked(qrels, run, conv, cutoffs: tuple) -> mc.Ranking:
    """The :class:`metrics_core.Ranking` of ``run`` (one sort and one join, :func:`mc.rank`),
    kept in the session (:func:`ui.common.cache.remember`) and shared by every evaluation of
    the run under ``conv`` whatever its measures: the Data page's diagnostics and the Overview
    rank the run once. Built for the cutoffs asked so far and those of the session's measures
    (a cutoff only adds a diagnostics count)."""
    found, hit = peek(RANKINGS, conv, held=(qrels, run))
    if found and set(cutoffs) <= set(hit[0]):
        return hit[1]
    wanted = set(cutoffs) | set(hit[0] if found else ())
    try:
        wanted |= set(
            rank_cutoffs(
                parse_measures(list(st.session_state.get(state.MEASURES) or state.DEFAULT_MEASURES))
            )
        )
    except mc.InputError:
        pass
    built = tuple(sorted(wanted))
    key = (id(qrels), id(run), conv)
    return remember(
        RANKINGS,
        conv,
        lambda: (
            built,
            # its ranked lists off the heap, in the session's folder (mapped back)
            rank_once(key, lambda: store.put_ranking(mc.rank(qrels, run, conv, cutoffs=built))),
        ),
        held=(qrels, run),
        size=_RANKED_CACHE_SIZE,
        fresh=True,
    )[1]


def evaluate_loaded(measures=None, conventions=None) -> dict[str, mc.Evaluation]:
    """Evaluations of every loaded run (kept in the session: :func:`ui.common.cache.remember`).

    A run of up to :data:`STREAM_ROWS` rows is ranked once (:func:`_ranked`) and each set
    of measures computed on that ranking (:meth:`metrics_core.Ranking.evaluate`: the numbers
    and diagnostics of ``mc.evaluate``); a larger one is evaluated in blocks.

    Raises InputError (e.g. a bad measure name, duplicates under ``duplicates=error``);
    pages show it with ``st.error``. Pages call it through the prologue
    (:func:`ui.ranking.prologue.loaded_evaluations`), which also sets unusable runs aside.
    """
    qrels = st.session_state.get(state.QRELS)
    runs = st.session_state.get(state.RUNS) or {}
    if qrels is None or not runs:
        return {}
    measures = list(measures or st.session_state.get(state.MEASURES) or state.DEFAULT_MEASURES)
    conv = conventions or st.session_state.get(state.CONVENTIONS) or mc.Conventions()
    drop_unloaded()

    def evaluate(
        name: str, run
    ) -> mc.Evaluation:  # the front door: whole or in blocks, one ranking kept
        ev = mc.evaluate(
            qrels,
            run,
            measures,
            conventions=conv,
            name=name,
            stream_rows=STREAM_ROWS,
            ranker=lambda cutoffs: _ranked(qrels, run, conv, cutoffs),
        )
        store.put_ranking(ev.ranking)  # only the mapped lists stay between reruns
        return ev

    return {
        name: remember(
            EVALUATIONS,
            (name, conv, tuple(measures)),
            lambda run=run, name=name: evaluate(name, run),
            held=(qrels, run),
            size=_EVAL_CACHE_SIZE,
            evaluating=name,  # within the server's budget (ui.common.budget.work), named
        )
        for name, run in runs.items()
    }


def _no_ties(run, ev) -> bool:
    """No tie report or band for this run: unknown, evaluated in blocks (no Ranking kept)
    or over :data:`TIE_ROWS` rows."""
    return run is None or getattr(ev, "ranking", None) is None or len(run) > TIE_ROWS


def _per_run(evaluations: dict, table: str, compute) -> dict:
    """Per run, ``compute(evaluation)`` kept in the session next to the evaluation (bounded);
    None for a run without the ranked lists or the ties it needs."""
    runs = st.session_state.get(state.RUNS) or {}

    def kept(ev):
        out = compute(ev)
        store.put_ranking(ev.ranking)  # what the computation derived leaves the heap
        return out

    return {
        name: None
        if _no_ties(runs.get(name), ev)
        else remember(table, None, lambda ev=ev: kept(ev), held=(ev,), size=_EVAL_CACHE_SIZE)
        for name, ev in evaluations.items()
    }


def tie_bounds(evaluations: dict) -> dict[str, dict | None]:
    """Per run, the per-query minimum and maximum of each covered measure over every order of
    tied scores (:meth:`metrics_core.Ranking.tie_bounds`, as Series indexed by query id):
    what the Overview's tie band and the Per query page's tie columns need, without the
    whole tie report (its expected values, and per-query dicts of Python floats: about
    150,000 small objects for two runs of 1,000 queries, which scattered Python's small-object
    arenas). Kept in the session next to the evaluation (one computation for both pages);
    None for a run of more than :data:`TIE_ROWS` rows (the bounds cost about two more
    evaluations) or one evaluated in blocks (no ranked lists kept)."""

    return _per_run(
        evaluations, TIE_BOUNDS, lambda ev: _by_query(ev, ev.ranking.tie_bounds(ev.specs))
    )


def _by_query(ev, bounds: dict) -> dict:
    """Per measure (lowest, highest) arrays as Series indexed by the evaluation's query ids."""
    index = pd.Index(ev.ranking.query_ids, dtype=object)  # the ids' own str objects
    return {
        m: (pd.Series(lo, index=index), pd.Series(hi, index=index))
        for m, (lo, hi) in bounds.items()
    }


def unjudged_bounds(evaluations: dict) -> dict[str, dict | None]:
    """Per run, the per-query lowest and highest value of each covered measure over every
    labelling of the unjudged retrieved documents
    (:meth:`metrics_core.Ranking.unjudged_bounds`, as Series indexed by query id): the
    Overview's unjudged band. Kept in the session next to the evaluation; None where the
    tie band is not computed either (too many rows, or evaluated in blocks)."""
    return _per_run(
        evaluations,
        UNJUDGED_BOUNDS,
        lambda ev: _by_query(ev, ev.ranking.unjudged_bounds(ev.specs)),
    )


#: Runs of more rows than this (together) get their leaderboard drawn before its tie and
#: unjudged bands, then again with them (the bands take about a third of an evaluation's
#: time); smaller runs get the bands at once (one drawing, no grid replaced under the
#: reader's eyes) unless the server is busy (:func:`board_first`).
EARLY_BOARD_ROWS = 200_000


def board_first(evaluations: dict) -> bool:
    """Whether the Overview draws its leaderboard before the tie and unjudged bands: they are
    not ready, and the runs are large (:data:`EARLY_BOARD_ROWS`) or other visitors' work
    waits for the server's memory now (each band is a computation of its own in the line: the
    answer first, the bands when their turn comes)."""
    if bands_ready(evaluations):
        return False
    return loaded_rows() > EARLY_BOARD_ROWS or budget.waiting() > 0


def bands_ready(evaluations: dict) -> bool:
    """Whether the tie and unjudged bands of these evaluations would come at once (kept, or
    not computed for their size)."""
    runs = st.session_state.get(state.RUNS) or {}
    return all(
        _no_ties(runs.get(name), ev)
        or (peek(TIE_BOUNDS, None, held=(ev,))[0] and peek(UNJUDGED_BOUNDS, None, held=(ev,))[0])
        for name, ev in evaluations.items()
    )


def tie_bounds_ready(evaluations: dict) -> bool:
    """Whether :func:`tie_bounds` of these evaluations would return at once (kept or not
    computed for their size)."""
    runs = st.session_state.get(state.RUNS) or {}
    return all(
        _no_ties(runs.get(name), ev) or peek(TIE_BOUNDS, None, held=(ev,))[0]
        for name, ev in evaluations.items()
    )


def too_large_for_ties(reports: dict) -> str:
    """One line naming the runs without a tie report (empty when every run has one)."""
    missing = [name for name, rep in reports.items() if rep is None]
    if not missing:
        return ""
    return say(
        ngettext(
            "Tie band not computed for {runs}: a run over {rows} rows (it would take about as long "
            "again as the evaluation).",
            "Tie band not computed for {runs}: runs over {rows} rows (it would take about as long "
            "again as the evaluation).",
            len(missing),
        ),
        runs=", ".join(missing),
        rows=count(TIE_ROWS),
    )


def unusable_runs(evaluations: dict) -> dict[str, str]:
    """Runs whose numbers say nothing, each with the reason in the visitor's words: a run
    that shares no query with the qrels (:func:`metrics_core.report.diagnostics.common_queries`
    is 0), or none of whose retrieved documents is judged
    (:func:`metrics_core.io.coverage.coverage_report`'s ``none_judged``). The pages name them and keep
    them out of the tables that compare runs on common queries; the other runs keep their
    numbers."""
    runs = st.session_state.get(state.RUNS) or {}
    qrels = st.session_state.get(state.QRELS)
    out = {}
    for name, ev in evaluations.items():
        if _shared_queries(ev) == 0:
            out[name] = say(
                _(
                    "{run} shares no query with the qrels (its query ids are not the qrels' ones): "
                    "is it the run of this collection?"
                ),
                run=name,
            )
        elif (
            _needs_report(ev, name, runs, qrels)
            and _coverage(qrels, runs[name])["problem"] == "none_judged"
        ):
            out[name] = say(
                _(
                    "none of the documents {run} retrieved is judged in the qrels (document ids written "
                    "differently, or the run of another collection?)"
                ),
                run=name,
            )
            out[name] += _columns_note(_coverage(qrels, runs[name]))
    return out


def coverage_notes(evaluations: dict) -> dict[str, str]:
    """Runs that are kept but few of whose documents the qrels judge (``few_judged`` of
    :func:`metrics_core.io.coverage.coverage_report`: under a tenth of the shared queries
    have a judged document retrieved), each with the reason in the visitor's words: their
    numbers are mostly zeros for want of judgements, not for a bad ranking."""
    runs = st.session_state.get(state.RUNS) or {}
    qrels = st.session_state.get(state.QRELS)
    out = {}
    for name, ev in evaluations.items():
        if _needs_report(ev, name, runs, qrels):
            report = _coverage(qrels, runs[name])
            if report["problem"] == "few_judged":
                out[name] = say(
                    _(
                        "only {judged} of the {shared} queries {run} shares with the qrels have a judged "
                        "document in its ranking: its values are mostly zeros for want of judgements"
                    ),
                    judged=report["queries_with_judged"],
                    shared=report["shared_queries"],
                    run=name,
                ) + _columns_note(report)
    return out


def _columns_note(report: dict) -> str:
    """Which column was read as the document id, and the file's other candidates."""
    others = report.get("other_doc_id_columns") or []
    if not report.get("doc_id_column") or not others:
        return ""
    return " " + say(
        _(
            "(document ids read from the column «{column}»; the file also has {others}: name the right "
            "one under the format options)"
        ),
        column=report["doc_id_column"],
        others=", ".join(f"«{md_text(c)}»" for c in others),
    )


def show_coverage_notes(notes: dict[str, str], where=None) -> None:
    """One note naming the runs of :func:`coverage_notes` (kept on the boards)."""
    if notes:
        (where or st).info(
            say("{notes}.", notes=md_join(notes.values(), "; ")), icon=":material/info:"
        )


def _needs_report(ev, name: str, runs: dict, qrels) -> bool:
    """Whether the run's whole coverage report must be asked: not when its ranking already
    shows a judged document in enough of its queries (:meth:`metrics_core.Ranking.coverage_is_sound`,
    free), which most runs do."""
    if name not in runs or qrels is None:
        return False
    return ev.ranking is None or not _sound(ev)


def _shared_queries(ev) -> int:
    """:func:`common_queries` of an evaluation (its diagnostics: a count), once per
    evaluation."""
    return remember(SHARED, "shared", lambda: common_queries(ev), held=(ev,), need=0, size=64)


def _sound(ev) -> bool:
    """:meth:`metrics_core.Ranking.coverage_is_sound` (a count on the ranking already made),
    once per evaluation."""
    return remember(
        SHARED, "sound", lambda: ev.ranking.coverage_is_sound(), held=(ev,), need=0, size=64
    )


#: Bytes a run and qrels row while :func:`coverage_report` joins them (Arrow's hash join on
#: the string ids): the peak resident memory grew 37 MB for a run and qrels of 100,000 lines
#: each and 238 MB for 1,000,000 each (2026-11-29, under the bench lock); rounded up. More
#: than a ranking takes a row: reserved at the ranking's need, it went past it. The run's rows
#: are joined :data:`metrics_core.io.coverage.BLOCK_ROWS` at a time: a 5,000,000-line run
#: needs what 1,048,576 lines do (reserved for all its rows, 840 MB, it was refused on a 1 GiB
#: server).
COVERAGE_BYTES_PER_ROW = 160


def coverage_need(run_rows: int, qrels_rows: int) -> int:
    """Bytes :func:`_coverage` reserves: the join of one block of the run's rows with the
    qrels (:data:`COVERAGE_BYTES_PER_ROW`), whatever the run's length past a block."""
    return budget.WORK_FIXED + (min(run_rows, COVERAGE_BLOCK_ROWS) + qrels_rows) * (
        COVERAGE_BYTES_PER_ROW
    )


def _coverage(qrels, run) -> dict:
    """:func:`coverage_report` of a loaded run, kept in the session (computed once per run and
    qrels, not on every rerun)."""
    return remember(
        COVERAGE,
        None,
        lambda: coverage_report(qrels, run),
        held=(qrels, run),
        size=_EVAL_CACHE_SIZE,
        need=lambda: coverage_need(len(run), len(qrels)),
    )


def show_unusable(unusable: dict[str, str], where=None) -> None:
    """One warning naming the runs of :func:`unusable_runs` and why they are left out."""
    if not unusable:
        return
    reasons = "; ".join(unusable.values())
    text = (
        _("Left out of the tables that compare runs:")
        + " "
        + reasons
        + ("" if reasons.endswith(("?", ".")) else ".")
        + " "
        + _(
            "The other runs keep their numbers. Remove the run on the Data page, or load the right file."
        )
    )
    (where or st).warning(text, icon=":material/report:")


def has_runs(n: int = 1) -> bool:
    """Whether qrels and at least ``n`` runs are loaded (what a ranking page needs)."""
    runs = st.session_state.get(state.RUNS) or {}
    return st.session_state.get(state.QRELS) is not None and len(runs) >= n


def has_data() -> bool:
    """Whether qrels and at least one run are loaded."""
    return has_runs(1)


def clear_loaded() -> None:
    """Forget the qrels, the runs and the metadata (the "Clear everything" button)."""
    st.session_state[state.QRELS] = None
    st.session_state[state.RUNS] = {}
    st.session_state[state.META] = None
    forget()


def add_run(run: mc.Run, name: str) -> str:
    """Load ``run`` beside the others, as an upload is (a fused run, from the Fusion page):
    named ``name``, or ``name (2)``, ``name (3)`` ... when a loaded run holds it; every page
    shows it, and the end of the script run moves it off the heap with the others
    (:func:`ui.common.store.settle`). Returns the name it got."""
    runs = dict(st.session_state.get(state.RUNS) or {})
    final, n = name, 1
    while final in runs:
        n += 1
        final = f"{name} ({n})"
    import copy

    loaded = copy.copy(run)  # the fused run keeps its own name where the page holds it
    loaded.name = final
    runs[final] = loaded
    st.session_state[state.RUNS] = runs
    return final


def remove_run(name: str) -> None:
    """Unload one run (its evaluations go with it)."""
    runs = st.session_state.get(state.RUNS) or {}
    st.session_state[state.RUNS] = {k: v for k, v in runs.items() if k != name}
    forget()


def judgements_per_label(qrels: mc.Qrels) -> pd.DataFrame:
    """Label, judgements and share of each relevance label of ``qrels`` (labels ascending)."""
    labels = pd.Series(qrels.relevance).value_counts().sort_index()
    return pd.DataFrame(
        {
            "Label": [f"{lab:g}" for lab in labels.index],
            "Judgements": labels.to_numpy(),
            "Share": labels.to_numpy() / max(len(qrels), 1),
        }
    )


def loaded_rows() -> int:
    """Rows of every loaded run together."""
    return sum(len(r) for r in (st.session_state.get(state.RUNS) or {}).values())


def use_click_log(data: bytes, name: str) -> None:
    """Read a click log (``metrics_core.clicks.read_click_log``) into the session."""
    from metrics_core.clicks import read_click_log

    st.session_state[state.CLICKS] = read_click_log(data, name)
    st.session_state[CLICKS_SOURCE] = name


def load_sample_clicks() -> None:
    """The bundled click log (read inside the gate, as an upload of it is)."""
    path = sample_files()["clicks"]
    with budget.work(SAMPLE_NEED):
        use_click_log(path.read_bytes(), path.name)


# --- the pages' other computations, each inside the gate ------------------------------------
#: Bytes one query's view takes per row of its run when the run was evaluated in blocks (no
#: ranking kept: the query's rows are found and ranked alone), and per judgement of the
#: qrels (its relevant documents are looked up): the ids as Python strings (about 60 bytes
#: each), a mask. An estimate from those sizes, not measured.
ONE_QUERY_BYTES_PER_ROW = 80
#: Bytes a table made of the per-query values takes per value (group means, the bootstrap,
#: the diagnostics, the worked example): a few copies of 8-byte numbers and their index. An
#: estimate (eight copies), not measured: these tables are the queries', not the runs' rows.
TABLE_BYTES_PER_VALUE = 64


def _values(evaluations) -> int:
    """Per-query values of ``evaluations`` together (what a table of them is made of)."""
    return sum(int(getattr(ev, "per_query", ev).size) for ev in evaluations)


def query_ranking(ev, run, qrels, query_id: str) -> mc.Ranking:
    """The :class:`metrics_core.Ranking` that shows ``query_id`` as ``ev`` ranked it: the
    evaluation's own (:attr:`Evaluation.ranking`), or, for a run evaluated in blocks (no
    Ranking kept), the query's rows ranked alone under the same conventions (ties,
    duplicates and depth are per query: the same ranking).

    ``.ranking(query_id)`` gives its ranked documents, ``.tie_sizes(query_id)`` their tie
    groups (the engine's own).
    """
    if ev.ranking is not None:
        kept = ev.ranking  # a view of the kept ranking (its mapped lists): what this one derives
        # (the tie groups of every query) goes when the page's run ends, not kept with it
        return mc.Ranking(kept.qrels, kept.run, kept.conventions, kept.cutoffs, kept.lists)
    rows = np.flatnonzero(run.query_ids == str(query_id))
    sub = mc.Run(
        run.query_ids[rows], run.doc_ids[rows], run.scores[rows], name=run.name, source=run.source
    )
    return mc.rank(qrels, sub, ev.conventions)


def judgements(qrels, query_id: str) -> pd.DataFrame:
    """The qrels rows of one query (doc_id, relevance)."""
    mask = qrels.query_ids == str(query_id)
    return pd.DataFrame({"doc_id": qrels.doc_ids[mask], "relevance": qrels.relevance[mask]})


def missed_relevant(qrels, ranking: pd.DataFrame, query_id: str, threshold: float) -> pd.DataFrame:
    """Relevant documents (label >= threshold, >= 0) of the query that the ranking lacks."""
    judged = judgements(qrels, query_id)
    rel = judged[(judged["relevance"] >= threshold) & (judged["relevance"] >= 0)]
    out = rel[~rel["doc_id"].isin(set(ranking["doc_id"]))]
    return out.sort_values(["relevance", "doc_id"], ascending=[False, True]).reset_index(drop=True)


def one_query(ev, run, qrels, query_id: str, threshold: float) -> tuple:
    """One query as ``ev`` ranked it, for the Per query page: its ranked documents
    (:meth:`metrics_core.Ranking.ranking`), their tie groups' sizes and the relevant
    documents it did not retrieve (label at least ``threshold``), kept in the session per
    query (:func:`ui.common.cache.remember`)."""

    def build():
        ranked = query_ranking(ev, run, qrels, query_id)
        ranking = ranked.ranking(query_id)
        return (
            ranking,
            ranked.tie_sizes(query_id),
            missed_relevant(qrels, ranking, query_id, threshold),
        )

    rows = (0 if ev.ranking is not None else len(run)) + len(qrels)
    return remember(
        ONE_QUERY,
        (str(query_id), float(threshold)),
        build,
        held=(ev, run, qrels),
        size=16,
        need=rows * ONE_QUERY_BYTES_PER_ROW,
    )


def breakdown(
    evaluations: dict, meta: pd.DataFrame, column: str, ids: set | None = None
) -> pd.DataFrame:
    """Means per group of ``column`` for every run (long: run, group, count, measures), groups
    in reading order (easy, medium, hard for difficulty words, else natural), runs in load order;
    kept in the session for these evaluations and settings."""
    from metrics_core.stats.aggregate import group_means

    def build() -> pd.DataFrame:
        parts = []
        for name, ev in evaluations.items():
            g = group_means(only_queries(ev.per_query, ids), meta, column)
            g.insert(0, "run", name)
            parts.append(g.reset_index())
        long = pd.concat(parts, ignore_index=True)
        long[column] = long[column].astype(str)
        order = {g: i for i, g in enumerate(difficulty_order(long[column].unique()))}
        runs_order = {n: i for i, n in enumerate(evaluations)}
        return long.sort_values(
            [column, "run"],
            key=lambda s: s.map(order) if s.name == column else s.map(runs_order),
            kind="stable",
        ).reset_index(drop=True)

    key = (tuple(evaluations), column, None if ids is None else tuple(sorted(ids)))
    return remember(
        BREAKDOWNS,
        key,
        build,
        held=(*evaluations.values(), meta),
        size=8,
        need=_values(evaluations.values()) * TABLE_BYTES_PER_VALUE,
    )


def only_queries(per_query: pd.DataFrame, ids: set | None) -> pd.DataFrame:
    """The rows of ``ids`` (all rows when ``ids`` is None)."""
    if ids is None:
        return per_query
    return per_query[per_query.index.astype(str).isin(ids)]


def cached_bootstrap(
    per_query: pd.DataFrame, n_resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """:func:`metrics_core.stats.bootstrap.bootstrap_table` of one evaluation's per-query
    values, kept in the session next to them; its need is the leaderboard's statistics'
    (:func:`ui.common.budget.work_need`)."""
    from metrics_core.stats.bootstrap import bootstrap_table

    return remember(
        BOOTSTRAPS,
        (n_resamples, confidence, seed),
        lambda: bootstrap_table(
            per_query, n_resamples=n_resamples, confidence=confidence, seed=seed
        ),
        held=(per_query,),
        size=64,
        need=budget.work_need,  # the statistics
    )


def overview_board(
    evaluations: dict,
    baseline: str,
    measures,
    query_set: str,
    settings: dict,
) -> pd.DataFrame:
    """The Overview's leaderboard of ``evaluations`` (metrics_core's leaderboard: one query set,
    bootstrap CI, corrected tests) with ``settings`` (n_resamples, confidence, seed,
    correction, test, permutations), kept in the session for these very evaluations and
    settings (:func:`ui.common.cache.remember`: a rerun neither recomputes it nor hashes the
    per-query values to find it)."""
    from metrics_core.stats.comparison import leaderboard

    held = tuple(evaluations.values())
    data = (
        id(st.session_state.get(state.QRELS)),
        tuple((name, id(run)) for name, run in (st.session_state.get(state.RUNS) or {}).items()),
    )
    keep_only(BOARDS, lambda key, _held: key[0] == data)  # boards of data no longer loaded go
    key = (
        data,
        tuple(evaluations),
        tuple(measures),
        baseline,
        query_set,
        tuple(sorted(settings.items())),
    )
    return remember(
        BOARDS,
        key,
        lambda: leaderboard(
            list(held),
            baseline,
            list(measures),
            query_set=query_set,
            n_resamples=settings["n_resamples"],
            confidence=settings["confidence"],
            seed=settings["seed"],
            n_permutations=settings["permutations"],
            correction=settings["correction"],
            test=settings["test"],
        ),
        held=held,
        size=4,
        need=budget.work_need,  # with the statistics
    )


def cached_tie_band(
    board: pd.DataFrame, evaluations: dict, bounds: dict, table: str = BANDS
) -> pd.DataFrame:
    """:func:`metrics_core.report.leaderboard_grid.tie_band` of the board, kept in the session for
    the same board, evaluations and bounds (a rerun does not recompute it); the unjudged band is
    the same function on the unjudged bounds (:func:`cached_unjudged_band`)."""
    from metrics_core.report.leaderboard_grid import tie_band

    held = (board, *evaluations.values(), *(bounds.get(n) for n in evaluations))
    return remember(
        table,
        tuple(evaluations),
        lambda: tie_band(board, {n: ev.per_query for n, ev in evaluations.items()}, bounds),
        held=held,
        size=1,
        need=_values(evaluations.values()) * TABLE_BYTES_PER_VALUE,
    )


def cached_unjudged_band(board: pd.DataFrame, evaluations: dict, bounds: dict) -> pd.DataFrame:
    """The board's band over the labellings of the unjudged documents (see
    :func:`cached_tie_band`)."""
    return cached_tie_band(board, evaluations, bounds, UNJUDGED_BANDS)


def reversible(board: pd.DataFrame, unjudged: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The pairs of runs whose order on the board the unjudged documents could reverse
    (:func:`metrics_core.report.leaderboard_grid.reversible_pairs`), kept in the session next
    to the board and its band (inside the gate)."""
    from metrics_core.report.leaderboard_grid import reversible_pairs

    if not len(unjudged):
        return []
    return remember(
        REVERSALS,
        None,
        lambda: reversible_pairs(board, unjudged),
        held=(board, unjudged),
        size=1,
    )


def report_html(
    evaluations: list,
    baseline: str,
    measures: list,
    query_set: str,
    conventions,
    qrels=None,
    runs: dict | None = None,
    lang: str | None = None,
    **settings,
) -> str:
    """The "Download report" HTML: metrics_core's report assembler, with this app's run colours,
    the plotly.js shipped with the plotly package inlined (opens offline) and the words in
    ``lang`` (default the visitor's language); built inside the gate (its statistics, the
    data digests of the loaded files: :func:`ui.common.budget.work_need`)."""
    from metrics_core.report.catalogs import translations
    from metrics_core.report.html import comparison_report, data_digest, plotly_js_source

    lang = lang or current_language()
    with budget.work(budget.work_need() if in_app() else 0):
        tr = translations(lang)
        names = [ev.run_name for ev in evaluations]
        data = {}
        if qrels is not None:
            data["qrels"] = data_digest(qrels)
        for name, run in (runs or {}).items():
            data[plain(tr.gettext(_RUN_LABEL), name=name)] = data_digest(run)
        return comparison_report(
            evaluations,
            baseline,
            measures,
            query_set=query_set,
            conventions=conventions,
            data=data,
            colours=run_colours(list(runs or names)),
            plotly_js=plotly_js_source(),
            gettext=tr.gettext,
            ngettext=tr.ngettext,
            lang=lang,
            **settings,
        )


#: The label of a run's digest in the report's Data table.
_RUN_LABEL = N_("run {name}")


def example_evaluation(labels, k: int, num_relevant: int | None, conventions) -> tuple:
    """The Learn page's worked example: the ranking of ``labels`` (top first) evaluated on its
    measures at ``k`` (:func:`ui.ranking.learn_examples.example_measures`), and its DCG rank by
    rank (:func:`metrics_core.ranking.kernels.dcg_steps`: the engine's arithmetic); kept in
    the session per example."""
    from metrics_core.ranking.kernels import dcg_steps
    from ui.ranking.learn_examples import dcg_frame, example_measures

    def build():
        extra = {"example": int(num_relevant)} if num_relevant else None
        vectors = {"example": [float(x) for x in labels]}
        run, qrels = mc.io.from_relevance_vectors(vectors, num_relevant=extra)
        ev = mc.evaluate(qrels, run, example_measures(int(k)), conventions=conventions)
        return ev, dcg_frame(dcg_steps(labels, int(k), conventions))

    key = (tuple(labels), int(k), num_relevant, conventions)
    return remember(EXAMPLES, key, build, size=8, need=len(labels) * 8 * TABLE_BYTES_PER_VALUE)


def diagnostics(evaluations: dict, k: int, runs: dict) -> pd.DataFrame:
    """The Data page's diagnostics table
    (:func:`metrics_core.report.diagnostics.diagnostics_table`), kept in the session."""
    from metrics_core.report.diagnostics import diagnostics_table

    return remember(
        DIAGNOSTICS,
        (tuple(evaluations), int(k)),
        lambda: diagnostics_table(evaluations, int(k), runs),
        held=(*evaluations.values(), *runs.values()),
        size=4,
        need=_values(evaluations.values()) * TABLE_BYTES_PER_VALUE,
    )


def click_mrr_of(log: pd.DataFrame, rule: str, strict: bool):
    """MRR from the click log's first clicks (:func:`metrics_core.clicks.click_mrr`), kept in
    the session for the log and the rule; InputError for a log it refuses."""
    from metrics_core.clicks import click_mrr

    return remember(
        CLICK_MRR,
        (rule, bool(strict)),
        lambda: click_mrr(log, rule=rule, strict=strict),
        held=(log,),
        size=4,
        need=lambda: int(log.memory_usage(deep=True).sum()) * 4,
    )
