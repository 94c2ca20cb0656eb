"""ranx's ``fuse``, ``normalize`` and ``optimize_fusion`` on RankLab's fusion engine (the
ranx drop-in, :mod:`metrics_core.compat.ranx`).

The fused scores are ranx's, bit for bit, for every method and normalisation
(:mod:`metrics_core.fusion.core`; ``tests/fusion/test_ranx_matrix.py``), and the fused
``Run`` holds each query's documents in ranx's order (first met, run after run, then
numba's quicksort of the fused scores), so that evaluating it gives ranx's numbers, ties
included. ``optimize_fusion`` searches ranx's grids (its weights of 0.1 whose floating sum
is exactly 1.0, its ``k``, ``gamma``, ``phi``, ``sigma``, ``w`` and ``n_segments`` steps,
the same keyword arguments), scores each trial with ranx's metric on that order, and keeps
the last of the best scores (``score >= best``), as ranx does; supervised methods are
trained as ranx trains them (on the normalised runs, which its training sorts again).
Where ranx's own answer is an accident of its implementation, a
:class:`~metrics_core.fusion.accidents.FusionOrderWarning` names the method and the queries.
"""

from __future__ import annotations

import numpy as np

from metrics_core.errors import InputError

#: ranx's name of the fused run, by method (its functions' ``name`` defaults)
RUN_NAMES = {
    "combsum": "comb_sum",
    "combmnz": "comb_mnz",
    "combanz": "comb_anz",
    "combmax": "comb_max",
    "combmin": "comb_min",
    "combmed": "comb_med",
    "combgmnz": "comb_gmnz",
    "wsum": "weighted_sum",
    "w_bordafuse": "weighted_bordafuse",
    "w_condorcet": "weighted_condorcet",
}
#: the methods ranx's optimize_fusion searches a grid for, and those it only trains
SEARCHED = ("logn_isr", "gmnz", "mixed", "probfuse", "rbc", "rrf", "slidefuse", "w_bordafuse",
            "w_condorcet", "wmnz", "wsum")  # fmt: skip
TRAINED_ONLY = ("bayesfuse", "mapfuse", "posfuse", "segfuse")


def _norm(norm) -> str:
    from metrics_core.fusion.catalog import norm_name

    return norm_name(norm)


def _check_queries(runs, qrels=None) -> None:
    for i, a in enumerate(runs):
        for j, b in enumerate(runs[i + 1 :], start=i + 1):
            if set(a.keys()) != set(b.keys()):
                raise InputError(f"ranx drop-in: runs {i} and {j} query ids do not match")
        if qrels is not None and set(a.keys()) != set(qrels.keys()):
            raise InputError(f"ranx drop-in: run {i} and the qrels' query ids do not match")


def _as_columns(runs) -> list:
    """Each drop-in run as a RankLab run in the order it holds its documents (a changed,
    unsorted run sorted first, as ranx's evaluation would)."""
    from metrics_core.compat.pytrec_eval import columns_from_mapping
    from metrics_core.compat.ranx_data import Run

    out = []
    for i, run in enumerate(runs):
        r = run if isinstance(run, Run) else Run(run)
        if not r.sorted and not _in_order(r):
            r = Run(r.to_dict(), name=r.name)
        cols = columns_from_mapping(r._data, "run")
        cols.name = r.name if r.name is not None else f"run_{i + 1}"
        out.append(cols)
    return out


def _in_order(run) -> bool:
    return all(
        all(a >= b for a, b in zip(list(d.values()), list(d.values())[1:], strict=False))
        for d in run._data.values()
    )


def _prepared(runs):
    from metrics_core.fusion.prepare import as_runs, prepare_shards

    cols = _as_columns(runs)
    return cols, prepare_shards(as_runs({f"{i}": c for i, c in enumerate(cols)}), ranked=True)


