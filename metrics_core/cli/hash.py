"""``hash``: mAP, P@k and radius measures of hash codes ranked by Hamming distance."""

from __future__ import annotations

import json

import pandas as pd

from metrics_core._version import __version__
from metrics_core.cli._options import CUTOFF, whole
from metrics_core.errors import N_, InputError, Phrase
from metrics_core.hashing import NORMALIZERS, TIE_RULES, evaluate_hashing
from metrics_core.hashing.validate import NAMED
from metrics_core.io.codes import read_matrix
from metrics_core.report import format_table, json_safe, provenance, write_text
from metrics_core.validation import LIMITS

NAME = "hash"
HELP = "evaluate hash codes (Hamming ranking): mAP with its tie band, P@k, radius measures"


def _with_file(exc: InputError, args) -> InputError:
    """The library names a role ("query codes: ..."); the command line names its file too."""
    if exc.source:
        return exc
    roles = {
        "query codes": args.query_codes,
        "database codes": args.db_codes,
        "query labels": args.query_labels,
        "database labels": args.db_labels,
    }
    problem = exc.templates["problem"]
    for role, path in roles.items():
        if (
            isinstance(problem, Phrase)
            and problem.template == NAMED
            and problem.params["name"] == role
        ):
            # the problem without its role, still translatable (the role moves to the source)
            return exc.replace(
                problem=problem.params["problem"],
                source=f"{path} ({role})",
                line=None,
                option=None,
                field=None,
                plain_hint=None,
            )
        if exc.problem.startswith(role + ":"):
            return exc.replace(
                problem=exc.problem[len(role) + 1 :].strip(),
                source=f"{path} ({role})",
                line=None,
                option=None,
                field=None,
                plain_hint=None,
            )
    return exc


def add_arguments(p) -> None:
    p.add_argument("--query-codes", required=True, help=".npy, .pt or CSV of ±1 or 0/1 codes")
    p.add_argument("--db-codes", required=True)
    p.add_argument(
        "--query-labels",
        required=True,
        help="class ids (one per line, or a 1-D array), or 0/1 multi-label rows "
        "(a 2-D array; an (n, 1) 0/1 array is multi-label too)",
    )
    p.add_argument("--db-labels", required=True)
    p.add_argument("--topk", type=CUTOFF, help="mAP@K (default: the whole ranking)")
    p.add_argument("--ties", choices=TIE_RULES, default="expected")
    p.add_argument(
        "--normalizer",
        "--normaliser",
        dest="normalizer",
        choices=NORMALIZERS,
        default="retrieved",
        help="AP@K normalizer: relevant retrieved in the top K (DeepHash), or min(R, K)",
    )
    p.add_argument(
        "--exclude-zero-relevant",
        action="store_true",
        help="leave queries without relevant items out of the mean (default: AP 0)",
    )
    p.add_argument(
        "-k", dest="ks", type=CUTOFF, action="append", help="P@k cutoffs (default 1, 10, 100)"
    )
    p.add_argument(
        "--radius",
        type=whole(0, LIMITS["radius"]),
        default=2,
        help="Hamming radius of the radius measures (default 2)",
    )
    p.add_argument("--device", default=None, help="torch device, e.g. cuda (default: cpu)")
    p.add_argument("--format", choices=("json", "table"), default="json")
    p.add_argument("-o", "--output")


def _needs_torch() -> None:
    """One line, not a traceback, when torch (the hashing extra) is not installed."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError(
            N_("the hash command needs torch, which is not installed"),
            hint=N_("pip install 'ranklab[hashing]' (or: pip install torch)"),
        ) from None


def run(args) -> int:
    from metrics_core.hashing import resolve_device

    _needs_torch()
    if args.device is not None:
        try:
            resolve_device(args.device)
        except InputError as exc:
            raise exc.replace(
                problem=Phrase(N_("--device: {problem}"), {"problem": exc.phrase()}),
                option="--device",
                field=None,
                plain_hint=None,
            ) from None
    try:
        out = evaluate_hashing(
            read_matrix(args.query_codes, "codes"),
            read_matrix(args.db_codes, "codes"),
            read_matrix(args.query_labels, "labels"),
            read_matrix(args.db_labels, "labels"),
            topk=args.topk,
            ks=tuple(args.ks or (1, 10, 100)),
            radius=args.radius,
            ties=args.ties,
            normalizer=args.normalizer,
            zero_relevant="exclude" if args.exclude_zero_relevant else "zero",
            device=args.device,
        )
    except InputError as exc:
        raise _with_file(exc, args) from None
    result = {
        "version": __version__,
        "map": out["map"],
        "map_band": out["map_band"],
        "precision_at_k": {str(k): v for k, v in out["precision_at_k"].items()},
        f"precision_radius_{out['radius']}": out["precision_radius"],
        f"recall_radius_{out['radius']}": out["recall_radius"],
        "n_queries": out["n_queries"],
        "n_db": out["n_db"],
        "bits": out["bits"],
        "ties": out["ties"],
        "topk": out["topk"],
        "normalizer": args.normalizer,
        "zero_relevant_queries": out["zero_relevant_queries"],
        "per_class_map": out["per_class_map"],
    }
    if args.format == "json":
        text = json.dumps(json_safe(result), indent=2)
    else:
        rows = [
            ("mAP" + (f"@{args.topk}" if args.topk else ""), out["map"]),
            ("mAP band low (pessimistic ties)", out["map_band"][0]),
            ("mAP band high (optimistic ties)", out["map_band"][1]),
        ]
        rows += [(f"P@{k}", v) for k, v in out["precision_at_k"].items()]
        rows += [
            (f"precision within radius {out['radius']}", out["precision_radius"]),
            (f"recall within radius {out['radius']}", out["recall_radius"]),
        ]
        frame = pd.DataFrame(rows, columns=["measure", "value"])
        text = format_table(
            frame,
            "table",
            index=False,
            prov=provenance(
                None,
                ties=args.ties,
                queries=out["n_queries"],
                database=out["n_db"],
                bits=out["bits"],
            ),
        )
    write_text(text, args.output)
    return 0
