"""The Fusion page's computations: the fusion of the chosen runs (or its cross-validated
tuning), each input and the fused run evaluated, the randomization test of the fused run
against each input, and the fused run's download, all through the app's one gate.

:func:`fused` is one build of the session's cache (:func:`ui.common.cache.remember`): computed
once per choice of runs, method and settings (a rerun that only redraws finds it), inside the
memory gate with the need the work takes at its peak (:func:`work_need`, measured by
``bench/fusion_page_memory.py``); the fused run it keeps lies off the heap, in the session's
folder, like the loaded runs (:func:`ui.common.store.put`); a need over what the whole server may hold is refused at
once, in one line that names the command line (:func:`refuse_what_never_fits`).
:func:`fusion_work` is the same work without Streamlit (the benchmark and the tests call it).
"""

from __future__ import annotations

from dataclasses import dataclass

import metrics_core as mc
from metrics_core.errors import N_, InputError
from metrics_core.evaluation import RunValues
from metrics_core.fusion.catalog import EXPLAINED, METHODS, NORMS
from metrics_core.io.writers import run_text
from ui.common import budget, store
from ui.common.cache import remember
from ui.common.i18n import count, current_language

#: The page's results in the session cache (:mod:`ui.common.cache`).
RESULTS = "fusion.results"
#: The measures every run is evaluated on besides the one chosen.
BOARD_MEASURES = ("AP", "nDCG@10")
#: Permutations of the randomization tests (the tuner's and the board's).
PERMUTATIONS = 2000
#: What the page's work takes at its peak above the loaded runs: :data:`FIXED_BYTES` (the
#: evaluations' tables), the randomization tests' permutations (:data:`TEST_BYTES_PER_QUERY`
#: a judged query, in blocks: at most :data:`ui.common.budget.STATS_BYTES_MAX`) and,
#: per input row (the chosen runs' lines together), :data:`BYTES_PER_ROW` to fuse and evaluate,
#: :data:`TUNE_BYTES_PER_ROW` to tune (every grid point fused and scored on each fold's training
#: queries). Measured with ``bench/fusion_page_memory.py`` (under ``flock /work/bench.lock``):
#: two runs of 100,000, 400,000 and 1,000,000 lines (20 and 100 documents a query), RRF and
#: weighted sum, 5,000, 20,000 and 10,000 judged queries: 114-122 MB, 144-160 MB and 337 MB by
#: hand; 112-131 MB, 298-323 MB and 746 MB tuned; the need stated is above each (126, 234,
#: 450 MB by hand; 170, 410, 890 MB tuned). Two runs of 2.5 M lines (1,059 MB in the library
#: alone) need more than a 900 MB server: refused at once.
FIXED_BYTES = 20_000_000
#: The tests' permutations per judged query (2,000 of 8 bytes), as the leaderboard's
#: (:data:`ui.common.budget.STATS_BYTES_PER_QUERY`, for 10,000).
TEST_BYTES_PER_QUERY = 16_000
BYTES_PER_ROW = 180
TUNE_BYTES_PER_ROW = 400

# the catalogue's words, for the page (pages import only ui.*)
__all__ = [
    "BOARD_MEASURES",
    "BYTES_PER_ROW",
    "FIXED_BYTES",
    "EXPLAINED",
    "Fused",
    "METHODS",
    "NORMS",
    "PERMUTATIONS",
    "RESULTS",
    "TUNE_BYTES_PER_ROW",
    "TEST_BYTES_PER_QUERY",
    "fused",
    "fused_text",
    "fusion_work",
    "refuse_what_never_fits",
    "work_need",
]


@dataclass(frozen=True)
class Fused:
    """What the page draws: the fused run, its name on screen, the tuning (None when the
    parameters were set by hand) and the comparison of the fused run with each input."""

    run: mc.Run
    name: str
    tuning: object
    comparison: object


