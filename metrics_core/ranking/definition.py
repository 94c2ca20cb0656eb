"""What a ranking measure is: its definition, its parameters, a parsed instance.

A measure family is defined once, by the :func:`measure` decorator on its compute
function in :mod:`metrics_core.ranking.measures`: name, aliases (ir_measures' and
trec_eval's), parameters, cutoff rule, aggregation, formula, edge cases, literature
reference, a worked example and the properties the common tests check. The registry
(:mod:`metrics_core.ranking.registry`) builds everything else from these definitions:
the name parser and its messages, the trec_eval name table, the defaults, the app's
measure picker and the Learn page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from metrics_core.errors import N_
from metrics_core.validation import LIMITS

#: how a reference cites trec_eval's measure ``{}`` (the words around the name are translated
#: where shown: :meth:`MeasureDef.referenced`)
TREC_EVAL = N_("trec_eval 10.0 (NIST; Buckley), measure {}.")
_TREC_CITATION = re.compile("^" + re.escape(TREC_EVAL).replace(r"\{\}", r"(\S+)") + "$")

#: the families, in definition order (filled by :func:`measure`)
FAMILIES: list[MeasureDef] = []

#: largest cutoff accepted (``P@k``, ``nDCG@k`` ...): the one limit of every rank cutoff
#: and depth (README "Limits"); it keeps every rank arithmetic inside int64
MAX_CUTOFF = LIMITS["cutoff"]


def _number(text: str) -> float:
    """A finite number; NaN, infinity and overflowing values are refused."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _in_range(text: str, low: float, high: float | None, name: str) -> float:
    value = _number(text)
    if value < low or (high is not None and value > high):
        raise ValueError(
            f"must be between {low:g} and {high:g}"
            if high is not None
            else f"must be at least {low:g}"
        )
    return value


def parse_gains(text: str) -> str:
    """``1:3.5,2:9`` -> the canonical text ``1:3.5,2:9`` (labels ascending, each once);
    ``ValueError`` with the reason when malformed."""
    pairs = {}
    for item in str(text).split(","):
        label, sep, gain = item.strip().partition(":")
        if not sep:
            raise ValueError("is written label:gain,label:gain (e.g. 1:3.5,2:9)")
        try:
            lab, g = int(label), _number(gain)
        except ValueError:
            raise ValueError(
                f"needs a whole-number label and a finite gain, got {item.strip()!r}"
            ) from None
        if lab in pairs:
            raise ValueError(f"gives label {lab} twice")
        pairs[lab] = g
    return ",".join(f"{lab}:{_fmt_number(g)}" for lab, g in sorted(pairs.items()))


def gains_table(text: str | None) -> dict[int, float]:
    """label -> gain of a ``gains`` parameter's canonical text (empty when not given)."""
    if not text:
        return {}
    return {int(a): float(b) for a, b in (p.split(":") for p in text.split(","))}


def _fmt_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@dataclass(frozen=True)
class Param:
    """A measure parameter, written ``NAME(param=value)``.

    ``choices`` lists the accepted words (the first is the default when no convention
    gives one); ``parse`` turns the text of a numeric (or structured) value into its
    value and raises ``ValueError`` with the reason when it cannot. ``convention`` names
    the :class:`~metrics_core.conventions.Conventions` field that gives the default.
    """

    name: str
    description: str
    choices: tuple[str, ...] | None = None
    parse: Callable[[str], object] | None = None
    convention: str | None = None
    default: object = None

    def read(self, text: str):
        """Value of ``text`` for this parameter, or ``ValueError`` saying why not."""
        if self.choices is not None:
            if text not in self.choices:
                raise ValueError(f"accepts {', '.join(self.choices)}")
            return text
        return (self.parse or _number)(text)

    def accepted(self) -> str:
        """How to write a value, for messages and the Learn page."""
        if self.choices is not None:
            return "|".join(self.choices)
        return N_("label:gain,...") if self.name == "gains" else N_("a number")


