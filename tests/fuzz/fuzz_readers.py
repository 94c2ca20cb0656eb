"""Coverage-guided fuzzing of one reader with atheris (libFuzzer).

    pip install -r requirements-fuzz.txt
    python -m tests.fuzz.fuzz_readers TARGET [libFuzzer options] [CORPUS_DIR ...]

``TARGET`` is a key of :data:`tests.fuzz.targets.TARGETS` (``list`` prints them). The
readers (``metrics_core.io`` and the modules it uses) are instrumented for coverage.
Useful options: ``-runs=N``, ``-max_total_time=S``, ``-seed=1``, ``-timeout=S`` (a slow
input is a finding: a hang), ``-rss_limit_mb=N``, ``-artifact_prefix=DIR/``,
``-print_final_stats=1``; the environment variable ``RANKLAB_FUZZ_EXIT_AFTER=N`` ends
the run (status 0) after N inputs, without libFuzzer's exit (what the test suite uses). With no corpus folder the seeds of
:func:`tests.fuzz.targets.seeds` are written to a temporary one. Any exception other than
an :class:`~metrics_core.errors.InputError` with a one-line message, and any failed
soundness check of what was read, ends the run with the input saved as ``crash-*``.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path

try:
    import atheris
except ImportError:  # optional: listed in requirements-fuzz.txt, not in requirements-dev.txt
    sys.exit("atheris is not installed: pip install -r requirements-fuzz.txt")

INSTRUMENTED = (
    "metrics_core.data",
    "metrics_core.validation",
    "metrics_core.io",
    "metrics_core.io.source",
    "metrics_core.io.formats",
    "metrics_core.io.columns",
    "metrics_core.io.trec",
    "metrics_core.io.tables",
    "metrics_core.io.objects",
    "metrics_core.io.batches",
    "metrics_core.io.scores",
    "metrics_core.io.metadata",
    "metrics_core.io.clicks",
    "metrics_core.io.codes",
    "metrics_core.io.coverage",
)

with atheris.instrument_imports(include=["metrics_core"]):
    for _module in INSTRUMENTED:
        importlib.import_module(_module)

from tests.fuzz.targets import TARGETS, write_seeds  # noqa: E402


def _stopping(target, n: int):
    """``target``, ending the process with status 0 after ``n`` inputs. libFuzzer's own end
    (``-runs``) calls exit(), whose teardown of Arrow's thread pools was seen to hang once
    in a busy machine; this ends without any teardown, after saying how many inputs ran."""
    count = [0]

    def run(data: bytes) -> None:
        target(data)
        count[0] += 1
        if count[0] >= n:
            print(f"ranklab-fuzz: {count[0]} inputs, no finding", file=sys.stderr, flush=True)
            os._exit(0)

    return run


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in TARGETS:
        print("targets: " + ", ".join(TARGETS), file=sys.stderr)
        raise SystemExit(0 if len(argv) > 1 and argv[1] == "list" else 2)
    target = TARGETS[argv[1]]
    options = argv[2:]
    stop_after = int(os.environ.get("RANKLAB_FUZZ_EXIT_AFTER", "0"))
    if stop_after:
        target = _stopping(target, stop_after)
    if not any(not a.startswith("-") for a in options):
        options.append(str(write_seeds(Path(tempfile.mkdtemp(prefix="ranklab-fuzz-")))))
    atheris.Setup([argv[0], *options], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