def _to_dropin(fused, queries, name):
    """The fused RankLab run (rows in ranx's order) as a drop-in Run holding every query."""
    from metrics_core.compat.ranx_data import Run

    out: dict = {q: {} for q in sorted(queries)}
    for q, d, s in zip(fused.query_ids, fused.doc_ids, fused.scores.tolist(), strict=True):
        out[str(q)][str(d)] = s
    run = Run(name=name)
    run._data, run.sorted = out, True
    return run


def _method(method: str) -> str:
    from metrics_core.fusion.catalog import method_name

    return method_name(method)


def fuse(runs, norm: str | None = "min-max", method: str = "wsum", params: dict | None = None):
    """ranx's ``fuse``: the runs (the same queries in each) normalised per query and fused.

    ``method``: ranx's names (``sum``, ``mnz``, ``anz``, ``max``, ``min``, ``med``,
    ``gmnz``, ``wsum``, ``wmnz``, ``mixed``, ``rrf``, ``isr``, ``log_isr``, ``logn_isr``,
    ``rbc``, ``bordafuse``, ``w_bordafuse``, ``condorcet``, ``w_condorcet``, ``mapfuse``,
    ``posfuse``, ``probfuse``, ``segfuse``, ``slidefuse``, ``bayesfuse``); ``params``:
    ranx's (``weights``, ``k``, ``gamma``, ``phi``, ``sigma``, ``w``, ``probs``,
    ``log_odds``, ``map_scores``). Returns a drop-in ``Run``."""
    from metrics_core.fusion.accidents import warn_accidents
    from metrics_core.fusion.catalog import resolve_params
    from metrics_core.fusion.core import fuse_prepared

    if len(runs) < 2:
        raise InputError(
            "ranx drop-in: fuse needs at least two runs (ranx: 'Only one run provided')"
        )
    _check_queries(runs)
    name, norm = _method(method), _norm(norm)
    cols, prep = _prepared(runs)
    p = resolve_params(name, dict(params or {}), None, len(runs))
    notes: list = []
    fused = fuse_prepared(prep, name, norm, p, notes=notes, output="ranx")
    warn_accidents(name, notes)
    return _to_dropin(fused, runs[0].keys(), RUN_NAMES.get(name, name))


def normalize(run, norm: str = "min-max"):
    """ranx's ``normalize``: each query's scores normalised (``min-max``,
    ``min-max-inverted``, ``max``, ``sum``, ``zmuv``, ``rank``); the documents keep their
    order (``min-max-inverted`` sorts the run again, as ranx does). ``borda`` normalises
    several runs together: give them to :func:`fuse`."""
    from metrics_core.compat.ranx_data import Run
    from metrics_core.fusion.normalise import normalise
    from metrics_core.fusion.prepare import as_runs, prepare_shards

    norm = _norm(norm)
    if norm == "borda":
        raise InputError(
            "ranx drop-in: normalize(run, 'borda') is not offered: Borda normalises several runs "
            "together (their candidates); use fuse(runs, norm='borda')"
        )
    ordered = run if run.sorted or _in_order(run) else Run(run.to_dict(), name=run.name)
    (cols,) = _as_columns([ordered])
    prep = prepare_shards(as_runs({"a": cols, "b": cols}), 1, ranked=True)[0]
    values = normalise(prep, norm)[prep.run == 0]
    src = prep.src[prep.run == 0]
    flat = [(q, d) for q, docs in ordered._data.items() for d in docs]
    by_pair = {flat[int(s)]: v for s, v in zip(src.tolist(), values.tolist(), strict=True)}
    out = Run(name=run.name)
    out._data = {q: {d: by_pair[(q, d)] for d in docs} for q, docs in run._data.items()}
    out.sorted = False
    if norm == "min-max-inverted":
        out.sort()
    return out


