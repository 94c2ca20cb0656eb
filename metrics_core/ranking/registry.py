"""Measure names: the parser and the registry.

Names follow ir_measures' syntax, which IR people already write: ``P@5``, ``nDCG@10``,
``AP``, ``RR@10``, ``IPrec@0.1``; parameters in parentheses, ``P(rel=2)@5``,
``nDCG(gain=exp)@10``, ``nDCG(discount=jarvelin)@6``. trec_eval's own names are accepted
too (``map``, ``ndcg_cut_10``, ``P_5``, ``recip_rank`` ...) and printed in the canonical
form. Unknown names or parameters are an :class:`~metrics_core.errors.InputError` that
lists what is accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from metrics_core.errors import InputError


@dataclass(frozen=True)
class MeasureDef:
    """A measure family in the registry."""

    name: str
    description: str
    cutoff: str  # "none", "optional", "required", "fraction"
    params: tuple[str, ...] = ()
    aggregate: str = "mean"  # "mean", "sum", "gmean", "nanmean"
    integer: bool = False
    formula: str = ""


# Parameter -> allowed values (None: a number).
PARAMS: dict[str, tuple | None] = {
    "rel": None,
    "denom": ("k", "retrieved"),
    "norm": ("num_rel", "min_rel_k", "rel_retrieved"),
    "gain": ("linear", "exp"),
    "discount": ("log2", "jarvelin"),
    "ideal": ("qrels", "retrieved"),
    "miss": ("zero", "k_plus_1"),
    "rounding": ("nearest", "trec9"),
}

# Parameters that no convention sets: their defaults.
PARAM_DEFAULTS = {"rounding": "nearest"}

# Parameter -> the Conventions field that gives its default.
PARAM_CONVENTION = {"rel": "relevance_threshold", "denom": "p_denominator", "norm": "ap_normalizer",
                    "gain": "gain", "discount": "discount", "ideal": "ideal", "miss": "rr_miss"}

_DEFS = [
    MeasureDef("P", "precision of the top k (all retrieved without @k)", "optional", ("rel", "denom"),
               formula=r"P@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{k}"),
    MeasureDef("R", "recall of the top k (all retrieved without @k)", "optional", ("rel",),
               formula=r"R@k = \frac{|\mathrm{rel} \cap \mathrm{top}_k|}{|\mathrm{rel}|}"),
    MeasureDef("F1", "harmonic mean of P@k and R@k", "optional", ("rel", "denom"),
               formula=r"F_1@k = \frac{2\,P@k\,R@k}{P@k + R@k}"),
    MeasureDef("RR", "reciprocal rank of the first relevant document", "optional", ("rel", "miss"),
               formula=r"RR = \frac{1}{\mathrm{rank}_1}"),
    MeasureDef("AP", "average precision", "optional", ("rel", "norm"),
               formula=r"AP@k = \frac{1}{N} \sum_{i \le k} P@i \cdot \mathrm{rel}_i"),
    MeasureDef("GMAP", "average precision, geometric mean over queries (trec_eval gm_map)", "none",
               ("rel", "norm"), aggregate="gmean",
               formula=r"GMAP = \exp\Big(\frac{1}{|Q|}\sum_q \ln \max(AP_q, 10^{-5})\Big)"),
    MeasureDef("nDCG", "normalised discounted cumulative gain", "optional", ("gain", "discount", "ideal"),
               formula=r"nDCG@k = \frac{DCG@k}{IDCG@k},\; DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}"),
    MeasureDef("DCG", "discounted cumulative gain", "optional", ("gain", "discount"),
               formula=r"DCG@k = \sum_{i \le k} \frac{g(\mathrm{rel}_i)}{\log_2(i+1)}"),
    MeasureDef("Rprec", "precision at rank R (R = relevant documents of the query)", "none", ("rel",),
               formula=r"Rprec = \frac{|\mathrm{rel} \cap \mathrm{top}_R|}{R}"),
    MeasureDef("Bpref", "binary preference (trec_eval bpref)", "none", ("rel",),
               formula=r"bpref = \frac{1}{R}\sum_{r} \Big(1 - \frac{\min(n_{r}, R)}{\min(N, R)}\Big)"),
    MeasureDef("Success", "1 if a relevant document is in the top k", "optional", ("rel",),
               formula=r"Success@k = [\mathrm{rank}_1 \le k]"),
    MeasureDef("IPrec", "interpolated precision at a recall level", "fraction", ("rel", "rounding"),
               formula=r"IPrec@r = \max_{i:\,R@i \ge r} P@i"),
    MeasureDef("Judged", "fraction of the top k that is judged", "required", (),
               formula=r"Judged@k = \frac{|\mathrm{judged} \cap \mathrm{top}_k|}{k}"),
    MeasureDef("Hits", "number of relevant documents in the top k (seed 000's hits_in_top_k)",
               "optional", ("rel",), formula=r"Hits@k = |\mathrm{rel} \cap \mathrm{top}_k|"),
    MeasureDef("FirstRel", "rank of the first relevant document (NaN when none; mean over queries that have one)",
               "none", ("rel",), aggregate="nanmean", formula=r"\mathrm{rank}_1"),
    MeasureDef("NumQ", "number of queries evaluated", "none", (), aggregate="sum", integer=True),
    MeasureDef("NumRet", "number of documents retrieved", "none", (), aggregate="sum", integer=True),
    MeasureDef("NumRel", "number of relevant documents in the qrels", "none", ("rel",), aggregate="sum",
               integer=True),
    MeasureDef("NumRelRet", "number of relevant documents retrieved", "none", ("rel",), aggregate="sum",
               integer=True),
]
REGISTRY: dict[str, MeasureDef] = {d.name: d for d in _DEFS}

# Aliases (lower case) -> canonical family; trec_eval names with suffixes handled below.
_ALIASES = {
    "p": "P", "precision": "P", "r": "R", "recall": "R", "f1": "F1", "f": "F1",
    "rr": "RR", "mrr": "RR", "recip_rank": "RR", "ap": "AP", "map": "AP", "gmap": "GMAP", "gm_map": "GMAP",
    "ndcg": "nDCG", "dcg": "DCG", "rprec": "Rprec", "r-prec": "Rprec", "bpref": "Bpref",
    "success": "Success", "iprec": "IPrec", "judged": "Judged", "hits": "Hits",
    "firstrel": "FirstRel", "first_relevant_position": "FirstRel", "numq": "NumQ", "num_q": "NumQ",
    "numret": "NumRet", "num_ret": "NumRet", "numrel": "NumRel", "num_rel": "NumRel",
    "numrelret": "NumRelRet", "num_rel_ret": "NumRelRet",
}
# trec_eval names with a cutoff suffix: P_5, recall_10, ndcg_cut_10, map_cut_10, success_1,
# iprec_at_recall_0.10
_TREC_SUFFIX = [("iprec_at_recall_", "IPrec"), ("ndcg_cut_", "nDCG"), ("map_cut_", "AP"),
                ("recall_", "R"), ("success_", "Success"), ("p_", "P")]

_NAME_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-.]*)\s*(?:\(([^)]*)\))?\s*(?:@\s*([0-9.]+))?\s*$")


@dataclass(frozen=True)
class MeasureSpec:
    """A parsed measure: family, parameters and cutoff."""

    family: str
    params: tuple = ()
    cutoff: float | int | None = None
    definition: MeasureDef = field(compare=False, repr=False, default=None)

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``P(rel=2)@5``."""
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={_fmt_param(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += "@" + (repr(float(self.cutoff)) if self.definition.cutoff == "fraction"
                           else str(int(self.cutoff)))
        return text

    def param(self, key: str, conventions):
        """Value of a parameter: given in the name, else the convention's."""
        for k, v in self.params:
            if k == key:
                return v
        if key in PARAM_DEFAULTS:
            return PARAM_DEFAULTS[key]
        return getattr(conventions, PARAM_CONVENTION[key])

    def __str__(self) -> str:
        return self.name


def _fmt_param(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def accepted_names() -> str:
    """Human-readable list of accepted measure names."""
    return ("P@k, R@k, F1@k, RR, RR@k, AP, AP@k, GMAP, nDCG, nDCG@k, DCG@k, Rprec, Bpref, Success@k, "
            "IPrec@r (r from 0.0 to 1.0), Judged@k, Hits@k, FirstRel, NumQ, NumRet, NumRel, NumRelRet; "
            "parameters: rel=N, denom=k|retrieved, norm=num_rel|min_rel_k|rel_retrieved, "
            "gain=linear|exp, discount=log2|jarvelin, ideal=qrels|retrieved, miss=zero|k_plus_1, "
            "rounding=nearest|trec9 (IPrec)")


def _unknown(text: str, why: str):
    raise InputError(f"unknown measure {text!r}: {why}", hint="accepted: " + accepted_names())


def parse_measure(text) -> MeasureSpec:
    """Parse a measure name.

    Examples
    --------
    >>> parse_measure("nDCG@10").name
    'nDCG@10'
    >>> parse_measure("ndcg_cut_10").name, parse_measure("map").name, parse_measure("P(rel=2)@5").name
    ('nDCG@10', 'AP', 'P(rel=2)@5')
    >>> parse_measure("IPrec@0.1").name
    'IPrec@0.1'
    """
    if isinstance(text, MeasureSpec):
        return text
    raw = str(text)
    m = _NAME_RE.match(raw)
    if not m:
        _unknown(raw, "not of the form NAME, NAME@k or NAME(param=value)@k")
    base, params_text, cutoff_text = m.group(1), m.group(2), m.group(3)
    family = _ALIASES.get(base.lower())
    if family is None and cutoff_text is None:
        for prefix, fam in _TREC_SUFFIX:
            if base.lower().startswith(prefix) and len(base) > len(prefix):
                family, cutoff_text = fam, base[len(prefix):]
                break
    if family is None:
        _unknown(raw, f"no measure called {base!r}")
    d = REGISTRY[family]
    params = []
    if params_text:
        for item in params_text.split(","):
            if not item.strip():
                continue
            if "=" not in item:
                _unknown(raw, f"parameter {item.strip()!r} is not key=value")
            key, value = (s.strip() for s in item.split("=", 1))
            if key not in d.params:
                allowed = ", ".join(d.params) or "none"
                raise InputError(f"measure {raw!r}: unknown parameter {key!r}",
                                 hint=f"{family} accepts: {allowed}")
            choices = PARAMS[key]
            if choices is None:
                try:
                    value = float(value)
                except ValueError:
                    raise InputError(f"measure {raw!r}: {key} must be a number, got {value!r}") from None
            elif value not in choices:
                raise InputError(f"measure {raw!r}: {key}={value!r} is not accepted",
                                 hint=f"{key} accepts: {', '.join(choices)}")
            params.append((key, value))
    order = {k: i for i, k in enumerate(d.params)}
    params = tuple(sorted(dict(params).items(), key=lambda kv: order[kv[0]]))
    cutoff = None
    if cutoff_text is not None:
        if d.cutoff == "none":
            raise InputError(f"measure {raw!r}: {family} takes no cutoff", hint=f"write {family}")
        try:
            value = float(cutoff_text)
        except ValueError:
            _unknown(raw, f"cutoff {cutoff_text!r} is not a number")
        if d.cutoff == "fraction":
            if not 0.0 <= value <= 1.0:
                raise InputError(f"measure {raw!r}: the recall level must be between 0.0 and 1.0")
            cutoff = value
        else:
            if not value.is_integer() or value < 1:
                raise InputError(f"measure {raw!r}: the cutoff must be a positive whole number")
            cutoff = int(value)
    elif d.cutoff in ("required", "fraction"):
        raise InputError(f"measure {raw!r}: {family} needs a cutoff",
                         hint=f"e.g. {family}@{'0.1' if d.cutoff == 'fraction' else '10'}")
    if family == "RR" and dict(params).get("miss") == "k_plus_1" and cutoff is None:
        raise InputError(f"measure {raw!r}: miss=k_plus_1 needs a cutoff", hint="e.g. RR(miss=k_plus_1)@10")
    return MeasureSpec(family, params, cutoff, d)


def parse_measures(names) -> list[MeasureSpec]:
    """Parse several names (a comma-separated string or a list), keeping order, no repeats."""
    if isinstance(names, str):
        names = [n for n in re.split(r",(?![^(]*\))", names) if n.strip()]
    out, seen = [], set()
    for n in names:
        spec = parse_measure(n)
        if spec.name not in seen:
            seen.add(spec.name)
            out.append(spec)
    if not out:
        raise InputError("no measures given", hint="accepted: " + accepted_names())
    return out


def list_measures() -> list[tuple[str, str]]:
    """(family, description) of every measure family."""
    return [(d.name, d.description) for d in _DEFS]


DEFAULT_MEASURES = ("P@5", "P@10", "R@100", "RR", "AP", "nDCG@10", "nDCG", "Rprec", "Bpref",
                    "NumQ", "NumRet", "NumRel", "NumRelRet")
