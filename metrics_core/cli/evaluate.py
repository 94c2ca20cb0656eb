"""``evaluate``: measures of one or more runs against qrels (ARCHITECTURE.md's contract)."""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

from metrics_core.cli._options import (
    CUTOFF,
    add_format_options,
    add_ranking_inputs,
    finite_float,
    parse_column_mapping,
)
from metrics_core.conventions import CHOICES, Conventions
from metrics_core.errors import InputError
from metrics_core.evaluation import Evaluation
from metrics_core.front_door import evaluate_many, read_judgements
from metrics_core.io.coverage import CoverageWarning, coverage_message
from metrics_core.ranking.registry import DEFAULT_MEASURES, parse_measures
from metrics_core.report import (
    TABLE_FORMATS,
    format_table,
    json_safe,
    provenance,
    write_export,
)
from metrics_core.report.evaluations import evaluations_frame, evaluations_json

NAME = "evaluate"
HELP = "evaluate runs against qrels (trec_eval conventions by default)"
DESCRIPTION = (
    "Evaluate one or more runs against qrels. Measures use ir_measures names "
    "(P@5, nDCG@10, AP, RR@10, ...); defaults reproduce trec_eval."
)

PROGRESS_BYTES = 32 << 20  # files above this size report progress on stderr


def add_convention_arguments(p) -> None:
    """Convention flags shared by the subcommands that evaluate rankings."""
    g = p.add_argument_group("conventions (defaults: trec_eval)")
    g.add_argument(
        "--ties",
        choices=CHOICES["ties"],
        help="order of equal scores; expected: the exact average over every order (sklearn)",
    )
    g.add_argument(
        "--ignore-identical-ids",
        dest="ignore_identical_ids",
        action="store_const",
        const=True,
        help="drop a retrieved document whose id is the query's (BEIR's ignore_identical_ids)",
    )
    g.add_argument(
        "--duplicates", choices=CHOICES["duplicates"], help="a (query, doc) pair given twice"
    )
    g.add_argument(
        "--missing",
        dest="missing_queries",
        choices=CHOICES["missing_queries"],
        help="qrels queries absent from the run: skip, or score 0",
    )
    g.add_argument(
        "-c", dest="complete", action="store_true", help="same as --missing zero (trec_eval -c)"
    )
    g.add_argument(
        "-l",
        "--rel-threshold",
        dest="relevance_threshold",
        type=finite_float(),
        help="relevance threshold of binary measures (trec_eval -l)",
    )
    g.add_argument(
        "-M", "--depth", type=CUTOFF, help="keep only the top DEPTH of each ranking (trec_eval -M)"
    )
    g.add_argument("--p-denominator", choices=CHOICES["p_denominator"])
    g.add_argument("--ap-normalizer", choices=CHOICES["ap_normalizer"])
    g.add_argument("--gain", choices=CHOICES["gain"])
    g.add_argument("--discount", choices=CHOICES["discount"])
    g.add_argument("--ideal", choices=CHOICES["ideal"])
    g.add_argument("--rr-miss", choices=CHOICES["rr_miss"])
    g.add_argument(
        "-J",
        "--judged-only",
        dest="judged_only",
        action="store_const",
        const=True,
        help="judged documents only: drop unjudged ones before measuring (trec_eval -J)",
    )
    g.add_argument(
        "-N",
        "--num-docs",
        dest="num_docs",
        type=int,
        help="documents in the collection, for Utility's d term (trec_eval -N)",
    )
    g.add_argument(
        "--labels",
        choices=CHOICES["labels"],
        help="fractional relevance labels: truncate to whole numbers (trec_eval) or keep",
    )
    g.add_argument(
        "--compat",
        choices=CHOICES["compat"],
        help="reproduce trec_eval 10 (default) or 9.0.8 (pytrec_eval, ir_measures): "
        "float32 scores, its recall-level rounding, its -c averages",
    )


def conventions_from_args(args) -> Conventions:
    fields = (
        "ties",
        "duplicates",
        "missing_queries",
        "relevance_threshold",
        "depth",
        "p_denominator",
        "ap_normalizer",
        "gain",
        "discount",
        "ideal",
        "rr_miss",
        "judged_only",
        "num_docs",
        "labels",
        "compat",
        "ignore_identical_ids",
    )
    changes = {f: getattr(args, f) for f in fields if getattr(args, f, None) is not None}
    if getattr(args, "complete", False):
        changes["missing_queries"] = "zero"
    return Conventions().replace(**changes)


def add_arguments(p) -> None:
    add_ranking_inputs(p, runs="repeat for several runs", measures="default: a standard set")
    add_format_options(p)
    p.add_argument("--per-query", action="store_true", help="include per-query values")
    p.add_argument("--format", choices=TABLE_FORMATS, default="table")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    p.add_argument(
        "--tie-report",
        action="store_true",
        help="add each run's tie report to the JSON: per query and measure the minimum, "
        "maximum and expected value over all orders of tied documents",
    )
    p.add_argument(
        "--unjudged-report",
        action="store_true",
        help="add each run's unjudged report to the JSON: per query and measure the lowest "
        "and highest value over every labelling of the unjudged retrieved documents",
    )
    p.add_argument(
        "--block-rows",
        type=int,
        metavar="N",
        help="read each run as a stream, evaluated in blocks of about N rows (whole "
        "queries): memory bounded by the block, same numbers; 0 reads runs whole "
        "(default: runs of 64 MiB or more stream in blocks of 500,000 rows)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="evaluate on a Dask cluster (pip install 'ranklab[dask]'): a scheduler "
        "address tcp://HOST:PORT, or local:N for N local worker processes; each "
        "--run is then a folder or a glob of run parts (TREC, CSV/TSV, Parquet) "
        "that together make one run",
    )
    add_convention_arguments(p)


