"""The fusion catalogue: every method's declaration (:mod:`metrics_core.fusion.methods`) and
the normalisations, with the names users type.

Names follow ranx (Bassani and Romelli 2022, "ranx.fuse and ranx.optimize_fusion", CIKM),
whose catalogue this is; the Comb family also answers to ``combsum``/``comb_sum`` and the
rest of the spellings users type. Each method's formula uses these symbols:

* ``s_i(d)``: the (normalised) score of document ``d`` in run ``i``; ``r_i(d)``: its rank
  there (1 for the first document); ``n(d)``: the number of runs that retrieved ``d``;
  ``w_i``: the weight of run ``i``; ``N``: the number of candidates of the query (the union
  of the runs' documents); ``L_i``: the length of run ``i``'s list for the query.
* Sums run over the runs that retrieved ``d`` unless said otherwise.

Everything here is derived from the declarations: :data:`ALIASES`, :data:`METHOD_LABELS`
and :data:`EXPLAINED` (the formulas and sentences of the Learn and Fusion pages).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.fusion.declaration import FusionMethod, FusionParam
from metrics_core.fusion.kernels import BAYES_CUTOFFS, SEGFUSE_BOUNDS
from metrics_core.fusion.methods import METHODS

#: other spellings -> the catalogue's name (ranx's short names among them)
ALIASES: dict[str, str] = {a: m.name for m in METHODS.values() for a in m.aliases}

#: normalisation -> formula, per run and query (ranx's; denominators floored at 1e-9)
NORMS: dict[str, str] = {
    "none": "s",
    "min-max": "(s - min) / max(max - min, 1e-9)",
    "min-max-inverted": "(max - s) / max(max - min, 1e-9) (for runs where lower is better)",
    "max": "s / max(max, 1e-9)",
    "sum": "(s - min) / max(sum - L min, 1e-9)",
    "zmuv": "(s - mean) / max(std, 1e-9), std the population standard deviation",
    "rank": "1 - (r - 1) / L",
    "borda": "1 - (r - 1) / N; a candidate the run did not retrieve: 1/2 - (L - 1) / (2 N)",
}
NORM_ALIASES = {
    None: "none",
    "min_max": "min-max",
    "minmax": "min-max",
    "min_max_inverted": "min-max-inverted",
}

#: labels for menus and tables
METHOD_LABELS: dict[str, str] = {m.name: m.label for m in METHODS.values()}
NORM_LABELS = {
    "none": N_("none"),
    "min-max": N_("min-max"),
    "min-max-inverted": N_("min-max, inverted"),
    "max": N_("max"),
    "sum": N_("sum"),
    "zmuv": N_("zero mean, unit variance"),
    "rank": N_("rank"),
    "borda": N_("Borda"),
}

#: method -> (LaTeX formula, one translated sentence) for the Learn page and the Fusion page
EXPLAINED: dict[str, tuple[str, str]] = {m.name: (m.latex, m.sentence) for m in METHODS.values()}


def method_name(method: str) -> str:
    """The catalogue's name of ``method`` (an alias accepted); InputError when unknown."""
    key = str(method).strip().lower().replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in METHODS:
        raise InputError(
            N_("unknown fusion method {method!r}"),
            hint=N_("accepted: {choices}"),
            field="method",
            option="--method",
            params={"method": method, "choices": ", ".join(METHODS)},
        )
    return key


def norm_name(norm) -> str:
    """The catalogue's name of normalisation ``norm`` (None means "none")."""
    key = NORM_ALIASES.get(norm, norm)
    key = NORM_ALIASES.get(str(key).strip().lower(), str(key).strip().lower())
    if key not in NORMS:
        raise InputError(
            N_("unknown normalisation {norm!r}"),
            hint=N_("accepted: {choices}"),
            field="norm",
            option="--norm",
            params={"norm": norm, "choices": ", ".join(NORMS)},
        )
    return key


def method(name: str) -> FusionMethod:
    """The declaration of method ``name`` (an alias accepted)."""
    return METHODS[method_name(name)]


def resolve_params(method: str, params: Mapping | None, weights, n_runs: int) -> dict:
    """The method's parameters from ``params`` and ``weights``, checked against its
    declaration: defaults filled, required ones present, no unknown one, one finite weight
    per run for a weighted method (equal weights by default)."""
    spec = METHODS[method]
    given = dict(params or {})
    if weights is None:
        weights = given.pop("weights", None)
    else:
        given.pop("weights", None)
    out = {}
    estimate = (spec.estimate,) if spec.estimate else ()
    for name, default in [*spec.defaults.items(), *((e, None) for e in estimate)]:
        value = given.pop(name, default)
        if value is None:
            raise InputError(
                N_("the fusion method {method} needs the parameter {param}"),
                hint=N_("give it in params, or train the method on judgements"),
                field="params",
                params={"method": method, "param": name},
            )
        declared = spec.param(name)
        refused = declared.check(value) if declared is not None else None
        if refused is not None:
            text, extra = refused
            raise InputError(text, field="params", params={"param": name, "value": value, **extra})
        out[name] = value
    for p in spec.train_params:
        given.pop(p.name, None)
    if given:
        raise InputError(
            N_("the fusion method {method} has no parameter {param}"),
            hint=N_("accepted: {choices}"),
            field="params",
            params={
                "method": method,
                "param": ", ".join(sorted(given)),
                "choices": ", ".join(
                    ["weights"] * spec.weighted + list(spec.defaults) + list(estimate)
                )
                or "-",
            },
        )
    if spec.weighted:
        w = (
            np.full(n_runs, 1.0 / n_runs)
            if weights is None
            else np.asarray(weights, dtype=np.float64)
        )
        if w.shape != (n_runs,) or not np.all(np.isfinite(w)):
            raise InputError(
                N_("{count} weights for {runs} runs"),
                field="weights",
                hint=N_("give one finite weight per run, in the runs' order"),
                params={"count": int(np.size(w)), "runs": n_runs},
            )
        out["weights"] = w
    elif weights is not None:
        raise InputError(
            N_("the fusion method {method} takes no weights"),
            field="weights",
            hint=N_("weighted methods: {choices}"),
            params={
                "method": method,
                "choices": ", ".join(m for m, s in METHODS.items() if s.weighted),
            },
        )
    if spec.estimate:
        out[spec.estimate] = _per_run(out[spec.estimate], n_runs, spec.estimate)
    return out


def _per_run(values, n_runs: int, name: str) -> list[np.ndarray]:
    if name == "map_scores":
        values = list(np.ravel(values))
    seq = list(values) if not isinstance(values, np.ndarray) or values.ndim > 1 else [values]
    if len(seq) != n_runs:
        raise InputError(
            N_("{param} holds {count} entries for {runs} runs"),
            field="params",
            hint=N_("one entry per run, in the runs' order"),
            params={"param": name, "count": len(seq), "runs": n_runs},
        )
    return [np.asarray(v, dtype=np.float64).reshape(-1) for v in seq]


__all__ = [
    "METHODS",
    "ALIASES",
    "NORMS",
    "NORM_ALIASES",
    "METHOD_LABELS",
    "NORM_LABELS",
    "EXPLAINED",
    "SEGFUSE_BOUNDS",
    "BAYES_CUTOFFS",
    "FusionMethod",
    "FusionParam",
    "method",
    "method_name",
    "norm_name",
    "resolve_params",
]