#: every parameter a family may take
PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param(
            "rel",
            "relevance threshold: a document is relevant when its label is >= rel",
            convention="relevance_threshold",
        ),
        Param(
            "denom",
            "P@k's denominator: k, or min(k, documents retrieved)",
            ("k", "retrieved"),
            convention="p_denominator",
        ),
        Param(
            "divide",
            "Judged@k's denominator: min(k, documents retrieved) (ir_measures), or k",
            ("retrieved", "k"),
        ),
        Param(
            "norm",
            "AP's normalizer: relevant in the qrels, min(that, k), or relevant retrieved",
            ("num_rel", "min_rel_k", "rel_retrieved"),
            convention="ap_normalizer",
        ),
        Param(
            "gain",
            "gain of a label g: g (linear) or 2^g - 1 (exp)",
            ("linear", "exp"),
            convention="gain",
        ),
        Param(
            "discount",
            "discount at rank i: 1/log2(i+1), or 1/max(1, log2 i) (Jarvelin & Kekalainen)",
            ("log2", "jarvelin"),
            convention="discount",
        ),
        Param(
            "ideal",
            "ideal ranking: every judged document of the qrels, or the retrieved ones",
            ("qrels", "retrieved"),
            convention="ideal",
        ),
        Param(
            "miss",
            "RR@k with no relevant document in the top k: 0, or 1/(k+1)",
            ("zero", "k_plus_1"),
            convention="rr_miss",
        ),
        Param(
            "rounding",
            "recall level to a number of relevant documents: nearest (trec_eval 10) "
            "or floor(r R + 0.9) (trec_eval 9, pytrec_eval)",
            ("nearest", "trec9"),
            default="nearest",
        ),
        Param(
            "p",
            "persistence of the RBP user: probability of going on to the next document",
            parse=lambda t: _in_range(t, 0.0, 1.0, "p"),
            default=0.9,
        ),
        Param(
            "scale",
            "RBP's gain of a label: label / the query's highest label when above 1 (trec_eval), "
            "or the label itself (ranx)",
            ("max", "none"),
            default="max",
        ),
        Param(
            "x",
            "multiple of R at which precision is taken (trec_eval Rprec_mult_x)",
            parse=lambda t: _in_range(t, 0.0, None, "x"),
            default=1.0,
        ),
        Param("a", "utility of a relevant retrieved document", default=1.0),
        Param("b", "utility of a non-relevant retrieved document", default=-1.0),
        Param("c", "utility of a relevant document not retrieved", default=0.0),
        Param("d", "utility of a non-relevant document not retrieved", default=0.0),
        Param(
            "beta",
            "set F: weight of recall against precision (default 1); NRBP: the user's "
            "patience, the probability of going on to the next document (0 to 1, default 0.5)",
            parse=lambda t: _in_range(t, 0.0, None, "beta"),
            default=1.0,
        ),
        Param(
            "alpha",
            "redundancy intolerance of the diversity measures: a subtopic's gain is "
            "multiplied by 1 - alpha each time a document covers it again (0 to 1)",
            parse=lambda t: _in_range(t, 0.0, 1.0, "alpha"),
            default=0.5,
        ),
        Param(
            "max_grade",
            "highest relevance grade (ERR's stopping probability is (2^g - 1) / 2^max)",
            parse=lambda t: _in_range(t, 0.0, 64.0, "max_grade"),
            default=4.0,
        ),
        Param(
            "gains",
            "gain of each label, as label:gain pairs (1:3.5,2:9); other labels gain their value",
            parse=lambda t: parse_gains(t),
            default=None,
        ),
    )
}


@dataclass(frozen=True)
class Example:
    """A worked example: one query's qrels and run, a measure name and its value.

    ``explanation`` is its English text; ``parts``, when given, the texts marked for
    translation it is made of (joined by a space), translated one by one by
    :meth:`explained`.
    """

    qrels: dict
    run: dict
    measure: str
    value: float
    explanation: str = ""
    parts: tuple[str, ...] = ()

    def explained(self, gettext: Callable[[str], str] | None = None) -> str:
        """The explanation in the words of ``gettext`` (a catalog's; default: English).

        >>> ex = Example({}, {}, "P@1", 1.0, "One query. One relevant.", ("One query.", "One relevant."))
        >>> ex.explained(), ex.explained(str.upper)
        ('One query. One relevant.', 'ONE QUERY. ONE RELEVANT.')
        """
        if gettext is None:
            return self.explanation
        return " ".join(gettext(p) for p in (self.parts or (self.explanation,)))


