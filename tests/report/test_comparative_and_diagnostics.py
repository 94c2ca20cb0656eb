"""The comparative report (the specification's example table) and the data diagnostics table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.report import DEFAULT_GOOD_THRESHOLDS, PALETTE, REPORT_MEASURES, interpret
from metrics_core.report.diagnostics import diagnostic_measures, diagnostics_table
from metrics_core.report.query_report import query_report

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "ranking"


def test_comparative_report_reproduces_the_specification_table():
    per_query = pd.DataFrame(
        {"RR": [0.833, 1.000, 0.250], "nDCG@10": [0.72, 0.85, 0.41], "P@5": [0.60, 0.80, 0.20]},
        index=["1", "2", "3"],
    )
    meta = pd.DataFrame(
        {
            "query": ["envíos a Quito", "celulares del mes anterior", "productos electrónicos"],
            "date": pd.to_datetime(["2025-01-28"] * 3),
        },
        index=["1", "2", "3"],
    )
    report = query_report(per_query, meta, DEFAULT_GOOD_THRESHOLDS)
    # Good, Good, Needs improvement; summary Fair with means 0.69, 0.66, 0.53
    assert report["interpretation"].tolist() == ["Good", "Good", "Needs improvement", "Fair"]
    summary = report.iloc[-1]
    assert (round(summary["MRR"], 2), round(summary["nDCG@10"], 2), round(summary["P@5"], 2)) == (
        0.69,
        0.66,
        0.53,
    )
    assert summary["query"] == "3 evaluations"
    assert report["date"].tolist()[:3] == ["2025-01-28"] * 3
    assert list(report.columns) == [
        "ID",
        "query",
        "date",
        "MRR",
        "nDCG@10",
        "P@5",
        "interpretation",
    ]


def test_comparative_report_labels_are_the_worst_interpretation_on_random_values():
    rng = np.random.default_rng(1)
    per_query = pd.DataFrame(
        rng.random((50, 3)).round(1),
        columns=list(REPORT_MEASURES),
        index=[str(i) for i in range(50)],
    )
    per_query.iloc[3, 1] = np.nan
    report = query_report(per_query, None, DEFAULT_GOOD_THRESHOLDS)
    order = {"Good": 0, "Fair": 1, "Needs improvement": 2}
    for i, (_, row) in enumerate(per_query.iterrows()):
        labels = [interpret(float(row[m]), DEFAULT_GOOD_THRESHOLDS[m]) for m in REPORT_MEASURES]
        labels = [x for x in labels if x]
        assert report["interpretation"].iloc[i] == max(labels, key=order.get)
    assert report["query"].iloc[0] == "" and report["date"].iloc[0] == ""
    assert report["nDCG@10"].iloc[-1] == pytest.approx(np.nanmean(per_query["nDCG@10"]))


def test_one_copy_of_the_report_constants():
    assert set(DEFAULT_GOOD_THRESHOLDS) == set(REPORT_MEASURES)
    assert len(PALETTE) == len(set(PALETTE)) == 8


def test_diagnostics_table_on_the_sample():
    qrels = mc.read_qrels(f"{SAMPLE}/qrels.txt")
    runs = {name: mc.read_run(f"{SAMPLE}/{name}.txt") for name in ("bm25", "dense")}
    evs = {name: mc.evaluate(qrels, run, diagnostic_measures(5)) for name, run in runs.items()}
    table = diagnostics_table(evs, 5, runs)
    assert list(table.index) == ["bm25", "dense"] and table.index.name == "run"
    assert list(table.columns) == [
        "lines",
        "queries evaluated",
        "missing queries",
        "extra queries",
        "duplicates",
        "tied groups straddling @5",
        "Judged@5 (mean)",
        "queries with unjudged in top 5",
    ]
    for name, ev in evs.items():
        row = table.loc[name]
        d = ev.diagnostics
        assert row["lines"] == len(runs[name]) and row["queries evaluated"] == d["num_queries"]
        assert (
            row["extra queries"] == len(d["extra_queries"]) and row["duplicates"] == d["duplicates"]
        )
        assert row["tied groups straddling @5"] == d["ties_straddling"].get("5", 0)
        judged = ev.per_query["Judged@5"].to_numpy()
        assert row["Judged@5 (mean)"] == pytest.approx(judged.mean())
        assert row["queries with unjudged in top 5"] == int((judged < 1).sum())
    assert "lines" not in diagnostics_table(evs, 5).columns
    assert diagnostics_table({}, 5).empty
