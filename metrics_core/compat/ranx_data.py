"""The ranx drop-in's data and evaluation: ranx's ``Qrels`` and ``Run`` (readers, writers, its
order of each query's documents) and ``evaluate``, on RankLab's engine. Users import them
from :mod:`metrics_core.compat.ranx`; the drop-in's fusion
(:mod:`metrics_core.compat.ranx_fusion`) and comparisons
(:mod:`metrics_core.compat.ranx_report`) build on them.
"""

from __future__ import annotations

import json as _json
import warnings as _warnings
from collections import defaultdict as _defaultdict

import numpy as _np

from metrics_core.errors import InputError as _InputError

__all__ = ["Qrels", "Run", "evaluate", "plot"]


def _refuse(what: str, instead: str):
    raise _InputError(f"ranx drop-in: {what} is not offered; {instead}")


def _file_kind(path, kind: str | None) -> str:
    """ranx's file kinds, from the extension unless ``kind`` is given."""
    import os

    if kind is None:
        kind = os.path.splitext(str(path))[1][1:]
        kind = {"txt": "trec", "parq": "parquet"}.get(kind, kind)
    if kind == "lz4":
        _refuse("an lz4 file", "save it as JSON, TREC or Parquet")
    if kind not in ("json", "trec", "gz", "parquet"):
        raise _InputError(
            f"ranx drop-in: {path}: the kind of file {kind!r} is not one of json, trec, gz, "
            "parquet (give kind=...)"
        )
    return kind


def _ranked(mapping: dict, value=float) -> dict:
    """``{query: {doc: value}}`` as ranx's ``create_and_sort`` holds it: queries sorted, each
    query's documents by value descending, equal values where numba's quicksort of the
    given order puts them (every query at once)."""
    from metrics_core.ranking.quicksort import segment_order

    queries = sorted(str(q) for q in mapping)
    by_str = {str(q): docs for q, docs in mapping.items()}
    docs = [[str(d) for d in by_str[q]] for q in queries]
    vals = [[value(v) for v in by_str[q].values()] for q in queries]
    lengths = _np.array([len(d) for d in docs], dtype=_np.int64)
    flat_docs = [d for ds in docs for d in ds]
    flat_vals = [v for vs in vals for v in vs]
    order = segment_order(-_np.asarray(flat_vals, dtype=_np.float64), lengths)
    out: dict = {}
    at = 0
    for q, n in zip(queries, lengths.tolist(), strict=True):
        out[q] = {flat_docs[i]: flat_vals[i] for i in order[at : at + n].tolist()}
        at += n
    return out


class _Mapping:
    """``{query: {doc: value}}`` held as ranx holds it, with its readers and writers."""

    _value = staticmethod(float)

    def __init__(self, mapping: dict | None = None, name: str | None = None):
        self._data: dict = _ranked(mapping, self._value) if mapping else {}
        self.sorted = bool(mapping)
        self.name = name

    # -- ranx's constructors ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: dict, name: str | None = None):
        return cls(d, name=name)

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
        frame = df.sort_values(q_id_col, kind="stable")  # ranx groups the rows by query
        for q, d, v in zip(
            frame[q_id_col].astype(str),
            frame[doc_id_col].astype(str),
            frame[score_col],
            strict=True,
        ):
            out[q][d] = v
        return cls(dict(out), name=name)

    @classmethod
    def from_parquet(
        cls,
        path,
        q_id_col: str = "q_id",
        doc_id_col: str = "doc_id",
        score_col: str = "score",
        pd_kwargs: dict | None = None,
        name: str | None = None,
    ):
        import pandas as pd

        return cls.from_df(
            pd.read_parquet(path, **(pd_kwargs or {})), q_id_col, doc_id_col, score_col, name
        )

    # -- ranx's accessors ---------------------------------------------------------------------
    def keys(self):
        return self._data.keys()

    def get_query_ids(self) -> list[str]:
        return list(self._data)

    def get_doc_ids_and_scores(self) -> list[dict]:
        return [dict(v) for v in self._data.values()]

    def add_score(self, q_id: str, doc_id: str, score) -> None:
        self._data.setdefault(str(q_id), {})[str(doc_id)] = self._value(score)
        self.sorted = False

    def add(self, q_id: str, doc_ids: list, scores: list) -> None:
        self.add_multi([q_id], [doc_ids], [scores])

    def add_multi(self, q_ids: list, doc_ids: list, scores: list) -> None:
        for q, ds, vs in zip(q_ids, doc_ids, scores, strict=True):
            self._data[str(q)] = {str(d): self._value(v) for d, v in zip(ds, vs, strict=True)}
        self.sort()

    def sort(self) -> None:
        """ranx's ``sort``: queries by id, documents by value (numba's quicksort order)."""
        self._data = _ranked(self._data, self._value)
        self.sorted = True

    def to_typed_list(self):
        _refuse("to_typed_list (numba's lists)", "use to_dict or to_dataframe")

    def to_dict(self) -> dict:
        return _defaultdict(dict, {q: dict(docs) for q, docs in self._data.items()})

    def to_dataframe(self):
        import pandas as pd

        rows = [(q, d, v) for q, docs in self._data.items() for d, v in docs.items()]
        return pd.DataFrame(rows, columns=["q_id", "doc_id", "score"])

    @property
    def size(self) -> int:
        return len(self._data)

    def __getitem__(self, q_id):
        return dict(self._data[q_id])

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, q_id) -> bool:
        return q_id in self._data

    def __repr__(self) -> str:
        return repr(self._data)


