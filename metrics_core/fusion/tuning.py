"""Honest tuning of a fusion: parameters chosen on training queries, scores reported on others.

:func:`tune` grid-searches a method's weights and parameters (ranx's grids, :data:`GRIDS`)
with k-fold cross-validation BY QUERY: the judged queries are split into ``k`` folds (a
seeded permutation, or the user's folds from a column of the query metadata); for each fold
the parameters with the best mean ``measure`` on the OTHER folds' queries are chosen (the
supervised methods are also trained on those queries only), and the fused run with them is
scored on the fold's own, held-out queries. Every query is thus scored by a fusion that never
saw it; the held-out queries of all folds together form the cross-validated fused run, which
is compared with each input run on the same queries (paired tests, Holm's correction over the
inputs). Choosing and reporting on the same queries (ranx's ``optimize_fusion`` followed by
an evaluation) is optimistic; it happens only with ``validation="in-sample"``, and the result
says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.fusion.catalog import METHODS, method_name, norm_name
from metrics_core.fusion.grids import weight_grid

VALIDATIONS = ("cross-validation", "in-sample")
#: the warning every in-sample result carries
IN_SAMPLE_WARNING = N_(
    "Tuned and scored on the same queries (in-sample): the score is optimistic; "
    "cross-validation gives an honest estimate."
)


#: method -> the grid ranx's optimize_fusion searches (a function of the number of runs),
#: read from each method's declaration (:meth:`~metrics_core.fusion.declaration.FusionMethod.grid`)
GRIDS: dict[str, Callable[[int], list[dict]]] = {
    name: spec.grid for name, spec in METHODS.items() if spec.tuned
}


class Tuning:
    """The result of :func:`tune`: per fold the chosen parameters and the scores on its
    held-out queries, the cross-validated fused run, and its comparison with each input.

    Attributes
    ----------
    method, norm, measure, validation : str
    folds : pandas.DataFrame
        One row per fold: ``fold``, ``params`` (the chosen ones), ``n_train``, ``n_test``,
        ``train_score`` (the best mean on the training queries), ``test_score`` (the fused
        run's mean on the held-out queries) and ``score <run>`` for each input run on those
        queries.
    summary : pandas.DataFrame
        One row per input run: ``mean`` of the input and of the fused run on all held-out
        queries, ``delta`` (fused - input), ``p_t`` and ``p_permutation`` (paired t-test,
        paired randomization test), ``p_corrected`` (Holm over the inputs, randomization test),
        ``n_queries``.
    per_query : pandas.DataFrame
        Held-out value of the fused run and of each input, per query.
    run : Run
        The cross-validated fused run (each query fused with the parameters of the fold that
        held it out).
    in_sample : bool
        True when tuned and scored on the same queries (then :attr:`warning` says so).
    """

    def __init__(
        self, *, method, norm, measure, validation, folds, summary, per_query, run, settings
    ):
        self.method, self.norm, self.measure, self.validation = method, norm, measure, validation
        self.folds, self.summary, self.per_query, self.run = folds, summary, per_query, run
        self.settings = settings
        self.in_sample = validation == "in-sample"

    @property
    def warning(self) -> str | None:
        return IN_SAMPLE_WARNING if self.in_sample else None

    def describe(self, gettext=None) -> str:
        """One sentence: how the parameters were chosen and where the scores come from."""
        tr = gettext or (lambda s: s)
        if self.in_sample:
            return tr(IN_SAMPLE_WARNING)
        s = self.settings
        if s.get("fold_column"):
            text = tr(
                N_(
                    "Parameters chosen on the other folds' queries, scores on each fold's held-out "
                    "queries ({k} folds from the query metadata column {column})."
                )
            )
            return text.format(k=s["k"], column=s["fold_column"])
        text = tr(
            N_(
                "Parameters chosen on the other folds' queries, scores on each fold's held-out "
                "queries ({k}-fold cross-validation by query, folds drawn with seed {seed})."
            )
        )
        return text.format(k=s["k"], seed=s["seed"])

    def to_dict(self) -> dict:
        from metrics_core.report import json_safe

        return json_safe(
            {
                "method": self.method,
                "norm": self.norm,
                "measure": self.measure,
                "validation": self.validation,
                "in_sample": self.in_sample,
                "warning": self.warning,
                "description": self.describe(),
                "settings": self.settings,
                "folds": [
                    {**row, "params": _plain(row["params"])}
                    for row in self.folds.to_dict(orient="records")
                ],
                "summary": self.summary.reset_index().to_dict(orient="records"),
            }
        )

    def to_markdown(self, digits: int = 4) -> str:
        from metrics_core.report.cells import markdown_escape

        def table(frame: pd.DataFrame) -> list[str]:
            cols = [str(c) for c in frame.columns]
            lines = [
                "| " + " | ".join(markdown_escape(c) for c in cols) + " |",
                "|" + "---|" * len(cols),
            ]
            for row in frame.itertuples(index=False, name=None):
                cells = [f"{v:.{digits}f}" if isinstance(v, float) else str(v) for v in row]
                lines.append("| " + " | ".join(markdown_escape(c) for c in cells) + " |")
            return lines

        folds = self.folds.copy()
        folds["params"] = [params_text(p) for p in folds["params"]]
        out = [
            markdown_escape(self.describe()),
            "",
            *table(folds),
            "",
            *table(self.summary.reset_index()),
        ]
        return "\n".join(out) + "\n"

    def __repr__(self) -> str:
        return (
            f"Tuning(method={self.method!r}, measure={self.measure!r}, validation={self.validation!r}, "
            f"folds={len(self.folds)})"
        )


def _plain(params: Mapping) -> dict:
    return {
        k: (np.asarray(v).tolist() if isinstance(v, (np.ndarray, list, tuple)) else v)
        for k, v in params.items()
        if k not in ("probs", "log_odds", "map_scores")
    }


def params_text(params: Mapping) -> str:
    parts = []
    for k, v in _plain(params).items():
        if isinstance(v, list):
            v = "(" + ", ".join(f"{x:g}" for x in v) + ")"
        parts.append(f"{k}={v}")
    return ", ".join(parts) or "-"


def _folds(
    queries: list[str], k: int, seed: int, folds, fold_column: str
) -> tuple[list[np.ndarray], list]:
    """Positions of each fold's queries, and the folds' labels."""
    n = len(queries)
    if folds is not None:
        labels = (
            folds
            if isinstance(folds, pd.Series)
            else (folds[fold_column] if fold_column in getattr(folds, "columns", ()) else None)
        )
        if labels is None:
            raise InputError(
                N_("the query metadata has no column {column!r}"),
                field="fold_column",
                params={"column": fold_column},
            )
        labels = labels.copy()
        labels.index = labels.index.astype(str)
        aligned = labels.reindex(queries)
        names = sorted(aligned.dropna().unique().tolist(), key=str)
        if len(names) < 2:
            raise InputError(
                N_("cross-validation needs at least two folds, the column {column!r} has {count}"),
                field="fold_column",
                params={"column": fold_column, "count": len(names)},
            )
        values = aligned.to_numpy()
        return [np.flatnonzero(values == name) for name in names], names
    if k < 2 or k > n:
        raise InputError(
            N_("cross-validation needs 2 to {n} folds (one query each at least), not {k}"),
            field="k",
            option="--folds",
            params={"n": n, "k": k},
        )
    perm = np.random.default_rng(seed).permutation(n)
    return [np.sort(part) for part in np.array_split(perm, k)], list(range(1, k + 1))


def tune(
    qrels,
    runs,
    method: str = "wsum",
    norm: str | None = "min-max",
    measure: str = "nDCG@10",
    *,
    k: int = 5,
    seed: int = 0,
    folds=None,
    fold_column: str = "fold",
    validation: str = "cross-validation",
    grid: Sequence[Mapping] | None = None,
    n_permutations: int = 10000,
    conventions=None,
) -> Tuning:
    """Choose a fusion's parameters by grid search, and score it on queries it was not tuned on.

    Parameters
    ----------
    qrels : judgements (any source :func:`metrics_core.read_qrels` reads); their queries are
        the ones split into folds.
    runs : the input runs (as :func:`metrics_core.fuse`).
    method, norm : as :func:`metrics_core.fuse`.
    measure : str
        What is maximised and reported (one measure name, default ``nDCG@10``).
    k, seed : int
        Number of folds and the seed of the permutation that draws them (default 5, 0).
    folds : pandas.DataFrame or Series, optional
        Query metadata (indexed by query id) whose ``fold_column`` gives each query's fold:
        the user's folds instead of drawn ones; queries without a fold are left out.
    validation : str
        ``"cross-validation"`` (default), or ``"in-sample"``: tune and score on all queries
        at once (optimistic; the result's :attr:`Tuning.warning` says so).
    grid : sequence of dict, optional
        The parameter sets to try (default :data:`GRIDS`, ranx's; a method without
        parameters tries ``[{}]``; ties keep the later set, as ranx does).
    n_permutations : int
        Of the paired randomization test against each input run.

    Returns
    -------
    Tuning
    """
    from metrics_core.data import Run
    from metrics_core.front_door import evaluate
    from metrics_core.fusion.catalog import resolve_params
    from metrics_core.fusion.core import fuse_prepared
    from metrics_core.fusion.prepare import as_runs, prepare_shards
    from metrics_core.fusion.training import train
    from metrics_core.io import read_qrels
    from metrics_core.stats import significance as sig

    method = method_name(method)
    norm = norm_name(norm)
    if validation not in VALIDATIONS:
        raise InputError(
            N_("unknown validation {value!r}"),
            hint=N_("accepted: {choices}"),
            field="validation",
            params={"value": validation, "choices": ", ".join(VALIDATIONS)},
        )
    qrels = read_qrels(qrels)
    run_list = as_runs(runs)
    prep = prepare_shards(run_list)
    queries = qrels.unique_query_ids()
    supervised = METHODS[method].supervised
    trials: list[dict] = (
        [dict(g) for g in grid]
        if grid is not None
        else list(GRIDS.get(method, lambda r: [{}])(len(run_list)))
    )

    def values(run: Run) -> pd.Series:
        ev = evaluate(qrels, run, [measure], conventions, missing_queries="zero")
        col = ev.per_query.iloc[:, 0]
        col.index = col.index.astype(str)
        return col.reindex(queries).fillna(0.0)

    def fused_run(params: Mapping, train_queries) -> Run:
        given = dict(params)
        if supervised:
            extra = {
                t.name: given.pop(t.name) for t in METHODS[method].train_params if t.name in given
            }
            given.update(train(qrels, run_list, method, norm, queries=train_queries, **extra))
        weights = given.pop("weights", None)
        return fuse_prepared(
            prep, method, norm, resolve_params(method, given, weights, len(run_list)), name=method
        )

    parts: list[np.ndarray]
    labels: list
    if validation == "in-sample":
        parts, labels = [np.arange(len(queries))], ["all"]
    else:
        parts, labels = _folds(queries, k, seed, folds, fold_column)
    inputs = {r.name: values(r) for r in run_list}
    scores: np.ndarray | None = None
    if not supervised:
        scores = np.array([values(fused_run(p, None)).to_numpy() for p in trials])
    rows, held = [], []
    chosen_runs = []
    for label, test in zip(labels, parts, strict=True):
        if validation == "in-sample":
            train_idx = test
        else:
            mask = np.ones(len(queries), dtype=bool)
            mask[test] = False
            if folds is not None:  # queries without a fold are in no training set either
                assigned = np.zeros(len(queries), dtype=bool)
                for part in parts:
                    assigned[part] = True
                mask &= assigned
            train_idx = np.flatnonzero(mask)
        train_q = [queries[i] for i in train_idx]
        if supervised:
            per_trial = [values(fused_run(p, train_q)) for p in trials]
            fold_scores = np.array([v.to_numpy() for v in per_trial])
        else:
            assert scores is not None
            fold_scores = scores
        means = fold_scores[:, train_idx].mean(axis=1)
        best = int(len(means) - 1 - np.argmax(means[::-1]))  # the later of equal bests (ranx)
        test_vals = fold_scores[best, test]
        row = {
            "fold": label,
            "params": dict(trials[best]),
            "n_train": len(train_idx),
            "n_test": len(test),
            "train_score": float(means[best]),
            "test_score": float(test_vals.mean()),
        }
        for name, vals in inputs.items():
            row[f"score {name}"] = float(vals.to_numpy()[test].mean())
        rows.append(row)
        held.append(pd.Series(test_vals, index=[queries[i] for i in test]))
        chosen_runs.append((trials[best], train_q, [queries[i] for i in test]))
    fused_vals = pd.concat(held).reindex([q for part in parts for q in (queries[i] for i in part)])
    name = f"{method} (cross-validated)" if validation != "in-sample" else f"{method} (in-sample)"
    per_query = pd.DataFrame(
        {name: fused_vals, **{n: v.reindex(fused_vals.index) for n, v in inputs.items()}}
    )
    per_query.index.name = "query_id"
    summary = []
    for n in inputs:
        b, r = per_query[n].to_numpy(), per_query[name].to_numpy()
        summary.append(
            {
                "run": n,
                "mean": float(b.mean()),
                "mean_fused": float(r.mean()),
                "delta": float((r - b).mean()),
                "p_t": float(sig.paired_t_test(b, r)),
                "p_permutation": float(
                    sig.permutation_test(b, r, n_permutations=n_permutations, seed=seed)
                ),
                "n_queries": len(b),
            }
        )
    summary_frame = pd.DataFrame(summary).set_index("run")
    summary_frame["p_corrected"] = sig.correct_pvalues(
        summary_frame["p_permutation"].to_numpy(), "holm"
    )
    run = _held_out_run(chosen_runs, fused_run, name)
    settings = {
        "k": len(parts),
        "seed": None if folds is not None else seed,
        "fold_column": fold_column if folds is not None else None,
        "trials": len(trials),
        "n_permutations": n_permutations,
        "correction": "holm",
    }
    return Tuning(
        method=method,
        norm=norm,
        measure=measure,
        validation=validation,
        folds=pd.DataFrame(rows),
        summary=summary_frame,
        per_query=per_query,
        run=run,
        settings=settings,
    )


def _held_out_run(chosen, fused_run, name):
    """Each fold's held-out queries from the fusion chosen for that fold, as one run."""
    import pyarrow as pa

    from metrics_core.data import Run

    qs, ds, ss = [], [], []
    for params, train_q, test_q in chosen:
        run = fused_run(params, train_q)
        keep = np.isin(run.query_ids, np.asarray(test_q, dtype=object))
        qs.append(run.query_ids[keep])
        ds.append(run.doc_ids[keep])
        ss.append(run.scores[keep])
    q = np.concatenate(qs) if qs else np.zeros(0, dtype=object)
    order = np.argsort(q, kind="stable")
    return Run(
        pa.array(q[order].tolist() if len(q) < 1 else q[order], pa.string()),
        pa.array(np.concatenate(ds)[order], pa.string()),
        np.concatenate(ss)[order],
        name=name,
        source=f"<{name}>",
    )


__all__ = ["tune", "Tuning", "GRIDS", "VALIDATIONS", "weight_grid", "IN_SAMPLE_WARNING"]
