"""Coverage-guided fuzzing of one reader with atheris (libFuzzer).

    python -m tests.fuzz.fuzz_readers TARGET [libFuzzer options] [CORPUS_DIR ...]

``TARGET`` is a key of :data:`tests.fuzz.targets.TARGETS` (``list`` prints them). The
readers (``metrics_core.io`` and the modules it uses) are instrumented for coverage.
Useful options: ``-runs=N``, ``-max_total_time=S``, ``-seed=1``, ``-timeout=S`` (a slow
input is a finding: a hang), ``-rss_limit_mb=N``, ``-artifact_prefix=DIR/``,
``-print_final_stats=1``. With no corpus folder the seeds of
:func:`tests.fuzz.targets.seeds` are written to a temporary one. Any exception other than
an :class:`~metrics_core.errors.InputError` with a one-line message, and any failed
soundness check of what was read, ends the run with the input saved as ``crash-*``.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

import atheris

INSTRUMENTED = ("metrics_core.data", "metrics_core.validation", "metrics_core.io", "metrics_core.io.source",
                "metrics_core.io.formats", "metrics_core.io.columns", "metrics_core.io.trec",
                "metrics_core.io.tables", "metrics_core.io.objects", "metrics_core.io.blocks",
                "metrics_core.io.scores", "metrics_core.io.metadata", "metrics_core.io.clicks",
                "metrics_core.io.codes", "metrics_core.io.coverage")

with atheris.instrument_imports(include=["metrics_core"]):
    for _module in INSTRUMENTED:
        importlib.import_module(_module)

from tests.fuzz.targets import TARGETS, write_seeds  # noqa: E402


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in TARGETS:
        print("targets: " + ", ".join(TARGETS), file=sys.stderr)
        raise SystemExit(0 if len(argv) > 1 and argv[1] == "list" else 2)
    target = TARGETS[argv[1]]
    options = argv[2:]
    if not any(not a.startswith("-") for a in options):
        options.append(str(write_seeds(Path(tempfile.mkdtemp(prefix="ranklab-fuzz-")))))
    atheris.Setup([argv[0], *options], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