def fusion_work(
    qrels, runs: dict, method, norm, weights, params, tune, k, measure, conventions, name
) -> Fused:
    """The page's work (no Streamlit): ``runs`` (name -> Run) fused by ``method`` with
    ``weights`` and ``params`` (or tuned by ``k``-fold cross-validation on ``measure``), the
    inputs and the fused run evaluated on ``measure``, AP and nDCG@10, and compared
    (randomization test, :data:`PERMUTATIONS`) with each input. ``name``: the fused run's name
    on screen, or a function of the tuning (None for a run fused by hand) that gives it
    (the page names it by its method and inputs in full: ``RRF (bm25 + dense)``)."""
    tuning = None
    if tune:
        tuning = mc.tune_fusion(
            qrels,
            runs,
            method=method,
            norm=norm,
            measure=measure,
            k=int(k),
            n_permutations=PERMUTATIONS,
            conventions=conventions,
        )
        run = tuning.run
    else:
        run = mc.fuse(
            runs,
            method=method,
            norm=norm,
            weights=weights,
            params=params,
            qrels=qrels if METHODS[method].supervised else None,
            name=name(None) if callable(name) else name,
        )
    if tuning is None:
        shown = run.name
    else:
        shown = name(tuning) if callable(name) else name
    measures = [measure, *(m for m in BOARD_MEASURES if m != measure)]
    # the comparison keeps each run's values, not its ranking (kept by the page between
    # reruns: three runs' ranked lists of 100,000 lines held 14.5 MB on the heap)
    evaluations = [
        RunValues.from_evaluation(mc.evaluate(qrels, r, measures, conventions))
        for r in runs.values()
    ]
    evaluations.append(
        RunValues.from_evaluation(mc.evaluate(qrels, run, measures, conventions).renamed(shown))
    )
    comparison = mc.compare(
        evaluations, baseline=list(runs), test="permutation", n_permutations=PERMUTATIONS
    )
    return Fused(run, shown, tuning, comparison)


def work_need(qrels, runs: dict, tune: bool) -> int:
    """Bytes the page's work may take at its peak: :data:`FIXED_BYTES`, the tests'
    permutations over the judged queries, and :data:`BYTES_PER_ROW` (or
    :data:`TUNE_BYTES_PER_ROW`) per line of the chosen runs."""
    rows = sum(len(r) for r in runs.values())
    queries = len(qrels.unique_query_ids())  # kept on the qrels since it was read
    tests = min(queries * TEST_BYTES_PER_QUERY, budget.STATS_BYTES_MAX)
    return FIXED_BYTES + tests + rows * (TUNE_BYTES_PER_ROW if tune else BYTES_PER_ROW)


def refuse_what_never_fits(need: int) -> None:
    """Raise the one-line refusal when ``need`` is more than the whole server may hold
    (:func:`ui.common.budget.server_budget`): waiting for other visitors could not help."""
    limit = budget.server_budget()
    if need > limit:
        raise InputError(
            N_(
                "fusing these runs would need about {need}; this server holds at most {limit} "
                "for everyone"
            ),
            params={
                "need": count(round(need / budget.MB)) + " MB",
                "limit": count(round(limit / budget.MB)) + " MB",
            },
            hint=N_("fuse them with the command line: ranklab fuse RUN RUN --method METHOD"),
        )


def fused(
    qrels, runs: dict, method, norm, weights, params, tune, k, measure, conventions, label
) -> Fused:
    """:func:`fusion_work` of the loaded ``runs``, kept in the session for these very runs
    and settings (:func:`ui.common.cache.remember`), inside the memory gate with its
    :func:`work_need`; InputError when it could never fit (:func:`refuse_what_never_fits`),
    or for a bad setting. ``label(tuning)``: the fused run's name on screen (``tuning`` None
    for a run fused by hand). The fused run kept lies in the session's folder
    (:func:`ui.common.store.put`: the same object, its columns mapped; on the heap, two runs of
    100,000 lines fused held 11.6 MB a visitor while idle)."""
    need = work_need(qrels, runs, tune)
    refuse_what_never_fits(need)
    key = (
        tuple(runs),
        method,
        norm,
        None if weights is None else tuple(weights),
        tuple(sorted(params.items())),
        bool(tune),
        int(k),
        measure,
        repr(conventions.as_dict() if hasattr(conventions, "as_dict") else conventions),
        current_language(),  # the tuned run's name is in the visitor's language
    )

    def build() -> Fused:
        got = fusion_work(
            qrels, runs, method, norm, weights, params, tune, k, measure, conventions, label
        )
        store.put(got.run)  # kept between reruns: off the heap (the tuning holds the same run)
        return got

    return remember(
        RESULTS,
        key,
        build,
        held=(qrels, *runs.values()),
        need=need,
        size=4,
    )


def fused_text(run: mc.Run) -> str:
    """The fused run as TREC lines (the download), made inside the gate when its button is
    clicked: about 60 bytes a line."""
    with budget.work(len(run) * 60):
        return run_text(run, "trec")