class Qrels(_Mapping):
    """ranx's ``Qrels``: ``{query: {doc: relevance}}``."""

    _value = staticmethod(int)  # type: ignore[assignment]  # relevance labels are whole numbers

    @property
    def qrels(self) -> dict:
        return self._data

    def set_relevance_level(self, rel_lvl: int = 1) -> None:
        """ranx's: every judgement lowered by ``rel_lvl - 1``."""
        for docs in self._data.values():
            for d in docs:
                docs[d] = docs[d] - (rel_lvl - 1)

    @classmethod
    def from_file(cls, path, kind: str | None = None):
        """TREC qrels (``qid 0 docid relevance``), gzipped TREC, JSON or Parquet."""
        kind = _file_kind(path, kind)
        if kind == "json":
            with open(path, encoding="utf-8") as fh:
                return cls(_json.load(fh))
        if kind == "parquet":
            return cls.from_parquet(path)
        import metrics_core as mc

        qrels = mc.read_qrels(str(path))
        out: dict = _defaultdict(dict)
        for q, d, v in zip(qrels.query_ids, qrels.doc_ids, qrels.relevance, strict=True):
            out[str(q)][str(d)] = int(v)
        return cls(dict(out))

    @classmethod
    def from_ir_datasets(cls, dataset_id: str):
        _refuse("Qrels.from_ir_datasets (a download)", "read the qrels file with Qrels.from_file")

    def save(self, path="qrels.json", kind: str | None = None) -> None:
        """As JSON, TREC qrels or Parquet (ranx's formats)."""
        kind = _file_kind(path, kind)
        if kind == "json":
            with open(path, "w", encoding="utf-8") as fh:
                _json.dump(self.to_dict(), fh, indent=2)
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            lines = [f"{q} 0 {d} {v}" for q, docs in self._data.items() for d, v in docs.items()]
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines))


class Run(_Mapping):
    """ranx's ``Run``: ``{query: {doc: score}}`` and a name; :func:`evaluate` saves each
    query's values in ``scores`` and the means in ``mean_scores``."""

    def __init__(self, run: dict | None = None, name: str | None = None):
        super().__init__(run, name=name)
        self.metadata: dict = {}
        self.scores: dict = _defaultdict(dict)
        self.mean_scores: dict = {}
        self.std_scores: dict = {}

    @property
    def run(self) -> dict:
        return self._data

    @classmethod
    def from_file(cls, path, kind: str | None = None, name: str | None = None):
        """A TREC run (its tag names the run when ``name`` is None), gzipped TREC, JSON or
        Parquet."""
        kind = _file_kind(path, kind)
        if kind == "json":
            with open(path, encoding="utf-8") as fh:
                return cls(_json.load(fh), name=name)
        if kind == "parquet":
            return cls.from_parquet(path, name=name)
        import metrics_core as mc

        run = mc.read_run(str(path))
        out: dict = _defaultdict(dict)
        for q, d, s in zip(run.query_ids, run.doc_ids, run.scores, strict=True):
            out[str(q)][str(d)] = float(s)
        return cls(dict(out), name=name if name is not None else _trec_tag(path))

    @classmethod
    def from_ranxhub(cls, id: str):
        _refuse("Run.from_ranxhub (a download)", "read the run file with Run.from_file")

    def make_comparable(self, qrels: Qrels) -> Run:
        """ranx's: the qrels' missing queries added empty, the others dropped, sorted (in
        place; returns the run)."""
        self._data = {q: self._data.get(q, {}) for q in qrels.keys()}
        self.sort()
        return self

    def save(self, path="run.json", kind: str | None = None) -> None:
        """As JSON, TREC (``qid Q0 doc rank score name``) or Parquet, sorted first."""
        kind = _file_kind(path, kind)
        if not self.sorted:
            self.sort()
        if kind == "json":
            with open(path, "w", encoding="utf-8") as fh:
                _json.dump(self.to_dict(), fh)
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            lines = [
                f"{q} Q0 {d} {rank} {s} {self.name}"
                for q, docs in self._data.items()
                for rank, (d, s) in enumerate(docs.items(), start=1)
            ]
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines))


