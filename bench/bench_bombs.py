"""Memory of refusing a bomb: the peak resident set a small hostile file adds to a process.

    python bench/bench_bombs.py [--base REF] [--json OUT] [--only WORDS]

Each bomb is read in a fresh child process by this tree and, with ``--base``, by the library
of commit REF (``git archive``) side by side: 1 GiB of zeros in gzip, bzip2, xz, zstd and
LZ4; a 983-byte Parquet file whose footer declares 600,000,000 rows; a 57 kB history file
whose CHECK constraint builds a 900 MB string per row; a Parquet file of a few kB whose
document-id dictionary decodes to 1 GB of text; a CSV of one 39 MB line (a path and an
upload); one 500 MB line (``mc.evaluate`` and ``ranklab evaluate``); 0.9 MB zstd and gzip
text bombs of valid run lines, and three zstd ones read at once by three threads; JSON
nested 1,000,000 deep; a torch ``.pt`` whose zip directory declares 2 GiB members. The
child imports the readers, resets its peak (``/proc/self/clear_refs``), reads the bomb and
reports its peak resident set above the resident set before the read (``VmHWM - VmRSS``),
the seconds it took and the first words of what the reader said. The bombs are built by the
test suite's builders (``tests/hostile/bombs.py``), so the bench reads exactly what the
tests read. Run it with no other measurement at the same time (for example every
measurement under one ``flock`` lock file).
"""

from __future__ import annotations

import argparse
import io
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
import contextlib, io, json, sys, threading, time
sys.path.insert(0, sys.argv[1])
import metrics_core as mc
from metrics_core.io import read_run
from metrics_core.history.store import HistoryStore
read_run(b"q1 Q0 d1 1 1.0 t\n", name="warm")  # imports and first-use work out of the measure
import pandas, pyarrow.parquet
def kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
def upload(path, name=None):
    fh = io.BytesIO(open(path, "rb").read())
    fh.name = name or path.rsplit("/", 1)[-1]
    return fh
def cli(*argv):
    from metrics_core.cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    raise RuntimeError(f"exit {code}: " + err.getvalue().strip().splitlines()[-1])
def three(read, *sources):
    said = []
    def go(source):
        try:
            read(source)
            said.append("accepted")
        except Exception as exc:
            said.append(str(exc)[:60])
    threads = [threading.Thread(target=go, args=(s,)) for s in sources]
    [t.start() for t in threads]
    [t.join() for t in threads]
    raise RuntimeError(f"{sum(s != 'accepted' for s in said)} of 3 refused: {said[0]}")
P = json.loads(sys.argv[3])
code = sys.argv[2]
open("/proc/self/clear_refs", "w").write("5")
before = kib("VmRSS")
start = time.perf_counter()
try:
    exec(code)
    said = "accepted"
except Exception as exc:
    said = str(exc)
