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


def _command_modules(only: str | None = None):
    """Subcommand modules; with ``only``, just that one (a module ``dynamic_k`` is the
    command ``dynamic-k``), so ``evaluate`` never pays for importing torch or scipy."""
    import metrics_core.commands as package

    infos = sorted((m for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")),
                   key=lambda m: m.name)
    if only is not None:
        chosen = [m for m in infos if m.name.replace("_", "-") == only]
        infos = chosen or infos
    for info in infos:
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            yield module


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line, as the rest of the command line does."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m metrics_core",
        description="RankLab: exact, fast evaluation of rankings (trec_eval conventions by default).",
    )
    parser.add_argument("--version", action="version", version=f"RankLab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in _command_modules(only):
        p = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first)
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
