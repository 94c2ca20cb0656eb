"""``trec_eval``: trec_eval's command line and output, byte for byte.

``python -m metrics_core trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m MEASURE]...
QRELS RUN`` prints what trec_eval 10 prints (``--compat trec_eval9``: trec_eval 9.0.8);
see :mod:`metrics_core.compat.trec_eval`. ``RUN`` may be ``-`` (standard input).
Preference and jg qrels (``-R``), other result formats (``-T``) and z-scores (``-Z``) are
refused with one line. Bad input: one line naming the file and line, with trec_eval's
status (2 for a line it cannot read, 4 for a document given twice).
"""

from __future__ import annotations

import sys

NAME = "trec_eval"
HELP = "trec_eval's command line: same options, same output, byte for byte"
DESCRIPTION = (
    "Evaluate a run as trec_eval 10 does and print exactly what it prints "
    "(--compat trec_eval9: trec_eval 9.0.8, pytrec_eval's numbers)."
)


def add_arguments(p) -> None:
    p.add_argument(
        "-q", dest="per_query", action="store_true", help="per-query values, then the summary"
    )
    p.add_argument(
        "-m",
        dest="measures",
        action="append",
        default=[],
        metavar="MEASURE[.PARAMS]",
        help="measure or nickname (official, all_trec, set), e.g. P.5,10 ndcg_cut.10; repeatable",
    )
    p.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every qrels query (missing ones score 0)",
    )
    p.add_argument("-l", dest="level", default="1", metavar="N", help="relevance level (default 1)")
    p.add_argument("-n", dest="no_summary", action="store_true", help="no summary")
    p.add_argument("-J", dest="judged_only", action="store_true", help="judged documents only")
    p.add_argument("-M", dest="max_docs", metavar="N", help="documents per query to use")
    p.add_argument(
        "-N", dest="num_docs", default="0", metavar="N", help="documents in the collection"
    )
    p.add_argument("-D", dest="debug", metavar="N", help="trec_eval's debug level (ignored)")
    p.add_argument("-R", dest="rel_format", default="qrels", help="relevance format: only qrels")
    p.add_argument(
        "-T",
        dest="results_format",
        default="trec_results",
        help="results format: only trec_results",
    )
    p.add_argument("-Z", dest="zscores", metavar="FILE", help="z-scores (refused)")
    p.add_argument(
        "-v", dest="version_wanted", action="store_true", help="print trec_eval's version"
    )
    p.add_argument(
        "--compat",
        choices=("trec_eval10", "trec_eval9"),
        default="trec_eval10",
        help="reproduce trec_eval 10 (default) or 9.0.8",
    )
    p.add_argument("qrels", nargs="?", metavar="QRELS")
    p.add_argument("run", nargs="?", metavar="RUN", help="run file, or - for standard input")


def _refusal(args) -> str | None:
    if args.rel_format != "qrels":
        return (
            f"trec_eval: relevance format '{args.rel_format}' (preference or jg judgements) is not "
            "served by RankLab; give ordinary qrels (qid 0 docid label)"
        )
    if args.results_format != "trec_results":
        return f"trec_eval: results format '{args.results_format}' is not served by RankLab; give a TREC run"
    if args.zscores:
        return "trec_eval: z-scores (-Z) are not served by RankLab"
    return None


def run(args) -> int:
    from metrics_core.cli import error_line
    from metrics_core.compat.trec_eval import TrecEvalOptions, trec_eval_output
    from metrics_core.compat.trec_measures import c_atol
    from metrics_core.errors import InputError

    version = 9 if args.compat == "trec_eval9" else 10
    if args.version_wanted:
        print(
            f"trec_eval version {'9.0.7' if version == 9 else '10.0-rc3'} (RankLab)",
            file=sys.stderr,
        )
        return 0
    why = _refusal(args)
    if why:
        print(why, file=sys.stderr)
        return 1
    if args.qrels is None or args.run is None:
        print(
            "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file", file=sys.stderr
        )
        return 1
    max_docs = c_atol(args.max_docs) if args.max_docs is not None else None
    if max_docs is not None and max_docs < 1:
        print(
            f"trec_eval: -M {args.max_docs} keeps no document of any ranking; RankLab serves -M 1 or more",
            file=sys.stderr,
        )
        return 1
    options = TrecEvalOptions(
        tuple(args.measures),
        args.per_query,
        args.complete,
        args.judged_only,
        not args.no_summary,
        c_atol(args.level),
        max_docs,
        max(c_atol(args.num_docs), 0),
        version,
    )
    run_source, run_bytes = args.run, None
    if args.run == "-":
        run_source = run_bytes = sys.stdin.buffer.read()
    try:
        text, status, message = trec_eval_output(
            args.qrels, run_source, options, run_bytes=run_bytes
        )
    except InputError as exc:
        print(f"trec_eval: {error_line(exc)}", file=sys.stderr)
        # trec_eval stops with 4 on a document given twice (found while measuring), 2 on a bad line
        return 4 if "duplicate" in exc.problem.lower() else 2
    except FileNotFoundError as exc:
        print(f"trec_eval: {exc.filename}: file not found. Check the path.", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    if message:
        sys.stdout.flush()
        print(message, file=sys.stderr)
    return status
