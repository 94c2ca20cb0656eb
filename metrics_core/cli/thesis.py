"""``table``: the comparative table of runs x measures, every cell and a summary labelled.

The same table as the app's (:mod:`metrics_core.report.thesis`), in English or Spanish
(``--lang``), as CSV, Markdown, LaTeX or an HTML fragment.
"""

from __future__ import annotations

import argparse

from metrics_core.cli._options import SEED, add_ranking_inputs, finite_float, whole
from metrics_core.cli.evaluate import add_convention_arguments, run_evaluations
from metrics_core.errors import InputError
from metrics_core.report import write_text
from metrics_core.report.catalogs import LANGUAGES
from metrics_core.report.thesis import (
    DEFAULT_GOOD,
    FAIR_RATIO,
    TESTS,
    Grading,
    canonical_measure,
    thesis_table,
)
from metrics_core.report.thesis_export import THESIS_WRITERS, localized_words
from metrics_core.stats.significance import CORRECTIONS
from metrics_core.validation import LIMITS

NAME = "table"
HELP = "comparative table of runs x measures with labels (Good / Fair / Needs improvement) and a summary"
DESCRIPTION = (
    "The comparative table of a thesis: one row per run, the mean of each measure "
    "labelled against its threshold (default MRR 0.7, nDCG@10 0.6, P@5 0.5; the middle "
    "band down to half of each), a summary row with the overall verdict, optionally "
    "only the queries dated in a range, and paired tests against a baseline."
)

_unit = finite_float()
_level = finite_float(0, 1, open_low=True, open_high=True)


def _pair(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected MEASURE=VALUE, got {text!r}")
    try:
        return canonical_measure(name.strip()), _unit(value.strip())
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def _three(text: str) -> tuple[str, str, str]:
    parts = tuple(p.strip() for p in text.split(","))
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected three comma-separated names, got {text!r}")
    return parts


def add_arguments(p) -> None:
    add_ranking_inputs(p, runs="repeat for several rows", measures="default: MRR, nDCG@10, P@5")
    g = p.add_argument_group("labels")
    g.add_argument(
        "--good",
        type=_pair,
        action="append",
        metavar="MEASURE=VALUE",
        help="threshold of the first level, repeatable (replaces the defaults "
        + ", ".join(f"{k}={v}" for k, v in DEFAULT_GOOD.items())
        + ")",
    )
    g.add_argument(
        "--fair",
        type=_pair,
        action="append",
        metavar="MEASURE=VALUE",
        help=f"threshold of the middle level (default: {FAIR_RATIO} x the good one)",
    )
    g.add_argument("--names", type=_three, help="names of the three levels, comma-separated")
    g.add_argument("--verdicts", type=_three, help="names of the summary's three verdicts")
    d = p.add_argument_group("queries by date")
    d.add_argument("--metadata", help="query metadata table with query_id and date columns")
    d.add_argument("--from", dest="date_from", help="first date kept (YYYY-MM-DD, inclusive)")
    d.add_argument("--to", dest="date_to", help="last date kept (YYYY-MM-DD, inclusive)")
    s = p.add_argument_group("significance")
    s.add_argument("--baseline", help="run the others are tested against (marked with *)")
    s.add_argument("--test", choices=TESTS, default="t", help="paired test (default t)")
    s.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="multiple-comparison correction over all (run, measure) pairs",
    )
    s.add_argument("--alpha", type=_level, default=0.05, help="level of the marker (default 0.05)")
    s.add_argument("--permutations", type=whole(1, LIMITS["permutations"]), default=10000)
    s.add_argument("--seed", type=SEED, default=0)
    p.add_argument(
        "--lang", choices=LANGUAGES, default="en", help="language of the words (not of numbers)"
    )
    p.add_argument("--format", choices=tuple(THESIS_WRITERS), default="markdown")
    p.add_argument("--digits", type=whole(0, 17), default=4, help="decimals shown (not in CSV)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    add_convention_arguments(p)


def grading_from_args(args, names, verdicts) -> Grading:
    """The thresholds and names the options ask for."""
    good = dict(args.good) if args.good else dict(DEFAULT_GOOD)
    fair = dict(args.fair or [])
    unknown = sorted(set(fair) - set(good))
    if unknown:
        raise InputError(
            f"--fair {unknown[0]} has no --good threshold", hint="give --good for it too"
        )
    return Grading(
        {m: (v, fair.get(m, v * FAIR_RATIO)) for m, v in good.items()},
        names=args.names or names,
        verdicts=args.verdicts or verdicts,
    )


def run(args) -> int:
    if (args.date_from or args.date_to) and not args.metadata:
        raise InputError("--from/--to need --metadata (a table with the queries' dates)")
    if args.metadata and not (args.date_from or args.date_to):
        raise InputError(
            "--metadata is only used with --from and/or --to", hint="give a date range"
        )
    words, names, verdicts = localized_words(args.lang)
    grading = grading_from_args(args, names, verdicts)
    args.measures = args.measures or ["MRR", "nDCG@10", "P@5"]
    metadata = None
    if args.metadata:
        from metrics_core.io.metadata import read_metadata

        metadata = read_metadata(args.metadata, args.metadata)
    evaluations, _ = run_evaluations(args)
    table = thesis_table(
        evaluations,
        evaluations[0].measures,
        grading=grading,
        metadata=metadata,
        date_from=args.date_from,
        date_to=args.date_to,
        baseline=args.baseline,
        test=args.test,
        correction=args.correction,
        alpha=args.alpha,
        n_permutations=args.permutations,
        seed=args.seed,
    )
    export = THESIS_WRITERS[args.format]
    text = (
        export(table, words) if args.format == "csv" else export(table, words, digits=args.digits)
    )
    write_text(text, args.output)
    return 0


__all__ = ["NAME", "HELP", "add_arguments", "run", "grading_from_args"]
