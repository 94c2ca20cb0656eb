"""``fuse``: rank fusion of runs (ranx's catalogue), or its cross-validated tuning (--tune)."""

from __future__ import annotations

import json
import sys

from metrics_core.cli._options import SEED, finite_float, whole
from metrics_core.errors import InputError
from metrics_core.fusion.catalog import METHODS, NORMS

NAME = "fuse"
HELP = "fuse runs into one (RRF, CombSUM/MNZ, weighted sums, Borda, Condorcet ...), or tune a fusion honestly"
DESCRIPTION = (
    "Fuse two or more runs into one run (TREC lines by default). --tune chooses the method's "
    "weights and parameters by grid search on training queries and reports scores on held-out "
    "queries (k-fold cross-validation by query), with tests against each input run."
)
FORMATS = ("trec", "csv", "parquet")
TUNE_FORMATS = ("table", "json", "markdown")


def _param(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise InputError(
            f"--param takes NAME=VALUE, not {text!r}", option="--param", field="params"
        )
    try:
        number = float(value)
    except ValueError:
        raise InputError(
            f"--param {name}: {value!r} is not a number", option="--param", field="params"
        ) from None
    return name.strip(), int(number) if number.is_integer() and name.strip() in _WHOLE else number


#: the parameters written as whole numbers (ranx's ``k``, ``w``, ``n_segments``): each
#: method's declaration says which (a value like ``k=60`` stays an int, as ranx's grid has it)
_WHOLE = frozenset(
    p.name
    for spec in METHODS.values()
    for p in (*spec.params, *spec.train_params)
    if p.integer or isinstance(p.default, int)
)


def _params_help() -> str:
    """Every method's parameters, from the declarations: ``rrf: k=60; rbc: phi ...``."""
    parts = []
    for spec in METHODS.values():
        names = [
            p.name if p.default is None else f"{p.name}={p.default}"
            for p in (*spec.params, *spec.train_params)
        ]
        if names:
            parts.append(f"{spec.name}: {', '.join(names)}")
    return "; ".join(parts)


def add_arguments(p) -> None:
    p.add_argument(
        "--run", required=True, action="append", help="run file; repeat (at least two runs)"
    )
    p.add_argument(
        "--method", default="rrf", help="fusion method (default rrf): " + ", ".join(METHODS)
    )
    p.add_argument(
        "--norm",
        default="min-max",
        choices=tuple(NORMS),
        help="score normalisation before fusing (default min-max, as ranx)",
    )
    p.add_argument(
        "--weight",
        action="append",
        type=finite_float(),
        dest="weights",
        help="weight of each run, in the order of --run (weighted methods; default equal)",
    )
    p.add_argument(
        "--param",
        action="append",
        type=_param,
        default=[],
        metavar="NAME=VALUE",
        help="method parameter (repeat): " + _params_help(),
    )
    p.add_argument("--qrels", help="judgements: training data of supervised methods, and --tune's")
    p.add_argument("--name", help="name (TREC tag) of the fused run (default: the method)")
    p.add_argument(
        "--format",
        default=None,
        help="trec, csv or parquet for the run (default: from -o, else trec); "
        "with --tune: table, json or markdown",
    )
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    t = p.add_argument_group("tuning (--tune)")
    t.add_argument(
        "--tune", action="store_true", help="grid search, k-fold cross-validated by query"
    )
    t.add_argument(
        "-m",
        "--measure",
        default="nDCG@10",
        help="measure maximised and reported (default nDCG@10)",
    )
    t.add_argument("--folds", type=whole(2, 1000), default=5, help="number of folds (default 5)")
    t.add_argument(
        "--seed", type=SEED, default=0, help="seed of the folds and of the randomization test"
    )
    t.add_argument(
        "--fold-metadata", help="query metadata table whose --fold-column gives each query's fold"
    )
    t.add_argument(
        "--fold-column",
        default="fold",
        help="column of the folds in --fold-metadata (default fold)",
    )
    t.add_argument(
        "--in-sample",
        action="store_true",
        help="tune and score on the same queries (optimistic; the output says so)",
    )
    t.add_argument(
        "--permutations",
        type=whole(1, 1_000_000),
        default=10000,
        help="sign flips of the randomization test against each input (default 10000)",
    )
    t.add_argument(
        "--tune-run", help="with --tune: also write the cross-validated fused run (TREC) here"
    )


def run(args) -> int:
    import metrics_core as mc
    from metrics_core.io.writers import run_text, write_run

    if len(args.run) < 2:
        raise InputError(
            "fuse needs at least two runs (--run A --run B)", option="--run", field="run"
        )
    runs = [mc.read_run(path) for path in args.run]
    params = dict(args.param)
    if args.tune:
        if not args.qrels:
            raise InputError(
                "--tune needs --qrels (the judgements to tune on)", option="--qrels", field="qrels"
            )
        fmt = args.format or "table"
        if fmt not in TUNE_FORMATS:
            raise InputError(
                f"--format {fmt!r} with --tune",
                hint="accepted: " + ", ".join(TUNE_FORMATS),
                option="--format",
                field="format",
            )
        folds = None
        if args.fold_metadata:
            from metrics_core.io.metadata import read_metadata

            folds = read_metadata(args.fold_metadata, args.fold_metadata)
        result = mc.tune_fusion(
            args.qrels,
            runs,
            method=args.method,
            norm=args.norm,
            measure=args.measure,
            k=args.folds,
            seed=args.seed,
            folds=folds,
            fold_column=args.fold_column,
            validation="in-sample" if args.in_sample else "cross-validation",
            n_permutations=args.permutations,
        )
        if args.tune_run:
            write_run(result.run, args.tune_run, "trec", tag=args.name)
        if fmt == "json":
            text = json.dumps(result.to_dict(), indent=2)
        elif fmt == "markdown":
            text = result.to_markdown()
        else:
            text = _table(result)
        _write(text, args.output)
        return 0
    fused = mc.fuse(
        runs,
        method=args.method,
        norm=args.norm,
        weights=args.weights,
        params=params,
        qrels=args.qrels,
        name=args.name,
    )
    fmt = args.format
    if fmt is not None and fmt not in FORMATS:
        raise InputError(
            f"--format {fmt!r}",
            hint="accepted: " + ", ".join(FORMATS),
            option="--format",
            field="format",
        )
    if args.output and args.output != "-":
        write_run(fused, args.output, fmt, tag=args.name)
    else:
        if fmt == "parquet":
            raise InputError(
                "Parquet is written to a file", hint="give -o FILE.parquet", option="--format"
            )
        sys.stdout.write(run_text(fused, fmt or "trec", tag=args.name))
    return 0


def _table(result) -> str:
    folds = result.folds.copy()
    from metrics_core.fusion.tuning import params_text

    folds["params"] = [params_text(p) for p in folds["params"]]
    lines = [
        result.describe(),
        "",
        folds.to_string(index=False, float_format=lambda v: f"{v:.4f}"),
        "",
        result.summary.to_string(float_format=lambda v: f"{v:.4f}"),
    ]
    return "\n".join(lines) + "\n"


def _write(text: str, path: str | None) -> None:
    from metrics_core.report import write_text

    write_text(text, path)


__all__ = ["NAME", "HELP", "add_arguments", "run"]