@dataclass(frozen=True)
class MeasureDef:
    """A measure family of the registry.

    Attributes
    ----------
    name : str
        Canonical name (ir_measures' spelling).
    description : str
        One line, plain words.
    compute : callable
        ``compute(ranked, spec, conventions) -> float64 array``, one value per query.
    cutoff : {"none", "optional", "required", "fraction"}
        Whether ``@k`` is refused, optional, required, or a recall level in [0, 1].
    params : tuple of str
        Keys of :data:`PARAMS` the family accepts.
    aggregate : {"mean", "sum", "gmean", "nanmean"}
        Summary over queries.
    integer : bool
        Values are counts (shown without decimals).
    aliases : tuple of str
        Other names (matched without case), e.g. ``"map"``, ``"mrr"``.
    trec : tuple of str
        trec_eval's printed names; ``{k}`` stands for the cutoff (``"P_{k}"``).
    formula : str
        LaTeX.
    edge_cases : tuple of str
    reference : str
        Literature (and trec_eval's measure where it defines one). Declared as one text or as
        its parts (a tuple, joined by a space): the literature as published, trec_eval's
        citation (:data:`TREC_EVAL`) and notes marked for translation.
    reference_parts : tuple of str
        The parts of a reference declared in parts (else empty).
    example : Example
    common : tuple of str
        Instances offered first by the app's measure picker.
    value_range : (low, high or None)
        Bounds every value respects.
    perfect : float or None
        Value of the uncut measure for a perfect ranking (every judged document retrieved,
        labels descending), when that value is fixed.
    cut_invariant : bool
        ``@k`` with k at or beyond every ranking's and qrels' length equals the uncut value.
    may_be_nan : bool
        Some queries can have no value (NaN); the aggregate skips them.
    better : {"higher", "lower", None}
        Which way a system improves: a higher value (P, AP, nDCG ...), a lower one
        (FirstRel), or neither (counts and judgement diagnostics: NumRet, Judged ...).
        Declared by every family.
    defaults : tuple of (str, object)
        This family's defaults of shared parameters that differ from the parameter's own
        (NRBP's ``beta`` is 0.5, set F's 1).
    bounds : tuple of (str, float, float)
        Narrower bounds of shared parameters for this family (NRBP's ``beta`` within 0..1).
    subtopics : bool
        Computed from judgements per subtopic (the diversity measures): the front door
        reads the qrels with their subtopics (:class:`~metrics_core.data.SubtopicQrels`).
    """

    name: str
    description: str
    compute: Callable
    cutoff: str = "none"
    params: tuple[str, ...] = ()
    aggregate: str = "mean"
    integer: bool = False
    aliases: tuple[str, ...] = ()
    trec: tuple[str, ...] = ()
    formula: str = ""
    edge_cases: tuple[str, ...] = ()
    reference: str = ""
    reference_parts: tuple[str, ...] = ()
    example: Example | None = None
    common: tuple[str, ...] = ()
    value_range: tuple[float, float | None] = (0.0, 1.0)
    perfect: float | None = None
    cut_invariant: bool = False
    may_be_nan: bool = False
    better: str | None = "higher"
    defaults: tuple = ()
    bounds: tuple = ()
    subtopics: bool = False

    def default(self, key: str):
        """This family's default of parameter ``key`` (:attr:`defaults`, else the
        parameter's own)."""
        for k, v in self.defaults:
            if k == key:
                return v
        return PARAMS[key].default

    def referenced(self, gettext: Callable[[str], str] | None = None) -> str:
        """The reference in the words of ``gettext`` (a catalog's; default: English): the
        literature as published, the words around it translated (trec_eval's citation,
        the notes).

        >>> from metrics_core.ranking.registry import REGISTRY
        >>> REGISTRY["Success"].referenced()
        'trec_eval 10.0 (NIST; Buckley), measure success_k. Also called Hit@k or top-k accuracy.'
        >>> REGISTRY["Success"].referenced(str.upper)
        'TREC_EVAL 10.0 (NIST; BUCKLEY), MEASURE success_k. ALSO CALLED HIT@K OR TOP-K ACCURACY.'
        """
        if gettext is None:
            return self.reference

        def words(part: str) -> str:
            cited = _TREC_CITATION.match(part)
            return gettext(TREC_EVAL).format(cited.group(1)) if cited else gettext(part)

        return " ".join(words(p) for p in (self.reference_parts or (self.reference,)))

    def usage(self) -> str:
        """How to write it: ``P@k``, ``AP``, ``IPrec@r`` ..."""
        suffix = {"none": "", "optional": "[@k]", "required": "@k", "fraction": "@r"}[self.cutoff]
        return self.name + suffix


