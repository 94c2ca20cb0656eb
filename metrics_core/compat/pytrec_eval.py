"""pytrec_eval's interface on RankLab's engine: change the import, keep the code.

>>> from metrics_core.compat import pytrec_eval
>>> qrel = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
>>> run = {"q1": {"d1": 1.0, "d2": 2.0, "d4": 0.5}}
>>> evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg_cut.10", "P_5"})
>>> evaluator.evaluate(run)
{'q1': {'map': 0.25, 'P_5': 0.2, 'ndcg_cut_10': 0.23981246656813146}}

pytrec_eval wraps trec_eval 9.0.8, so this evaluates under ``compat="trec_eval9"`` (scores
held as float32, trec_eval 9's recall-level rounding): every value equals pytrec_eval's.
Measures are written as pytrec_eval accepts them: families (``"P"``: trec_eval's default
cutoffs), nicknames (``"official"``, ``"all_trec"``, ``"set"``), cutoffs after a dot or an
underscore (``"ndcg_cut.10"``, ``"P_5"``, ``"recall.5,100"``); several spellings of one
family are merged. Results are keyed as trec_eval prints (``ndcg_cut_10``, ``P_5``,
``map_cut_100``, ``iprec_at_recall_0.10``), per query of the run that has judgements, in
trec_eval's measure order.

Where it differs: preference measures and measures with ``name=value`` parameters are
refused (as pytrec_eval fails on them); bad input raises
:class:`~metrics_core.errors.InputError` naming the query and document rather than
pytrec_eval's ``TypeError``.
"""

from __future__ import annotations

import collections
import itertools
import re
from collections.abc import Iterable, Mapping

import numpy as np

from metrics_core.compat.trec_measures import NICKNAMES, TREC_MEASURES, Requested, requested
from metrics_core.errors import InputError
from metrics_core.evaluation import nested_from_columns

__all__ = [
    "RelevanceEvaluator",
    "compute_aggregated_measure",
    "supported_measures",
    "supported_nicknames",
    "parse_qrel",
    "parse_run",
]

#: trec_eval 9 measure families served (pytrec_eval's ``supported_measures``)
supported_measures: frozenset[str] = frozenset(
    m.name for m in TREC_MEASURES if 9 in m.versions and m.ranklab != "-"
)
#: nickname -> families (pytrec_eval's ``supported_nicknames``, ordinary qrels only)
supported_nicknames: dict[str, frozenset[str]] = {k: frozenset(v[9]) for k, v in NICKNAMES.items()}

_MIN_GEO_MEAN = 0.00001  # trec_eval's floor before the logarithm of gm_map and gm_bpref


def _triples(lines: Iterable[str], fields: int, layout: str, value: int, convert):
    """(qid, docid, value) of each line of a qrels or run text: ``fields`` fields, the
    value at index ``value`` converted by ``convert``. A line with another count of fields,
    or a value that is not a number, is one :class:`InputError` naming the line."""
    for number, line in enumerate(lines, start=1):
        parts = line.split()
        if len(parts) != fields:
            raise InputError(
                f"expected {fields} fields ({layout}), found {len(parts)}", line=number
            )
        try:
            yield parts[0], parts[2], convert(parts[value])
        except ValueError:
            raise InputError(f"{parts[value]!r} is not a number ({layout})", line=number) from None


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """Qrels lines ``qid 0 docid relevance`` -> ``{qid: {docid: relevance}}``.

    >>> dict(parse_qrel(["q1 0 d1 1", "q1 0 d2 0"]))
    {'q1': {'d1': 1, 'd2': 0}}
    """
    qrel: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for qid, docid, rel in _triples(f_qrel, 4, "qid 0 docid relevance", 3, int):
        qrel[qid][docid] = rel
    return qrel


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """Run lines ``qid Q0 docid rank score tag`` -> ``{qid: {docid: score}}``.

    >>> dict(parse_run(["q1 Q0 d1 1 2.5 tag"]))
    {'q1': {'d1': 2.5}}
    """
    run: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for qid, docid, score in _triples(f_run, 6, "qid Q0 docid rank score tag", 4, float):
        run[qid][docid] = score
    return run


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """The summary over queries of a measure's per-query values, by its key's prefix:
    ``num_*`` counts add up, ``gm_*`` values (logarithms, as :meth:`RelevanceEvaluator.evaluate`
    gives them) become the geometric mean exp(mean), every other measure is averaged.

    >>> compute_aggregated_measure("map", [0.5, 0.25]), compute_aggregated_measure("num_rel", [3, 4])
    (0.375, 7.0)
    >>> round(compute_aggregated_measure("gm_map", [np.log(0.5), np.log(0.125)]), 6)
    0.25
    """
    data = np.asarray(list(values), dtype=np.float64)
    if measure.startswith("num_"):
        return float(np.sum(data))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(data) / len(data)))
    return float(np.mean(data))


