"""Evaluation results in the peers' shapes: long frame and pytrec_eval's nested dict."""

from __future__ import annotations

import numpy as np

import metrics_core as mc
from metrics_core.evaluation import long_frame, nested_dict
from tests.compat.test_pytrec_eval_shim import random_data


def test_long_frame_and_nested_dict_hold_every_per_query_value():
    qrels, run = random_data(7)
    ev = mc.evaluate(qrels, run, ["AP", "nDCG@10", "P@5", "NumRet"])
    wide = ev.per_query
    long = ev.to_frame(long=True)
    assert list(long.columns) == ["query_id", "measure", "value"]
    assert len(long) == wide.size
    back = long.pivot(index="query_id", columns="measure", values="value")[ev.measures]
    np.testing.assert_array_equal(back.loc[wide.index].to_numpy(), wide.to_numpy())
    assert long_frame(ev).equals(long)
    assert ev.to_frame() is wide
    nested = ev.to_dict(nested=True)
    assert nested == nested_dict(ev)
    assert list(nested) == [str(q) for q in wide.index]
    for q, row in wide.iterrows():
        assert nested[q] == {m: float(row[m]) for m in ev.measures}
        assert all(type(v) is float for v in nested[q].values())
    assert "aggregate" in ev.to_dict()  # the command line's shape is unchanged


def test_nested_dict_matches_pytrec_eval_shape_of_the_shim():
    from metrics_core.compat import pytrec_eval

    qrels, run = random_data(8)
    shim = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5"}).evaluate(run)
    ev = mc.evaluate(qrels, run, ["AP", "P@5"], compat="trec_eval9")
    nested = ev.to_dict(nested=True)
    assert {q: {"map": v["AP"], "P_5": v["P@5"]} for q, v in nested.items()} == shim
