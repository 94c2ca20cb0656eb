"""Which way a measure improves: the direction a "best" mark or a ranking of runs uses.

The measure registry declares it: each measure family says whether higher values are
better, lower values are better (FirstRel, a rank), or neither (counts such as NumRet,
which describe a run rather than judge it). :func:`measure_direction` reads that
declaration (``better`` on the parsed measure or on its definition) and, for a registry
that does not declare it or a name it does not know, applies the registry's rule for its
families: FirstRel lower, the ``Num*`` counts neither, every other measure higher.
"""

from __future__ import annotations

import re

#: ``better`` as the registry declares it -> direction.
DIRECTIONS = {"higher": 1, "lower": -1, None: 0}
_UNDECLARED = object()


def _declared(name: str):
    """The registry's ``better`` for ``name``, or :data:`_UNDECLARED`."""
    from metrics_core.ranking.registry import parse_measure

    try:
        spec = parse_measure(name)
    except ValueError:  # InputError included: not a registry name
        return _UNDECLARED
    better = getattr(spec, "better", _UNDECLARED)
    if better is _UNDECLARED:
        better = getattr(getattr(spec, "definition", None), "better", _UNDECLARED)
    return better


def measure_direction(name: str) -> int:
    """+1 when larger values of ``name`` are better, -1 when smaller are, 0 when neither.

    Parameters
    ----------
    name : str
        A measure name (``"nDCG@10"``, ``"FirstRel"``, ``"NumRet"``) or any other column
        name of per-query values.

    Returns
    -------
    int
        The direction the measure registry declares for the measure's family
        (``better="higher"`` +1, ``"lower"`` -1, ``None`` 0). A name the registry does not
        parse follows the same rule by its family name: ``FirstRel`` -1, a name starting
        with ``Num`` (a count: no best value) 0, anything else +1.

    Examples
    --------
    >>> measure_direction("nDCG@10"), measure_direction("FirstRel"), measure_direction("NumRet")
    (1, -1, 0)
    >>> measure_direction("P(rel=2)@5"), measure_direction("my_score")
    (1, 1)
    """
    better = _declared(name)
    if better is not _UNDECLARED and better in DIRECTIONS:
        return DIRECTIONS[better]
    base = re.split(r"[@(]", name, maxsplit=1)[0]
    if base == "FirstRel":
        return -1
    if base.startswith("Num"):
        return 0
    return 1


__all__ = ["measure_direction", "DIRECTIONS"]
