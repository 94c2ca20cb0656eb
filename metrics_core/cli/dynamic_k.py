"""``dynamic-k``: evidence recall, precision and average K of a variable-K selection."""

from __future__ import annotations

import pandas as pd

from metrics_core import dynamic_k as dk
from metrics_core.cli._options import finite_float, whole
from metrics_core.cli._scores_common import add_output_arguments, emit
from metrics_core.io.scores import read_candidates
from metrics_core.validation import LIMITS

NAME = "dynamic-k"
HELP = "evidence recall/precision and average K of a per-query probability threshold"
DESCRIPTION = (
    "Dynamic K: per query, candidates with probability >= tau, "
    "clamped to [k_min, k_max], k_max = min(hard_cap, floor(n * k_max_ratio))."
)


def add_arguments(parser) -> None:
    parser.add_argument("input", help="table: query, candidate, probability, is_gold[, criterion]")
    parser.add_argument("--query-col")
    parser.add_argument("--candidate-col")
    parser.add_argument("--prob-col")
    parser.add_argument("--gold-col")
    parser.add_argument("--criterion-col")
    parser.add_argument("--tau", type=finite_float(), default=dk.DEFAULTS["tau"])
    parser.add_argument("--k-min", type=whole(0, LIMITS["cutoff"]), default=dk.DEFAULTS["k_min"])
    parser.add_argument(
        "--hard-cap", type=whole(0, LIMITS["cutoff"]), default=dk.DEFAULTS["hard_cap"]
    )
    parser.add_argument("--k-max-ratio", type=finite_float(0), default=dk.DEFAULTS["k_max_ratio"])
    parser.add_argument(
        "--conflict",
        default="k_max",
        choices=dk.CONFLICT_RULES,
        help="when k_max < k_min: k_max wins (default) or k_min wins",
    )
    parser.add_argument(
        "--curve", action="store_true", help="also the curve over tau = 0, 0.01, ..., 1"
    )
    add_output_arguments(parser)


def run(args) -> int:
    t = read_candidates(
        args.input,
        query_col=args.query_col,
        candidate_col=args.candidate_col,
        prob_col=args.prob_col,
        gold_col=args.gold_col,
        criterion_col=args.criterion_col,
    )
    table = dk.prepare(t.query, t.probability, t.is_gold, t.criterion, source=t.source)
    params = {
        "tau": args.tau,
        "k_min": args.k_min,
        "hard_cap": args.hard_cap,
        "k_max_ratio": args.k_max_ratio,
        "conflict": args.conflict,
    }
    r = dk.dynamic_k_scores(
        table, args.tau, args.k_min, args.hard_cap, args.k_max_ratio, conflict=args.conflict
    )
    out = {
        "input": t.source,
        "recall": r["recall"],
        "precision": r["precision"],
        "avg_k": r["avg_k"],
        "n_queries": r["n_queries"],
        "micro_recall": r["micro_recall"],
        "micro_precision": r["micro_precision"],
        "params": r["params"],
    }
    tables = [
        (
            "Dynamic K",
            pd.DataFrame(
                {"value": [r["recall"], r["precision"], r["avg_k"], r["n_queries"]]},
                index=pd.Index(
                    ["evidence_recall", "evidence_precision", "avg_k", "n_queries"], name="metric"
                ),
            ),
        )
    ]
    if table.criterion is not None:
        pc = dk.per_criterion(
            table, args.tau, args.k_min, args.hard_cap, args.k_max_ratio, conflict=args.conflict
        )
        out["per_criterion"] = pc["table"].to_dict(orient="index")
        out["micro"], out["macro"] = pc["micro"], pc["macro"]
        tables.append(("Per criterion", pc["table"]))
    if args.curve:
        curve = dk.dynamic_k_curve(
            table, None, args.k_min, args.hard_cap, args.k_max_ratio, conflict=args.conflict
        )
        out["curve"] = curve.to_dict(orient="list")
        tables.append(("Curve over tau", curve))
    emit(args, out, tables, params)
    return 0
