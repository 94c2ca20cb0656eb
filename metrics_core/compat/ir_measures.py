"""ir_measures' interface on RankLab's engine: change the import, keep the script.

>>> from metrics_core.compat import ir_measures
>>> from metrics_core.compat.ir_measures import nDCG, P, RR, NumRel
>>> qrels = {"q1": {"d1": 1, "d3": 2}, "q2": {"d1": 1}}
>>> run = {"q1": {"d1": 1.0, "d2": 2.0}}
>>> ir_measures.calc_aggregate([nDCG@10, P@1, NumRel], qrels, run)
{nDCG@10: 0.11990623328406573, P@1: 0.0, NumRel: 2.0}
>>> [tuple(m) for m in ir_measures.iter_calc([P@1], qrels, run)]
[('q1', P@1, 0.0), ('q2', P@1, 0.0)]
>>> ir_measures.parse_measure("RBP"), ir_measures.parse_measure("RBP")["p"]
(RBP, 0.8)

What a script calls: ``read_trec_qrels`` / ``read_trec_run`` (a path, a ``.gz`` path, the
text itself or an open file; they yield :class:`Qrel` / :class:`ScoredDoc`),
``parse_measure``, the measure objects (``nDCG@10``, ``P(rel=2)@5``, ``RBP(p=0.9)``; each
with ir_measures' parameters and defaults, printed as ir_measures prints them),
``evaluator(measures, qrels)`` with ``.iter_calc`` / ``.calc_aggregate`` / ``.calc``,
``iter_calc``, ``calc_aggregate``, ``calc`` (:class:`CalcResults`), and the measures' own
``.calc_aggregate(qrels, run)``. Qrels and runs may be dicts of dicts, DataFrames,
iterables of records, or (an addition) paths. Measures may be objects or strings; results
are keyed by what was passed.

No silent difference: each measure is computed as the provider ir_measures 0.4 would pick
for it computes it (its ``DefaultPipeline``):

- pytrec_eval (P, R, AP, AP@k, RR, nDCG, nDCG@k, Rprec, Bpref, Success, IPrec, infAP, the
  Set measures, the counts): trec_eval 9.0.8's numbers (``compat="trec_eval9"``: scores
  held as float32, equal ones by document id descending);
- msmarco (``RR@k``): float64 scores, equal ones by document id ascending;
- judged (``Judged@k``): the judged share of the top min(k, retrieved), equal scores by
  document id ascending;
- gdeval (``ERR@k``, ``nDCG(dcg='exp-log2')@k``): gains 2^label - 1, ERR's grades capped at
  4, equal scores by document id descending, values rounded to 5 decimals as gdeval prints;
- RankLab itself for ``NCG@k`` (an addition: ir_measures has no NCG), on the ranking its
  nDCG sees (pytrec_eval's);
- pyndeval (``alpha_nDCG@k``, ``ERR_IA@k``, ``NRBP``, ``AP_IA``, ``P_IA@k`` ...): ndeval's
  values, the qrels' iteration column as the subtopic (none: one subtopic, a warning), equal
  scores by document id ascending; nNRBP 0 where ndeval gives nan (no relevant subtopic);
  cutoffs above 20 by the same formula (pyndeval refuses them);
- cwl_eval (``RBP(rel=r)``): persistence p = 0.8 unless given, binary gains (label >= r),
  float64 scores sorted by a stable sort (equal ones keep the run's order), the first 1,000
  documents of each query; equal to cwl_eval's values within a few units in the last place
  (cwl_eval sums with a BLAS dot product). Plain ``RBP`` (graded gains, label / highest label
  of the query) is RankLab's: ir_measures has no provider for it; a warning says so.

Every qrels query is evaluated; one the run does not answer scores 0 on every measure
(``NumRel`` included) and counts in the mean; run queries without judgements are ignored;
counts (``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``) sum over queries, the rest are
means. ir_measures' measures that RankLab does not compute (``BPM``, ``INST``, ``SDCG`` ...)
parse, and evaluating them raises one line naming them.
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Iterable as _Iterable
from collections.abc import Iterator as _Iterator
from typing import Any as _Any

import numpy as _np

from metrics_core.compat.ir_measures_io import (
    CalcResults,
    Metric,
    Qrel,
    ScoredDoc,
    read_trec_qrels,
    read_trec_run,
)
from metrics_core.compat.ir_measures_routes import NOT_PROVIDED, binary_qrels, subtopic_qrels
from metrics_core.compat.ir_measures_routes import route as provider_route
from metrics_core.compat.ir_measures_routes import source as peer_source
from metrics_core.errors import InputError as _InputError

__all__ = [
    "Qrel",
    "ScoredDoc",
    "Metric",
    "CalcResults",
    "Measure",
    "BaseMeasure",
    "ParamInfo",
    "MeanAgg",
    "SumAgg",
    "Evaluator",
    "read_trec_qrels",
    "read_trec_run",
    "parse_measure",
    "parse_trec_measure",
    "evaluator",
    "iter_calc",
    "calc_aggregate",
    "calc",
    "AP",
    "MAP",
    "Bpref",
    "BPref",
    "ERR",
    "infAP",
    "IPrec",
    "Judged",
    "nDCG",
    "NDCG",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "Precision",
    "R",
    "Recall",
    "RBP",
    "Rprec",
    "RPrec",
    "RR",
    "MRR",
    "SetAP",
    "SetF",
    "SetP",
    "SetR",
    "SetRelP",
    "Success",
    "Accuracy",
    "alpha_DCG",
    "alpha_nDCG",
    "AP_IA",
    "MAP_IA",
    "BPM",
    "Compat",
    "ERR_IA",
    "nERR_IA",
    "INSQ",
    "INST",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "NRBP",
    "nNRBP",
    "P_IA",
    "SDCG",
    "StRecall",
]


# --------------------------------------------------------------------------- measures


class ParamInfo:
    """A measure parameter: its type, whether it is required, its choices and default."""

    def __init__(
        self, dtype=None, required=False, choices=NOT_PROVIDED, default=NOT_PROVIDED, desc=None
    ):
        self.dtype, self.required, self.choices, self.default, self.desc = (
            dtype,
            required,
            choices,
            default,
            desc,
        )

    def validate(self, value) -> bool:
        if value is NOT_PROVIDED:
            return not self.required
        if self.dtype is not None and not isinstance(value, self.dtype):
            return self.dtype is float and isinstance(value, int) and not isinstance(value, bool)
        return self.choices is NOT_PROVIDED or value in self.choices


class MeanAgg:
    """Mean of the values added (NaN when none)."""

    def __init__(self, default=float("nan")):
        self.sum, self.count, self.default = 0.0, 0, default

    def add(self, value) -> None:
        self.sum += value
        self.count += 1

    def result(self):
        return self.sum / self.count if self.count else self.default


class SumAgg:
    """Sum of the values added."""

    def __init__(self):
        self.sum = 0

    def add(self, value) -> None:
        self.sum += value

    def result(self):
        return self.sum


class Measure:
    """An ir_measures measure: a name and parameters, ``measure@cutoff`` and
    ``measure(param=value)`` make new ones; printed without the parameters left at their
    default (``RBP(p=0.8)`` prints ``RBP``); equal when printed alike."""

    NAME: str = ""
    __name__: str = ""
    AT_PARAM = "cutoff"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {}
    DEFAULT = 0.0
    AGG = "mean"

    def __init__(self, **params):
        self.params = params

    def validate_params(self) -> None:
        unknown = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise _InputError(
                f"{self.NAME}: unsupported parameter(s) {', '.join(unknown)}; accepted: "
                f"{', '.join(self.SUPPORTED_PARAMS) or 'none'}"
            )
        for name, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(name, NOT_PROVIDED)
            if not info.validate(value):
                shown = "missing" if value is NOT_PROVIDED else repr(value)
                raise _InputError(f"{self.NAME}: invalid parameter {name}={shown}")

    def __call__(self, **kwargs) -> Measure:
        return type(self)(**{**self.params, **kwargs})

    def __matmul__(self, at) -> Measure:
        return self(**{self.AT_PARAM: at})

    def __getitem__(self, key):
        return self.params.get(key, self.SUPPORTED_PARAMS[key].default)

    def __repr__(self) -> str:
        def shown(v):
            if isinstance(v, dict):
                return "{" + ",".join(f"{k}:{x}" for k, x in sorted(v.items()) if k != x) + "}"
            return repr(v)

        text = self.NAME
        params = ",".join(
            f"{k}={shown(v)}"
            for k, v in self.params.items()
            if k != self.AT_PARAM and v != self.SUPPORTED_PARAMS[k].default
        )
        if params:
            text = f"{text}({params})"
        if self.AT_PARAM in self.params:
            text = f"{text}@{self.params[self.AT_PARAM]}"
        return text

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, Measure) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def aggregator(self):
        return SumAgg() if self.AGG == "sum" else MeanAgg()

    def iter_calc(self, qrels, run) -> _Iterator[Metric]:
        return iter_calc([self], qrels, run)

    def calc_aggregate(self, qrels, run):
        return calc_aggregate([self], qrels, run)[self]

    def calc(self, qrels, run) -> CalcResults:
        agg, per_query = calc([self], qrels, run)
        return CalcResults(agg[self], per_query)

    def evaluator(self, qrels) -> Evaluator:
        return evaluator([self], qrels)


BaseMeasure = Measure

_REGISTRY: dict[str, Measure] = {}


def _define(
    name: str, params: dict, *, aliases=(), at="cutoff", agg="mean", offered=True
) -> Measure:
    cls = type(
        f"_{name}",
        (Measure,),
        {
            "NAME": name,
            "__name__": name,
            "AT_PARAM": at,
            "SUPPORTED_PARAMS": params,
            "AGG": agg,
            "OFFERED": offered,
        },
    )
    obj = cls()
    for n in (name, *aliases):
        _REGISTRY[n] = obj
    return obj


def _p(dtype=None, default=NOT_PROVIDED, required=False, choices=NOT_PROVIDED) -> ParamInfo:
    return ParamInfo(dtype=dtype, default=default, required=required, choices=choices)


def _cut(required=False) -> ParamInfo:
    return _p(int, required=required)


_REL, _JO = _p(int, 1), _p(bool, False)
AP = _define("AP", {"cutoff": _cut(), "rel": _REL, "judged_only": _JO}, aliases=("MAP",))
MAP = AP
Bpref = _define("Bpref", {"rel": _REL}, aliases=("BPref",))
BPref = Bpref
ERR = _define("ERR", {"cutoff": _cut()})
infAP = _define("infAP", {"rel": _REL})
IPrec = _define(
    "IPrec", {"recall": _p(float, required=True), "rel": _REL, "judged_only": _JO}, at="recall"
)
Judged = _define("Judged", {"cutoff": _cut()})
nDCG = _define(
    "nDCG",
    {
        "cutoff": _cut(),
        "dcg": _p(str, "log2", choices=["log2", "exp-log2"]),
        "gains": _p(dict),
        "judged_only": _JO,
    },
    aliases=("NDCG",),
)
NDCG = nDCG
# an addition, not in __all__ (ir_measures has no NCG): RankLab's, on the ranking nDCG sees
NCG = _define("NCG", {"cutoff": _cut()})
NumQ = _define("NumQ", {}, agg="sum")
NumRel = _define("NumRel", {"rel": _REL}, agg="sum")
NumRet = _define("NumRet", {"rel": _p(int)}, agg="sum")
NumRelRet = NumRet(rel=1)
_REGISTRY["NumRelRet"] = NumRelRet
P = _define("P", {"cutoff": _cut(True), "rel": _REL, "judged_only": _JO}, aliases=("Precision",))
Precision = P
R = _define("R", {"cutoff": _cut(True), "rel": _REL, "judged_only": _JO}, aliases=("Recall",))
Recall = R
RBP = _define("RBP", {"cutoff": _cut(), "p": _p(float, 0.8), "rel": _p(int)})
Rprec = _define("Rprec", {"rel": _REL, "judged_only": _JO}, aliases=("RPrec",))
RPrec = Rprec
RR = _define("RR", {"cutoff": _cut(), "rel": _REL, "judged_only": _JO}, aliases=("MRR",))
MRR = RR
SetAP = _define("SetAP", {"rel": _REL, "judged_only": _JO})
SetF = _define("SetF", {"rel": _REL, "beta": _p(float, 1.0), "judged_only": _JO})
SetP = _define("SetP", {"rel": _REL, "relative": _p(bool, False), "judged_only": _JO})
SetRelP = SetP(relative=True)
_REGISTRY["SetRelP"] = SetRelP
SetR = _define("SetR", {"rel": _REL})
Success = _define("Success", {"cutoff": _cut(True), "rel": _REL, "judged_only": _JO})

# ir_measures' diversity measures (its pyndeval provider); offered=False: those RankLab does
# not compute (they parse, evaluating them is refused)
_ALPHA = {"cutoff": _cut(), "rel": _REL, "alpha": _p(float, 0.5), "judged_only": _JO}
_CWL = {"T": _p(float, 1.0), "min_rel": _p(int, 0), "max_rel": _p(int, required=True)}
Accuracy = _define("Accuracy", {"cutoff": _cut(), "rel": _REL}, offered=False)
alpha_DCG = _define("alpha_DCG", _ALPHA, aliases=("α_DCG",))
alpha_nDCG = _define("alpha_nDCG", _ALPHA, aliases=("α_nDCG",))
AP_IA = _define("AP_IA", {"rel": _REL, "judged_only": _JO}, aliases=("MAP_IA",))
MAP_IA = AP_IA
BPM = _define("BPM", {"cutoff": _cut(True), **_CWL}, offered=False)
Compat = _define("Compat", {"p": _p(float, 0.95), "normalize": _p(bool, True)}, offered=False)
ERR_IA = _define("ERR_IA", {"cutoff": _cut(), "rel": _REL, "judged_only": _JO})
nERR_IA = _define("nERR_IA", {"cutoff": _cut(), "rel": _REL, "judged_only": _JO})
INSQ = _define("INSQ", _CWL, offered=False)
INST = _define("INST", _CWL, offered=False)
NERR8 = _define(
    "NERR8",
    {"cutoff": _cut(True), "min_rel": _p(int, 0), "max_rel": _p(int, required=True)},
    offered=False,
)
NERR9 = _define(
    "NERR9",
    {"cutoff": _cut(True), "min_rel": _p(int, 0), "max_rel": _p(int, required=True)},
    offered=False,
)
NERR10 = _define(
    "NERR10",
    {"p": _p(float, 0.9), "min_rel": _p(int, 0), "max_rel": _p(int, required=True)},
    offered=False,
)
NERR11 = _define("NERR11", _CWL, offered=False)
NRBP = _define("NRBP", {"rel": _REL, "alpha": _p(float, 0.5), "beta": _p(float, 0.5)})
nNRBP = _define("nNRBP", {"rel": _REL, "alpha": _p(float, 0.5), "beta": _p(float, 0.5)})
P_IA = _define("P_IA", {"cutoff": _cut(), "rel": _REL, "judged_only": _JO})
SDCG = _define(
    "SDCG",
    {
        "cutoff": _cut(True),
        "dcg": _p(str, "log2"),
        "min_rel": _p(int, 0),
        "max_rel": _p(int, required=True),
    },
    offered=False,
)
StRecall = _define("StRecall", {"cutoff": _cut(), "rel": _REL})


def _value(node):
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        return -node.operand.value
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True)}
    raise ValueError("problem parsing measure: values must be str, float, int, bool or dict")


def parse_measure(measure) -> Measure:
    """The measure object of ir_measures' syntax ``Name(param=value, ...)@at``.

    ``ValueError`` for text that is not that syntax, ``NameError`` for a name ir_measures
    does not define (as ir_measures raises). A measure object is returned as it is; another
    package's measure object is read through its text.

    >>> parse_measure("nDCG(dcg='exp-log2')@10"), parse_measure("RBP(p=0.8)"), parse_measure("MRR@10")
    (nDCG(dcg='exp-log2')@10, RBP, RR@10)
    """
    import ast

    if isinstance(measure, Measure):
        return measure
    text = str(measure)
    try:
        body = ast.parse(text.strip()).body
    except SyntaxError as exc:
        raise ValueError(
            f"problem parsing measure {text!r}; must be in format Measure(k1=v1, k2=v2)@c"
        ) from exc
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        raise ValueError(
            f"problem parsing measure {text!r}; must be in format Measure(k1=v1, k2=v2)@c"
        )
    node = body[0].value
    at = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at, node = _value(node.right), node.left
    args = {}
    if isinstance(node, ast.Call):
        if node.args:
            raise ValueError(f"problem parsing measure {text!r}: arguments must be named")
        args = {kw.arg: _value(kw.value) for kw in node.keywords}
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError(f"problem parsing measure {text!r}: unexpected expression")
    if node.id not in _REGISTRY:
        raise NameError(f"measure not found: {node.id}")
    base = _REGISTRY[node.id]
    if at is not None:
        args[base.AT_PARAM] = at
    return type(base)(**{**base.params, **args})


def parse_trec_measure(measure: str) -> list[Measure]:
    """ir_measures objects of a trec_eval name (``ndcg_cut.10,20``, ``P_5``, ``map``),
    through RankLab's trec_eval table.

    >>> parse_trec_measure("ndcg_cut.10,20"), parse_trec_measure("map")
    ([nDCG@10, nDCG@20], [AP])
    """
    from metrics_core.compat.trec_measures import requested
    from metrics_core.ranking.registry import parse_measure as ranklab_parse

    out: list[Measure] = []
    for req in requested(
        [
            str(measure).replace("_", ".", 1)
            if "." not in str(measure) and str(measure).split("_")[-1].isdigit()
            else str(measure)
        ],
        version=9,
    ):
        for name in req.ranklab:
            if name is None:
                continue
            spec = ranklab_parse(name)
            base = {
                "AP": AP,
                "P": P,
                "R": R,
                "nDCG": nDCG,
                "RR": RR,
                "Success": Success,
                "IPrec": IPrec,
                "Rprec": Rprec,
                "Bpref": Bpref,
                "NumQ": NumQ,
                "NumRet": NumRet,
                "NumRel": NumRel,
                "NumRelRet": NumRelRet,
                "infAP": infAP,
                "SetAP": SetAP,
                "SetRelP": SetRelP,
            }.get(spec.family)
            if base is None:
                raise NameError(f"trec_eval measure {measure} has no ir_measures equivalent")
            out.append(base if spec.cutoff is None else base @ spec.cutoff)
    return out


class Evaluator:
    """Measures and qrels fixed once (qrels read once); runs evaluated by :meth:`iter_calc`,
    :meth:`calc_aggregate` and :meth:`calc`."""

    def __init__(self, measures: _Iterable, qrels) -> None:
        import metrics_core as mc

        self.measures = list(measures)
        self._objects = [parse_measure(m) for m in self.measures]
        self._routes = [provider_route(m) for m in self._objects]
        source = peer_source(qrels, "qrels")
        self._source = source
        self._qrels = source if isinstance(source, mc.Qrels) else mc.read_qrels(source)
        self._binary: dict[int, _Any] = {}
        self._subtopics: _Any = None

    def _subtopic_qrels(self):
        """The qrels with their subtopics (the iteration column), read once."""
        if self._subtopics is None:
            self._subtopics = subtopic_qrels(self._source)
        return self._subtopics

    def _columns(self, run) -> tuple[list[str], list[_np.ndarray], list[_np.ndarray]]:
        """Query ids, each measure's per-query values, and the order in which ir_measures'
        provider yields the queries (its means add in that order)."""
        import pandas as pd

        import metrics_core as mc

        source = peer_source(run, "run")
        r = source if isinstance(source, mc.Run) else mc.read_run(source)
        groups: dict[tuple, list[str]] = {}
        for route in self._routes:
            groups.setdefault(route.group, [])
            if route.name not in groups[route.group]:
                groups[route.group].append(route.name)
        frames, index = {}, None
        if any(group[2] for group in groups):
            self._subtopic_qrels()  # read here: its warning (no subtopics) is the user's
        with _warnings.catch_warnings():
            _warnings.simplefilter(
                "ignore"
            )  # coverage: ir_measures' missing-query rule applies below
            for group, names in groups.items():
                conventions, threshold, subtopics = group
                q = self._subtopic_qrels() if subtopics else self._qrels
                if threshold is not None:
                    q = self._binary.setdefault(threshold, binary_qrels(self._qrels, threshold))
                ev = mc.evaluate(q, r, names, missing_queries="zero", **dict(conventions))
                frame = ev.per_query
                unanswered = frame.index.isin(list(ev.diagnostics.get("missing_queries") or ()))
                if index is None:
                    index = frame.index
                frames[group] = (frame.reindex(index), _np.asarray(unanswered, dtype=bool))
        assert index is not None
        qids = [str(q) for q in index]
        # providers yield the run's queries in the run's order (gdeval: numeric topic order)
        position = pd.Index(pd.unique(_np.asarray(r.query_ids, dtype=object))).get_indexer(index)
        position = _np.where(position < 0, len(position) + _np.arange(len(position)), position)
        run_order = _np.argsort(position, kind="stable")
        try:
            topic_order = _np.argsort(_np.array([int(q) for q in qids]), kind="stable")
        except ValueError:
            topic_order = run_order
        columns, orders = [], []
        for route in self._routes:
            frame, unanswered = frames[route.group]
            values = frame[route.name].to_numpy(dtype=_np.float64).copy()
            if route.places is not None:
                values = _np.round(values, route.places)
            values[unanswered] = 0.0
            columns.append(values)
            orders.append(topic_order if route.places is not None else run_order)
        return qids, columns, orders

    def iter_calc(self, run) -> _Iterator[Metric]:
        """``Metric(query_id, measure, value)`` for every qrels query and measure (query by
        query, measures in the order given)."""
        qids, columns, _ = self._columns(run)
        if not columns:
            return
        lists = [c.tolist() for c in columns]
        for row, qid in enumerate(qids):
            for item, values in zip(self.measures, lists, strict=True):
                yield Metric(qid, item, values[row])

    def _aggregate(self, i: int, values: _np.ndarray, order: _np.ndarray) -> float:
        """Sum (counts) or mean, added one value after the other in the provider's order,
        as ir_measures' aggregators add (so the last bit agrees too)."""
        if not len(values):
            return 0.0 if self._objects[i].AGG == "sum" else float("nan")
        total = float(_np.cumsum(values[order])[-1])
        return total if self._objects[i].AGG == "sum" else total / len(values)

    def calc_aggregate(self, run) -> dict:
        """``{measure: value}``: means over every qrels query (counts: sums)."""
        _, columns, orders = self._columns(run)
        return {
            item: self._aggregate(i, c, o)
            for i, (item, c, o) in enumerate(zip(self.measures, columns, orders, strict=True))
        }

    def calc(self, run) -> CalcResults:
        """:class:`CalcResults`: the aggregates and the list of per-query metrics."""
        qids, columns, orders = self._columns(run)
        agg = {
            item: self._aggregate(i, c, o)
            for i, (item, c, o) in enumerate(zip(self.measures, columns, orders, strict=True))
        }
        lists = [c.tolist() for c in columns]
        per_query = [
            Metric(qid, item, values[row])
            for row, qid in enumerate(qids)
            for item, values in zip(self.measures, lists, strict=True)
        ]
        return CalcResults(agg, per_query)


def evaluator(measures: _Iterable, qrels) -> Evaluator:
    """An :class:`Evaluator` of ``measures`` against ``qrels`` (ir_measures' ``evaluator``)."""
    return Evaluator(measures, qrels)


def iter_calc(measures: _Iterable, qrels, run) -> _Iterator[Metric]:
    """Per-query values: ``Metric(query_id, measure, value)`` for every qrels query."""
    return Evaluator(measures, qrels).iter_calc(run)


def calc_aggregate(measures: _Iterable, qrels, run) -> dict:
    """Summary of each measure over every qrels query: ``{measure: value}``."""
    return Evaluator(measures, qrels).calc_aggregate(run)


def calc(measures: _Iterable, qrels, run) -> CalcResults:
    """``(aggregated, per_query)``: :func:`calc_aggregate` and the list of
    :class:`Metric`."""
    return Evaluator(measures, qrels).calc(run)
