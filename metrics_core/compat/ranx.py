"""ranx's ``Qrels``, ``Run`` and ``evaluate`` on RankLab's engine: change the import.

>>> from metrics_core.compat import ranx
>>> qrels = ranx.Qrels({"q1": {"d1": 2, "d3": 1}, "q2": {"d2": 1}})
>>> run = ranx.Run({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "q2": {"d1": 0.5, "d2": 0.4}}, name="bm25")
>>> round(ranx.evaluate(qrels, run, "ndcg@5"), 4)
0.7906
>>> {m: round(v, 4) for m, v in ranx.evaluate(qrels, run, ["mrr", "precision@1-l2"]).items()}
{'mrr': 0.75, 'precision@1-l2': 0.5}
>>> {q: round(v, 4) for q, v in run.scores["mrr"].items()}
{'q1': 1.0, 'q2': 0.5}

ranx's conventions, reproduced: metric names as ranx writes them (``ndcg@10``,
``map@100``, ``hit_rate@5``, ``ndcg@10-l2``, ``rbp.90``; see
:mod:`metrics_core.ranking.ranx_names`); the qrels and the run must hold the same queries
(``make_comparable=True`` scores the run's missing queries 0 and drops its extra ones);
one metric gives a float, several a dict; ``return_mean=False`` gives each query's values
(queries in sorted order); the values are saved in the run (``run.scores``,
``run.mean_scores``). Equal scores keep the input order, as ranx's sort does for rankings of
up to 15 documents; on longer rankings with equal scores ranx's unstable quicksort orders
them in a way no rule reproduces, and for a run given as a plain dict ranx ranks hashes of
the document ids that change from one Python process to the next: a warning says so. ranx's ``bpref`` is 0 for every
query of a collection holding a query without a relevant document; RankLab gives
trec_eval's bpref, with a warning. ``compare``, ``fuse``, ``normalize``,
``optimize_fusion`` and ``plot`` are refused with one line.
"""

from __future__ import annotations

import warnings as _warnings
from collections import defaultdict as _defaultdict

import numpy as _np

from metrics_core.errors import InputError as _InputError

__all__ = ["Qrels", "Run", "evaluate", "compare", "fuse", "normalize", "optimize_fusion", "plot"]

#: ranx sorts rankings of up to this many documents by insertion (stable): ties keep input order
_STABLE_UP_TO = 15


class _Mapping:
    """``{query: {doc: value}}`` held as ranx holds it, with its readers."""

    def __init__(self, mapping: dict | None = None, name: str | None = None):
        self._data: dict = {
            str(q): {str(d): v for d, v in docs.items()} for q, docs in (mapping or {}).items()
        }
        self.name = name

    @classmethod
    def from_dict(cls, mapping: dict, name: str | None = None):
        return cls(mapping, name=name)

    @classmethod
    def from_df(
        cls,
        df,
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        name: str | None = None,
    ):
        out: dict = _defaultdict(dict)
        for q, d, v in zip(
            df[q_id_col].astype(str), df[doc_id_col].astype(str), df[score_col], strict=True
        ):
            out[q][d] = v
        return cls(dict(out), name=name)

    def to_dict(self) -> dict:
        return {q: dict(docs) for q, docs in self._data.items()}

    def get_query_ids(self) -> list[str]:
        return sorted(self._data)

    def keys(self):
        return self._data.keys()

    def __getitem__(self, query_id):
        return self._data[query_id]

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, query_id) -> bool:
        return query_id in self._data


class Qrels(_Mapping):
    """ranx's ``Qrels``: ``{query: {doc: relevance}}``; ``Qrels.from_file(path)`` reads TREC
    qrels (``qid 0 docid relevance``)."""

    @classmethod
    def from_file(cls, path, kind: str | None = None, name: str | None = None):
        from metrics_core.compat.ir_measures import read_trec_qrels

        if kind not in (None, "trec"):
            raise _InputError(
                f"ranx drop-in: Qrels.from_file(kind={kind!r}) is not offered; give a TREC file "
                "or use Qrels.from_df / metrics_core.read_qrels"
            )
        out: dict = _defaultdict(dict)
        for q in read_trec_qrels(path):
            out[q.query_id][q.doc_id] = q.relevance
        return cls(dict(out), name=name)


class Run(_Mapping):
    """ranx's ``Run``: ``{query: {doc: score}}`` and a name; :func:`evaluate` saves each
    query's values in ``scores`` and the means in ``mean_scores``."""

    def __init__(self, run: dict | None = None, name: str | None = None):
        super().__init__(run, name=name)
        self.scores: dict = _defaultdict(dict)
        self.mean_scores: dict = {}
        self.std_scores: dict = {}

    @classmethod
    def from_file(cls, path, kind: str | None = None, name: str | None = None):
        from metrics_core.compat.ir_measures import read_trec_run

        if kind not in (None, "trec"):
            raise _InputError(
                f"ranx drop-in: Run.from_file(kind={kind!r}) is not offered; give a TREC file "
                "or use Run.from_df / metrics_core.read_run"
            )
        out: dict = _defaultdict(dict)
        for r in read_trec_run(path):
            out[r.query_id][r.doc_id] = r.score
        return cls(dict(out), name=name)

    def make_comparable(self, qrels: Qrels) -> Run:
        """A copy holding exactly the qrels' queries (missing ones with no document)."""
        run = Run({q: self._data.get(q, {}) for q in qrels.keys()}, name=self.name)
        return run


