"""Arguments shared by the detect / calibrate / dynamic-k subcommands."""

from __future__ import annotations

import json

import pandas as pd

from metrics_core._version import __version__
from metrics_core.cli._options import RESAMPLES, SEED
from metrics_core.report import format_table, json_safe, provenance, write_text
from metrics_core.validation import LIMITS

RESAMPLES_MAX = LIMITS["resamples"]


def add_input_arguments(parser) -> None:
    parser.add_argument("input", help="CSV/TSV, Parquet or JSON(L) table of scores and labels")
    parser.add_argument(
        "--score-col", help="score column (auto: score, prob, probability, y_score, y_prob ...)"
    )
    parser.add_argument(
        "--label-col", help="0/1 label column (auto: label, y_true, target, has_evidence ...)"
    )
    parser.add_argument(
        "--criterion-col",
        help="criterion column for per-criterion micro/macro averages (auto: criterion)",
    )


def add_bootstrap_arguments(parser) -> None:
    parser.add_argument(
        "--bootstrap",
        type=RESAMPLES,
        default=0,
        metavar="N",
        help=f"bootstrap replicates for 95%% CIs (default 0: none; at most {RESAMPLES_MAX:,})",
    )
    parser.add_argument("--seed", type=SEED, default=0, help="bootstrap seed")


def add_output_arguments(parser) -> None:
    parser.add_argument(
        "--format",
        default="json",
        choices=("json", "table"),
        help="json (one object) or a plain-text table",
    )
    parser.add_argument("-o", "--output", help="write here instead of stdout")


def emit(args, obj: dict, tables: list[tuple[str, pd.DataFrame]], params: dict) -> None:
    """JSON: the object; table: each table with provenance."""
    if args.format == "json":
        write_text(json.dumps(json_safe({"version": __version__, **obj}), indent=2), args.output)
        return
    prov = provenance(None, parameters=", ".join(f"{k}={v}" for k, v in params.items()))
    text = "\n\n".join(format_table(df, "table", prov=prov, title=title) for title, df in tables)
    write_text(text, args.output)
