"""Hash codes export like every other table: hashing_tables gives the page's numbers as
DataFrames that the shared exporters write (CSV reads back bit-exact, no "nan" anywhere)."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from metrics_core.hashing.evaluate import evaluate_hashing
from metrics_core.hashing.tables import hashing_settings, hashing_tables
from metrics_core.report import format_table, provenance

JUNK = re.compile(r"\b(nan|NaN|None)\b")


def _case(seed: int, nq: int = 25, ndb: int = 120, bits: int = 8):
    rng = np.random.default_rng(seed)
    q = rng.choice([-1, 1], (nq, bits))
    d = rng.choice([-1, 1], (ndb, bits))
    return q, d, rng.integers(0, 4, nq), rng.integers(0, 4, ndb)


def _brute_ap(q, d, ql, dl, rule):
    """AP per query by sorting every database item: (distance, relevant first or last)."""
    out = []
    for i in range(len(q)):
        dist = (q.shape[1] - d @ q[i]) / 2
        rel = (dl == ql[i]).astype(int)
        key = -rel if rule == "optimistic" else rel
        order = np.lexsort((key, dist))
        hits = rel[order]
        ranks = np.flatnonzero(hits) + 1
        out.append(np.mean(np.arange(1, len(ranks) + 1) / ranks) if len(ranks) else 0.0)
    return np.array(out)


@pytest.mark.parametrize("seed", range(3))
def test_tables_hold_the_evaluations_numbers(seed):
    q, d, ql, dl = _case(seed)
    res = evaluate_hashing(q, d, ql, dl, ks=(1, 5, 10), ties="optimistic")
    t = hashing_tables(res, [f"q{i}" for i in range(len(q))])
    np.testing.assert_allclose(
        t["per_query"]["AP"], _brute_ap(q, d, ql, dl, "optimistic"), rtol=0, atol=1e-12
    )
    summary = t["summary"].set_index("measure")["value"]
    assert summary["mAP"] == res["map"] == pytest.approx(t["per_query"]["AP"].mean(), abs=1e-12)
    assert [summary["P@1"], summary["P@5"], summary["P@10"]] == [
        res["precision_at_k"][k] for k in (1, 5, 10)
    ]
    assert t["precision_at_k"]["k"].tolist() == [1, 5, 10]
    assert len(t["by_radius"]) == q.shape[1] + 1 and t["by_radius"]["recall"].iloc[
        -1
    ] == pytest.approx(1.0)
    assert set(map(str, t["per_class"]["class"])) == {str(c) for c in ql.tolist()}
    settings = hashing_settings(res, normalizer="retrieved")
    assert (
        settings["bits"] == 8
        and settings["n_queries"] == 25
        and settings["normalizer"] == "retrieved"
    )


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown", "latex", "table"])
def test_every_hashing_table_exports(fmt):
    q, d, ql, dl = _case(7)
    res = evaluate_hashing(q, d, ql, dl, ks=(1, 5), zero_relevant="exclude")
    prov = provenance(None, **hashing_settings(res))
    for name, table in hashing_tables(res).items():
        text = format_table(table, fmt, prov=prov, title=f"Hash codes: {name}.", index=False)
        assert text and not JUNK.search(text if fmt != "json" else text.replace("null", "")), (
            name,
            text,
        )
        if fmt == "csv":
            back = pd.read_csv(io.StringIO(text))
            assert list(back.columns) == list(table.columns) and len(back) == len(table)
            for c in table.columns:
                if pd.api.types.is_float_dtype(table[c]):
                    assert np.array_equal(back[c].to_numpy(), table[c].to_numpy(), equal_nan=True)


def test_query_ids_must_match_the_queries():
    q, d, ql, dl = _case(1, nq=3)
    res = evaluate_hashing(q, d, ql, dl, ks=(1,))
    assert hashing_tables(res)["per_query"]["query"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="2 query ids for 3 queries"):
        hashing_tables(res, ["a", "b"])