def _trec_tag(path) -> str | None:
    """The run name of a TREC run file: the last field of its first line (ranx's)."""
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            fields = line.split()
            if len(fields) >= 6:
                return fields[5]
    return None


def _columns(data: _Mapping | dict, kind: str):
    from metrics_core.compat.pytrec_eval import columns_from_mapping

    return columns_from_mapping(data._data if isinstance(data, _Mapping) else data, kind)


def _warn_plain_dict_ties(run) -> None:
    """A run given as a plain dict: ranx ranks Python's per-process hashes of the document
    ids, so equal scores have no reproducible order."""
    import pandas as pd

    frame = pd.DataFrame({"q": _np.asarray(run.query_ids, dtype=object), "s": run.scores})
    if bool(frame.duplicated(["q", "s"], keep=False).any()):
        _warnings.warn(
            "ranx drop-in: the run holds equal scores and was given as a dict; ranx then orders "
            "them by hashes of the document ids that change from one Python process to the next, "
            "RankLab keeps their input order (give a Run to get ranx's order)",
            stacklevel=3,
        )


def per_query(qrels, run, metrics: list[str]) -> dict:
    """Each metric's values per query of ``qrels`` (sorted), the run evaluated in the order
    it holds its documents (a changed run sorted first): ``{metric: array}``."""
    import metrics_core as mc

    if isinstance(run, Run) and not run.sorted:
        run.sort()
    if any(n.split("@")[0].split("-l")[0] == "bpref" for n in metrics):
        _warnings.warn(
            "ranx drop-in: bpref is trec_eval's; ranx's is 0 for every query of a collection that "
            "holds a query without a relevant document",
            stacklevel=3,
        )
    specs = [mc.parse_measure(n) for n in metrics]
    run_columns = _columns(run, "run")
    if not isinstance(run, _Mapping):
        _warn_plain_dict_ties(run_columns)
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # coverage: ranx's rule (same queries) was checked
        ev = mc.evaluate(
            _columns(qrels, "qrels"),
            run_columns,
            list(dict.fromkeys(s.name for s in specs)),
            ties="input",
            missing_queries="zero",
        )
    order = sorted(qrels.keys())
    frame = ev.per_query.reindex(order).fillna(0.0)
    return {
        n: frame[s.name].to_numpy(dtype=_np.float64) for n, s in zip(metrics, specs, strict=True)
    }


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
    q = (
        qrels
        if isinstance(qrels, Qrels)
        else Qrels(qrels.to_dict() if isinstance(qrels, _Mapping) else qrels)
    )
    r = run
    if make_comparable and isinstance(run, Run):
        r = run.make_comparable(q)
    elif make_comparable:
        r = Run({k: dict(run).get(k, {}) for k in q.keys()})
    if set(q.keys()) != set(r.keys()):
        raise _InputError(
            "Qrels and Run query ids do not match (ranx's rule); pass make_comparable=True to "
            "score the run's missing queries 0 and drop its extra ones"
        )
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    values = per_query(q, r, names)
    order = sorted(q.keys())
    out: dict = {}
    for name in names:
        v = values[name]
        if isinstance(run, Run) and save_results_in_run:
            run.mean_scores[name] = float(_np.mean(v)) if len(v) else float("nan")
            if return_std:
                run.std_scores[name] = float(_np.std(v))
            run.scores[name] = dict(zip(order, v.tolist(), strict=True))
        if not return_mean:
            out[name] = v
        elif return_std:
            out[name] = {"mean": float(_np.mean(v)), "std": float(_np.std(v))}
        else:
            out[name] = float(_np.mean(v)) if len(v) else float("nan")
    return out[names[0]] if len(names) == 1 else out


def plot(*args, **kwargs):
    """ranx's ``plot``: not offered (raises one line)."""
    _refuse("ranx.plot", "plots are not part of this drop-in (the RankLab app draws them)")
