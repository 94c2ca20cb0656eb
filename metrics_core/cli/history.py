"""``history``: save evaluations of controlled test suites and report them over time.

    python -m metrics_core history add --suite NAME --qrels Q --run R [-m M ...]
           [--fail-below nDCG@10=0.6 ...] [--store PATH]
    python -m metrics_core history report [--suite NAME] [--from DATE] [--to DATE]
           [--per-query] [--format table|csv|json|markdown] [-o FILE]
    python -m metrics_core history list [--suite NAME] [--format ...]
    python -m metrics_core history delete ID --yes

``add`` exits 1 when a measure of the new evaluation is below its ``--fail-below``
threshold (the evaluation is saved all the same: a failing version belongs in the
history), 0 otherwise, 2 on bad input. The store defaults to
``$RANKLAB_HOME/history.sqlite3`` or ``~/.ranklab/history.sqlite3``.
"""

from __future__ import annotations

import json
import sqlite3
import sys

from metrics_core._version import __version__
from metrics_core.cli.evaluate import add_convention_arguments, conventions_from_args
from metrics_core.errors import InputError
from metrics_core.history import REPORT_MEASURES, HistoryStore, default_store_path
from metrics_core.ranking.registry import parse_measures, split_measures
from metrics_core.report import (
    DEFAULT_GOOD_THRESHOLDS,
    format_table,
    json_safe,
    provenance,
    write_export,
)
from metrics_core.validation import check_float

NAME = "history"
HELP = "save evaluations of test suites and report them over time"
DESCRIPTION = (
    "Saved evaluations in a SQLite store: add (evaluate a run against a suite and "
    "save it; --fail-below gates CI), report (comparative table with labels and "
    "a summary row), list, delete."
)
REPORT_FORMATS = ("table", "csv", "json", "markdown")


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="history_command", metavar="ACTION", parser_class=type(p))
    sub.required = True

    a = sub.add_parser("add", help="evaluate a run against a suite and save the evaluation")
    a.add_argument("--suite", required=True, help="suite name (created from --qrels on first use)")
    a.add_argument("--qrels", help="qrels of the suite (optional once the suite exists)")
    a.add_argument("--run", required=True, help="run file")
    a.add_argument("--name", help="run name to save (default: the run's name)")
    a.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        help="measure, repeatable or comma-separated (default: RR, nDCG@10, P@5)",
    )
    a.add_argument(
        "--fail-below",
        action="append",
        default=[],
        metavar="MEASURE=VALUE",
        help="exit 1 when the measure's aggregate is below VALUE; repeatable",
    )
    a.add_argument("--timestamp", help="date of the evaluation (ISO, UTC; default now)")
    a.add_argument("--note", help="free-text note saved with the evaluation")
    a.add_argument("--format", choices=("table", "json"), default="table")
    _store_argument(a)
    add_convention_arguments(a)

    r = sub.add_parser("report", help="the comparative report (labels and a summary row)")
    r.add_argument("--suite", help="only this suite")
    r.add_argument("--from", dest="date_from", help="first date (YYYY-MM-DD, inclusive)")
    r.add_argument("--to", dest="date_to", help="last date (YYYY-MM-DD, inclusive)")
    r.add_argument("--per-query", action="store_true", help="one row per query and evaluation")
    r.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        help="report these measures (default: RR, nDCG@10, P@5)",
    )
    r.add_argument("--format", choices=REPORT_FORMATS, default="table")
    r.add_argument("-o", "--output", help="write to this file instead of stdout")
    _store_argument(r)

    ls = sub.add_parser("list", help="saved evaluations")
    ls.add_argument("--suite", help="only this suite")
    ls.add_argument("--from", dest="date_from")
    ls.add_argument("--to", dest="date_to")
    ls.add_argument("--format", choices=REPORT_FORMATS, default="table")
    ls.add_argument("-o", "--output")
    _store_argument(ls)

    d = sub.add_parser("delete", help="delete one saved evaluation")
    d.add_argument("id", type=int, help="evaluation id (see `history list`)")
    d.add_argument("--yes", action="store_true", help="confirm the deletion")
    _store_argument(d)


def _store_argument(p) -> None:
    p.add_argument("--store", help=f"history store file (default: {default_store_path()})")


def _measure_names(groups) -> list[str]:
    return [s.name for s in parse_measures(list(groups))]


def parse_thresholds(items) -> dict[str, float]:
    """``["nDCG@10=0.6", "P@5=0.5,RR=0.7"]`` -> ``{"nDCG@10": 0.6, ...}`` (canonical names)."""
    out: dict[str, float] = {}
    for item in items:
        for part in split_measures(item):
            name, sep, value = part.rpartition("=")
            if not sep or not name.strip():
                raise InputError(
                    f"--fail-below {part!r} is not MEASURE=VALUE",
                    hint="e.g. --fail-below nDCG@10=0.6",
                    option="--fail-below",
                )
            try:
                threshold = check_float(value, "the threshold")
            except InputError as exc:
                raise InputError(
                    f"--fail-below {part!r}: {exc.problem.replace('the threshold ', '')}",
                    hint="e.g. --fail-below nDCG@10=0.6",
                    option="--fail-below",
                ) from None
            out[parse_measures([name.strip()])[0].name] = threshold
    return out