class Progress:
    """Short progress lines on stderr for big files (nothing for small ones)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet

    def step(self, path, label: str):
        size = os.path.getsize(path) if isinstance(path, str) and os.path.isfile(path) else 0
        return _Step(self, label, size) if size >= PROGRESS_BYTES and not self.quiet else _NoStep()


class _NoStep:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Step:
    def __init__(self, progress, label, size):
        self.label, self.size = label, size

    def __enter__(self):
        self.t0 = time.perf_counter()
        print(f"{self.label} ({self.size / 1e6:.0f} MB) ...", file=sys.stderr, flush=True)
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            print(
                f"{self.label}: done in {time.perf_counter() - self.t0:.1f} s",
                file=sys.stderr,
                flush=True,
            )
        return False


def _use_system_allocator() -> None:
    """Arrow's buffers from the C library's allocator, unless the user chose one.

    Arrow's default (mimalloc) keeps memory the parser and the engine free for reuse;
    the system allocator returns it, which measured 1.09 -> 0.89 GB peak on the 10 M-line
    benchmark at the same speed (BENCHMARKS.md). A process-wide setting: only the
    command line makes it, never the library.
    """
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def run_evaluations(args) -> tuple[list[Evaluation], Conventions]:
    """Read the files named by ``args`` and evaluate every run (shared with ``compare``)."""
    _use_system_allocator()
    conv = conventions_from_args(args)
    specs = parse_measures(args.measures or list(DEFAULT_MEASURES))
    progress = Progress(getattr(args, "quiet", False))
    qrels_opts, run_opts = reader_options(args)
    with progress.step(args.qrels, f"reading qrels {args.qrels}"):
        qrels = read_judgements(args.qrels, specs, **qrels_opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # said once on stderr below
        evaluations = evaluate_many(
            qrels,
            args.run,
            specs,
            conv,
            tie_report=bool(getattr(args, "tie_report", False)),
            unjudged_report=bool(getattr(args, "unjudged_report", False)),
            block_rows=getattr(args, "block_rows", None),
            scheduler=getattr(args, "scheduler", None),
            read_options=run_opts,
            step=lambda path: progress.step(path, f"evaluating {path}"),
        )
    return _coverage_notes(evaluations), conv


def reader_options(args) -> tuple[dict, dict]:
    """Keyword arguments of read_qrels and read_run from --qrels-format, --run-format,
    --columns and --qrels-columns (empty when the subcommand has none of them)."""
    columns = parse_column_mapping(getattr(args, "columns", None))
    qrels_columns = parse_column_mapping(getattr(args, "qrels_columns", None)) or columns
    qrels_opts = {"fmt": getattr(args, "qrels_format", None) or "auto", "columns": qrels_columns}
    run_opts = {"fmt": getattr(args, "run_format", None) or "auto", "columns": columns}
    return (
        {k: v for k, v in qrels_opts.items() if v not in (None, "auto")},
        {k: v for k, v in run_opts.items() if v not in (None, "auto")},
    )


def _coverage_notes(evaluations: list[Evaluation]) -> list[Evaluation]:
    """One line on stderr for each run that shares no query with the qrels, or of which
    (almost) no retrieved document is judged: never a silent zero."""
    for ev in evaluations:
        message = coverage_message(ev.coverage or {}, ev.run_name)
        if message:
            print(f"warning: {message}", file=sys.stderr)
    return evaluations


def run(args) -> int:
    evaluations, conv = run_evaluations(args)
    if args.format == "json":
        text = json.dumps(json_safe(evaluations_json(evaluations, conv, args.per_query)), indent=2)
    else:
        frame = evaluations_frame(evaluations, args.per_query)
        text = format_table(frame, args.format, prov=provenance(conv), index=False)
        notes = _diagnostic_notes(evaluations)
        if notes and args.format == "table":
            text += "\n" + "\n".join(notes)
        for note in notes:
            if args.output or args.format != "table":
                print(note, file=sys.stderr)
    write_export(
        text, args.output, args.format, provenance(conv)
    )  # CSV: provenance beside the file
    return 0


def _diagnostic_notes(evaluations) -> list[str]:
    notes = []
    for ev in evaluations:
        d = ev.diagnostics
        if d["missing_queries"]:
            rule = "scored 0" if ev.conventions.missing_queries == "zero" else "skipped"
            notes.append(
                f"note: {ev.run_name}: {len(d['missing_queries'])} qrels queries absent from "
                f"the run ({rule})"
            )
        if d["extra_queries"]:
            notes.append(
                f"note: {ev.run_name}: {len(d['extra_queries'])} run queries absent from the "
                "qrels (ignored)"
            )
        if d.get("fractional_labels"):
            rule = (
                "kept as gains"
                if ev.conventions.labels == "keep"
                else "truncated to whole numbers, as trec_eval reads them"
            )
            notes.append(
                f"warning: {ev.run_name}: {d['fractional_labels']} fractional relevance labels "
                f"({rule}; --labels keep|truncate)"
            )
        if d["duplicates"]:
            notes.append(
                f"note: {ev.run_name}: {d['duplicates']} duplicate (query, doc) pairs "
                f"({ev.conventions.duplicates})"
            )
    return notes


__all__ = [
    "NAME",
    "HELP",
    "add_arguments",
    "run",
    "run_evaluations",
    "evaluations_json",
    "InputError",
]
