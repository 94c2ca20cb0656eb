"""``compare``: every run against a baseline with significance tests and intervals."""

from __future__ import annotations

import json

from metrics_core.cli._options import (
    PROBABILITY,
    SEED,
    add_format_options,
    add_ranking_inputs,
    whole,
)
from metrics_core.cli.evaluate import add_convention_arguments, run_evaluations
from metrics_core.errors import InputError
from metrics_core.report import write_export
from metrics_core.report.comparison import compare
from metrics_core.stats.comparison import DEFAULT_FAMILY, FAMILY_SCOPES
from metrics_core.stats.significance import CORRECTIONS
from metrics_core.validation import LIMITS

NAME = "compare"
HELP = "compare runs against a baseline: deltas, bootstrap CIs, t/Wilcoxon/permutation tests"
DESCRIPTION = (
    "Compare every run with the baseline on one query set per measure (--queries): "
    "mean difference, "
    "paired bootstrap interval, paired t-test, Wilcoxon signed-rank and a seeded "
    "sign-flip permutation test, corrected for multiple comparisons over all "
    "(run, measure) pairs."
)
COMPARISON_FORMATS = ("table", "json", "markdown", "latex", "csv")


def add_arguments(p) -> None:
    add_ranking_inputs(p, runs="repeat (at least two runs)", measures="default: a standard set")
    add_format_options(p)
    p.add_argument(
        "--baseline",
        action="append",
        default=None,
        help="name of the baseline run (its file name without extension, or TREC tag); "
        "repeat it to compare several baselines against every run at once",
    )
    p.add_argument(
        "--system",
        action="append",
        default=None,
        metavar="NAME=RUN,RUN,...",
        help="a system of several runs (seeds, folds): compared through its per-query mean "
        "over its runs, with their spread (seed SD) and a test on queries and seeds; repeat for each system (--baseline may name one)",
    )
    p.add_argument(
        "--all-pairs",
        action="store_true",
        help="every run against every other: letters show which runs each one beats per measure",
    )
    p.add_argument(
        "--test",
        choices=("permutation", "t", "wilcoxon", "tukey"),
        default="permutation",
        help="with --all-pairs or several baselines: the test of each pair (tukey: Tukey's HSD, "
        "which controls the error over all pairs itself; default permutation)",
    )
    p.add_argument(
        "--permutations",
        type=whole(1, LIMITS["permutations"]),
        default=10000,
        help="sign flips of the permutation test (default 10000)",
    )
    p.add_argument(
        "--bootstrap",
        type=whole(1, LIMITS["resamples"]),
        default=None,
        help="bootstrap resamples of the CI (default: same as --permutations)",
    )
    p.add_argument(
        "--seed", type=SEED, default=0, help="seed of the permutation test and bootstrap"
    )
    p.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="multiple-comparison correction over the family of effectiveness tests",
    )
    p.add_argument(
        "--family",
        choices=FAMILY_SCOPES,
        default=DEFAULT_FAMILY,
        help="the correction's family: all (run, measure) pairs (default), or per_measure "
        "(PyTerrier); counts such as NumRet are never in it",
    )
    p.add_argument("--confidence", type=PROBABILITY, default=0.95, help="CI level (default 0.95)")
    p.add_argument(
        "--alpha", type=PROBABILITY, default=0.05, help="level of the markers (default 0.05)"
    )
    p.add_argument(
        "--queries",
        choices=("common", "qrels"),
        default=None,
        help="the one query set of every comparison: 'common' = the queries every run "
        "answered; 'qrels' = every qrels query, a run that did not answer one "
        "scoring 0 (implies -c). Default: 'qrels' with -c/--missing zero, else 'common'",
    )
    p.add_argument(
        "--power",
        type=PROBABILITY,
        nargs="?",
        const=0.8,
        default=None,
        metavar="P",
        help="how many queries each comparison needs: the paired t-test's queries to detect "
        "the observed difference with power P (default 0.8), and the smallest difference "
        "the current queries detect (topic set size design: Sakai, IRJ 2016)",
    )
    p.add_argument(
        "--power-alpha",
        type=PROBABILITY,
        default=None,
        help="with --power: the t-test's level (default: --alpha)",
    )
    p.add_argument(
        "--power-delta",
        type=float,
        default=None,
        metavar="D",
        help="with --power: also the queries needed to detect a difference of D",
    )
    p.add_argument(
        "--power-method",
        choices=("exact", "nagata"),
        default="exact",
        help="with --power: the noncentral t (default) or Nagata's approximation of it "
        "(Sakai's Excel tool)",
    )
    p.add_argument("--per-query", action="store_true", help="JSON: include per-query values")
    p.add_argument("--format", choices=COMPARISON_FORMATS, default="table")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    add_convention_arguments(p)


