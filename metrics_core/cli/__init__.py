"""The ``python -m metrics_core`` (``ranklab``) command line.

One module per subcommand in this package; each defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args)`` (returning the exit status). :data:`COMMANDS`
names them without importing them, so ``--help`` and ``evaluate`` never pay for (or fail
on) what another subcommand needs, such as torch for ``hash``. User errors
(:class:`~metrics_core.errors.InputError`) end with one line on stderr and exit status 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import re
import sys

from metrics_core._version import __version__
from metrics_core.errors import InputError

EXIT_OK = 0
EXIT_USAGE = 2

#: command -> (module in this package, one-line help); the module is imported only when run
COMMANDS: dict[str, tuple[str, str]] = {
    "calibrate": (
        "calibrate",
        "ECE, MCE, Brier and reliability bins of probabilities against 0/1 labels",
    ),
    "compare": (
        "compare",
        "compare runs against a baseline (or all pairs): deltas, bootstrap CIs, "
        "t/Wilcoxon/permutation tests",
    ),
    "compare-modes": (
        "compare_modes",
        "queries and measures whose value differs under trec_eval 9 and 10 conventions, and why",
    ),
    "detect": ("detect", "AUROC, AUPRC, TPR@FPR of scores against 0/1 labels"),
    "dynamic-k": (
        "dynamic_k",
        "evidence recall/precision and average K of a per-query probability threshold",
    ),
    "evaluate": ("evaluate", "evaluate runs against qrels (trec_eval conventions by default)"),
    "fuse": (
        "fuse",
        "fuse runs into one (RRF, CombSUM/MNZ, weighted sums, Borda, Condorcet ...), "
        "or tune a fusion with cross-validation",
    ),
    "hash": (
        "hash",
        "evaluate hash codes (Hamming ranking): mAP with its tie band, P@k, radius measures",
    ),
    "history": ("history", "save evaluations of test suites and report them over time"),
    "ir_measures": (
        "ir_measures",
        "ir_measures' command line: QRELS RUN 'nDCG@10 P@5', same output",
    ),
    "trec_eval": (
        "trec_eval",
        "trec_eval's command line and output, byte for byte (--compat trec_eval9 for 9)",
    ),
    "report": (
        "report",
        "one self-contained HTML report of runs against a baseline (tables, figures)",
    ),
    "table": (
        "thesis",
        "comparative table of runs x measures with labels and a summary (thesis table)",
    ),
}


#: The library's words for its arguments (as its messages write them) -> this command
#: line's flags: the one table of them. A message of the library says ``block_rows=``;
#: printed here it says ``--block-rows``.
ARGUMENT_FLAGS: dict[str, str] = {
    "block_rows=": "--block-rows",
    "client=": "--scheduler",
    "scheduler=": "--scheduler",
    "tie_report=True": "--tie-report",
    "unjudged_report=True": "--unjudged-report",
    "ties=": "--ties",
    "qrels=": "--qrels",
    "run=": "--run",
    "columns={{'{role}': NAME}}": "--columns {role}=NAME",
    "limits=Limits(max_input_mb=...)": "--max-input-mb N",
    "limits=Limits(max_line_kb=...)": "--max-line-kb N",
    "limits=Limits(max_field_kb=...)": "--max-field-kb N",
    "score_col=": "--score-col",
    "label_col=": "--label-col",
    "criterion_col=": "--criterion-col",
    "query_col=": "--query-col",
    "candidate_col=": "--candidate-col",
    "prob_col=": "--prob-col",
    "gold_col=": "--gold-col",
    "the store path=": "--store",
    "store path=": "--store",
    "date_from=": "--from",
    "date_to=": "--to",
    "suite='regression-2025'": "--suite regression-2025",
    "device='cpu'": "--device cpu",
    "evaluations_json(per_query=True)": "`ranklab evaluate --per-query --format json`",
    "per_query=True": "--per-query",
}
_ARGUMENTS = re.compile(
    "|".join(
        rf"(?<![\w-]){re.escape(words)}" for words in sorted(ARGUMENT_FLAGS, key=len, reverse=True)
    )
)


def command_line_words(text: str) -> str:
    """A text of the library with its arguments' names as this command line's flags
    (:data:`ARGUMENT_FLAGS`).

    >>> command_line_words("Leave out client= and block_rows=, or tie_report=True")
    'Leave out --scheduler and --block-rows, or --tie-report'
    """
    return _ARGUMENTS.sub(lambda m: ARGUMENT_FLAGS[m.group(0)], text)


def error_line(exc: InputError) -> str:
    """The one line the command line prints for ``exc``: its message, the library's
    argument names given as flags."""
    return exc.render(command_line_words)


def command_module(name: str):
    """The module of subcommand ``name`` (imported on demand)."""
    return importlib.import_module(f"{__name__}.{COMMANDS[name][0]}")


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line, as the rest of the command line does."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def program_name(argv0: str | None = None) -> str:
    """The command as it was run, for usage and error lines: ``ranklab`` (the installed
    script) or ``python -m metrics_core``.

    >>> program_name("/usr/local/bin/ranklab"), program_name("/src/metrics_core/__main__.py")
    ('ranklab', 'python -m metrics_core')
    """
    import os

    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    if name.lower().startswith("ranklab"):
        return "ranklab"
    return "python -m metrics_core"


def build_parser(only: str | None = None, prog: str | None = None) -> argparse.ArgumentParser:
    """The parser; the arguments of subcommand ``only`` (every one when None) are filled in;
    ``prog`` names the command in usage lines (default: :func:`program_name`)."""
    parser = _Parser(
        prog=prog or program_name(),
        description="RankLab: exact, fast evaluation of rankings (trec_eval conventions by default).",
    )
    parser.add_argument("--version", action="version", version=f"RankLab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (_, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text)
            continue
        module = command_module(name)
        p = sub.add_parser(
            name, help=help_text, description=getattr(module, "DESCRIPTION", help_text)
        )
        module.add_arguments(p)
        add_limit_options(p)
        p.set_defaults(_run=module.run)
    return parser


def add_limit_options(p) -> None:
    """``--max-input-mb``, ``--max-line-kb`` and ``--max-field-kb``: what the readers may
    decode (:mod:`metrics_core.io.limits`), for every subcommand."""
    from metrics_core.cli._options import finite_float

    g = p.add_argument_group(
        "input limits (refused before decoding; defaults: 1024 MB of data held at once, "
        "lines of 1024 KB, values of 64 KB, or the RANKLAB_MAX_* variables)"
    )
    positive = finite_float(0, open_low=True)
    g.add_argument(
        "--max-input-mb",
        type=positive,
        metavar="N",
        help="the most data (MiB) one input may hold once decoded: a file read whole, what a "
        "compressed file decompresses to, a Parquet table, an array",
    )
    g.add_argument("--max-line-kb", type=positive, metavar="N", help="the longest line (KiB)")
    g.add_argument(
        "--max-field-kb", type=positive, metavar="N", help="the longest id or cell (KiB)"
    )


def limits_of(args):
    """The :class:`~metrics_core.io.limits.Limits` of the command: the environment's, with
    the limit options given."""
    from dataclasses import replace

    from metrics_core.io.limits import Limits

    given = {
        name: getattr(args, name, None)
        for name in ("max_input_mb", "max_line_kb", "max_field_kb")
        if getattr(args, name, None) is not None
    }
    return replace(Limits.from_env(), **given)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); ``prog`` names the
    command in usage and error lines (default: as it was run, :func:`program_name`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = prog or program_name()
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else "", prog=prog)
    args = parser.parse_args(argv)
    try:
        from metrics_core.io.limits import using_limits

        with using_limits(limits_of(args)):
            status = int(args._run(args) or EXIT_OK)
        sys.stdout.flush()  # a full disk or an I/O error on stdout is reported here, not at exit
        return status
    except InputError as exc:
        print(f"error: {error_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:
        print(f"error: {exc.filename or exc}: file not found. Check the path.", file=sys.stderr)
        return EXIT_USAGE
    except IsADirectoryError as exc:
        print(
            f"error: {exc.filename or exc}: is a folder, not a file. Give a file path.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except PermissionError as exc:
        print(f"error: {exc.filename or exc}: permission denied.", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print(
            "error: out of memory: the input is too large for this machine. "
            "Split it, or see the Limits section of the README.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except RecursionError:
        print("error: the input is nested too deeply to read.", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            return EXIT_OK
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else "<stdout>: "
        print(f"error: {where}{exc.strerror or exc}. Check the path and the disk.", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


def run(argv: list[str] | None = None) -> None:
    """The console entry point (``ranklab``, ``python -m metrics_core``): :func:`main`, then
    the process ends with its status without tearing down the native libraries.

    The work is over when :func:`main` returns: the streams are flushed and Python's exit
    functions run (temporary folders removed), then ``os._exit``. A normal interpreter exit
    also runs C++ static destructors, and Arrow's thread pools torn down there with a worker
    still alive end the process with ``std::terminate`` ("terminate called without an
    active exception", SIGABRT) after the answer was printed: rare, seen once in this
    project's tests after a one-line error on a run read from ``/dev/stdin``; the same
    abort at exit is reported against pyarrow (apache/arrow#34314). Usage errors and
    ``--help`` leave through argparse's ``SystemExit`` before any of those libraries is
    loaded.
    """
    status = main(argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    atexit._run_exitfuncs()
    os._exit(status)
