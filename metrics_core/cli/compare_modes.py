"""``compare-modes``: what changes between trec_eval 10 and trec_eval 9 conventions, and why."""

from __future__ import annotations

import json

from metrics_core.cli._options import add_ranking_inputs
from metrics_core.cli.evaluate import add_convention_arguments, conventions_from_args
from metrics_core.report import (
    TABLE_FORMATS,
    format_table,
    json_safe,
    provenance,
    write_export,
)

NAME = "compare-modes"
HELP = "queries and measures whose value differs under trec_eval 9 and 10 conventions, and why"
DESCRIPTION = (
    "Evaluate each run under trec_eval 10 (RankLab's default) and trec_eval 9.0.8 "
    "conventions (what pytrec_eval and ir_measures compute): float32 scores, recall-level "
    "rounding, -c averages. Lists every (query, measure) whose value differs with its cause, "
    "to explain a difference from a published number."
)


def add_arguments(p) -> None:
    add_ranking_inputs(
        p, runs="repeat for several runs", measures="default: a standard set with IPrec"
    )
    p.add_argument("--format", choices=TABLE_FORMATS, default="table")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    add_convention_arguments(p)


def run(args) -> int:
    import pandas as pd

    from metrics_core.io import read_qrels, read_run
    from metrics_core.ranking.modes import MODES_MEASURES, compare_modes

    conv = conventions_from_args(args)
    measures = args.measures or list(MODES_MEASURES)
    qrels = read_qrels(args.qrels)
    reports = [compare_modes(qrels, read_run(path), measures, conv) for path in args.run]
    if args.format == "json":
        text = json.dumps(json_safe({"conventions": conv.as_dict(), "runs": reports}), indent=2)
    else:
        rows = []
        for rep in reports:
            for d in rep["differences"]:
                rows.append(
                    {
                        "run": rep["name"],
                        "query": d["query"],
                        "measure": d["measure"],
                        "trec_eval 10": d["trec_eval10"],
                        "trec_eval 9": d["trec_eval9"],
                        "why": ", ".join(d["why"]) or "-",
                    }
                )
            for m, a in rep["aggregate"].items():
                rows.append(
                    {
                        "run": rep["name"],
                        "query": "all",
                        "measure": m,
                        "trec_eval 10": a["trec_eval10"],
                        "trec_eval 9": a["trec_eval9"],
                        "why": ", ".join(a["why"]) or "-",
                    }
                )
        frame = pd.DataFrame(
            rows, columns=["run", "query", "measure", "trec_eval 10", "trec_eval 9", "why"]
        )
        text = format_table(frame, args.format, prov=provenance(conv), index=False)
        if args.format == "table":
            lines = [
                f"{rep['name']}: {rep['summary']['values_differing']} values differ on "
                f"{rep['summary']['queries_differing']} of {rep['queries']} queries "
                f"({rep['summary']['reordered_queries']} rankings reordered by float32 ties)"
                for rep in reports
            ]
            text = "\n".join(lines) + "\n\n" + text
    write_export(text, args.output, args.format, provenance(conv))
    return 0