def combine_measures(measures: Iterable[str]) -> list[str]:
    """pytrec_eval's measure spellings -> trec_eval ``-m`` arguments, one per family.

    >>> sorted(combine_measures(["P.5", "P_10", "map", "ndcg_cut.10"]))
    ['P.10,5', 'map', 'ndcg_cut.10']
    """
    families: dict[str, set[str]] = {}
    for measure in measures:
        if measure in supported_nicknames:
            for name in supported_nicknames[measure]:
                families.setdefault(name, set())
        elif measure in supported_measures:
            families.setdefault(measure, set())
        else:
            for base in sorted(supported_measures, key=len, reverse=True):
                m = re.fullmatch(
                    re.escape(base) + r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)", measure
                )
                if m:
                    families.setdefault(base, set()).update(m.group(1).split(","))
                    break
            else:
                raise ValueError(f"unsupported measure {measure}")
    return [
        f"{name}.{','.join(sorted(params))}" if params else name
        for name, params in families.items()
    ]


def columns_from_mapping(mapping: Mapping[str, Mapping[str, float]], kind: str):
    """``{qid: {docid: value}}`` -> a :class:`~metrics_core.Run` (``kind="run"``) or
    :class:`~metrics_core.Qrels`, column by column (no per-pair Python step). Queries with
    an empty mapping stay in a run as answered with nothing (scored, as pytrec_eval does).

    >>> run = columns_from_mapping({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {}}, "run")
    >>> len(run), run.extra_query_ids
    (2, ('q2',))
    """
    import metrics_core as mc

    qids = list(mapping)
    inner = [mapping[q] for q in qids]
    counts = np.fromiter((len(d) for d in inner), dtype=np.int64, count=len(qids))
    total = int(counts.sum())
    docs = list(itertools.chain.from_iterable(d.keys() for d in inner))
    values = np.fromiter(
        itertools.chain.from_iterable(d.values() for d in inner), dtype=np.float64, count=total
    )
    query_ids = (
        np.repeat(np.array(qids, dtype=object), counts) if total else np.array([], dtype=object)
    )
    if kind == "run":
        empty = tuple(str(q) for q, n in zip(qids, counts, strict=True) if n == 0)
        return mc.Run(query_ids, docs, values, source="<run mapping>", extra_query_ids=empty)
    return mc.Qrels(query_ids, docs, values, source="<qrels mapping>")


class RelevanceEvaluator:
    """pytrec_eval's evaluator: qrels and measures fixed once, runs evaluated by
    :meth:`evaluate`.

    Parameters
    ----------
    query_relevance : mapping
        ``{qid: {docid: relevance}}``; queries without judgements are dropped.
    measures : iterable of str
        Families, nicknames or families with cutoffs (see the module text).
    relevance_level : int
        A document is relevant when its label is at least this (trec_eval ``-l``).
    judged_docs_only_flag : bool
        Drop unjudged documents before measuring (trec_eval ``-J``).
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        import metrics_core as mc

        if isinstance(measures, str):
            measures = [measures]
        self._requests: list[Requested] = requested(combine_measures(list(measures)), version=9)
        self._qrels = columns_from_mapping(
            {q: d for q, d in query_relevance.items() if len(d) > 0}, "qrels"
        )
        self._conventions = mc.Conventions(
            compat="trec_eval9",
            relevance_threshold=relevance_level,
            judged_only=bool(judged_docs_only_flag),
        )
        names = [n for r in self._requests for n in r.ranklab if n is not None]
        if any(r.measure.name == "gm_map" for r in self._requests):
            names.append("AP")
        if any(r.measure.name == "gm_bpref" for r in self._requests):
            names.append("Bpref")
        self._names = list(dict.fromkeys(names)) or ["NumRet"]

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{qid: {measure_key: value}}`` for every run query that has judgements.

        The values come from one :func:`metrics_core.evaluate` call; building the nested
        dictionary is the only per-query Python work (the shape pytrec_eval returns).
        """
        if not scores:
            return {}
        import metrics_core as mc

        ev = mc.evaluate(
            self._qrels, columns_from_mapping(scores, "run"), self._names, self._conventions
        )
        keys, columns = self.columns(ev)
        return nested_from_columns(ev.per_query.index, keys, columns)

    def columns(self, ev) -> tuple[list[str], list[np.ndarray]]:
        """pytrec_eval's keys and their per-query values (``ev.per_query``'s order)."""
        frame = ev.per_query
        n = len(frame)
        keys, columns = [], []
        for req in self._requests:
            name = req.measure.name
            if name in ("runid", "relstring"):
                values = [np.zeros(n)]
            elif name == "num_q":
                values = [np.ones(n)]
            elif name in ("gm_map", "gm_bpref"):
                base = frame["AP" if name == "gm_map" else "Bpref"].to_numpy(dtype=np.float64)
                values = [np.log(np.maximum(base, _MIN_GEO_MEAN))]
            elif name == "11pt_avg" and req.params:
                from metrics_core.compat.trec_eval import custom_11pt_avg

                values = [custom_11pt_avg(req, frame)]
            else:
                from metrics_core.ranking.registry import parse_measure

                values = [
                    frame[parse_measure(r).name].to_numpy(dtype=np.float64) for r in req.ranklab
                ]
            one_value = req.measure.kind in ("relstring", "param_double", "param_pair")
            keys += [name] if one_value else list(req.printed)  # pytrec_eval names these plainly
            columns += values
        return keys, columns
