"""Record NIST trec_eval's outputs as test data, so the exactness tests run in every clone.

    python tools/record_trec_eval.py             # tests/data/trec_eval/recorded.jsonl.gz
    python tools/record_trec_eval.py --nist DIR  # first, tests/data/trec_eval/nist from DIR

Needs trec_eval's sources and build script (``reference/build-trec_eval.sh`` in the shared
folder beside the repository, or under ``$RANKLAB_SHARED``) and a C compiler. It runs the test
modules that ask trec_eval for deterministic cases (those that import ``tests.oracle``) with
``RANKLAB_RECORD_TREC_EVAL`` set: each case is run by the built trec_eval and its standard
output and exit status appended, keyed by the build, the arguments and the bytes of the input
files; the cases are then written grouped by input files, gzip-compressed with no time stamp (the same
cases give the same bytes). The tests' own assertions run as usual; their status is this
script's.

``--nist DIR`` (NIST's ``test`` folder of trec_eval 10.0, e.g. ``shared/conformance/trec_eval``)
copies its expected outputs (``out.*``) and its LICENSE.md, and its input files compressed
with gzip; ``results.comment.test`` is cut to the lines of the queries its qrels judge and of
the first ten it does not (2.7 MB: the other 260 unjudged queries change no output), and the
cut file is checked to give trec_eval 10 the same output, byte for byte, as the whole one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import oracle  # noqa: E402
from tests.conftest import CONFORMANCE_DATA, shared_dir  # noqa: E402

#: NIST's input files (each committed as NAME.gz)
NIST_INPUTS = (
    "qrels.test",
    "qrels.test.with-comments",
    "qrels.comment.test",
    "qrels.rel_level",
    "results.test",
    "results.trunc",
    "results.comment.test",
)
#: unjudged queries of results.comment.test kept (run topics absent from the qrels)
UNJUDGED_KEPT = 10


def cut_comment_run(run: str, qrels: str) -> str:
    """The run's lines of every query the qrels judge and of its first unjudged queries."""
    judged = {line.split()[0] for line in qrels.splitlines() if line.strip()}
    unjudged: list[str] = []
    kept = []
    for line in run.splitlines(keepends=True):
        query = line.split()[0]
        if query not in judged and query not in unjudged and len(unjudged) < UNJUDGED_KEPT:
            unjudged.append(query)
        if query in judged or query in unjudged:
            kept.append(line)
    return "".join(kept)


def write_nist(source: Path) -> None:
    target = CONFORMANCE_DATA
    target.mkdir(parents=True, exist_ok=True)
    for old in target.iterdir():
        if old.name.startswith("out.") or old.suffix == ".gz":
            old.unlink()
    for path in sorted(source.glob("out.*")):
        shutil.copyfile(path, target / path.name)
    shutil.copyfile(source / "LICENSE.md", target / "LICENSE.md")
    for name in NIST_INPUTS:
        data = (source / name).read_bytes()
        if name == "results.comment.test":
            qrels = (source / "qrels.comment.test").read_text(encoding="utf-8")
            data = cut_comment_run(data.decode("utf-8"), qrels).encode("utf-8")
            check_cut(source, data)
        (target / f"{name}.gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        print(f"{name}: {len(data):,} bytes, {(target / f'{name}.gz').stat().st_size:,} gzip")


def check_cut(source: Path, cut: bytes) -> None:
    binary = oracle.live("10_stock")
    if binary is None:
        raise SystemExit(f"cannot check the cut run: {oracle.why_not_live('10_stock')}")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "run").write_bytes(cut)
        for flags in ([], ["-q", "-c", "-m", "all_trec"]):
            qrels = str(source / "qrels.comment.test")
            whole = subprocess.run(
                [binary, *flags, qrels, str(source / "results.comment.test")], capture_output=True
            )
            part = subprocess.run(
                [binary, *flags, qrels, str(Path(tmp) / "run")], capture_output=True
            )
            if (whole.stdout, whole.returncode) != (part.stdout, part.returncode):
                raise SystemExit(f"the cut results.comment.test changes trec_eval {flags}")


def oracle_test_modules() -> list[str]:
    found = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "from tests import oracle" in text or "import tests.oracle" in text:
            found.append(str(path.relative_to(ROOT)))
    return found


def _inputs(shown: list[str]) -> list[str]:
    """The input files of a recorded call (``NAME@DIGEST``), in order."""
    return [arg for arg in shown if "@" in arg]


def record() -> int:
    for kind in oracle.KINDS:
        if oracle.live(kind) is None:
            raise SystemExit(f"cannot record: {oracle.why_not_live(kind)}")
    modules = oracle_test_modules()
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "recorded.jsonl"
        lines.touch()
        env = dict(os.environ, **{oracle.RECORD_ENV: str(lines)})
        status = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist", *modules],
            cwd=ROOT,
            env=env,
        )
        records: dict[str, dict] = {}
        for line in lines.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            earlier = records.setdefault(item["key"], item)
            if (earlier["stdout"], earlier["status"]) != (item["stdout"], item["status"]):
                raise SystemExit(f"trec_eval gave two outputs for {item['args']}")
    # one collection's outputs side by side (both versions, every option set): gzip's window
    # then finds what they share (181 kB against 309 kB in key order, 2026-11-28)
    ordered = sorted(records.values(), key=lambda r: (_inputs(r["args"]), r["args"], r["kind"]))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ordered)
    oracle.RECORDED.parent.mkdir(parents=True, exist_ok=True)
    oracle.RECORDED.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    print(
        f"{len(records)} cases from {len(modules)} test modules: {len(text):,} bytes, "
        f"{oracle.RECORDED.stat().st_size:,} gzip in {oracle.RECORDED.relative_to(ROOT)}"
    )
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--nist",
        type=Path,
        nargs="?",
        const=shared_dir() / "conformance" / "trec_eval",
        help="NIST's test folder to copy first (default: the shared folder's conformance/trec_eval)",
    )
    args = parser.parse_args(argv)
    if args.nist:
        write_nist(args.nist)
    return record()


if __name__ == "__main__":
    raise SystemExit(main())
