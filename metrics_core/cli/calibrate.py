"""``calibrate``: reliability bins, ECE, MCE and Brier score of probabilities."""

from __future__ import annotations

import pandas as pd

from metrics_core import calibration as cal
from metrics_core.cli._options import whole
from metrics_core.cli._scores_common import (
    add_bootstrap_arguments,
    add_input_arguments,
    add_output_arguments,
    emit,
)
from metrics_core.errors import InputError
from metrics_core.io.scores import read_scores
from metrics_core.validation import LIMITS

NAME = "calibrate"
HELP = "ECE (plug-in and debiased), MCE, Brier and reliability bins of probabilities against 0/1 labels"
DESCRIPTION = (
    "Calibration. Equal-width bins are [i/B, (i+1)/B) with the last bin closed; "
    "ECE is count-weighted; probabilities outside [0, 1] are an error."
)


def add_arguments(parser) -> None:
    add_input_arguments(parser)
    parser.add_argument(
        "--bins",
        type=whole(1, LIMITS["bins"]),
        default=10,
        help=f"number of bins (default 10, at most {LIMITS['bins']:,})",
    )
    parser.add_argument(
        "--strategy",
        default="uniform",
        choices=cal.STRATEGIES,
        help="uniform (equal width, default) or quantile (equal mass)",
    )
    add_bootstrap_arguments(parser)
    add_output_arguments(parser)


def run(args) -> int:
    if args.bins < 1:
        raise InputError(f"--bins must be at least 1, got {args.bins}", option="--bins")
    table = read_scores(
        args.input,
        score_col=args.score_col,
        label_col=args.label_col,
        criterion_col=args.criterion_col,
    )
    try:
        rep = cal.calibration_report(table.y_true, table.y_score, args.bins, args.strategy)
    except InputError as exc:
        raise exc.replace(
            source=table.source, line=None, option=None, field=None, plain_hint=None
        ) from None
    b = rep["bins"]
    bins = pd.DataFrame(
        {
            "lower": b["lower"],
            "upper": b["upper"],
            "count": b["count"],
            "confidence": b["confidence"],
            "frequency": b["frequency"],
            "freq_low": b["freq_low"],
            "freq_high": b["freq_high"],
        }
    )
    out = {
        "input": table.source,
        "score_col": table.score_col,
        "label_col": table.label_col,
        "ece": rep["ece"],
        "ece_debiased": rep["ece_debiased"],
        "mce": rep["mce"],
        "brier": rep["brier"],
        "n": rep["n"],
        "n_bins": args.bins,
        "strategy": args.strategy,
        "bins": bins.to_dict(orient="records"),
        "conventions": {
            "bins": "[lower, upper), last bin closed",
            "ece": "count-weighted plug-in (Naeini et al. 2015)",
            "ece_debiased": "plug-in minus each bin's estimated sampling bias (Kumar et al. 2019)",
            "interval": "Wilson 95% on frequency",
            "ci": "BCa bootstrap (Efron 1987), withheld (NaN) when |z0| > 1",
        },
    }
    if args.bootstrap:
        out["ci"] = cal.bootstrap_calibration_ci(
            table.y_true,
            table.y_score,
            args.bins,
            args.strategy,
            n_resamples=args.bootstrap,
            seed=args.seed,
        )
    summary = pd.DataFrame(
        {"value": [rep["ece"], rep["ece_debiased"], rep["mce"], rep["brier"], rep["n"]]},
        index=pd.Index(["ECE (plug-in)", "ECE (debiased)", "MCE", "Brier", "n"], name="metric"),
    )
    emit(
        args,
        out,
        [("Calibration", summary), ("Reliability bins", bins)],
        {"bins": args.bins, "strategy": args.strategy},
    )
    return 0
