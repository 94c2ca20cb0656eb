"""What a fusion method is: one declaration with its formula, reference, parameters,
normalisation needs, tuning grid and arithmetic.

Every method is declared once, in :mod:`metrics_core.fusion.methods`, as a
:class:`FusionMethod`. Everything else reads that declaration: the catalogue
(:mod:`metrics_core.fusion.catalog`: names, aliases, labels, the Learn page's formulas), the
engine (:mod:`metrics_core.fusion.core`: what each row adds and how the runs combine), the
training of the supervised methods (:mod:`metrics_core.fusion.training`), the tuner
(:mod:`metrics_core.fusion.tuning`: ranx's grids), the command line (``ranklab fuse``:
``--method``, ``--param``) and the app (the Fusion page's inputs). Adding a method is one
declaration there (and its words in the two translation catalogs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from metrics_core.errors import N_

#: the families: ``score`` methods combine the (normalised) scores, ``rank`` methods the ranks
FAMILIES = ("score", "rank")


@dataclass(frozen=True)
class FusionParam:
    """A parameter of a fusion method (ranx's name).

    ``default`` None means required (or, for a supervised method's estimate, trained);
    ``low``/``high`` bound it (inclusive); ``integer`` parameters are whole numbers;
    ``grid`` gives the values ranx's ``optimize_fusion`` tries (None: not tuned); ``app``
    is ``(min, max, default, step)`` of the app's input (None: not set by hand there)."""

    name: str
    description: str
    default: float | int | None = None
    integer: bool = False
    low: float | None = None
    high: float | None = None
    grid: Callable[[], list] | None = None
    app: tuple[float, float, float, float] | None = None

    def check(self, value) -> tuple[str, dict] | None:
        """Why ``value`` is refused: a message template (marked for translation) and its
        values, or None when it is accepted."""
        try:
            number = float(value)
        except (TypeError, ValueError):
            return N_("the parameter {param} must be a number, not {value}"), {}
        if self.integer and not number.is_integer():
            return N_("the parameter {param} must be a whole number, not {value}"), {}
        if self.low is not None and number < self.low:
            return N_("the parameter {param} must be at least {low}, not {value}"), {
                "low": f"{self.low:g}"
            }
        if self.high is not None and number > self.high:
            return N_("the parameter {param} must be at most {high}, not {value}"), {
                "high": f"{self.high:g}"
            }
        return None


@dataclass(frozen=True)
class FusionMethod:
    """One fusion method.

    Attributes
    ----------
    name : str
        The catalogue's name (ranx's, with the Comb family spelled ``combsum`` ...).
    label : str
        Its name in menus and tables (marked for translation when it has words).
    family : str
        ``score`` (normalised scores are combined) or ``rank`` (ranks are).
    formula : str
        The formula in plain text with the catalogue's symbols (see
        :mod:`metrics_core.fusion.catalog`).
    latex, sentence : str
        The formula in LaTeX and one sentence saying it (translated where shown).
    ref : str
        The literature reference.
    ranx : str
        ranx's name of the method (``fuse(method=...)``).
    aliases : tuple of str
        Other accepted spellings.
    params : tuple of FusionParam
        The method's parameters (without the weights).
    weighted : bool
        Takes one weight per run (default: equal weights).
    estimate : str or None
        A supervised method's trained estimate (``probs``, ``log_odds`` or ``map_scores``).
    train_params : tuple of FusionParam
        Parameters of the training alone (ProbFuse's ``n_segments``).
    value : callable
        ``value(rows, params)``: what each row of one run adds (see
        :class:`metrics_core.fusion.table.RunRows`).
    combine : callable
        ``combine(table, params)``: each candidate's fused score from the runs' values (see
        :class:`metrics_core.fusion.table.Table`).
    train : callable or None
        ``train(data, params)``: one run's estimate from training judgements (see
        :mod:`metrics_core.fusion.training`).
    tuned : bool
        Whether ranx's ``optimize_fusion`` searches a grid for it (else it only trains).
    """

    name: str
    label: str
    family: str
    formula: str
    latex: str
    sentence: str
    ref: str
    ranx: str
    value: Callable[..., Any]
    combine: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    params: tuple[FusionParam, ...] = ()
    weighted: bool = False
    estimate: str | None = None
    train_params: tuple[FusionParam, ...] = ()
    train: Callable[..., Any] | None = None
    tuned: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def supervised(self) -> bool:
        return self.estimate is not None

    @property
    def defaults(self) -> dict:
        """``{parameter: default}`` (None for a required one), weights and training aside."""
        return {p.name: p.default for p in self.params}

    def __getitem__(self, key: str):
        """The former table's keys (``METHODS[m]["ref"]``, ``["params"]``, ``["family"]``,
        ``["weights"]``, ``["supervised"]``, ``["formula"]``), for code written against it."""
        legacy = {
            "params": {**self.defaults, **({self.estimate: None} if self.estimate else {})},
            "weights": self.weighted,
            "supervised": self.supervised,
            "train": {p.name: p.default for p in self.train_params},
        }
        if key in legacy:
            return legacy[key]
        if key in ("ref", "family", "formula"):
            return getattr(self, key)
        raise KeyError(key)

    def get(self, key: str, default=None):
        """:meth:`__getitem__`, or ``default``."""
        try:
            return self[key]
        except KeyError:
            return default

    def signature(self) -> str:
        """The parameters as written in a call: ``k=60``, a required one by its name
        (``phi``), a supervised method's estimate last (``probs``); empty when none."""
        names = [p.name if p.default is None else f"{p.name}={p.default}" for p in self.params]
        return ", ".join(names + ([self.estimate] if self.estimate else []))

    def param(self, name: str) -> FusionParam | None:
        for p in (*self.params, *self.train_params):
            if p.name == name:
                return p
        return None

    def grid(self, n_runs: int, *, ranx_exact: bool = False) -> list[dict]:
        """The parameter sets ranx's ``optimize_fusion`` tries (``[{}]`` for a method it
        does not search): every weight vector in steps of 0.1 summing to 1 for a weighted
        method (``ranx_exact``: only those whose floating sum is exactly 1.0, as ranx's test
        keeps them), else the values of the tuned parameter."""
        from metrics_core.fusion.grids import weight_grid

        if self.weighted:
            return [{"weights": list(w)} for w in weight_grid(n_runs, ranx_exact=ranx_exact)]
        for p in (*self.params, *self.train_params):
            if p.grid is not None:
                return [{p.name: v} for v in p.grid()]
        return [{}]


def method_table(methods: Sequence[FusionMethod]) -> dict[str, FusionMethod]:
    """name -> declaration, checking that names and aliases are unique."""
    out: dict[str, FusionMethod] = {}
    seen: set[str] = set()
    for m in methods:
        assert m.family in FAMILIES, m.name
        for n in (m.name, *m.aliases):
            assert n not in seen, f"fusion method name {n!r} declared twice"
            seen.add(n)
        out[m.name] = m
    return out


__all__ = ["FusionMethod", "FusionParam", "FAMILIES", "method_table"]
