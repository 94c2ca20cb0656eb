"""The measure registry: every ranking measure family, and the names that reach them.

Each family is defined once, next to its compute function in
:mod:`metrics_core.ranking.measures` (see :mod:`metrics_core.ranking.definition`).
Everything here is derived from those definitions: the accepted names and their error
messages, the trec_eval name table, the defaults and the app's measure picker.

Names follow ir_measures' syntax, which IR people already write: ``P@5``, ``nDCG@10``,
``AP``, ``RR@10``, ``IPrec@0.1``; parameters in parentheses, ``P(rel=2)@5``,
``nDCG(gain=exp)@10``, ``nDCG(discount=jarvelin)@6``. trec_eval's own names are accepted
too (``map``, ``ndcg_cut_10``, ``P_5``, ``recip_rank`` ...) and printed in the canonical
form. Unknown names or parameters are an :class:`~metrics_core.errors.InputError` that
lists what is accepted.
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

from metrics_core.errors import N_, InputError
from metrics_core.ranking import measures as _measures  # noqa: F401  (defines every family)
from metrics_core.ranking.definition import (
    FAMILIES,
    MAX_CUTOFF,
    PARAMS,
    Example,
    MeasureDef,
    MeasureSpec,
    Param,
)
from metrics_core.ranking.ranx_names import translate as translate_ranx

__all__ = [
    "REGISTRY",
    "MeasureDef",
    "MeasureSpec",
    "Param",
    "Example",
    "PARAMS",
    "parse_measure",
    "parse_measures",
    "split_measures",
    "accepted_names",
    "list_measures",
    "from_trec_name",
    "trec_names",
    "rank_cutoffs",
    "DEFAULT_MEASURES",
    "EXPLORER_MEASURES",
    "COMPARE_MEASURES",
    "COMMON_MEASURES",
]

#: family name -> definition, in definition order
REGISTRY: dict[str, MeasureDef] = {d.name: d for d in FAMILIES}

# lower-case name -> family: canonical names, aliases and trec_eval's names without a cutoff
_ALIASES: dict[str, str] = {}
# trec_eval names with a cutoff suffix: (lower-case prefix, family), longest prefix first
_TREC_PREFIXES: list[tuple[str, str]] = []
# trec_eval names whose suffix is a parameter's value (``Rprec_mult_{x}``): (lower-case
# prefix, family, parameter)
_TREC_PARAM_PREFIXES: list[tuple[str, str, str]] = []
for _d in FAMILIES:
    _ALIASES[_d.name.lower()] = _d.name
    for _a in _d.aliases:
        _ALIASES[_a.lower()] = _d.name
    for _t in _d.trec:
        if _t.endswith("{k}"):
            _TREC_PREFIXES.append((_t[:-3].lower(), _d.name))
        elif re.search(r"\{\w+\}$", _t):
            _p = _t[_t.rindex("{") + 1 : -1]
            _TREC_PARAM_PREFIXES.append((_t[: _t.rindex("{")].lower(), _d.name, _p))
        else:
            _ALIASES[_t.lower()] = _d.name
_TREC_PREFIXES.sort(key=lambda item: -len(item[0]))

#: what ``evaluate`` computes when no measure is named (the command line, the library)
DEFAULT_MEASURES = (
    "P@5",
    "P@10",
    "R@100",
    "RR",
    "AP",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
)
#: what the explorer shows before the visitor picks
#: (a coverage diagnostic such as Judged@10 is one click away in the picker, not on the default board)
EXPLORER_MEASURES = ("RR", "nDCG@10", "P@5", "P@10", "AP", "R@100")
#: what the Compare page tests before the visitor picks
COMPARE_MEASURES = ("AP", "nDCG@10", "P@10", "RR")
#: the measure picker's list: every family's common instances, in registry order
COMMON_MEASURES = tuple(
    m for d in FAMILIES for m in (d.common or (d.usage(),)) if "@k" not in m and "@r" not in m
)

# ranx's forms that RankLab's own syntax would misread: a relevance level, rbp's persistence
_RANX_ONLY = re.compile(r"-l\d+\s*$|^\s*rbp[.@]\d")
_NAME_RE = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9_\-.]*)\s*(?:\((.*)\))?\s*(?:@\s*([^@()\s]+))?\s*$"
)


def _written(d: MeasureDef) -> str:
    """``P@k``; ``RR, RR@k`` when the uncut form is common too; ``IPrec@r (r from 0.0 to 1.0)``."""
    if d.cutoff == "optional":
        return f"{d.name}, {d.name}@k" if d.name in d.common else f"{d.name}@k"
    if d.cutoff == "fraction":
        return f"{d.name}@r (r from 0.0 to 1.0)"
    return d.usage()


def _accepted() -> dict:
    """The values of :data:`ACCEPTED_HINT`."""
    return {
        "accepted_names": ", ".join(_written(d) for d in FAMILIES),
        "accepted_params": ", ".join(f"{p.name}={p.accepted()}" for p in PARAMS.values()),
    }


#: the hint that lists every accepted name (the text of :func:`accepted_names`)
ACCEPTED_HINT = N_("accepted: {accepted_names}; parameters: {accepted_params}")


def accepted_names() -> str:
    """The accepted measure names and parameters, in one line (for messages)."""
    parts = _accepted()
    return f"{parts['accepted_names']}; parameters: {parts['accepted_params']}"


def list_measures() -> list[tuple[str, str]]:
    """(family, description) of every measure family."""
    return [(d.name, d.description) for d in FAMILIES]


def _unknown(problem: str, **params) -> NoReturn:
    """Raise the error for an unknown measure name: ``problem`` (a template) filled with
    ``params``, and the accepted names."""
    raise InputError(problem, hint=ACCEPTED_HINT, params={**params, **_accepted()})


def _split_params(text: str) -> list[tuple[str, str | None]]:
    """``a=1,b=x`` -> [(a, 1), (b, x)]; a piece without ``=`` continues the previous value
    (a parameter whose value holds commas); a first piece without ``=`` has the value None."""
    items: list[list[str | None]] = []
    for piece in text.split(","):
        if "=" in piece or not items:
            key, sep, value = piece.partition("=")
            items.append([key.strip(), value.strip() if sep else None])
        else:
            items[-1][1] = f"{items[-1][1]},{piece.strip()}"
    return [(str(k), v) for k, v in items if k or v]


def _family_of(base: str, cutoff_text: str | None) -> tuple[str | None, str | None]:
    family = _ALIASES.get(base.lower())
    if family is None and cutoff_text is None:
        for prefix, fam in _TREC_PREFIXES:
            if base.lower().startswith(prefix) and len(base) > len(prefix):
                return fam, base[len(prefix) :]
    return family, cutoff_text


def _cutoff(raw: str, d: MeasureDef, text: str | None):
    if text is None:
        if d.cutoff in ("required", "fraction"):
            raise InputError(
                N_("measure {measure!r}: {name} needs a cutoff"),
                hint=N_("e.g. {name}@{example}"),
                params={
                    "measure": raw,
                    "name": d.name,
                    "example": "0.1" if d.cutoff == "fraction" else "10",
                },
            )
        return None
    if d.cutoff == "none":
        raise InputError(
            N_("measure {measure!r}: {name} takes no cutoff"),
            hint=N_("write {name}"),
            params={"measure": raw, "name": d.name},
        )
    try:
        value = float(text)
    except ValueError:
        _unknown(
            N_("unknown measure {measure!r}: cutoff {cutoff!r} is not a number"),
            measure=raw,
            cutoff=text,
        )
    if d.cutoff == "fraction":
        if not 0.0 <= value <= 1.0:
            raise InputError(
                N_("measure {measure!r}: the recall level must be between 0.0 and 1.0"),
                params={"measure": raw},
            )
        return value
    if not (value >= 1 and value.is_integer()):
        raise InputError(
            N_("measure {measure!r}: the cutoff must be a positive whole number"),
            params={"measure": raw},
        )
    if value > MAX_CUTOFF:
        raise InputError(
            N_("measure {measure!r}: the cutoff is larger than {limit:,}"),
            hint=N_("Leave the cutoff out to evaluate whole rankings"),
            params={"measure": raw, "limit": MAX_CUTOFF},
        )
    return int(value)


def _read_param(raw: str, key: str, value: str):
    """The value of parameter ``key`` written ``value`` in the measure name ``raw``."""
    param = PARAMS[key]
    where = {"measure": raw, "parameter": key, "text": value}
    problem = N_("measure {measure!r}: {parameter}={text!r} is not accepted")
    if param.choices is not None and value not in param.choices:
        raise InputError(
            problem,
            hint=N_("{parameter} accepts {choices}"),
            params={**where, "choices": ", ".join(param.choices)},
        )
    try:
        return param.read(value)
    except ValueError as exc:  # the reason, in English: "must be a finite number"
        raise InputError(
            problem, hint=N_("{parameter} {reason}"), params={**where, "reason": exc}
        ) from None


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
        _unknown(
            N_("unknown measure {measure!r}: not of the form NAME, NAME@k or NAME(param=value)@k"),
            measure=raw,
        )
    base, params_text, cutoff_text = m.group(1), m.group(2), m.group(3)
    if _RANX_ONLY.search(raw) and (ranx := translate_ranx(raw)) is not None:  # ndcg@10-l2, rbp.90
        return parse_measure(ranx)
    family, cutoff_text = _family_of(base, cutoff_text)
    if family is None and params_text is None and cutoff_text is None:
        for prefix, fam, param in _TREC_PARAM_PREFIXES:  # Rprec_mult_0.20 -> RprecMult(x=0.20)
            if base.lower().startswith(prefix) and len(base) > len(prefix):
                family, params_text = fam, f"{param}={base[len(prefix) :]}"
                break
    if (
        family is None and (ranx := translate_ranx(raw)) is not None
    ):  # ranx spellings (ndcg_burges@10)
        return parse_measure(ranx)
    if family is None:
        _unknown(
            N_("unknown measure {measure!r}: no measure called {base!r}"), measure=raw, base=base
        )
    d = REGISTRY[family]
    given: dict[str, Any] = {}
    for key, value in _split_params(params_text or ""):
        if value is None:
            _unknown(
                N_("unknown measure {measure!r}: parameter {key!r} is not key=value"),
                measure=raw,
                key=key,
            )
        if key not in d.params:
            raise InputError(
                N_("measure {measure!r}: unknown parameter {key!r}"),
                hint=N_("{name} accepts: {names}")
                if d.params
                else N_("{name} accepts: no parameters"),
                params={"measure": raw, "key": key, "name": family, "names": ", ".join(d.params)},
            )
        if key in given:
            raise InputError(
                N_("measure {measure!r}: parameter {key!r} is given twice"),
                hint=N_("Give it once"),
                params={"measure": raw, "key": key},
            )
        given[key] = _read_param(raw, key, value)
        for name, low, high in d.bounds:
            if name == key and not low <= given[key] <= high:
                raise InputError(
                    N_("measure {measure!r}: {parameter}={text!r} is not accepted"),
                    hint=N_("{name}'s {parameter} is between {low:g} and {high:g}"),
                    params={
                        "measure": raw,
                        "parameter": key,
                        "text": value,
                        "name": family,
                        "low": low,
                        "high": high,
                    },
                )
    params = tuple((k, given[k]) for k in d.params if k in given)
    cutoff = _cutoff(raw, d, cutoff_text)
    if family == "RR" and dict(params).get("miss") == "k_plus_1" and cutoff is None:
        raise InputError(
            N_("measure {measure!r}: miss=k_plus_1 needs a cutoff"),
            hint=N_("e.g. RR(miss=k_plus_1)@10"),
            params={"measure": raw},
        )
    return MeasureSpec(family, params, cutoff, definition=d)


def split_measures(text: str) -> list[str]:
    """Split a comma-separated list of names; commas inside parentheses stay.

    >>> split_measures("P(rel=2)@5,nDCG@10, AP")
    ['P(rel=2)@5', 'nDCG@10', 'AP']
    """
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def parse_measures(names) -> list[MeasureSpec]:
    """Parse several names (a comma-separated string, or a list whose items may themselves
    be comma-separated lists), keeping order, without repeats."""
    if isinstance(names, (str, MeasureSpec)):
        names = [names]
    out, seen = [], set()
    for item in names:
        for n in split_measures(item) if isinstance(item, str) else [item]:
            spec = parse_measure(n)
            if spec.name not in seen:
                seen.add(spec.name)
                out.append(spec)
    if not out:
        raise InputError(N_("no measures given"), hint=ACCEPTED_HINT, params=_accepted())
    return out


def rank_cutoffs(measures) -> tuple[int, ...]:
    """The rank cutoffs of ``measures`` (names or parsed specs), sorted, each once: the
    cutoffs whose straddling tie groups an evaluation reports (a recall level such as
    ``IPrec@0.5`` is not a rank cutoff).

    Examples
    --------
    >>> rank_cutoffs(["P@10", "nDCG@5", "AP", "P@5", "IPrec@0.5"])
    (5, 10)
    """
    specs = (
        parse_measures(measures)
        if isinstance(measures, str) or any(not isinstance(m, MeasureSpec) for m in measures)
        else measures
    )
    return tuple(
        sorted(
            {
                int(s.cutoff)
                for s in specs
                if s.cutoff is not None and s.definition.cutoff != "fraction"
            }
        )
    )


def from_trec_name(name: str) -> str | None:
    """Canonical name of a trec_eval measure name (``ndcg_cut_10`` -> ``nDCG@10``), or None
    when no family prints under that name.

    >>> from_trec_name("map_cut_100"), from_trec_name("iprec_at_recall_0.10"), from_trec_name("bogus")
    ('AP@100', 'IPrec@0.1', None)
    """
    for prefix, _fam, _ in _TREC_PARAM_PREFIXES:
        if name.lower().startswith(prefix) and len(name) > len(prefix):
            try:
                return parse_measure(name).name
            except InputError:
                return None
    family, cutoff = _family_of(name, None)
    if family is None or not any(
        t.lower() == name.lower() or (t.endswith("{k}") and cutoff is not None)
        for t in REGISTRY[family].trec
    ):
        return None
    try:
        return parse_measure(name).name
    except InputError:
        return None


def trec_names(spec) -> list[str]:
    """trec_eval's printed names for a measure without parameters (empty when trec_eval has
    none): ``nDCG@10`` -> ``['ndcg_cut_10']``."""
    spec = parse_measure(spec)
    if spec.params:
        if len(spec.params) == 1 and spec.cutoff is None:  # Rprec_mult_{x} and the like
            key, value = spec.params[0]
            return [
                t.replace("{" + key + "}", f"{float(value):.2f}")
                for t in spec.definition.trec
                if t.endswith("{" + key + "}")
            ]
        return []
    out = []
    for t in spec.definition.trec:
        if t.endswith("{k}") and spec.cutoff is not None:
            k = spec.cutoff
            out.append(
                t.replace("{k}", f"{k:.2f}" if spec.definition.cutoff == "fraction" else str(k))
            )
        elif "{" not in t and spec.cutoff is None:
            out.append(t)
    return out