def _columns(data: _Mapping, kind: str):
    from metrics_core.compat.pytrec_eval import columns_from_mapping

    return columns_from_mapping(data._data, kind)


def _warn_unreproducible_ties(run, plain_dict: bool) -> None:
    """Warn when ranx's order of equal scores cannot be reproduced: a ranking longer than 15
    documents holds some (ranx's quicksort), or the run was a plain dict (ranx then ranks
    Python's per-process hashes of the document ids)."""
    import pandas as pd

    frame = pd.DataFrame({"q": _np.asarray(run.query_ids, dtype=object), "s": run.scores})
    sizes = frame.groupby("q", sort=False)["s"].transform("size").to_numpy()
    tied = frame.duplicated(["q", "s"], keep=False).to_numpy()
    if plain_dict and bool(tied.any()):
        _warnings.warn(
            "ranx drop-in: the run holds equal scores and was given as a dict; ranx then orders "
            "them by hashes of the document ids that change from one Python process to the next, "
            "RankLab keeps their input order (as ranx does for a Run of up to 15 documents)",
            stacklevel=3,
        )
    elif bool((tied & (sizes > _STABLE_UP_TO)).any()):
        _warnings.warn(
            "ranx drop-in: a ranking of more than 15 documents holds equal scores; ranx orders them "
            "by an unstable quicksort that no rule reproduces, RankLab keeps their input order "
            "(tie_report=True in metrics_core.evaluate gives each value's range)",
            stacklevel=3,
        )


def evaluate(
    qrels,
    run,
    metrics,
    return_mean: bool = True,
    return_std: bool = False,
    threads: int = 0,
    save_results_in_run: bool = True,
    make_comparable: bool = False,
):
    """ranx's ``evaluate``: one metric -> its mean (a float), several -> ``{metric: mean}``;
    ``return_mean=False``: each query's values (an array, queries in sorted order);
    ``return_std=True``: ``{"mean": ..., "std": ...}`` per metric. ``threads`` is accepted
    and unused (RankLab evaluates every query at once)."""
    import metrics_core as mc

    q = qrels if isinstance(qrels, _Mapping) else Qrels(qrels)
    r = run if isinstance(run, _Mapping) else Run(run)
    r_eval: _Mapping
    if make_comparable:
        r_eval = Run({k: r._data.get(k, {}) for k in q.keys()}, name=r.name)
    else:
        r_eval = r
        if set(q.keys()) != set(r.keys()):
            raise _InputError(
                "Qrels and Run query ids do not match (ranx's rule); pass make_comparable=True to "
                "score the run's missing queries 0 and drop its extra ones"
            )
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if any(n.split("@")[0].split("-l")[0] == "bpref" for n in names):
        _warnings.warn(
            "ranx drop-in: bpref is trec_eval's; ranx's is 0 for every query of a collection that "
            "holds a query without a relevant document",
            stacklevel=2,
        )
    specs = [mc.parse_measure(n) for n in names]
    run_columns = _columns(r_eval, "run")
    _warn_unreproducible_ties(run_columns, plain_dict=not isinstance(run, _Mapping))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # coverage: ranx's rule (same queries) was checked above
        ev = mc.evaluate(
            _columns(q, "qrels"),
            run_columns,
            list(dict.fromkeys(s.name for s in specs)),
            ties="input",
            missing_queries="zero",
        )
    order = sorted(q.keys())
    frame = ev.per_query.reindex(order).fillna(0.0)
    out: dict = {}
    for name, spec in zip(names, specs, strict=True):
        values = frame[spec.name].to_numpy(dtype=_np.float64)
        if isinstance(run, Run) and save_results_in_run:
            run.mean_scores[name] = float(_np.mean(values)) if len(values) else float("nan")
            if return_std:
                run.std_scores[name] = float(_np.std(values))
            run.scores[name] = dict(zip(order, values.tolist(), strict=True))
        if not return_mean:
            out[name] = values
        elif return_std:
            out[name] = {"mean": float(_np.mean(values)), "std": float(_np.std(values))}
        else:
            out[name] = float(_np.mean(values)) if len(values) else float("nan")
    return out[names[0]] if len(names) == 1 else out


def _refused(name: str, instead: str):
    def refuse(*args, **kwargs):
        raise _InputError(f"ranx drop-in: ranx.{name} is not offered; {instead}")

    refuse.__name__ = name
    refuse.__doc__ = f"ranx's ``{name}``: not offered (raises one line: {instead})."
    return refuse


compare = _refused(
    "compare", "metrics_core.compare gives deltas, intervals, paired tests and corrections"
)
fuse = _refused("fuse", "rank fusion is not part of this drop-in")
normalize = _refused("normalize", "score normalisation is not part of this drop-in")
optimize_fusion = _refused("optimize_fusion", "rank fusion is not part of this drop-in")
plot = _refused("plot", "plots are not part of this drop-in")
