"""Which way a measure improves: the direction a "best" mark or a ranking of runs uses.

The measure registry declares it (``better=`` in ``@measure``): higher values are better,
lower values are better (FirstRel, a rank), or neither (counts such as NumRet, which describe
a run rather than judge it). :func:`measure_direction` reads that declaration; nothing is
guessed from a measure's name.
"""

from __future__ import annotations

#: ``better`` as the registry declares it -> direction.
DIRECTIONS = {"higher": 1, "lower": -1, None: 0}


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
        The direction the measure registry declares (``better="higher"`` +1, ``"lower"``
        -1, ``None`` 0: :attr:`MeasureSpec.direction`). A column the registry does not
        parse (a user's own score) is taken as higher-is-better, +1.

    Examples
    --------
    >>> measure_direction("nDCG@10"), measure_direction("FirstRel"), measure_direction("NumRet")
    (1, -1, 0)
    >>> measure_direction("P(rel=2)@5"), measure_direction("my_score")
    (1, 1)
    """
    from metrics_core.ranking.registry import parse_measure

    try:
        spec = parse_measure(name)
    except ValueError:  # InputError included: not a registry name
        return 1
    return DIRECTIONS[spec.better]


__all__ = ["measure_direction", "DIRECTIONS"]
