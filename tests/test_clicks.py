"""MRR from clicks: seed 001's example, a brute-force reference on random logs, edge cases."""

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from metrics_core.clicks import click_mrr, read_click_log
from metrics_core.errors import InputError


def _reference(log, rule="first"):
    """Seed 001's loop, extended by the documented rules (unseen clicks ignored)."""
    rrs = []
    for row in log:
        shown, clicks = list(row["shown"]), [c for c in row["clicked"] if c in row["shown"]]
        if not clicks:
            rrs.append(0.0)
            continue
        ranks = [shown.index(c) + 1 for c in clicks]
        rrs.append(1.0 / (ranks[0] if rule == "first" else min(ranks)))
    return rrs


SEED_001 = [
    {
        "query": "envíos a Quito",
        "shown": ["HAW001", "HAW002", "HAW003", "HAW004", "HAW005"],
        "clicked": ["HAW002"],
    },
    {
        "query": "celulares del mes anterior",
        "shown": ["HAW010", "HAW011", "HAW012"],
        "clicked": ["HAW010"],
    },
    {
        "query": "productos electrónicos",
        "shown": ["HAW020", "HAW021", "HAW022", "HAW023"],
        "clicked": ["HAW023"],
    },
]


def test_seed_001_example():
    ev = click_mrr(SEED_001)
    assert ev.per_impression["RR"].tolist() == [0.5, 1.0, 0.25]
    assert ev.mrr == pytest.approx(1.75 / 3)
    assert round(ev.mrr, 2) == 0.58


@pytest.mark.parametrize("rule", ["first", "top"])
def test_random_logs_match_reference(rule):
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(12)]
    log = []
    for i in range(300):
        shown = list(rng.choice(docs, size=rng.integers(0, 9), replace=True))  # repeats possible
        pool = shown + ["ad1", "ad2"]
        clicked = list(rng.choice(pool, size=rng.integers(0, 4))) if pool else []
        log.append({"query": f"q{i % 17}", "shown": shown, "clicked": clicked})
    ev = click_mrr(log, rule=rule)
    np.testing.assert_allclose(ev.per_impression["RR"].to_numpy(), _reference(log, rule), atol=0)
    assert ev.mrr == pytest.approx(np.mean(_reference(log, rule)))
    unseen = sum(c not in r["shown"] for r in log for c in r["clicked"])
    assert ev.ignored_clicks == unseen
    # per-query means
    ref = pd.Series(_reference(log, rule)).groupby([r["query"] for r in log]).mean()
    np.testing.assert_allclose(ev.per_query["MRR"].to_numpy(), ref.sort_index().to_numpy())


def test_rules_differ_when_first_click_is_lower():
    log = [{"query": "q", "shown": ["a", "b", "c"], "clicked": ["c", "a"]}]
    assert click_mrr(log, rule="first").mrr == pytest.approx(1 / 3)
    assert click_mrr(log, rule="top").mrr == 1.0


def test_edge_cases():
    log = [
        {"query": "q1", "shown": ["a", "b"], "clicked": []},
        {"query": "q2", "shown": ["a", "b"], "clicked": ["zz", "b"]},
        {"query": "q3", "shown": [], "clicked": ["x"]},
        {"query": "q4", "shown": ["a", "b", "a"], "clicked": ["a"]},
    ]
    ev = click_mrr(log)
    assert ev.per_impression["RR"].tolist() == [0.0, 0.5, 0.0, 1.0]
    assert ev.per_impression["ignored_clicks"].tolist() == [0, 1, 1, 0]
    with pytest.raises(InputError, match="not among the shown"):
        click_mrr(log, strict=True)
    with pytest.raises(InputError, match="unknown click rule"):
        click_mrr(log, rule="last")


def test_readers_csv_json_gz():
    csv = b'query,shown,clicked\nq1,a|b|c,c\nq2,"[""x"",""y""]",\n'
    log = read_click_log(csv, name="log.csv")
    assert log["shown"].tolist() == [["a", "b", "c"], ["x", "y"]]
    assert log["clicked"].tolist() == [["c"], []]
    js = json.dumps(SEED_001).encode()
    assert click_mrr(read_click_log(gzip.compress(js))).mrr == pytest.approx(1.75 / 3)
    jl = "\n".join(json.dumps(r) for r in SEED_001).encode()
    assert len(read_click_log(jl)) == 3


def test_reader_errors():
    with pytest.raises(InputError, match="no clicked-ids column"):
        read_click_log(b"query,shown\nq1,a b\n", name="bad.csv")
    with pytest.raises(InputError, match="binary"):
        read_click_log(b"\x00\x01\x02junk", name="junk.bin")
    with pytest.raises(InputError, match="empty"):
        read_click_log(b"   ", name="e.csv")