took = time.perf_counter() - start
print(json.dumps({"peak_mb": (kib("VmHWM") - before) / 1024, "s": took, "said": said}))
"""


def build_bombs(folder: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(paths by key, [(label, code)]) of every bomb, written under ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.hostile.bombs import (
        COLUMN_VALUES,
        FILE_ROWS,
        FORMATS,
        GROUP_ROWS,
        check_bomb_history,
        compressed_bomb,
        deep_json,
        forged_zip_sizes,
        one_line_file,
        parquet_dictionary_bomb,
        patch_parquet_rows,
        text_bomb,
    )

    paths: dict[str, str] = {}

    def put(key: str, data: bytes) -> str:
        path = folder / key
        path.write_bytes(data)
        paths[key] = str(path)
        return f"{path.stat().st_size:,} bytes"

    bombs = []
    for fmt in FORMATS:
        size = put(f"zeros.{fmt}", compressed_bomb(fmt, bytes(16 << 20), 64))
        bombs.append((f"{fmt}: 1 GiB of zeros ({size})", f"read_run(upload(P['zeros.{fmt}']))"))
    buf = io.BytesIO()
    pq.write_table(
        pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}), buf
    )
    size = put(
        "forged.parquet",
        patch_parquet_rows(buf.getvalue(), 600_000_000, FILE_ROWS, GROUP_ROWS, COLUMN_VALUES),
    )
    bombs.append(
        (f"Parquet declaring 600,000,000 rows ({size})", "read_run(upload(P['forged.parquet']))")
    )
    size = put("check-bomb.sqlite3", check_bomb_history(900_000_000))
    bombs.append(
        (
            f"history, CHECK building 900 MB ({size})",
            "HistoryStore.from_bytes(open(P['check-bomb.sqlite3'], 'rb').read(), 'check.sqlite3')",
        )
    )
    size = put("dictionary.parquet", parquet_dictionary_bomb())
    bombs.append(
        (
            f"Parquet whose id dictionary decodes to 1 GB ({size}), uploaded",
            "read_run(upload(P['dictionary.parquet']))",
        )
    )
    one_line_file(folder / "one-line.csv", 39 << 20)
    paths["one-line.csv"] = str(folder / "one-line.csv")
    bombs.append(("CSV of one 39 MB line, a path", "read_run(P['one-line.csv'])"))
    bombs.append(("CSV of one 39 MB line, uploaded", "read_run(upload(P['one-line.csv']))"))
    one_line_file(folder / "one-line.txt", 500 << 20, head=b"")
    paths["one-line.txt"] = str(folder / "one-line.txt")
    put("qrels.txt", b"q1 0 d1 1\n")
    bombs.append(
        ("one 500 MB line, mc.evaluate", "mc.evaluate(P['qrels.txt'], P['one-line.txt'], ['AP'])")
    )
    bombs.append(
        (
            "one 500 MB line, ranklab evaluate",
            "cli('evaluate', '--quiet', '--qrels', P['qrels.txt'], '--run', P['one-line.txt'])",
        )
    )
    for fmt in ("zstd", "gzip"):
        size = put(f"lines.{fmt}", text_bomb(fmt))
        bombs.append((f"{fmt} text bomb ({size})", f"read_run(upload(P['lines.{fmt}']))"))
    bombs.append(
        (
            "three zstd text bombs at once (3 threads)",
            "three(read_run, *(upload(P['lines.zstd'], f'b{i}.zst') for i in range(3)))",
        )
    )
    size = put("deep.json", deep_json())
    bombs.append((f"JSON nested 1,000,000 deep ({size})", "read_run(upload(P['deep.json']))"))
    import torch

    buf = io.BytesIO()
    torch.save(torch.ones(64, 8), buf)
    size = put("forged.pt", forged_zip_sizes(buf.getvalue()))
    bombs.append(
        (
            f"torch .pt declaring 2 GiB members ({size})",
            "from metrics_core.io.codes import read_matrix; read_matrix(upload(P['forged.pt']))",
        )
    )
    return paths, bombs


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
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target


def measure(tree: Path, code: str, paths: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), code, json.dumps(paths)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        return {
            "peak_mb": float("nan"),
            "s": float("nan"),
            "said": f"exit {proc.returncode}: {proc.stderr.strip()[-120:]}",
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="also measure the library of this commit")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--only", help="only the bombs whose label holds these words")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = [("this tree", ROOT)]
        if args.base:
            trees.insert(0, (args.base, library_at(args.base, folder)))
        paths, bombs = build_bombs(folder)
        for label, code in bombs:
            if args.only and args.only not in label:
                continue
            for name, tree in trees:
                got = measure(tree, code, paths)
                print(f"{label} / {name}: {got['peak_mb']:.0f} MB", file=sys.stderr, flush=True)
                rows.append({"bomb": label, "library": name, **got})
    lines = [
        "| bomb | library | peak added, MB | seconds | what the reader said |",
        "|---|---|---:|---:|---|",
    ]
    for r in rows:
        said = r["said"].replace("|", "/")
        lines.append(
            f"| {r['bomb']} | {r['library']} | {r['peak_mb']:.1f} | {r['s']:.2f} | {said[:90]} |"
        )
    print_rows(rows, "\n".join(lines), args.json)


if __name__ == "__main__":
    main()
