"""What a binary-gate metric is: its declaration, its parameters, a parsed instance.

Modelled on :mod:`metrics_core.ranking.definition`: every metric is declared once, by
the :func:`gate_metric` decorator on its compute function in
:mod:`metrics_core.gates.registry` -- name, aliases, parameters, formula, edge cases,
literature reference, declared value range, which direction is better, a worked
example (run as a doctest) and the properties the common tests check
(``tests/test_gates_common.py``).

Names are written ``NAME``, ``NAME(param=value,...)`` and, for the metric's main
parameter, ``NAME@value`` or ``NAME@PARAM=value``: ``AUROC``,
``AUROC(single_class=audit)``, ``TPR@FPR=0.05`` (also ``TPR@0.05``, ``tpr@0.05``),
``ECE(bins=15,strategy=quantile)``, ``EvidenceRecall(tau=0.4)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

#: the metrics, in declaration order (filled by :func:`gate_metric`)
GATE_FAMILIES: list[GateMetric] = []


@dataclass(frozen=True)
class GateParam:
    """A parameter of a gate metric.

    ``choices`` lists the accepted words; otherwise ``parse`` turns the text of a value
    into the value (raising ``ValueError`` or an ``InputError`` with the reason).
    ``default`` is the value when the name does not give one.
    """

    name: str
    description: str
    default: object
    choices: tuple[str, ...] | None = None
    parse: Callable[[str], object] | None = None

    def read(self, text: str):
        """The value of ``text`` for this parameter (``ValueError`` saying why not)."""
        if self.choices is not None:
            if text not in self.choices:
                raise ValueError(f"accepts {', '.join(self.choices)}")
            return text
        return self.parse(text)

    def show(self, value) -> str:
        """The canonical text of a value (``0.05``, ``10``, ``audit``)."""
        return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class GateExample:
    """A worked example: labels, scores (and query ids for dynamic K), a name, its value."""

    y_true: tuple
    y_score: tuple
    metric: str
    value: float
    query: tuple | None = None


@dataclass(frozen=True)
class GateMetric:
    """A binary-gate metric of the registry.

    Attributes
    ----------
    name : str
        Canonical name.
    description : str
        One line, plain words.
    family : {"detection", "calibration", "dynamic_k"}
    compute : callable
        ``compute(y_true, y_score, query, **params) -> float``; it validates its input
        once through :func:`metrics_core.validation.check_binary`.
    params : tuple of GateParam
    at : str or None
        The parameter written after ``@`` (``TPR@FPR=0.05``).
    aliases : tuple of str
        Other names, matched without case (``auroc``, ``roc_auc`` ...).
    formula : str
        LaTeX.
    edge_cases : tuple of str
    reference : str
        Literature.
    value_range : (low, high or None)
        Bounds every value respects (NaN aside, see ``edge_cases``).
    better : {"higher", "lower"}
        Which direction is better.
    perfect : float or None
        Value for a perfect predictor (labels separated by the scores, or probabilities
        equal to the labels), when fixed; it is the best end of ``value_range``.
    example : GateExample
    probabilities : bool
        Scores must be probabilities in [0, 1] (else any finite scale).
    needs_query : bool
        Rows are grouped by query (dynamic K).
    input_order_ties : bool
        Equal scores are taken in input order, so shuffling rows with ties may change
        the value (dynamic K's cut); otherwise the value ignores row order.
    sklearn : str or None
        The ``sklearn.metrics`` function with the same value, where scikit-learn defines
        the metric (checked by the common tests).
    """

    name: str
    description: str
    family: str
    compute: Callable
    params: tuple[GateParam, ...] = ()
    at: str | None = None
    aliases: tuple[str, ...] = ()
    formula: str = ""
    edge_cases: tuple[str, ...] = ()
    reference: str = ""
    value_range: tuple[float, float | None] = (0.0, 1.0)
    better: str = "higher"
    perfect: float | None = None
    example: GateExample | None = None
    probabilities: bool = False
    needs_query: bool = False
    input_order_ties: bool = False
    sklearn: str | None = None

    def param(self, name: str) -> GateParam:
        """The parameter ``name``."""
        return next(p for p in self.params if p.name == name)


@dataclass(frozen=True)
class GateSpec:
    """A parsed gate metric: the metric and the parameters its name gives."""

    metric: GateMetric = field(repr=False)
    params: tuple = ()

    @property
    def name(self) -> str:
        """Canonical name: parameters that differ from their default, in declaration
        order, then the ``@`` parameter (always shown): ``TPR@FPR=0.05``."""
        given = dict(self.params)
        inner = [f"{p.name}={p.show(given[p.name])}" for p in self.metric.params
                 if p.name != self.metric.at and p.name in given and given[p.name] != p.default]
        text = self.metric.name + (f"({','.join(inner)})" if inner else "")
        if self.metric.at is not None:
            p = self.metric.param(self.metric.at)
            text += f"@{p.name.upper()}={p.show(self.value(p.name))}"
        return text

    def value(self, key: str):
        """A parameter's value: given in the name, else its default."""
        return dict(self.params).get(key, self.metric.param(key).default)

    def kwargs(self) -> dict:
        """Every parameter with its value, for ``compute``."""
        return {p.name: self.value(p.name) for p in self.metric.params}

    def __str__(self) -> str:
        return self.name


def _document(m: GateMetric, doc: str | None) -> str:
    """The compute function's docstring: its text, then the declaration's formula, edge
    cases, reference and worked example (a doctest)."""
    parts = [(doc or m.description).rstrip()]
    if m.formula:
        parts.append(f"Formula\n-------\n.. math:: {m.formula}")
    if m.edge_cases:
        parts.append("Edge cases\n----------\n" + "\n".join(f"- {e}" for e in m.edge_cases))
    if m.reference:
        parts.append(f"References\n----------\n{m.reference}")
    if m.example is not None:
        ex = m.example
        query = f", query={list(ex.query)!r}" if ex.query is not None else ""
        parts.append("Examples\n--------\n>>> from metrics_core.gates.registry import gate_score\n"
                     f">>> round(gate_score({ex.metric!r}, {list(ex.y_true)!r}, {list(ex.y_score)!r}{query}), 4)\n"
                     f"{round(ex.value, 4)!r}")
    return "\n\n".join(parts) + "\n"


def gate_metric(name: str, description: str, **fields) -> Callable:
    """Register the decorated compute function as the gate metric ``name``."""

    def register(compute: Callable) -> Callable:
        m = GateMetric(name, description, compute=compute, **fields)
        if any(f.name == name for f in GATE_FAMILIES) or m.better not in ("higher", "lower"):
            raise RuntimeError(f"gate metric {name}: defined twice, or better={m.better!r}")
        compute.__doc__ = _document(m, compute.__doc__)
        compute.definition = m
        GATE_FAMILIES.append(m)
        return compute

    return register
