"""``ir_measures``: ir_measures' command line on RankLab's engine.

``ranklab ir_measures QRELS RUN 'nDCG@10 P@5' [-q] [-n] [-p PLACES] [-o tsv|jsonl]`` prints
what ``ir_measures QRELS RUN 'nDCG@10 P@5'`` prints: one ``measure<TAB>value`` line per
measure (``%.4f``; ``-p -1`` prints every digit), or with ``-q`` one
``query<TAB>measure<TAB>value`` line per query and measure followed by the ``all`` summary
lines (``-n``: none); ``-o jsonl`` prints one JSON object per line. Measures are
ir_measures' (:mod:`metrics_core.compat.ir_measures`), computed as the provider ir_measures
picks computes them. ``-q`` lists queries in the qrels' order, each with its measures in
the order given (ir_measures' order follows its providers); the values are the same.
``--provider`` and ir_datasets ids in place of a qrels file are refused with one line.
"""

from __future__ import annotations

import json

NAME = "ir_measures"
HELP = "ir_measures' command line: QRELS RUN 'nDCG@10 P@5', same output"
DESCRIPTION = (
    "Evaluate a run as ir_measures' command line does and print what it prints "
    "(measures in ir_measures' syntax, each computed as ir_measures' provider for it does)."
)

DEFAULT_PLACES = 4
SUMMARY_QID = "all"


def add_arguments(p) -> None:
    p.add_argument("qrels", metavar="QRELS", help="TREC qrels file")
    p.add_argument("run", metavar="RUN", help="TREC run file")
    p.add_argument(
        "measures",
        nargs="+",
        metavar="MEASURES",
        help="measures in ir_measures' syntax, e.g. 'nDCG@10 P@5 RBP(p=0.9)'",
    )
    p.add_argument(
        "--places",
        "-p",
        type=int,
        default=DEFAULT_PLACES,
        help="decimals printed (default 4; -1: every digit)",
    )
    p.add_argument(
        "--by_query", "-q", action="store_true", help="per-query values, then the summary"
    )
    p.add_argument("--no_summary", "-n", action="store_true", help="with -q: no summary lines")
    p.add_argument(
        "--output_format", "-o", choices=("tsv", "jsonl"), default="tsv", help="output format"
    )
    p.add_argument(
        "--provider", help="ir_measures' provider (refused: RankLab picks ir_measures' default one)"
    )


def _measures(texts: list[str]):
    from metrics_core.compat import ir_measures as irm
    from metrics_core.errors import InputError

    measures, errors = [], []
    for text in texts:
        for word in text.split():
            try:
                measure = irm.parse_measure(word)
            except ValueError:
                errors.append(f"syntax error: {word}")
                continue
            except NameError:
                errors.append(f"unknown measure: {word}")
                continue
            if measure not in measures:
                measures.append(measure)
    if errors:
        raise InputError("error parsing measures: " + "; ".join(errors))
    return measures


def _printer(args):
    if args.output_format == "jsonl":

        def jsonl(qid, measure, value) -> None:
            record = (
                {"query_id": qid, "measure": str(measure), "value": value}
                if args.by_query
                else {"measure": str(measure), "value": value}
            )
            print(json.dumps(record))

        return jsonl
    spec = "" if args.places == -1 else f".{args.places}f"

    def tsv(qid, measure, value) -> None:
        print(
            f"{qid}\t{measure}\t{value:{spec}}" if args.by_query else f"{measure}\t{value:{spec}}"
        )

    return tsv


def run(args) -> int:
    import os
    import sys

    from metrics_core.compat import ir_measures as irm
    from metrics_core.errors import InputError

    if args.provider:
        raise InputError(
            f"--provider {args.provider} is not offered: RankLab computes each measure as the "
            "provider ir_measures picks by default"
        )
    if args.no_summary and not args.by_query:
        raise InputError("--no_summary (-n) only supported with --by_query (-q)")
    if not os.path.exists(args.qrels):
        raise InputError(
            f"{args.qrels}: file not found (ir_datasets ids are not looked up; give a qrels file)"
        )
    if args.output_format == "jsonl" and args.places != DEFAULT_PLACES:
        sys.stderr.write("--places is ignored when using --output jsonl\n")
    measures = _measures(args.measures)
    evaluator = irm.evaluator(measures, args.qrels)
    out = _printer(args)
    if args.by_query:
        result = evaluator.calc(args.run)
        for metric in result.per_query:
            out(metric.query_id, metric.measure, metric.value)
        if not args.no_summary:
            for measure in measures:
                out(SUMMARY_QID, measure, result.aggregated[measure])
    else:
        aggregated = evaluator.calc_aggregate(args.run)
        for measure in measures:
            out(SUMMARY_QID, measure, aggregated[measure])
    return 0
