"""``report``: one self-contained HTML file comparing runs (tables, figures, conventions,
versions, data digests) that opens offline in a browser."""

from __future__ import annotations

from pathlib import Path

from metrics_core.cli._options import PROBABILITY, add_format_options, add_ranking_inputs, whole
from metrics_core.cli.compare import resolve_query_set
from metrics_core.cli.evaluate import add_convention_arguments, run_evaluations
from metrics_core.errors import N_, InputError
from metrics_core.report.catalogs import LANGUAGES
from metrics_core.stats.significance import CORRECTIONS
from metrics_core.validation import LIMITS

NAME = "report"
HELP = "one self-contained HTML report of runs against a baseline (tables, figures)"
DESCRIPTION = (
    "Evaluate the runs and write one HTML file: the leaderboard (mean, interval, best, "
    "significance against the baseline), every run against the baseline, each run on its "
    "own queries, conventions, versions and data digests, with plotly figures drawn by an "
    "inline copy of plotly.js (no network needed to open it). Without the plotly package "
    "the file holds the tables only."
)


def add_arguments(p) -> None:
    add_ranking_inputs(p, runs="repeat for every run", measures="default: a standard set")
    add_format_options(p)
    p.add_argument("--baseline", help="name of the baseline run (default: the first --run)")
    p.add_argument(
        "--queries",
        choices=("common", "qrels"),
        default=None,
        help="the one query set of every table: 'common' = the queries every run answered; "
        "'qrels' = every qrels query, absent ones scoring 0 (implies -c)",
    )
    p.add_argument(
        "--permutations",
        type=whole(1, LIMITS["permutations"]),
        default=10000,
        help="sign flips of the randomization test and bootstrap resamples of the differences",
    )
    p.add_argument(
        "--bootstrap",
        type=whole(1, LIMITS["resamples"]),
        default=1000,
        help="bootstrap resamples of each run's mean (default 1000)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--correction", choices=CORRECTIONS, default="holm")
    p.add_argument("--confidence", type=PROBABILITY, default=0.95)
    p.add_argument("--alpha", type=PROBABILITY, default=0.05)
    p.add_argument(
        "--title", default=None, help='the page\'s title (default: "RankLab report", in --lang)'
    )
    p.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="en",
        help="language of the report's words (not of names or numbers)",
    )
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    add_convention_arguments(p)


def run(args) -> int:
    import sys

    from metrics_core.report.catalogs import translations
    from metrics_core.report.html import comparison_report, data_digest, plotly_js_source

    tr = translations(args.lang)
    query_set = resolve_query_set(args)
    evaluations, conv = run_evaluations(args)
    names = [ev.run_name for ev in evaluations]
    if args.baseline is not None and args.baseline not in names:
        raise InputError(
            f"no run named {args.baseline!r}",
            hint="--baseline must be one of: " + ", ".join(names),
            option="--baseline",
            field="baseline",
            plain_hint="the baseline must be one of: " + ", ".join(names),
        )
    data = {f"qrels {Path(args.qrels).name}": data_digest(Path(args.qrels).read_bytes())}
    for path, name in zip(args.run, names, strict=True):
        label = tr.gettext(N_("run {name} ({file})")).format(name=name, file=Path(path).name)
        data[label] = data_digest(Path(path).read_bytes())
    plotly_js = plotly_js_source()
    if plotly_js is None and not args.quiet:
        print(
            "note: plotly is not installed: the report holds the tables only (no figures)",
            file=sys.stderr,
        )
    text = comparison_report(
        evaluations,
        args.baseline or names[0],
        evaluations[0].measures,
        query_set=query_set,
        conventions=conv,
        data=data,
        plotly_js=plotly_js,
        n_permutations=args.permutations,
        n_resamples=args.bootstrap,
        seed=args.seed,
        correction=args.correction,
        confidence=args.confidence,
        alpha=args.alpha,
        title=args.title,
        gettext=tr.gettext,
        ngettext=tr.ngettext,
        lang=args.lang,
    )
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot write the report: {exc.strerror}",
            source=args.output,
            hint="choose a writable path with -o",
            option="--output",
        ) from None
    if not args.quiet:
        print(f"wrote {args.output} ({len(text) / 1e6:.1f} MB)", file=sys.stderr)
    return 0


__all__ = ["NAME", "HELP", "add_arguments", "run"]