def _document(d: MeasureDef, doc: str | None) -> str:
    """The compute function's docstring: its own text, then the definition's formula,
    edge cases, reference and worked example (numpydoc sections)."""
    parts = [(doc or d.description).rstrip()]
    if d.formula:
        parts.append(f"Formula\n-------\n.. math:: {d.formula}")
    if d.edge_cases:
        parts.append("Edge cases\n----------\n" + "\n".join(f"- {e}" for e in d.edge_cases))
    if d.reference:
        parts.append(f"References\n----------\n{d.reference}")
    if d.example is not None:
        ex = d.example
        parts.append(
            "Examples\n--------\n"
            + (f"{ex.explanation}\n\n" if ex.explanation else "")
            + ">>> import metrics_core as mc\n"
            + f">>> round(mc.evaluate({ex.qrels!r}, {ex.run!r}, [{ex.measure!r}]).aggregate[{ex.measure!r}], 4)\n"
            + f"{round(float(ex.value), 4)!r}"
        )
    return "\n\n".join(parts) + "\n"


#: the values of ``better=`` (:attr:`MeasureDef.better`)
BETTER = ("higher", "lower", None)


def measure(name: str, description: str, **fields) -> Callable:
    """Register the decorated compute function as the measure family ``name`` (``fields``:
    the :class:`MeasureDef` attributes; ``better=`` is required)."""

    if fields.get("better", "missing") not in BETTER:
        raise RuntimeError(f"measure {name}: declare better= one of {BETTER}")

    if isinstance(fields.get("reference"), tuple):
        fields["reference_parts"] = fields["reference"]
        fields["reference"] = " ".join(fields["reference"])

    def register(compute: Callable) -> Callable:
        d = MeasureDef(name, description, compute, **fields)
        unknown = set(d.params) - set(PARAMS)
        if unknown or any(f.name == name for f in FAMILIES):
            raise RuntimeError(f"measure {name}: unknown parameters {unknown} or defined twice")
        compute.__doc__ = _document(d, compute.__doc__)
        compute.definition = d  # type: ignore[attr-defined]  # the function carries its declaration
        FAMILIES.append(d)
        return compute

    return register


@dataclass(frozen=True)
class MeasureSpec:
    """A parsed measure: family, parameters and cutoff."""

    family: str
    params: tuple = ()
    cutoff: float | int | None = None
    definition: MeasureDef = field(compare=False, repr=False, kw_only=True)

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``P(rel=2)@5``."""
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={_fmt_param(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += "@" + (
                repr(float(self.cutoff))
                if self.definition.cutoff == "fraction"
                else str(int(self.cutoff))
            )
        return text

    @property
    def better(self) -> str | None:
        """``"higher"``, ``"lower"`` or None: which way a system improves on this measure
        (the family's declaration).

        >>> from metrics_core.ranking.registry import parse_measure
        >>> parse_measure("nDCG@10").better, parse_measure("FirstRel").better, parse_measure("NumRet").better
        ('higher', 'lower', None)
        """
        return self.definition.better

    @property
    def direction(self) -> int:
        """+1 when higher is better, -1 when lower is, 0 when neither (:attr:`better`).

        >>> from metrics_core.ranking.registry import parse_measure
        >>> parse_measure("AP").direction, parse_measure("FirstRel").direction, parse_measure("Judged@10").direction
        (1, -1, 0)
        """
        return {"higher": 1, "lower": -1}.get(self.definition.better or "", 0)

    def param(self, key: str, conventions):
        """Value of a parameter: given in the name, else the convention's, else its default."""
        for k, v in self.params:
            if k == key:
                return v
        p = PARAMS[key]
        if p.convention is not None:
            return getattr(conventions, p.convention)
        return self.definition.default(key)

    def __str__(self) -> str:
        return self.name


def _fmt_param(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)
