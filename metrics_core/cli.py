"""The ``python -m metrics_core`` command line.

Subcommands live in :mod:`metrics_core.commands`, one module each, found at start-up:
a module there defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``
(returning the exit status). User errors (:class:`~metrics_core.errors.InputError`) end
with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from metrics_core import __version__
from metrics_core.errors import InputError

EXIT_OK = 0
EXIT_USAGE = 2


def _command_modules():
    import metrics_core.commands as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            yield module


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line, as the rest of the command line does."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m metrics_core",
        description="RankLab: exact, fast evaluation of rankings (trec_eval conventions by default).",
    )
    parser.add_argument("--version", action="version", version=f"RankLab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in _command_modules():
        p = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or EXIT_OK)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:
        print(f"error: {exc.filename or exc}: file not found. Check the path.", file=sys.stderr)
        return EXIT_USAGE
    except IsADirectoryError as exc:
        print(f"error: {exc.filename or exc}: is a folder, not a file. Give a file path.", file=sys.stderr)
        return EXIT_USAGE
    except PermissionError as exc:
        print(f"error: {exc.filename or exc}: permission denied.", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