class OptimizationReport:
    """ranx's optimisation report: every configuration tried and its score.

    ``to_table()`` gives the table as text (ranx draws it with ``rich``: the same rows, the
    best marked with ``*`` here instead of in bold green)."""

    LABELS = {"logn_isr": "LogN_ISR", "gmnz": "GMNZ", "mixed": "Mixed", "probfuse": "ProbFuse",
              "rbc": "RBC", "rrf": "RRF", "slidefuse": "SlideFuse",
              "w_bordafuse": "Weighted BordaFuse", "w_condorcet": "Weighted Condorcet",
              "wmnz": "WMNZ", "wsum": "Weighted SUM"}  # fmt: skip
    HYPER = {"logn_isr": "Sigma", "gmnz": "Gamma", "probfuse": "# Segments", "rbc": "phi",
             "rrf": "k", "slidefuse": "w"}  # fmt: skip

    def __init__(self, method, configs, results, metric, rounding_digits=3, show_percentages=False):
        self.method, self.configs, self.results, self.metric = method, configs, results, metric
        self.rounding_digits, self.show_percentages = rounding_digits, show_percentages

    def format_score(self, score) -> str:
        from metrics_core.compat.ranx_report import format_score

        return format_score(score, self.rounding_digits, self.show_percentages)

    def to_table(self) -> str:
        from metrics_core.compat.ranx_report import metric_label

        best = int(np.argmax(self.results)) if len(self.results) else -1
        rows = [
            [str(c) + (" *" if i == best else ""), self.format_score(s)]
            for i, (c, s) in enumerate(zip(self.configs, self.results, strict=True))
        ]
        head = [self.HYPER.get(self.method, "Weights"), metric_label(self.metric)]
        widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
        line = lambda cells: "  ".join(c.center(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
        title = self.LABELS.get(self.method, self.method)
        return "\n".join(
            [title.center(sum(widths) + 2), line(head), "  ".join("-" * w for w in widths)]
            + [line(r) for r in rows]
        )

    def __str__(self) -> str:
        return self.to_table()

    __repr__ = __str__


def _trials(method: str, n_runs: int, kwargs: dict) -> list[dict]:
    from metrics_core.fusion.grids import steps, weight_grid

    if method in ("mixed", "w_bordafuse", "w_condorcet", "wmnz", "wsum"):
        grid = weight_grid(n_runs, kwargs.get("step", 0.1), ranx_exact=True)
        return [{"weights": tuple(np.float64(x) for x in w)} for w in grid]  # ranx's types
    if method == "rrf":
        return [
            {"k": k}
            for k in range(
                kwargs.get("min_k", 10), kwargs.get("max_k", 100) + 1, kwargs.get("step", 10)
            )
        ]
    if method in ("gmnz", "logn_isr", "rbc"):
        p = {"gmnz": "gamma", "logn_isr": "sigma", "rbc": "phi"}[method]
        lo, hi = kwargs.get(f"min_{p}", 0.01), kwargs.get(f"max_{p}", 1.0)
        return [{p: np.float64(v)} for v in steps(lo, hi, kwargs.get("step", 0.01))]
    if method == "slidefuse":
        return [{"w": w} for w in range(kwargs.get("min_w", 1), kwargs.get("max_w", 100) + 1)]
    if method == "probfuse":
        lo, hi = kwargs.get("min_n_segments", 1), kwargs.get("max_n_segments", 100)
        return [{"n_segments": n} for n in range(lo, hi + 1)]
    raise AssertionError(method)


def optimize_fusion(
    qrels,
    runs,
    norm: str | None = "min-max",
    method: str = "wsum",
    metric: str = "ndcg",
    return_optimization_report: bool = False,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    **kwargs,
):
    """ranx's ``optimize_fusion``: the parameters of ``method`` with the best ``metric`` on
    these qrels (ranx's grid; later trials win ties), or, for the methods ranx only trains
    (``bayesfuse``, ``mapfuse``, ``posfuse``, ``segfuse``), their trained estimates. With
    ``return_optimization_report=True``: ``(best_params, OptimizationReport)``. Keyword
    arguments are ranx's (``step``, ``min_k``/``max_k``, ``min_gamma``/``max_gamma``,
    ``min_phi``/``max_phi``, ``min_sigma``/``max_sigma``, ``min_w``/``max_w``,
    ``min_n_segments``/``max_n_segments``; ``show_progress`` is accepted and unused).

    Choosing and scoring on the same queries is optimistic:
    :func:`metrics_core.tune_fusion` scores on held-out queries."""
    import metrics_core as mc
    from metrics_core.compat.pytrec_eval import columns_from_mapping
    from metrics_core.compat.ranx_data import Qrels
    from metrics_core.fusion.accidents import warn_accidents
    from metrics_core.fusion.catalog import resolve_params
    from metrics_core.fusion.core import fuse_prepared
    from metrics_core.fusion.training import train

    kwargs.pop("show_progress", None)
    if method not in SEARCHED + TRAINED_ONLY:
        raise InputError(f"ranx drop-in: {method} does not support optimization (ranx's rule)")
    if return_optimization_report and method in TRAINED_ONLY:
        raise InputError(f"ranx drop-in: {method} does not support optimization report")
    if len(runs) < 2:
        raise InputError("ranx drop-in: optimize_fusion needs at least two runs")
    q = qrels if isinstance(qrels, Qrels) else Qrels(qrels)
    _check_queries(runs, q)
    name, nrm = _method(method), _norm(norm)
    cols, prep = _prepared(runs)
    qcols = columns_from_mapping(q._data, "qrels")
    train_runs = {f"{i}": c for i, c in enumerate(cols)}
    if method in TRAINED_ONLY:
        return train(qcols, train_runs, name, nrm, ranked=True)
    trained: dict = {}
    if method == "slidefuse":
        trained = train(qcols, train_runs, name, nrm, ranked=True)
    configs, results, chosen = [], [], None
    best = 0.0
    notes: list = []
    for trial in _trials(method, len(runs), kwargs):
        params = dict(trial)
        if method == "probfuse":
            params = train(
                qcols, train_runs, name, nrm, n_segments=trial["n_segments"], ranked=True
            )
        p = resolve_params(name, {**trained, **params}, None, len(runs))
        fused = fuse_prepared(
            prep, name, nrm, p, notes=notes, output="ranx",
            sorted_again=method in ("probfuse", "slidefuse"),
        )  # fmt: skip
        ev = mc.evaluate(qcols, fused, [metric_name(metric)], ties="input", missing_queries="zero")
        values = ev.per_query.iloc[:, 0].reindex(sorted(q.keys())).fillna(0.0)
        score = float(np.mean(values.to_numpy(dtype=np.float64)))  # ranx's np.mean
        configs.append(str(next(iter(trial.values()))))
        results.append(np.float64(score))  # ranx reports numpy floats
        if score >= best:
            best, chosen = score, (params if method == "probfuse" else trial)
    if notes:
        warn_accidents(name, [(r, sorted(set(ids))) for r, ids in _merge(notes)])
    out = _best(method, chosen, trained)
    if return_optimization_report:
        report = OptimizationReport(
            method, configs, results, metric, rounding_digits, show_percentages
        )
        return out, report
    return out


def metric_name(metric: str) -> str:
    """A ranx metric name as RankLab's measure (``ndcg@10`` -> ``nDCG@10``)."""
    import metrics_core as mc

    return mc.parse_measure(metric).name


def _merge(notes: list) -> list:
    merged: dict = {}
    for reason, ids in notes:
        merged.setdefault(reason, []).extend(ids)
    return list(merged.items())


def _best(method: str, chosen, trained: dict) -> dict:
    """ranx's answer: ``{"weights": (...)}``, ``{"k": 60}``, ``{"probs": ...}`` ... (the
    initial ``[]`` of ranx when no trial scored at least 0)."""
    if method == "probfuse":
        return {"probs": None if chosen is None else np.array(chosen["probs"])}
    if method == "slidefuse":
        return {"probs": trained["probs"], "w": [] if chosen is None else chosen["w"]}
    key = next(iter(_trials(method, 2, {})[0]))
    value = [] if chosen is None else chosen[key]
    return {key: tuple(value) if key == "weights" else value}


__all__ = ["fuse", "normalize", "optimize_fusion", "OptimizationReport", "RUN_NAMES"]
