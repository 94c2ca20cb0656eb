"""Memory of refusing a bomb: the peak resident set a small hostile file adds to a process.

    python bench/bench_bombs.py [--base REF] [--json OUT]

Each bomb (1 GiB of zeros in gzip, bzip2, xz, zstd and LZ4; a 983-byte Parquet file whose
footer declares 600,000,000 rows at every level; a 57 kB history file whose CHECK
constraint builds a 900 MB string per row) is read in a fresh child process by this tree
and, with ``--base``, by the library of commit REF (``git archive``) side by side. The
child imports the readers, resets its peak (``/proc/self/clear_refs``), reads the bomb and
reports its peak resident set above the resident set before the read (``VmHWM - VmRSS``),
and the first words of what the reader said. The bombs are built by the test suite's
builders (``tests/hostile/bombs.py``), so the bench reads exactly what the tests read.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_ranking import print_rows  # noqa: E402

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from metrics_core.io import read_run
from metrics_core.history.store import HistoryStore
read_run(b"q1 Q0 d1 1 1.0 t\n", name="warm")  # imports and first-use work out of the measure
def kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
kind, path = sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
open("/proc/self/clear_refs", "w").write("5")
before = kib("VmRSS")
try:
    if kind == "history":
        HistoryStore.from_bytes(data, path.rsplit("/", 1)[-1])
    else:
        import io
        upload = io.BytesIO(data)
        upload.name = path.rsplit("/", 1)[-1]
        read_run(upload)
    said = "accepted"
except Exception as exc:
    said = str(exc)
print(json.dumps({"peak_mb": (kib("VmHWM") - before) / 1024, "said": said}))
"""


def build_bombs(folder: Path) -> list[tuple[str, str, Path]]:
    """(label, kind, path) of every bomb, written under ``folder``."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.hostile.bombs import (
        COLUMN_VALUES,
        FILE_ROWS,
        FORMATS,
        GROUP_ROWS,
        check_bomb_history,
        compressed_bomb,
        patch_parquet_rows,
    )

    out = []
    for fmt in FORMATS:
        path = folder / f"zeros.{fmt}"
        path.write_bytes(compressed_bomb(fmt, bytes(16 << 20), 64))
        out.append((f"{fmt}: 1 GiB of zeros ({path.stat().st_size:,} bytes)", "run", path))
    buf = io.BytesIO()
    pq.write_table(
        pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}), buf
    )
    path = folder / "forged.parquet"
    path.write_bytes(
        patch_parquet_rows(buf.getvalue(), 600_000_000, FILE_ROWS, GROUP_ROWS, COLUMN_VALUES)
    )
    out.append((f"Parquet declaring 600,000,000 rows ({path.stat().st_size:,} bytes)", "run", path))
    path = folder / "check-bomb.sqlite3"
    path.write_bytes(check_bomb_history(900_000_000))
    out.append((f"history, CHECK building 900 MB ({path.stat().st_size:,} bytes)", "history", path))
    return out


def library_at(ref: str, folder: Path) -> Path:
    """The tree of ``ref`` (its metrics_core) unpacked under ``folder``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "metrics_core"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    target = folder / ref
    target.mkdir()
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target


def measure(tree: Path, kind: str, path: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), kind, str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        return {
            "peak_mb": float("nan"),
            "said": f"exit {proc.returncode}: {proc.stderr.strip()[-120:]}",
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="also measure the library of this commit")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = [("this tree", ROOT)]
        if args.base:
            trees.insert(0, (args.base, library_at(args.base, folder)))
        for label, kind, path in build_bombs(folder):
            for name, tree in trees:
                got = measure(tree, kind, path)
                rows.append({"bomb": label, "library": name, **got})
    lines = ["| bomb | library | peak added, MB | what the reader said |", "|---|---|---:|---|"]
    for r in rows:
        said = r["said"].replace("|", "/")
        lines.append(f"| {r['bomb']} | {r['library']} | {r['peak_mb']:.1f} | {said[:90]} |")
    print_rows(rows, "\n".join(lines), args.json)


if __name__ == "__main__":
    main()