def resolve_query_set(args) -> str:
    """The --queries choice; 'qrels' switches scoring of absent queries to 0 (trec_eval -c)."""
    complete = getattr(args, "complete", False) or getattr(args, "missing_queries", None) == "zero"
    query_set = args.queries or ("qrels" if complete else "common")
    if query_set == "qrels":
        args.missing_queries = "zero"
    elif complete:
        raise InputError(
            "--queries common contradicts -c / --missing zero",
            hint="-c scores absent queries 0 on every qrels query; drop one of them",
            option="--queries",
            field="query_set",
        )
    return query_set


def run(args) -> int:
    if len(args.run) < 2:
        raise InputError(
            "compare needs at least two runs (--run A --run B)", option="--run", field="run"
        )
    query_set = resolve_query_set(args)
    evaluations, conv = run_evaluations(args)
    names = [ev.run_name for ev in evaluations]
    systems = {}
    if args.system:
        from metrics_core.stats.systems import parse_system

        for text in args.system:
            name, members = parse_system(text)
            systems[name] = members
        names = [*names, *systems]
    baselines = list(args.baseline or [])
    if not baselines and not args.all_pairs:
        raise InputError(
            "compare needs --baseline NAME or --all-pairs", option="--baseline", field="baseline"
        )
    for name in baselines:
        if name not in names:
            raise InputError(
                f"no run named {name!r}",
                hint="--baseline must be one of: " + ", ".join(names),
                option="--baseline",
                field="baseline",
                plain_hint="the baseline must be one of: " + ", ".join(names),
            )
    if systems and (args.all_pairs or len(baselines) > 1):
        raise InputError(
            "--system compares systems against one --baseline, not --all-pairs",
            option="--system",
            field="systems",
        )
    power = {
        "power": False if args.power is None else args.power,
        "power_alpha": args.power_alpha,
        "power_delta": args.power_delta,
        "power_method": args.power_method,
    }
    if args.all_pairs or len(baselines) > 1:
        comparison = compare(
            evaluations,
            None if args.all_pairs else baselines,
            all_pairs=args.all_pairs,
            measures=evaluations[0].measures,
            test=args.test,
            n_permutations=args.permutations,
            seed=args.seed,
            correction=args.correction,
            alpha=args.alpha,
            query_set=query_set,
            conventions=conv,
            **power,
        )
    else:
        comparison = compare(
            evaluations,
            baselines[0],
            measures=evaluations[0].measures,
            n_permutations=args.permutations,
            seed=args.seed,
            correction=args.correction,
            confidence=args.confidence,
            n_resamples=args.bootstrap,
            alpha=args.alpha,
            query_set=query_set,
            conventions=conv,
            family=args.family,
            systems=systems or None,
            **power,
        )
    if args.format == "json":
        text = json.dumps(comparison.to_dict(per_query=args.per_query), indent=2)
    elif args.format == "markdown":
        text = comparison.to_markdown()
    elif args.format == "latex":
        text = comparison.to_latex()
    else:
        text = comparison.to_table(args.format)
    write_export(text, args.output, args.format, comparison.provenance(), comparison.queries())
    return 0


__all__ = ["NAME", "HELP", "add_arguments", "run"]
