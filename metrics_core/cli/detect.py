"""``detect``: AUROC, AUPRC and TPR at fixed FPRs of a binary gate."""

from __future__ import annotations

import warnings

import pandas as pd

from metrics_core import detection as det
from metrics_core.cli._scores_common import (
    add_bootstrap_arguments,
    add_input_arguments,
    add_output_arguments,
    emit,
)
from metrics_core.errors import InputError
from metrics_core.io.scores import read_scores
from metrics_core.validation import parse_number

NAME = "detect"
HELP = "AUROC, AUPRC, TPR@FPR of scores against 0/1 labels"
DESCRIPTION = (
    "Detection-gate metrics. Positive when score >= threshold; TPR@FPR is the "
    "highest TPR with FP <= floor(target * N_neg), computed exactly."
)


def _target(text: str) -> str:
    value = parse_number(text)
    if value is None or value != value:
        raise InputError(f"--fpr {text!r} is not a number", hint="e.g. --fpr 0.05", option="--fpr")
    if not 0 <= value <= 1:
        raise InputError(f"--fpr {text!r} is outside [0, 1]", option="--fpr")
    return text


def add_arguments(parser) -> None:
    add_input_arguments(parser)
    parser.add_argument(
        "--fpr",
        nargs="+",
        default=["0.03", "0.05", "0.1"],
        metavar="TARGET",
        help="target false positive rates (default 0.03 0.05 0.1)",
    )
    parser.add_argument(
        "--single-class",
        default="nan",
        choices=det.SINGLE_CLASS_RULES,
        help="one class only: nan (default, with a warning) or audit (AUROC 0.5, AUPRC = positive rate)",
    )
    add_bootstrap_arguments(parser)
    add_output_arguments(parser)


def _key(target: str) -> str:
    return f"{float(target):g}"


def run(args) -> int:
    targets = [_target(t) for t in args.fpr]
    table = read_scores(
        args.input,
        score_col=args.score_col,
        label_col=args.label_col,
        criterion_col=args.criterion_col,
    )
    y, s = table.y_true, table.y_score
    curve = det.binary_curve(y, s, source=table.source)
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", det.SingleClassWarning)
        auroc = det.roc_auc_score(y, s, single_class=args.single_class)
        auprc = det.average_precision_score(y, s, single_class=args.single_class)
        chosen = {_key(t): t for t in targets}  # one per key: "0.05", "0.1"
        ops = {k: det.tpr_at_fpr(None, None, t, curve=curve) for k, t in chosen.items()}
        tpr = det.tpr_table(curve, list(chosen.values()))[["target_fpr", "tpr", "fpr", "threshold"]]
    tpr = tpr.assign(target_fpr=list(chosen))  # the table's targets written as the JSON keys
    notes += sorted({str(w.message) for w in caught})
    out = {
        "input": table.source,
        "score_col": table.score_col,
        "label_col": table.label_col,
        "auroc": auroc,
        "auprc": auprc,
        "tpr_at_fpr": {
            k: {
                "tpr": v["tpr"],
                "fpr": v["fpr"],
                "threshold": v["threshold"],
                "allowed_fp": v["allowed_fp"],
                "next": v["next"],
            }
            for k, v in ops.items()
        },
        "n_pos": curve.n_pos,
        "n_neg": curve.n_neg,
        "n_thresholds": int(curve.thresholds.size),
        "conventions": {
            "threshold_rule": "positive when score >= threshold",
            "single_class": args.single_class,
            "tpr_at_fpr": "highest TPR with FP <= floor(target * n_neg)",
        },
    }
    if args.bootstrap:
        metrics = ["auroc", "auprc"] + [f"tpr@{t}" for t in targets]
        out["ci"] = det.bootstrap_ci(
            y,
            s,
            metrics,
            n_resamples=args.bootstrap,
            seed=args.seed,
            single_class=args.single_class,
        )
        out["ci_params"] = {"n_resamples": args.bootstrap, "seed": args.seed, "confidence": 0.95}
    tables = [
        (
            "Detection",
            pd.DataFrame(
                {"value": [auroc, auprc, curve.n_pos, curve.n_neg]},
                index=pd.Index(["AUROC", "AUPRC", "n_pos", "n_neg"], name="metric"),
            ),
        ),
        ("TPR at target FPR", tpr),
    ]
    if table.criterion is not None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", det.SingleClassWarning)
            groups = det.per_group_scores(
                y,
                s,
                table.criterion,
                targets=[float(t) for t in targets],
                single_class=args.single_class,
            )
        notes += sorted({str(w.message) for w in caught})
        out["per_criterion"] = groups["table"].to_dict(orient="index")
        out["micro"] = groups["micro"]
        out["macro"] = groups["macro"]
        tables.append(("Per criterion", groups["table"]))
    if notes:
        out["warnings"] = notes
    emit(args, out, tables, {"single_class": args.single_class})
    return 0