def run(args) -> int:
    action = args.history_command
    if action == "delete" and not args.yes:
        raise InputError(
            f"deleting evaluation {args.id} needs confirmation", hint="add --yes", option="--yes"
        )
    with HistoryStore(args.store) as store:
        try:
            if action == "add":
                return _add(store, args)
            if action == "report":
                return _report(store, args)
            if action == "list":
                return _list(store, args)
            store.delete_evaluation(args.id)
        except Exception as exc:
            # sqlite3's error, or pandas' DatabaseError wrapping it (read_sql)
            if isinstance(exc, sqlite3.DatabaseError) or type(exc).__name__ == "DatabaseError":
                raise store.error(exc) from None
            raise
        print(f"deleted evaluation {args.id} from {store.path}")
        return 0
    return 2  # pragma: no cover - argparse requires an action


def _add(store: HistoryStore, args) -> int:
    from metrics_core.front_door import evaluate
    from metrics_core.io import read_qrels, read_run

    thresholds = parse_thresholds(args.fail_below)
    measures = _measure_names(args.measures) if args.measures else list(REPORT_MEASURES)
    measures += [m for m in thresholds if m not in measures]
    if args.qrels:
        qrels = read_qrels(args.qrels)
    elif args.suite in store.suite_names():
        qrels = store.get_suite_qrels(args.suite)
    else:
        raise InputError(
            f"suite {args.suite!r} does not exist yet",
            hint="give its qrels with --qrels",
            option="--qrels",
            field="qrels",
        )
    run_ = read_run(args.run)
    if args.name:
        run_.name = args.name
    conv = conventions_from_args(args)
    ev = evaluate(qrels, run_, measures, conv)
    eid = store.save_evaluation(
        args.suite, ev, timestamp=args.timestamp, qrels=qrels, note=args.note
    )
    failures = {m: (ev.aggregate[m], t) for m, t in thresholds.items() if not ev.aggregate[m] >= t}
    if args.format == "json":
        out = {
            "version": __version__,
            "conventions": conv.as_dict(),
            "store": str(store.path),
            "id": eid,
            "suite": args.suite,
            "run": ev.run_name,
            "aggregate": ev.aggregate,
            "thresholds": thresholds,
            "failed": {m: {"value": v, "threshold": t} for m, (v, t) in failures.items()},
            "diagnostics": ev.diagnostics,
        }
        print(json.dumps(json_safe(out)))
    else:
        values = " ".join(f"{m}={v:.4f}" for m, v in ev.aggregate.items())
        print(f"saved evaluation {eid}: suite={args.suite} run={ev.run_name} {values}")
    for m, (v, t) in failures.items():
        print(f"below threshold: {m} = {v:.4f} < {t:g}", file=sys.stderr)
    return 1 if failures else 0


def _report(store: HistoryStore, args) -> int:
    measures = _measure_names(args.measures) if args.measures else list(REPORT_MEASURES)
    thresholds = {m: t for m, t in DEFAULT_GOOD_THRESHOLDS.items() if m in measures}
    df = store.report(
        args.suite,
        args.date_from,
        args.date_to,
        per_query=args.per_query,
        measures=measures,
        thresholds=thresholds,
    )
    prov = provenance(None, store=str(store.path), thresholds=thresholds)
    if args.format == "json":
        rows = df.iloc[:-1]
        out = {
            "version": __version__,
            "store": str(store.path),
            "filters": {
                "suite": args.suite,
                "from": args.date_from,
                "to": args.date_to,
                "per_query": args.per_query,
            },
            "thresholds": thresholds,
            "rows": rows.to_dict(orient="records"),
            "summary": df.attrs["summary"],
        }
        text = json.dumps(json_safe(out), indent=2)
    else:
        text = format_table(
            df, args.format, prov=prov, title="Comparative report", index=False, digits=3
        )
    write_export(text, args.output, args.format, prov, "Comparative report")
    return 0


def _list(store: HistoryStore, args) -> int:
    df = store.list_evaluations(args.suite, args.date_from, args.date_to)
    df = df.drop(columns=["conventions"], errors="ignore")
    df["measures"] = [", ".join(m) for m in df["measures"]]
    if args.format == "json":
        text = json.dumps(
            json_safe(
                {
                    "version": __version__,
                    "store": str(store.path),
                    "evaluations": df.to_dict(orient="records"),
                }
            ),
            indent=2,
        )
    else:
        text = format_table(
            df,
            args.format,
            prov=provenance(None, store=str(store.path)),
            title="Saved evaluations",
            index=False,
        )
    write_export(
        text, args.output, args.format, provenance(None, store=str(store.path)), "Saved evaluations"
    )
    return 0
