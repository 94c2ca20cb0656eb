"""Results in the peers' shapes: a long table and pytrec_eval's nested dictionary.

:func:`long_frame` gives one row per (query, measure), as ir_measures' ``iter_calc`` yields
them; :func:`nested_dict` gives ``{query: {measure: value}}``, the shape pytrec_eval's
``evaluate`` returns. Both are built from an :class:`~metrics_core.Evaluation`'s columns in
one pass: the evaluation itself has no per-query Python step, building a dictionary of
dictionaries is the output's cost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["long_frame", "nested_dict", "nested_from_columns"]


def nested_from_columns(
    query_ids: Sequence, keys: Sequence[str], columns: Sequence[np.ndarray]
) -> dict:
    """``{query: {key: value}}`` from per-query columns (Python floats, query order kept).

    >>> nested_from_columns(["q1", "q2"], ["AP", "P@5"], [np.array([0.5, 1.0]), np.array([0.2, 0.0])])
    {'q1': {'AP': 0.5, 'P@5': 0.2}, 'q2': {'AP': 1.0, 'P@5': 0.0}}
    """
    if not len(keys):
        return {str(q): {} for q in query_ids}
    rows = np.column_stack([np.asarray(c, dtype=np.float64) for c in columns]).tolist()
    keys = list(keys)
    return {
        str(q): dict(zip(keys, row, strict=True)) for q, row in zip(query_ids, rows, strict=True)
    }


def nested_dict(ev) -> dict[str, dict[str, float]]:
    """An evaluation's per-query values as ``{query_id: {measure: value}}`` (pytrec_eval's
    shape, RankLab's measure names), queries in ``ev.per_query``'s order.

    >>> import metrics_core as mc
    >>> ev = mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}, ["P@2", "RR"])
    >>> nested_dict(ev)
    {'q1': {'P@2': 0.5, 'RR': 1.0}}
    """
    frame = ev.per_query
    return nested_from_columns(frame.index, ev.measures, [frame[m].to_numpy() for m in ev.measures])


def long_frame(ev):
    """An evaluation's per-query values as a long table: columns ``query_id``, ``measure``,
    ``value``; queries in ``ev.per_query``'s order, measures in request order within each.

    >>> import metrics_core as mc
    >>> ev = mc.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}}, ["P@2", "RR"])
    >>> long_frame(ev).to_dict("records")
    [{'query_id': 'q1', 'measure': 'P@2', 'value': 0.5}, {'query_id': 'q1', 'measure': 'RR', 'value': 1.0}]
    """
    import pandas as pd

    frame = ev.per_query
    measures = list(ev.measures)
    n, k = len(frame), len(measures)
    values = frame[measures].to_numpy(dtype=np.float64).reshape(-1) if k else np.zeros(0)
    return pd.DataFrame(
        {
            "query_id": np.repeat(np.asarray(frame.index, dtype=object), k),
            "measure": np.tile(np.asarray(measures, dtype=object), n),
            "value": values,
        }
    )
