"""The hosted app under load, in real browsers, inside a 1 GB memory cgroup.

    python bench/load_test.py [--scenario visitors] [--visitors 25] [--lines 100000]
                              [--queries 1000] [--judgements 100000] [--wait-after 180]
    python bench/load_test.py --scenario big-run --lines 1000000 [--compress none|gzip|zstd]
    python bench/load_test.py --scenario bombs
    ... [--cgroup-mb 1024] [--timeout 900] [--json OUT]

Starts ``streamlit run app.py`` with the app's default settings (``--env NAME=VALUE`` adds
some) on 127.0.0.1, and drives Debian's Chromium through Playwright (``executable_path``,
the flags of ``tests/e2e/conftest.py``; nothing downloads a browser): one browser, one
browser context per visitor (one Streamlit session each).

**The server's memory is the host's.** Run as root on Linux, the server starts inside a
memory cgroup of ``--cgroup-mb`` MB (cgroup v1 ``memory.limit_in_bytes`` under
``/sys/fs/cgroup/memory``, or v2 ``memory.max``; swap limited too): past it the kernel kills
the server, as a 1 GB host does, and the report says whether it did (the process killed, the
cgroup's ``oom_kill`` count). Where no cgroup can be made (not root, not Linux, read-only)
the report says so plainly and why: the server's memory is then only sampled.

Scenarios (``--scenario``):

- ``visitors`` (default): ``--visitors`` N visitors open the Data page, then all upload at
  the same moment their own qrels (``--judgements`` judgements over ``--queries`` queries,
  about 4 MB at 100,000) and two runs of ``--lines`` lines, generated here, seeded by the
  visitor's number (deterministic; under ``bench/data/load/``; run names, query and document
  ids carry the number). Each then opens ``--pages`` (Overview, Per query, Compare systems,
  Fusion) through the menu. Reported: the server's peak memory (resident set sampled every
  0.25 s, the kernel's own high-water mark ``VmHWM``, and the cgroup's usage), memory over
  time (``timeline``: seconds, RSS, anonymous and file-backed RSS, cgroup usage, visitors with
  a leaderboard, visitors waiting), each visitor's time from the common start to its
  leaderboard (p50 / p95), who saw the waiting line and whether it showed their place, every
  refusal with its text (and whether it is one line), tracebacks shown, isolation (no page of
  a visitor names another visitor's runs, queries or documents), what a visitor's data holds
  while the tabs sit idle (``--idle-wait`` s after the last page) against its files, and
  memory every 10 s for ``--wait-after`` s after the tabs close. A visitor that never got its
  leaderboard is a finding (its stage, what its page said, a screenshot), not a crash. Then
  (unless ``--no-alone``) one more visitor with files of the same size goes through the same
  pages alone, once the others have left: the CPU seconds each kind of process (server,
  Chromium's renderers, its browser and GPU processes, the Playwright driver) spends before
  its leaderboard and after it. Here the browsers share the server's cores, so every
  visitor's work before its leaderboard is done on them: with the p95 visitor's board
  waiting for ``ceil(0.95 N)`` visitors' work, that work over the cores is the shortest p95
  this machine allows, whatever the server does (:func:`board_floor`; printed beside the
  p95 target).
- ``big-run``: one visitor, qrels then one run of ``--lines`` lines (``--queries`` queries;
  ``--compress`` gzip/zstd uploads it compressed): the seconds from the end of the run's
  upload (its HTTP transfer finished) until the Data page lists it and until the
  Overview's leaderboard names it, or the refusal; the server's memory.
- ``bombs``: files that decode to far more than they weigh, dropped into the runs box of a
  fresh visitor: a Parquet file whose doc-id dictionary decodes to about 1 GB, a 39 MB CSV
  whose one data line holds a 39 MB doc id, and three 0.9 MB zstd text bombs (valid TREC lines,
  gigabytes once decoded) dropped by three visitors at once. Per step: what the page said,
  and how far the server grew above where it stood (sampled and ``VmHWM``; target 150 MB).

Output: a human summary (with each target of issue 37 met or not, and what was seen) and a
JSON report (``--json``; by default under ``bench/out/``). Exit status 0 when the run finished
with isolation held and the server alive; 1 otherwise (the report is written either way).
Runs take minutes on a small machine (the browser shares its cores); give timings and memory
only from runs that did not overlap other work.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import errno
import gzip
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.app_budget import start_server  # noqa: E402
from tests.e2e.conftest import CHROMIUM_ARGS  # noqa: E402

DATA_DIR = ROOT / "bench" / "data" / "load"
OUT_DIR = ROOT / "bench" / "out"
MB = 1_000_000

#: The pages each visitor opens after its uploads, in order (menu titles).
VISITOR_PAGES = ("Overview", "Per query", "Compare systems", "Fusion")

# --- issue 37's targets (what the summary checks) ---------------------------------------------
#: All visitors' leaderboards by then (seconds from their common start, 95th percentile).
TARGET_P95_S = 60.0
#: Memory within this many MB of idle some minutes after the visitors left.
BACK_WITHIN_MB = 50
#: What a visitor's data may hold in the server while idle, as a multiple of its files.
TARGET_PER_VISITOR_X = 1.5
#: A 1,000,000-line run: seconds from the end of its upload to the leaderboard.
TARGET_BIG_RUN_S = 5.0
#: What a bomb may add to the server before it is refused.
TARGET_BOMB_GROWTH_MB = 150

#: A page element whose text matches this is the waiting line (in English: the load test's
#: visitors browse in English). Spinners, alerts, captions and toasts are read.
WAIT_PATTERN = r"\bwaiting\b|\bin line\b|\bqueue\b|\byour turn\b"
#: A waiting line that shows the visitor's place: a number with a word of place, or "next".
PLACE = re.compile(
    r"(\b(place|position|number|turn)\b\D{0,20}\d|\d+\s*(st|nd|rd|th)?\s+(in line|of \d+)"
    r"|\b\d+\s+(visitors?|people|computations?|jobs?)\s+(ahead|before|in front)"
    r"|\bahead of you\D{0,20}\d|#\s*\d|\byours is next\b|\bnext in line\b|\byou are next\b)",
    re.I,
)
#: Names a visitor's data carries (run names vNNa / vNNb, ids vNN-...).
NAMES = re.compile(r"\bv(\d\d)[ab]\b|\bv(\d\d)-")
OTHERS = "saw data of other visitors"
RUN_PEAK = "peak from the run upload"


# === data ======================================================================================


def _write_lines(path: Path, lines) -> None:
    tmp = path.with_suffix(path.suffix + ".part")
    with tmp.open("w") as fh:
        fh.writelines(lines)
    tmp.replace(path)


def make_visitor_data(
    i: int, lines: int, queries: int, judgements: int, out: Path = DATA_DIR
) -> tuple[Path, Path, Path]:
    """Visitor ``i``'s qrels (``judgements`` over ``queries`` queries) and two runs (``vNNa``,
    ``vNNb``) of ``lines`` lines: every id carries ``vNN``, so one visitor's data shown to
    another is seen. Seeded by ``i``; written once (same arguments, same bytes)."""
    folder = out / f"v{i:02d}_{lines}_{queries}_{judgements}"
    qrels, run_a, run_b = (
        folder / "qrels.txt",
        folder / f"v{i:02d}a.txt",
        folder / f"v{i:02d}b.txt",
    )
    if qrels.exists() and run_a.exists() and run_b.exists():
        return qrels, run_a, run_b
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1000 + i)
    depth = max(lines // queries, 1)
    per_query = max(judgements // queries, 1)
    docs = max(40 * depth, 15 * per_query)
    q = np.repeat(np.arange(queries), depth)
    ranks = np.tile(np.arange(1, depth + 1), queries)
    offset = rng.integers(0, docs, queries)  # each query's documents; run b shifted from run a's
    for path, tag, shift in ((run_a, f"v{i:02d}a", 0), (run_b, f"v{i:02d}b", 21)):
        d = (np.tile(np.arange(depth), queries) * 7 + np.repeat(offset + shift, depth)) % docs
        s = rng.random(len(q)) * 20
        _write_lines(
            path,
            (
                f"v{i:02d}-q{a:05d} Q0 v{i:02d}-clueweb12-{b:07d}-doc {r} {c:.6f} {tag}\n"
                for a, b, r, c in zip(q, d, ranks, s, strict=True)
            ),
        )
    # per_query judgements a query, some among the documents both runs retrieve
    jd = (np.arange(per_query)[None, :] * 14 + offset[:, None]) % docs
    rel = rng.choice(4, size=jd.shape, p=[0.6, 0.2, 0.12, 0.08])
    _write_lines(
        qrels,
        (
            f"v{i:02d}-q{a:05d} 0 v{i:02d}-clueweb12-{b:07d}-doc {c}\n"
            for a in range(queries)
            for b, c in zip(jd[a], rel[a], strict=True)
        ),
    )
    return qrels, run_a, run_b


def make_big_run(
    lines: int, queries: int, compress: str = "none", out: Path = DATA_DIR
) -> tuple[Path, Path]:
    """Qrels (100 judgements a query, among the retrieved documents) and one run of ``lines``
    lines over ``queries`` queries, about 34 bytes a line (``q12 Q0 d0001234 1 12.3456
    big``; 1,000,000 lines: 34 MB); ``compress`` "gzip" or "zstd" writes the run compressed
    (``.gz`` / ``.zst``). Seeded; written once."""
    folder = out / f"big_{lines}_{queries}"
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = folder / "qrels.txt", folder / f"r{lines}.txt"
    depth = max(lines // queries, 1)
    docs = 40 * depth
    rng = np.random.default_rng(7)
    offset = rng.integers(0, docs, queries)
    if not run.exists():
        q = np.repeat(np.arange(queries), depth)
        ranks = np.tile(np.arange(1, depth + 1), queries)
        d = (np.tile(np.arange(depth), queries) * 7 + np.repeat(offset, depth)) % docs
        s = np.round(rng.random(len(q)) * 20, 4)
        _write_lines(
            run,
            (
                f"q{a} Q0 d{b:07d} {r} {c:.4f} big\n"
                for a, b, r, c in zip(q, d, ranks, s, strict=True)
            ),
        )
    if not qrels.exists():
        per_query = min(100, depth)
        jd = (np.arange(per_query)[None, :] * 14 + offset[:, None]) % docs
        rel = np.random.default_rng(8).choice(4, size=jd.shape, p=[0.6, 0.2, 0.12, 0.08])
        _write_lines(
            qrels,
            (
                f"q{a} 0 d{b:07d} {c}\n"
                for a in range(queries)
                for b, c in zip(jd[a], rel[a], strict=True)
            ),
        )
    if compress == "none":
        return qrels, run
    packed = run.with_name(run.name + (".gz" if compress == "gzip" else ".zst"))
    if not packed.exists():
        tmp = packed.with_name(packed.name + ".part")
        if compress == "gzip":
            with run.open("rb") as src, gzip.open(tmp, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        else:
            import pyarrow as pa

            with run.open("rb") as src, pa.OSFile(str(tmp), "wb") as sink:
                with pa.CompressedOutputStream(sink, "zstd") as dst:
                    while block := src.read(1 << 20):
                        dst.write(block)
        tmp.replace(packed)
    return qrels, packed


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


@dataclass
class Bomb:
    """A file that decodes to far more than it weighs."""

    path: Path
    decoded: int  # bytes it decodes to (the doc ids, or the text)
    what: str


def make_bombs(out: Path = DATA_DIR / "bombs") -> dict[str, list[Bomb]]:
    """The bombs of issue 37, seeded, written once: {step: files dropped at once}.

    - ``parquet-dictionary``: a run in Parquet (zstd pages) of 1,000 queries x 1,000 documents
      whose doc-id column is dictionary-encoded: 1,000 distinct ids of 1,000 characters, so
      the file is about 1 MB and its doc ids decode to 1 GB of text;
    - ``csv-one-line``: a CSV run whose one data line holds a 39,000,000-character doc id;
    - ``zstd-text-x3``: three zstd files of about 0.9 MB, each concatenated frames of valid
      TREC lines (a 16 kB block repeated) that decode to about 5 GB, dropped by three visitors
      at once."""
    out.mkdir(parents=True, exist_ok=True)
    bombs: dict[str, list[Bomb]] = {}

    pq_path = out / "dictionary-bomb.parquet"
    n_docs, length, n_queries = 1000, 1000, 1000
    if not pq_path.exists():
        import pyarrow as pa
        import pyarrow.parquet as pq

        rng = np.random.default_rng(37)
        alphabet = np.frombuffer(
            b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", dtype=np.uint8
        )
        chars = alphabet[rng.integers(0, len(alphabet), n_docs * length)].tobytes().decode()
        ids = pa.array([chars[k * length : (k + 1) * length] for k in range(n_docs)])
        rows = n_docs * n_queries
        doc = pa.DictionaryArray.from_arrays(
            pa.array(np.tile(np.arange(n_docs, dtype=np.int32), n_queries)), ids
        )
        qid = pa.DictionaryArray.from_arrays(
            pa.array(np.repeat(np.arange(n_queries, dtype=np.int32), n_docs)),
            pa.array([f"q{k}" for k in range(n_queries)]),
        )
        score = pa.array(np.tile(np.linspace(10.0, 0.0, n_docs), n_queries))
        assert len(doc) == rows
        tmp = pq_path.with_name(pq_path.name + ".part")
        pq.write_table(
            pa.table({"query_id": qid, "doc_id": doc, "score": score}),
            tmp,
            compression="zstd",
            write_statistics=False,
        )
        tmp.replace(pq_path)
    bombs["parquet-dictionary"] = [
        Bomb(
            pq_path,
            n_docs * n_queries * length,
            "Parquet, doc-id dictionary of 1,000 x 1,000 chars",
        )
    ]

    csv_path = out / "one-line-bomb.csv"
    doc_chars = 39_000_000
    if not csv_path.exists():
        tmp = csv_path.with_name(csv_path.name + ".part")
        with tmp.open("wb") as fh:
            fh.write(b"query_id,doc_id,score\nq1,")
            block = b"d" * (1 << 20)
            left = doc_chars
            while left:
                fh.write(block[: min(left, len(block))])
                left -= min(left, len(block))
            fh.write(b",1.0\n")
        tmp.replace(csv_path)
    bombs["csv-one-line"] = [Bomb(csv_path, doc_chars, "CSV, one data line with a 39 MB doc id")]

    zst = []
    for k in range(3):
        path = out / f"text-bomb-{k}.zst"
        rng = np.random.default_rng(300 + k)
        block = "".join(
            f"q{k}{qq} Q0 doc{rng.integers(0, 10**7):07d} {r} {20 - r * 0.01:.4f} bomb{k}\n"
            for qq in range(5)
            for r in range(1, 101)
        ).encode()
        member_repeats = 2000
        if not path.exists():
            member = _zstd(block * member_repeats)
            members = max(1, 900_000 // len(member))
            tmp = path.with_name(path.name + ".part")
            tmp.write_bytes(member * members)
            tmp.replace(path)
        members = path.stat().st_size // len(_zstd(block * member_repeats))
        zst.append(Bomb(path, len(block) * member_repeats * members, "zstd, TREC lines repeated"))
    bombs["zstd-text-x3"] = zst
    return bombs


# === the server's memory and its cgroup =======================================================


class MemoryCgroup:
    """A memory cgroup of ``mb`` MB for the server, v1 (``memory.limit_in_bytes``) or v2
    (``memory.max``), swap limited too. :meth:`make` returns False and sets :attr:`why` when
    none can be made; :meth:`prefix` is the command that puts the server in it before it
    starts."""

    V1 = Path("/sys/fs/cgroup/memory")
    V2 = Path("/sys/fs/cgroup")

    def __init__(self, mb: int):
        self.mb = mb
        self.path: Path | None = None
        self.version: int | None = None
        self.why: str | None = None
        self._oom_before = 0

    def make(self) -> bool:
        if self.mb <= 0:
            self.why = "no cgroup asked for (--cgroup-mb 0)"
            return False
        if sys.platform != "linux":
            self.why = f"not Linux ({sys.platform})"
            return False
        if os.geteuid() != 0:
            self.why = "not root: a memory cgroup needs root"
            return False
        name = f"ranklab-load-{os.getpid()}"
        limit = self.mb * 1024 * 1024
        try:
            if (self.V1 / "memory.limit_in_bytes").exists():
                path = self.V1 / name
                path.mkdir()
                self.path, self.version = path, 1
                (path / "memory.limit_in_bytes").write_text(str(limit))
                if (path / "memory.memsw.limit_in_bytes").exists():  # no swapping past it
                    (path / "memory.memsw.limit_in_bytes").write_text(str(limit))
            elif "memory" in (self.V2 / "cgroup.controllers").read_text().split():
                subtree = self.V2 / "cgroup.subtree_control"
                if "memory" not in subtree.read_text().split():
                    subtree.write_text("+memory")
                path = self.V2 / name
                path.mkdir()
                self.path, self.version = path, 2
                (path / "memory.max").write_text(str(limit))
                if (path / "memory.swap.max").exists():
                    (path / "memory.swap.max").write_text("0")
            else:
                self.why = "no memory controller (neither cgroup v1 nor v2 offers one)"
                return False
        except OSError as exc:
            self.why = f"cannot make a memory cgroup: {exc}"
            self.remove()
            return False
        self._oom_before = self.oom_kills()
        return True

    def prefix(self) -> list[str]:
        """A command prefix that moves itself into the cgroup, then runs the server."""
        if self.path is None:
            return []
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs")]

    def _read(self, name: str) -> str | None:
        try:
            return (self.path / name).read_text() if self.path else None
        except OSError:
            return None

    def usage(self) -> int:
        text = self._read("memory.usage_in_bytes" if self.version == 1 else "memory.current")
        return int(text) if text else 0

    def peak(self) -> int:
        text = self._read("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak")
        return int(text) if text else 0

    def reset_peak(self) -> None:
        if self.path is None:
            return
        try:
            name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
            (self.path / name).write_text("0")
        except OSError:  # v2 before Linux 6.12: the peak then covers the whole run
            pass

    def oom_kills(self) -> int:
        """The kernel's count of processes it killed in this cgroup for memory."""
        text = self._read("memory.oom_control" if self.version == 1 else "memory.events") or ""
        m = re.search(r"^oom_kill (\d+)", text, re.M)
        return int(m.group(1)) if m else 0

    def new_oom_kills(self) -> int:
        return self.oom_kills() - self._oom_before

    def limit_mb(self) -> float | None:
        text = self._read("memory.limit_in_bytes" if self.version == 1 else "memory.max")
        return int(text) / 2**20 if text and text.strip().isdigit() else None

    def remove(self) -> None:
        if self.path is not None:
            for _ in range(20):
                try:
                    self.path.rmdir()
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        break
                    time.sleep(0.25)  # its last process is still leaving
            self.path = None

    def describe(self) -> dict:
        if self.version is None:
            return {"made": False, "why": self.why, "limit MB": None}
        return {
            "made": True,
            "version": self.version,
            "path": str(self.path),
            "limit MiB": self.limit_mb(),
        }


def _status(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem of ``pid`` in MB (empty when it is gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                    out[key] = int(rest.split()[0]) * 1024 / MB
    except (OSError, ValueError):
        pass
    return out


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds ``pid`` has used (user + system, its threads included), None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _machine_busy() -> tuple[float, float]:
    """``(busy, total)`` CPU seconds of the whole machine since boot (/proc/stat)."""
    try:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v) - idle) / tick, sum(v) / tick


def cpu_by_group(server_pid: int | None) -> dict[str, float]:
    """CPU seconds so far of this machine's processes by kind: the server, Chromium's renderers,
    its GPU process, its browser process and other helpers, the Playwright driver, this
    script, and everything else (other work on the machine)."""
    out: dict[str, float] = {}
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        cpu = _cpu_seconds(pid)
        if cpu is None:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if pid == server_pid:
            kind = "server"
        elif pid == me:
            kind = "this script"
        elif "chromium" in cmd:
            kind = (
                "chromium renderers"
                if "--type=renderer" in cmd
                else "chromium GPU process"
                if "--type=gpu-process" in cmd
                else "chromium browser and others"
            )
        elif "playwright" in cmd and "node" in cmd:
            kind = "playwright driver"
        else:
            kind = "everything else"
        out[kind] = out.get(kind, 0.0) + cpu
    return out


def reset_peak(pid: int) -> bool:
    """Reset the kernel's high-water mark of ``pid``'s resident set (VmHWM) to its RSS now."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class Sampler:
    """The server's memory every 0.25 s in a thread: peaks since :meth:`mark`, and a timeline
    (one row a second: seconds since the start, RSS, anonymous RSS, file-backed RSS, cgroup
    usage (MB), visitors with their leaderboard, visitors waiting, the server's CPU and the
    whole machine's busy CPU over the last row, in cores: 1.0 is one core all the time)."""

    def __init__(self, proc, cgroup: MemoryCgroup, live: dict):
        self.proc, self.cgroup, self.live = proc, cgroup, live
        self.t0 = time.monotonic()
        self.timeline: list[list] = []
        self.peak_rss = self.peak_anon = self.peak_cg = 0.0
        self.died_at: float | None = None
        self._stop = threading.Event()
        self._last_row = -1.0
        self._last_cpu = (time.monotonic(), _cpu_seconds(proc.pid) or 0.0, _machine_busy()[0])
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def now(self) -> float:
        return time.monotonic() - self.t0

    def mark(self) -> None:
        """Peaks from now on."""
        self.peak_rss = self.peak_anon = self.peak_cg = 0.0

    def read(self) -> dict[str, float]:
        st = _status(self.proc.pid)
        return {
            "rss": st.get("VmRSS", 0.0),
            "anon": st.get("RssAnon", 0.0),
            "file": st.get("RssFile", 0.0) + st.get("RssShmem", 0.0),
            "hwm": st.get("VmHWM", 0.0),
            "cg": self.cgroup.usage() / MB,
        }

    def _loop(self) -> None:
        while not self._stop.is_set():
            if self.proc.poll() is not None:
                if self.died_at is None:
                    self.died_at = round(self.now(), 1)
                    self.timeline.append([self.died_at, 0, 0, 0, 0, "server gone"])
                time.sleep(0.25)
                continue
            m = self.read()
            self.peak_rss = max(self.peak_rss, m["rss"])
            self.peak_anon = max(self.peak_anon, m["anon"])
            self.peak_cg = max(self.peak_cg, m["cg"])
            t = self.now()
            if t - self._last_row >= 1.0:
                self._last_row = t
                now, cpu, busy = time.monotonic(), _cpu_seconds(self.proc.pid), _machine_busy()[0]
                t_was, cpu_was, busy_was = self._last_cpu
                span = max(now - t_was, 1e-3)
                server_cores = None if cpu is None else round((cpu - cpu_was) / span, 2)
                machine_cores = round((busy - busy_was) / span, 2)
                self._last_cpu = (now, cpu if cpu is not None else cpu_was, busy)
                self.timeline.append(
                    [
                        round(t, 1),
                        round(m["rss"], 1),
                        round(m["anon"], 1),
                        round(m["file"], 1),
                        round(m["cg"], 1),
                        self.live.get("boards", 0),
                        self.live.get("waiting", 0),
                        server_cores,
                        machine_cores,
                    ]
                )
            time.sleep(0.25)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(2)


# === the browser side ===========================================================================

#: Injected into every visitor's pages: every 0.25 s, the waiting line if one is shown
#: (``window.__rlWaitNow``), and each text it showed with when it appeared and when it was last
#: seen (``window.__rlWaits``).
#: Injected into every visitor's pages: no CSS animations or transitions (with the context's
#: prefers-reduced-motion), and the running man of Streamlit's status widget not drawn (its
#: Stop button stays). Each page's spinners and running indicator otherwise repaint 60 times a
#: second: 25 pages doing so on the server's two cores took most of the machine while the
#: server sat idle (the CPU columns of the timeline). The running man is animated by a timer,
#: not CSS: 5 pages with a run under way took 12.2 CPU s in 45 s with it drawn, 9.1 without,
#: 7.9 with no run under way (Chromium's renderers and GPU process; it ignores reduced motion).
#: The pages, their content and the app's front end are otherwise as a visitor's.
STILL_JS = """(() => {
  const css = '*, *::before, *::after { animation: none !important; '
    + 'transition: none !important; caret-color: transparent !important; } '
    + '[data-testid="stStatusWidgetRunningIcon"] { display: none !important; }';
  const add = () => { const s = document.createElement('style'); s.textContent = css;
    (document.head || document.documentElement).appendChild(s); };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', add);
  else add();
})()"""

WATCH_JS = """(pattern) => {
  const re = new RegExp(pattern, 'i');
  window.__rlWaits = [];
  window.__rlWaitNow = '';
  const where = '[data-testid="stSpinner"], [data-testid="stAlertContainer"], '
    + '[data-testid="stCaptionContainer"], [data-testid="stToast"], [data-testid="stStatusWidget"], '
    + '[data-testid="stExpanderDetails"] [data-testid="stMarkdownContainer"]';
  // the page is read again only after it changed (reading innerText lays the page out: on
  // 25 idle pages, read four times a second, that was the load test's own CPU, not the app's)
  let changed = true;
  const watch = () => new MutationObserver(() => { changed = true; }).observe(
    document.documentElement,
    {subtree: true, childList: true, characterData: true, attributes: true});
  if (document.documentElement) watch(); else document.addEventListener('DOMContentLoaded', watch);
  setInterval(() => {
    if (changed) {
      changed = false;
      let now = '';
      for (const e of document.querySelectorAll(where)) {
        const t = (e.innerText || '').trim();
        if (t && re.test(t)) { now = t.slice(0, 400); break; }
      }
      window.__rlWaitNow = now;
    }
    const now = window.__rlWaitNow;
    const w = window.__rlWaits, last = w[w.length - 1], t = Date.now() / 1000;
    if (now && last && last.text === now && t - last.until < 1) last.until = t;
    else if (now && w.length < 500) w.push({t, until: t, text: now});
  }, 250);
}"""

#: What the page says went wrong: error alerts, tracebacks, upload chips with an error
#: (elements Streamlit marks stale, left from the page before, are not counted).
PROBLEMS_JS = r"""() => {
  const fresh = (e) => { const c = e.closest('[data-testid="stElementContainer"]');
                         return !c || c.getAttribute('data-stale') !== 'true'; };
  const text = (e) => (e.innerText || '').trim();
  // an error of the page's last run still shown while the next one runs (faded) is read too:
  // the visitor sees it (a standing refusal drawn again each run was missed at 50 visitors)
  const errors = [...document.querySelectorAll('[data-testid="stAlertContentError"]')]
    .map(text).filter(Boolean);
  const tracebacks = [...document.querySelectorAll('[data-testid="stException"]')]
    .filter(fresh).map(text).filter(Boolean);
  // an upload chip with an error: its file name, then its size, then the message (three lines
  // of the chip's layout): said as "NAME: message"
  const chips = [...document.querySelectorAll('[data-testid="stFileChip"]')]
    .filter(c => c.querySelector('[data-testid="stFileChipIconError"]'))
    .map(c => {
      const lines = text(c).split('\n').map(l => l.trim()).filter(Boolean);
      const name = lines.shift() || '';
      if (lines.length && /^[\d.,]+\s*[KMG]?B$/.test(lines[0])) lines.shift();
      return (name + ': ' + lines.join(' ')).trim();
    });
  return {errors, tracebacks, chips};
}"""

#: Everything a visitor can read on the page: the main area, the sidebar, the grids' rows.
PAGE_TEXT_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const side = document.querySelector('[data-testid="stSidebar"]');
  const rows = [...document.querySelectorAll('[data-testid="stDataFrame"] [role="row"]')]
    .map(r => r.textContent);
  return {main: main ? main.innerText : '', side: side ? side.innerText : '', rows};
}"""

#: The Overview's leaderboard lists the run ``name`` (the grid's accessible rows).
BOARD_JS = """(name) => {
  const title = [...document.querySelectorAll('[data-testid="stMain"] h1')]
    .some(h => h.textContent.includes('Overview'));
  return title && [...document.querySelectorAll('[data-testid="stDataFrame"] [role="row"]')]
    .some(r => r.textContent.includes(name));
}"""

#: Something to stop waiting for: an error or traceback shown, or an upload chip's error.
TROUBLE_JS = """() => {
  const fresh = (e) => { const c = e.closest('[data-testid="stElementContainer"]');
                         return !c || c.getAttribute('data-stale') !== 'true'; };
  return [...document.querySelectorAll('[data-testid="stAlertContentError"], [data-testid="stException"]')]
      .filter(fresh).some(e => (e.innerText || '').trim())
    || !!document.querySelector('[data-testid="stFileChipIconError"]');
}"""


class ServerGone(RuntimeError):
    """The server process ended: no visitor waits for it any longer."""


#: Whether the server has ended (set by :class:`Run` once it started one).
SERVER = {"gone": lambda: False}


def _check_server() -> None:
    if SERVER["gone"]():
        raise ServerGone("the server process ended")


async def settle(page, timeout_ms: int) -> None:
    """Until the app has finished running: a page title shown and the "running" indicator
    away for 0.75 s (a run can start a moment after a click)."""
    deadline = time.monotonic() + timeout_ms / 1000
    title = page.locator('[data-testid="stMain"] h1').first
    while True:
        _check_server()
        try:
            await title.wait_for(timeout=min(5000, max(deadline - time.monotonic(), 0.1) * 1000))
            break
        except Exception:
            if time.monotonic() >= deadline:
                raise
    quiet = 0
    while time.monotonic() < deadline:
        _check_server()
        busy = await page.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = 0 if busy else quiet + 1
        if quiet >= 3:
            return
        await page.wait_for_timeout(250)
    raise TimeoutError(f"the app was still running after {timeout_ms / 1000:.0f} s")


async def until(page, js: str, arg=None, timeout_ms: int = 60_000) -> str:
    """Until ``js(arg)`` or trouble (an error shown): "done" or "trouble"; raises
    :class:`ServerGone` as soon as the server has ended, TimeoutError after ``timeout_ms``."""
    both = f"""(arg) => ({js})(arg) ? 'done' : (({TROUBLE_JS})() ? 'trouble' : false)"""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        _check_server()
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"not shown within {timeout_ms / 1000:.0f} s")
        try:
            handle = await page.wait_for_function(
                both, arg=arg, polling=250, timeout=min(left, 5) * 1000
            )
            return await handle.json_value()
        except Exception as exc:
            if "Timeout" not in type(exc).__name__:
                raise


async def open_page(page, title: str) -> None:
    link = page.locator(f'[data-testid="stSidebarNav"] a:has(span[label="{title}"])').first
    if not await link.is_visible():  # a narrow window: open the sidebar first
        await page.locator('[data-testid="stExpandSidebarButton"]').first.click()
    await link.click()


async def problems(page) -> dict:
    try:
        return await page.evaluate(PROBLEMS_JS)
    except Exception:  # the page is gone
        return {"errors": [], "tracebacks": [], "chips": []}


class Visitor:
    """One visitor: a browser context, its page, what it saw."""

    def __init__(self, i: int, context, page, timeout_ms: int):
        self.i, self.context, self.page, self.timeout_ms = i, context, page, timeout_ms
        self.uploads_done: list[float] = []  # when each upload's HTTP transfer finished
        self.r: dict = {"visitor": i, "stage": "start", "pages": {}, "refusals": []}
        self.seen_text: list[str] = []

        def finished(request) -> None:
            if request.method == "PUT" and "/_stcore/upload_file" in request.url:
                self.uploads_done.append(time.time())

        page.on("requestfinished", finished)

    @classmethod
    async def open(cls, browser, url: str, i: int, timeout_ms: int, path: str = "/data"):
        context = await browser.new_context(
            viewport={"width": 1280, "height": 800}, reduced_motion="reduce"
        )
        await context.add_init_script(f"({WATCH_JS})({json.dumps(WAIT_PATTERN)})")
        await context.add_init_script(STILL_JS)
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        v = cls(i, context, page, timeout_ms)
        await page.goto(url + path)
        await settle(page, timeout_ms)
        await page.wait_for_timeout(1500)  # the first runs are over (the address gets its token)
        await settle(page, timeout_ms)
        return v

    async def note_problems(self, where: str) -> dict:
        found = await problems(self.page)
        for text in found["errors"] + found["chips"]:
            if text not in self.r["refusals"]:
                self.r["refusals"].append(text)
        if found["tracebacks"]:
            self.r.setdefault("tracebacks", []).extend(
                f"{where}: {t.splitlines()[0][:300]}" for t in found["tracebacks"]
            )
        return found

    async def read_page(self) -> dict:
        """What the page shows (main area, sidebar, grid rows), kept for the isolation check."""
        try:
            seen = await self.page.evaluate(PAGE_TEXT_JS)
        except Exception:
            return {"main": "", "side": "", "rows": []}
        self.seen_text.append("\n".join([seen["main"], seen["side"], *seen["rows"]]))
        return seen

    async def drop(self, box: int, files: list[Path], loaded_js: str, arg) -> str:
        """Hand ``files`` to the Data page's upload box number ``box`` and wait until
        ``loaded_js(arg)`` or an error; a file handed over while the page reran can be lost
        with its widget: handed over again (three tries)."""
        boxes = self.page.locator(
            '[data-testid="stMain"] [data-testid="stFileUploader"] input[type="file"]'
        )
        for attempt in range(3):
            await boxes.nth(box).set_input_files([str(f) for f in files])
            try:
                return await until(
                    self.page,
                    loaded_js,
                    arg,
                    self.timeout_ms if attempt == 2 else min(self.timeout_ms, 90_000),
                )
            except Exception:
                if attempt == 2:
                    raise
                await settle(self.page, self.timeout_ms)
                # loaded after all (a slow parse), or shown an error: no second upload
                state = await self.page.evaluate(
                    f"(arg) => ({loaded_js})(arg) ? 'done' : (({TROUBLE_JS})() ? 'trouble' : '')",
                    arg,
                )
                if state:
                    return state
        return "lost"

    async def waits(self, t0_epoch: float) -> list[dict]:
        try:
            seen = await self.page.evaluate("() => window.__rlWaits || []")
        except Exception:
            return self.r.get("waits", [])
        return [
            {
                "s": round(w["t"] - t0_epoch, 1),
                "for s": round(w["until"] - w["t"] + 0.25, 2),
                "text": w["text"],
            }
            for w in seen
        ]

    async def screenshot(self, name: str) -> None:
        try:
            shot = OUT_DIR / f"load_{name}_v{self.i:02d}.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            await self.page.screenshot(path=str(shot), full_page=True)
            self.r["screenshot"] = str(shot.relative_to(ROOT))
        except Exception:
            pass

    async def close(self) -> None:
        try:
            await self.context.close()
        except Exception:
            pass


QRELS_LOADED_JS = r"""(n) => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
  .some(e => /[\d,]+ queries, [\d,]+ judgements/.test(e.textContent))"""
#: The runs box lists every run of ``names`` as loaded ("Loaded: NAME (N lines), ...").
RUNS_LOADED_JS = """(names) => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
  .some(e => e.textContent.startsWith('Loaded: ') && names.every(n => e.textContent.includes(n + ' (')))"""


async def visit_pages(v: Visitor, pages: tuple[str, ...], t0: float, live: dict) -> None:
    """Open each page through the menu; on the Overview, wait for the leaderboard."""
    own = f"v{v.i:02d}a"
    for title in pages:
        v.r["stage"] = title
        start = time.monotonic()
        entry: dict = {}
        try:
            await open_page(v.page, title)
            if title == "Overview" and not v.r.get("runs refused"):
                state = await until(v.page, BOARD_JS, v.r.get("board name", own), v.timeout_ms)
                if state == "done":
                    v.r["board s"] = round(time.monotonic() - t0, 1)
                    if v.uploads_done:
                        v.r["upload end to board s"] = round(time.time() - v.uploads_done[-1], 2)
                    live["boards"] = live.get("boards", 0) + 1
                    if "at the board" in live:  # the visitor alone: CPU read at this moment
                        live["at the board"]()
            await settle(v.page, v.timeout_ms)
            entry["s"] = round(time.monotonic() - start, 1)
        except ServerGone:
            v.r["pages"][title] = {"timeout": "the server process ended"}
            raise
        except Exception as exc:
            entry["timeout"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            await v.screenshot(title.replace(" ", "_"))
        found = await v.note_problems(title)
        entry["errors"] = found["errors"]
        seen = await v.read_page()
        names = v.r.get("run names", [own])
        # the page's own content names the visitor's runs (Fusion: a row of the fused run, which
        # is named after both inputs); the sidebar, which lists them everywhere, is not counted
        entry["shows its runs"] = all(n in seen["main"] for n in names)
        if title == "Fusion":
            entry["fused run shown"] = any(all(n in row for n in names) for row in seen["rows"])
        v.r["pages"][title] = entry


async def visitor_session(
    v: Visitor, files: tuple[Path, Path, Path], go: asyncio.Event, pages, t0s: dict, live: dict
) -> dict:
    """Upload (at the common start), then the pages."""
    qrels, run_a, run_b = files
    r = v.r
    await go.wait()
    t0 = t0s["mono"]
    try:
        r["stage"] = "qrels"
        state = await v.drop(0, [qrels], QRELS_LOADED_JS, None)
        if state == "done":
            r["qrels s"] = round(time.monotonic() - t0, 1)
        await settle(v.page, v.timeout_ms)
        r["stage"] = "runs"
        names = r["run names"] = [run_a.stem, run_b.stem]
        state = await v.drop(1, [run_a, run_b], RUNS_LOADED_JS, names)
        if state == "done":
            r["runs s"] = round(time.monotonic() - t0, 1)
        else:
            r["runs refused"] = True
        await settle(v.page, v.timeout_ms)
        await v.note_problems("Data")
        await v.read_page()
        await visit_pages(v, pages, t0, live)
        r["stage"] = "done"
    except Exception as exc:  # a finding, not a crash: the others go on
        r["error"] = f"{r['stage']}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        await v.screenshot("error")
        await v.note_problems(r["stage"])
        await v.read_page()
    r["waits"] = await v.waits(t0s["epoch"])
    r["done s"] = round(time.monotonic() - t0, 1)
    return r


def cpu_spent(c0: dict[str, float], c1: dict[str, float]) -> dict[str, float]:
    """The CPU seconds each kind of process (:func:`cpu_by_group`) spent from ``c0`` to ``c1``
    (a kind whose processes ended in between, its sum lower, is left out).

    >>> before = {"server": 1.0, "chromium renderers": 4.0}
    >>> cpu_spent(before, {"server": 2.5, "chromium renderers": 3.0})
    {'server': 1.5}
    """
    return {k: round(c1[k] - c0.get(k, 0.0), 2) for k in sorted(c1) if c1[k] > c0.get(k, 0.0)}


async def alone_visit(
    browser, url: str, server_pid: int, files, i: int, timeout_ms: int, pages
) -> dict:
    """Visitor ``i`` alone through :func:`visitor_session` (uploads, then ``pages``): its
    record, with the CPU seconds by kind of process before its leaderboard (``"CPU s before its
    board"``, read as the board shows) and after it (``"CPU s after it"``), when it got one."""
    v = await Visitor.open(browser, url, i, timeout_ms)
    marks: dict = {}
    live = {"at the board": lambda: marks.setdefault("board", cpu_by_group(server_pid))}
    go = asyncio.Event()
    go.set()
    start = cpu_by_group(server_pid)
    r = await visitor_session(
        v, files, go, pages, {"mono": time.monotonic(), "epoch": time.time()}, live
    )
    end = cpu_by_group(server_pid)
    await v.close()
    if "board" in marks:
        r["CPU s before its board"] = cpu_spent(start, marks["board"])
        r["CPU s after it"] = cpu_spent(marks["board"], end)
    return r


async def monitor(visitors: list[Visitor], live: dict, stop: asyncio.Event) -> None:
    """How many visitors see the waiting line now (every 3 s, for the timeline)."""
    while not stop.is_set():
        waiting = 0
        for v in visitors:
            try:
                if await asyncio.wait_for(v.page.evaluate("() => !!window.__rlWaitNow"), timeout=2):
                    waiting += 1
            except Exception:
                pass
        live["waiting"] = waiting
        try:
            await asyncio.wait_for(stop.wait(), timeout=3)
        except asyncio.TimeoutError:
            pass


def server_nice(asked: int | None) -> int:
    """The server's scheduling priority: ``asked``, or by default -10 when this runs as root
    (only root may raise a priority), else 0.

    In use the visitors' browsers run on their own machines; here the N browsers share the
    server's two cores, and Chromium raises its own browser and GPU processes to nice -8. At
    the same priority 25 browsers took about 9 of every 10 CPU seconds and the server waited
    for a core (bench/load_test.py's CPU columns). Raising the server's priority gives it the
    CPU it would have on its own host; the browsers get the rest, still real Chromium running
    the app's real front end."""
    if asked is not None:
        return asked
    return -10 if hasattr(os, "geteuid") and os.geteuid() == 0 else 0


def launch_args() -> dict:
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium not found (apt-get install chromium)")
    return {"executable_path": chromium, "args": CHROMIUM_ARGS}


# === the scenarios ==============================================================================


class Run:
    """One load-test run: the server (in its cgroup), the sampler, the report."""

    def __init__(self, args):
        self.args = args
        self.cgroup = MemoryCgroup(args.cgroup_mb)
        self.live: dict = {"boards": 0, "waiting": 0}
        self.report: dict = {
            "scenario": args.scenario,
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": _commit(),
            "command": "python bench/load_test.py " + " ".join(sys.argv[1:]),
            "machine": {
                "cpus": os.cpu_count(),
                "load average before": [round(x, 2) for x in os.getloadavg()],
                "python": platform.python_version(),
            },
        }
        self.proc = None
        self.sampler: Sampler | None = None
        self.url = ""

    # -- server ------------------------------------------------------------------------------
    def start(self) -> None:
        made = self.cgroup.make()
        self.report["cgroup"] = self.cgroup.describe()
        if not made:
            print(
                f"NOT in a memory cgroup: {self.cgroup.why}; the server's memory is only "
                "sampled, and no kill would be the host's",
                flush=True,
            )
        self.report["server env"] = dict(kv.split("=", 1) for kv in self.args.env)
        self.launch()

    def launch(self) -> None:
        """Start the server (in the cgroup); again after it was killed (bombs)."""
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        self.launches = getattr(self, "launches", 0) + 1
        self.log = OUT_DIR / f"load_server_{os.getpid()}_{self.launches}.log"
        nice = server_nice(self.args.server_nice)
        self.report["server priority (nice)"] = nice
        self.proc, self.url = start_server(
            self.report["server env"],
            prefix=self.cgroup.prefix() + (["nice", "-n", str(nice)] if nice else []),
            log=self.log,
        )
        proc = self.proc
        SERVER["gone"] = lambda: proc.poll() is not None
        if self.sampler is None:
            self.sampler = Sampler(self.proc, self.cgroup, self.live)
        else:
            self.sampler.proc, self.sampler.died_at = self.proc, None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def memory(self) -> dict[str, float]:
        m = self.sampler.read() if self.sampler and self.alive() else {}
        return {k: round(v, 1) for k, v in m.items()}

    def mark(self) -> dict[str, float]:
        """Memory now; peaks (sampled, the kernel's VmHWM, the cgroup's) from now on."""
        now = self.memory()
        if self.alive():
            reset_peak(self.proc.pid)
        self.cgroup.reset_peak()
        if self.sampler:
            self.sampler.mark()
        return now

    def peaks(self) -> dict[str, float | None]:
        s = self.sampler
        hwm = self.memory().get("hwm") if self.alive() else None
        cg_peak = self.cgroup.peak() / MB if self.cgroup.version else None
        return {
            "rss sampled": round(s.peak_rss, 1) if s else None,
            "rss kernel (VmHWM)": hwm,
            "anonymous sampled": round(s.peak_anon, 1) if s else None,
            "cgroup": round(max(cg_peak or 0, s.peak_cg if s else 0), 1) if cg_peak else None,
        }

    def stop(self) -> None:
        if self.sampler:
            self.sampler.stop()
        if self.proc is not None:
            code = self.proc.poll()
            killed = code is not None and code in (-signal.SIGKILL, 128 + signal.SIGKILL)
            oom = self.cgroup.new_oom_kills() if self.cgroup.version else 0
            self.report["server"] = {
                "alive at the end": code is None,
                "exit code": code,
                "killed": killed,
                "cgroup oom kills": oom,
                "killed by the cgroup (OOM)": bool(killed and oom),
                "died at s": self.sampler.died_at if self.sampler else None,
                "started": self.launches,
                "log": str(self.log.relative_to(ROOT)),
            }
            if code is None:
                self.proc.terminate()
                try:
                    self.proc.wait(20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
        self.cgroup.remove()
        if self.sampler:
            self.report["timeline columns"] = [
                "s",
                "rss MB",
                "anonymous MB",
                "file-backed MB",
                "cgroup MB",
                "leaderboards",
                "waiting",
                "server CPU cores",
                "machine CPU cores",
            ]
            self.report["timeline"] = self.sampler.timeline

    # -- pieces ------------------------------------------------------------------------------
    async def warm_up(self, browser, pages) -> None:
        """One small visitor through the same pages: the server imports their libraries on
        the first visit (memory every later visitor shares); "idle" is measured after it."""
        files = make_visitor_data(99, 2_000, 20, 400)
        v = await Visitor.open(browser, self.url, 99, self.args.timeout * 1000)
        go = asyncio.Event()
        go.set()
        out = await visitor_session(
            v, files, go, pages, {"mono": time.monotonic(), "epoch": time.time()}, {}
        )
        await v.close()
        if "error" in out or out.get("refusals"):
            self.report["warm-up"] = {k: out.get(k) for k in ("error", "refusals", "stage")}

    def idle(self) -> float | None:
        time.sleep(self.args.settle)
        mem = self.memory()
        self.report.setdefault("memory MB", {})["idle"] = mem.get("rss")
        self.report["memory MB"]["idle (cgroup)"] = mem.get("cg")
        return mem.get("rss")

    def after_leave(self) -> None:
        """Memory every 10 s for --wait-after seconds once the tabs closed."""
        after: dict[int, float] = {}
        closed = time.monotonic()
        idle = self.report["memory MB"].get("idle") or 0
        while time.monotonic() - closed < self.args.wait_after and self.alive():
            time.sleep(min(10, max(self.args.wait_after - (time.monotonic() - closed), 0.1)))
            mb = self.memory().get("rss")
            if mb is None:
                break
            t = int(round(time.monotonic() - closed))
            after[t] = mb
            print(f"  {t:>4} s after the tabs closed: {mb} MB ({mb - idle:+.0f})", flush=True)
        mem = self.report["memory MB"]
        mem["after the tabs closed"] = after
        if after:
            last = list(after)[-1]
            mem["last after close"] = {
                "s": last,
                "rss": after[last],
                "above idle": round(after[last] - idle, 1),
            }
        back = [t for t, mb in after.items() if mb <= idle + BACK_WITHIN_MB]
        mem[f"back within {BACK_WITHIN_MB} MB of idle after s"] = back[0] if back else None

    # -- scenarios ---------------------------------------------------------------------------
    async def visitors(self) -> None:
        from playwright.async_api import async_playwright

        a = self.args
        pages = tuple(a.pages)
        files = [make_visitor_data(i, a.lines, a.queries, a.judgements) for i in range(a.visitors)]
        sizes = {p.name: round(p.stat().st_size / MB, 2) for p in files[0]}
        files_mb = sum(p.stat().st_size for p in files[0]) / MB
        self.report["data"] = {
            "visitors": a.visitors,
            "lines a run": a.lines,
            "queries": a.queries,
            "judgements": a.judgements,
            "files of visitor 0 MB": sizes,
            "files a visitor MB": round(files_mb, 2),
            "pages": list(pages),
        }
        timeout_ms = a.timeout * 1000
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_args())
            try:
                if a.warm_up:
                    await self.warm_up(browser, pages)
                idle = self.idle()
                print(f"idle: {idle} MB; {a.visitors} visitors open the Data page", flush=True)
                vs = await asyncio.gather(
                    *(Visitor.open(browser, self.url, i, timeout_ms) for i in range(a.visitors)),
                    return_exceptions=True,
                )
                opened = [v for v in vs if isinstance(v, Visitor)]
                failed = [f"{type(e).__name__}: {e}" for e in vs if not isinstance(e, Visitor)]
                mem = self.report["memory MB"]
                mem["pages open"] = self.mark().get("rss")
                t0s = {"mono": time.monotonic(), "epoch": time.time()}
                self.report["start at s"] = round(self.sampler.now(), 1)
                go = asyncio.Event()
                stop = asyncio.Event()
                watch = asyncio.create_task(monitor(opened, self.live, stop))
                progress = asyncio.create_task(self._progress(stop, a.visitors))
                cpu0, busy0 = _cpu_seconds(self.proc.pid), _machine_busy()[0]
                groups0 = cpu_by_group(self.proc.pid)
                go.set()  # everyone uploads at the same moment
                results = await asyncio.gather(
                    *(visitor_session(v, files[v.i], go, pages, t0s, self.live) for v in opened)
                )
                cpu1, busy1 = _cpu_seconds(self.proc.pid), _machine_busy()[0]
                groups1 = cpu_by_group(self.proc.pid)
                if cpu0 is not None and cpu1 is not None:
                    self.report["CPU s during the visits"] = {
                        "server": round(cpu1 - cpu0, 1),
                        "whole machine (browsers, driver, server)": round(busy1 - busy0, 1),
                        "by process (processes that ended during the visits not counted)": {
                            k: round(v - groups0.get(k, 0.0), 1) for k, v in groups1.items()
                        },
                    }
                mem["all done"] = self.memory().get("rss")
                mem["peak during the visits"] = self.peaks()
                self.report["drive s"] = round(time.monotonic() - t0s["mono"], 1)
                stop.set()
                await watch
                await progress
                # the visitors sit idle, tabs open: what their data holds
                time.sleep(a.idle_wait)
                idle_now = self.memory()
                mem["visitors idle"] = idle_now.get("rss")
                mem["visitors idle (anonymous)"] = idle_now.get("anon")
                mem["visitors idle (cgroup)"] = idle_now.get("cg")
                isolation_texts = {v.i: "\n".join(v.seen_text) for v in opened}
                for v in opened:
                    await v.close()
            finally:
                await browser.close()
        self.report["visitors"] = results
        self.report["visitors that could not open the page"] = failed
        self.report["summary"] = summarise(results, isolation_texts, a.visitors)
        loaded = self.report["summary"]["loaded"]
        if opened and idle is not None and mem.get("visitors idle") is not None:
            # what one visitor's data holds, idle: meaningful against its files only when every
            # visitor loaded all of them (a refused run leaves a visitor with part of its data)
            per = (mem["visitors idle"] - idle) / len(opened)
            mem["per visitor idle"] = round(per, 1)
            mem["per visitor idle / files"] = (
                round(per / files_mb, 2) if loaded == len(opened) == a.visitors else None
            )
        self.after_leave()
        if a.alone and self.alive():
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(**launch_args())
                try:
                    await self.alone(browser, pages)
                finally:
                    await browser.close()

    async def alone(self, browser, pages) -> None:
        """One visitor alone once the others have left, with files of their size, through the
        same pages: the CPU seconds by kind of process before its leaderboard and after it
        (:func:`alone_visit`, :func:`board_floor`)."""
        a = self.args
        files = make_visitor_data(a.visitors, a.lines, a.queries, a.judgements)
        try:
            r = await alone_visit(
                browser, self.url, self.proc.pid, files, a.visitors, a.timeout * 1000, pages
            )
        except Exception as exc:  # a finding of this measurement, not of the crowd's run
            self.report["visitor alone"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            return
        keep = ("board s", "error", "refusals", "CPU s before its board", "CPU s after it")
        out = {k: r.get(k) for k in keep if r.get(k)}
        self.report["visitor alone"] = out
        print(f"one visitor alone: {out}", flush=True)

    async def _progress(self, stop: asyncio.Event, n: int) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), timeout=10)
            except asyncio.TimeoutError:
                m = self.memory()
                print(
                    f"  {self.sampler.now():6.0f} s: server {m.get('rss', 'gone')} MB "
                    f"(cgroup {m.get('cg', '-')} MB); leaderboards {self.live['boards']} of {n}; "
                    f"waiting {self.live['waiting']}",
                    flush=True,
                )

    async def big_run(self) -> None:
        from playwright.async_api import async_playwright

        a = self.args
        qrels, run = make_big_run(a.lines, a.queries, a.compress)
        name = run.name.split(".")[0]
        self.report["data"] = {
            "lines": a.lines,
            "queries": a.queries,
            "run file": run.name,
            "run MB": round(run.stat().st_size / MB, 2),
            "qrels MB": round(qrels.stat().st_size / MB, 2),
        }
        timeout_ms = a.timeout * 1000
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_args())
            try:
                if a.warm_up:
                    await self.warm_up(browser, ("Overview",))
                idle = self.idle()
                v = await Visitor.open(browser, self.url, 0, timeout_ms)
                self.report["visitor"] = v.r  # filled as it goes: there even if a step fails
                v.r["board name"] = name
                v.r["run names"] = [name]
                try:
                    state = await v.drop(0, [qrels], QRELS_LOADED_JS, None)
                    await settle(v.page, timeout_ms)
                    mem = self.report["memory MB"]
                    mem["qrels loaded"] = self.mark().get("rss")
                    t0, t0_epoch = time.monotonic(), time.time()
                    v.uploads_done.clear()
                    state = await v.drop(1, [run], RUNS_LOADED_JS, [name])
                    r = v.r
                    if v.uploads_done:
                        r["upload s"] = round(v.uploads_done[-1] - t0_epoch, 2)
                    if state == "done":
                        r["upload end to listed s"] = (
                            round(time.time() - v.uploads_done[-1], 2) if v.uploads_done else None
                        )
                        mem["run loaded"] = self.memory().get("rss")
                    else:
                        r["runs refused"] = True
                    await v.note_problems("Data")
                    await visit_pages(v, tuple(a.pages), t0, self.live)
                    r["waits"] = await v.waits(t0_epoch)
                    mem["at the board"] = self.memory().get("rss")
                    mem["peak from the run upload"] = self.peaks()
                    r["accepted"] = state == "done"
                    r["evaluated"] = "board s" in r
                except Exception as exc:  # a finding: said in the report, not a crash
                    v.r["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                    await v.screenshot("big_run_error")
                    await v.note_problems("big run")
                await v.close()
            finally:
                await browser.close()
        peak = self.report["memory MB"].get("peak from the run upload") or self.peaks()
        if idle is not None:
            self.report["memory MB"]["peak above idle"] = round(
                (peak.get("rss kernel (VmHWM)") or self.sampler.peak_rss) - idle, 1
            )

    async def bombs(self) -> None:
        """Each step on a server that stands where idle does: one killed by a bomb is started
        again (and warmed up) before the next step."""
        from playwright.async_api import async_playwright

        a = self.args
        bombs = make_bombs()
        steps = [s for s in bombs if s in a.bombs]
        timeout_ms = a.timeout * 1000
        out = {}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_args())
            try:
                for n, step in enumerate(steps):
                    if not self.alive():
                        self.launch()
                    if n == 0 or not out[steps[n - 1]]["server alive"]:
                        if a.warm_up:
                            await self.warm_up(browser, ("Overview",))
                        self.idle()
                    files = bombs[step]
                    vs = await asyncio.gather(
                        *(
                            Visitor.open(browser, self.url, 50 + k, timeout_ms)
                            for k in range(len(files))
                        )
                    )
                    time.sleep(a.settle)
                    before = self.mark()
                    kills = self.cgroup.oom_kills()
                    t0 = time.monotonic()
                    results = await asyncio.gather(
                        *(self._drop_bomb(v, b) for v, b in zip(vs, files, strict=True))
                    )
                    alive = self.alive()
                    peak = self.peaks()
                    # the highest the server stood: its kernel high-water mark while alive, the
                    # last samples (every 0.25 s) when it was killed
                    top = max(
                        (x for x in (peak["rss sampled"], peak["rss kernel (VmHWM)"]) if x),
                        default=None,
                    )
                    out[step] = {
                        "files": [
                            {
                                "file": b.path.name,
                                "MB": round(b.path.stat().st_size / MB, 2),
                                "decodes to MB": round(b.decoded / MB),
                                "what": b.what,
                            }
                            for b in files
                        ],
                        "rss before MB": before.get("rss"),
                        "peak MB": peak,
                        "growth MB": round(top - before["rss"], 1)
                        if top is not None and before.get("rss")
                        else None,
                        "seconds": round(time.monotonic() - t0, 1),
                        "outcomes": results,
                        "server alive": alive,
                        "killed by the cgroup (OOM)": not alive and self.cgroup.oom_kills() > kills,
                    }
                    print(
                        f"  {step}: growth {out[step]['growth MB']} MB"
                        + ("" if alive else " (the server was KILLED)")
                        + "; "
                        + "; ".join(
                            (o.get("refusal") or o.get("outcome") or "?")[:160] for o in results
                        ),
                        flush=True,
                    )
                    for v in vs:
                        await v.close()
                    time.sleep(a.settle)
            finally:
                await browser.close()
        self.report["bombs"] = out

    async def _drop_bomb(self, v: Visitor, bomb: Bomb) -> dict:
        r: dict = {"file": bomb.path.name}
        try:
            state = await v.drop(1, [bomb.path], RUNS_LOADED_JS, [bomb.path.name.split(".")[0]])
            await settle(v.page, v.timeout_ms)
            found = await v.note_problems("Data")
            r["outcome"] = {"done": "accepted", "trouble": "refused"}.get(state, state)
            shown = found["errors"] + found["chips"]
            if shown:
                r["refusal"] = shown[0]
                r["one line"] = one_line(shown[0])
            if found["tracebacks"]:
                r["traceback"] = found["tracebacks"][0].splitlines()[0][:300]
        except Exception as exc:
            r["outcome"] = f"no answer: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            await v.screenshot("bomb")
        return r


#: The name of a Material icon as an alert's text begins with it (the icon is drawn from its
#: name, which innerText reads), then a blank line: "memory", "hourglass_top".
ICON_NAME = re.compile(r"^[a-z][a-z0-9_]*\n\s*\n")


def one_line(text: str) -> bool:
    """Whether an alert's text is one line, the alert's icon (its name) not counted.

    >>> one_line("memory\\n\\nthis computation would need about 70 MB; try again"), one_line("a\\nb")
    (True, False)
    """
    return "\n" not in ICON_NAME.sub("", text.strip(), count=1).strip()


def summarise(results: list[dict], texts: dict[int, str], n: int) -> dict:
    """The visitors' figures: leaderboards (p50/p95 from the common start, a visitor without
    one counted as never), waits and places, refusals, tracebacks, isolation."""
    board = sorted(r["board s"] for r in results if "board s" in r)
    missing = n - len(board)

    def pct(p: float) -> float | None:
        """Nearest-rank percentile over all ``n`` visitors; None when it falls on one
        that never got its leaderboard."""
        k = max(math.ceil(p / 100 * n), 1)
        return board[k - 1] if k <= len(board) else None

    waited = [r for r in results if r.get("waits")]
    no_place = [
        r["visitor"] for r in waited if not all(PLACE.search(w["text"]) for w in r["waits"])
    ]
    refusals = [
        {"visitor": r["visitor"], "text": t, "one line": one_line(t)}
        for r in results
        for t in r.get("refusals", [])
    ]
    others = {}
    for i, text in texts.items():
        seen = {int(a or b) for a, b in NAMES.findall(text)}
        if seen - {i}:
            others[i] = sorted(seen - {i})
    own = [i for i, text in texts.items() if i in {int(a or b) for a, b in NAMES.findall(text)}]
    return {
        "visitors": n,
        "got their leaderboard": len(board),
        "without a leaderboard": [
            {
                "visitor": r["visitor"],
                "stage": r.get("stage"),
                "error": r.get("error"),
                "last wait": (r.get("waits") or [{}])[-1].get("text"),
                "refusals": r.get("refusals"),
            }
            for r in results
            if "board s" not in r
        ],
        "loaded": sum(1 for r in results if "runs s" in r),
        "leaderboard p50 s": pct(50),
        "leaderboard p95 s": pct(95),
        "leaderboard max s": board[-1] if board and not missing else None,
        "waited": len(waited),
        "seconds waiting (per visitor who waited)": sorted(
            round(sum(w.get("for s", 0) for w in r["waits"]), 1) for r in waited
        ),
        "waited with their place shown": len(waited) - len(no_place),
        "waited without their place": no_place,
        "wait texts": sorted({w["text"] for r in waited for w in r["waits"]})[:20],
        "refused": len({x["visitor"] for x in refusals}),
        "refusals": refusals,
        "tracebacks": [t for r in results for t in r.get("tracebacks", [])],
        "errors": [f"v{r['visitor']:02d} {r['error']}" for r in results if "error" in r],
        "isolated": not others,
        OTHERS: others,
        "saw their own data": len(own),
    }


#: Kinds of process (:func:`cpu_by_group`) that are the visitors' browsers.
BROWSER_KINDS = ("chromium renderers", "chromium browser and others", "chromium GPU process")


def board_floor(before: dict[str, float], n: int, cpus: int, p: float = 95) -> dict:
    """The shortest p-th percentile time to the leaderboard this machine allows, from one
    visitor's CPU seconds before its leaderboard measured alone (``before``: seconds by kind
    of process, :func:`cpu_by_group`; "everything else" on the machine not counted).

    The p-th percentile visitor (nearest rank, ``k = ceil(p / 100 * n)``) gets its board only
    once ``k`` visitors' work before their boards is done; on ``cpus`` cores that takes at
    least ``k * cpu / cpus`` seconds, however it is ordered (each visitor alone; under load
    a visitor costs more, and the others' pages after their boards come on top).

    >>> board_floor({"server": 1.5, "chromium renderers": 3.0, "everything else": 9.0}, 25, 2)
    {'visitors': 24, 'CPU s a visitor': 4.5, 's': 54.0, 'browsers share': 0.67}
    """
    k = max(math.ceil(p / 100 * n), 1)
    cpu = sum(v for kind, v in before.items() if kind != "everything else")
    browsers = sum(before.get(kind, 0.0) for kind in BROWSER_KINDS)
    return {
        "visitors": k,
        "CPU s a visitor": round(cpu, 2),
        "s": round(k * cpu / max(cpus, 1), 1),
        "browsers share": round(browsers / cpu, 2) if cpu else None,
    }


def _floor_words(report: dict) -> str:
    """The p95 floor of :func:`board_floor`, in the target's line ("" without a visitor alone)."""
    alone = report.get("visitor alone") or {}
    before = alone.get("CPU s before its board")
    if not before:
        return ""
    f = board_floor(before, report.get("summary", {}).get("visitors", 0), report["machine"]["cpus"])
    return (
        f"; this machine allows no p95 under {f['s']} s: {f['visitors']} visitors' work before "
        f"their boards, {f['CPU s a visitor']} CPU s each alone ({f['browsers share']:.0%} of it "
        f"the browsers', on these {report['machine']['cpus']} cores)"
    )


def targets(report: dict) -> list[dict]:
    """Issue 37's targets this run speaks to: met (True/False) and what was seen."""
    out = []
    server = report.get("server", {})
    cg = report.get("cgroup", {})
    killed = server.get("killed") or not server.get("alive at the end", True)
    where = "in its cgroup" if cg.get("made") else "NOT in a cgroup (sampled only)"
    mem = report.get("memory MB", {})
    if report["scenario"] == "visitors":
        s = report.get("summary", {})
        n = s.get("visitors", 0)
        out.append(
            {
                "target": f"{n} visitors: all get their leaderboard, p95 under {TARGET_P95_S:.0f} s",
                "met": s.get("got their leaderboard") == n
                and s.get("leaderboard p95 s") is not None
                and s["leaderboard p95 s"] < TARGET_P95_S,
                "seen": f"{s.get('got their leaderboard')} of {n}; p50 {s.get('leaderboard p50 s')} s, "
                f"p95 {s.get('leaderboard p95 s')} s" + _floor_words(report),
            }
        )
        out.append(
            {
                "target": "the server never killed",
                "met": not killed,
                "seen": f"{'killed' if killed else 'alive'} ({where}); peak {mem.get('peak during the visits')}",
            }
        )
        out.append(
            {
                "target": "each visitor served in turn or refused in one line; none waits without its place",
                "met": not s.get("waited without their place")
                and all(x["one line"] for x in s.get("refusals", []))
                and not s.get("tracebacks")
                and all(r.get("refusals") or "board s" in r for r in report.get("visitors", [])),
                "seen": f"{s.get('waited')} waited ({s.get('waited with their place shown')} with their place); "
                f"{s.get('refused')} refused; {len(s.get('tracebacks', []))} tracebacks; "
                f"{len(s.get('without a leaderboard', []))} without a leaderboard",
            }
        )
        out.append(
            {
                "target": "no visitor sees another's data",
                "met": s.get("isolated"),
                "seen": f"own data seen by {s.get('saw their own data')} of {n}; others' by "
                f"{len(s.get(OTHERS, {}))}",
            }
        )
        per = mem.get("per visitor idle / files")
        files = report.get("data", {}).get("files a visitor MB")
        out.append(
            {
                "target": f"a visitor's data at most {TARGET_PER_VISITOR_X}x its files while idle",
                "met": None if per is None else per <= TARGET_PER_VISITOR_X,
                "seen": f"{mem.get('per visitor idle')} MB a visitor, {per}x its {files} MB of files"
                if per is not None
                else f"not measured: {s.get('loaded')} of {n} visitors loaded all their files "
                f"({mem.get('per visitor idle')} MB a visitor)",
            }
        )
        last = mem.get("last after close")
        if last:
            out.append(
                {
                    "target": f"memory within {BACK_WITHIN_MB} MB of idle {last['s']} s after they leave",
                    "met": last["above idle"] <= BACK_WITHIN_MB,
                    "seen": f"{last['rss']} MB ({last['above idle']:+} MB); idle {mem.get('idle')} MB",
                }
            )
    elif report["scenario"] == "big-run":
        r = report.get("visitor", {})
        lines = report.get("data", {}).get("lines", 0)
        if lines <= 1_000_000:
            t = r.get("upload end to board s")
            out.append(
                {
                    "target": f"a {lines:,}-line run on the leaderboard at most {TARGET_BIG_RUN_S:.0f} s after its upload ends",
                    "met": t is not None and t <= TARGET_BIG_RUN_S,
                    "seen": f"{t} s"
                    if t is not None
                    else f"no leaderboard: {r.get('refusals') or r.get('pages')}",
                }
            )
        else:
            out.append(
                {
                    "target": f"a {lines:,}-line run accepted and evaluated on an idle server",
                    "met": bool(r.get("accepted") and r.get("evaluated") and not killed),
                    "seen": f"accepted {r.get('accepted')}, evaluated {r.get('evaluated')}, "
                    f"{'killed' if killed else 'alive'} ({where}); {r.get('refusals')}",
                }
            )
    elif report["scenario"] == "bombs":
        for step, b in report.get("bombs", {}).items():
            outs = b.get("outcomes", [])
            growth = b.get("growth MB")
            out.append(
                {
                    "target": f"{step}: refused, the server growing at most {TARGET_BOMB_GROWTH_MB} MB",
                    "met": bool(outs)
                    and all(o.get("outcome") == "refused" for o in outs)
                    and growth is not None
                    and growth <= TARGET_BOMB_GROWTH_MB
                    and b.get("server alive"),
                    "seen": f"growth {growth} MB; "
                    + "; ".join(f"{o.get('outcome')}: {o.get('refusal', '')[:200]}" for o in outs),
                }
            )
    return out


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def print_summary(report: dict) -> None:
    cg = report.get("cgroup", {})
    server = report.get("server", {})
    mem = report.get("memory MB", {})
    print()
    print(f"== {report['scenario']} at {report['commit']}, {report['date']}")
    print(
        "server: "
        + (
            f"in a {cg.get('limit MiB'):.0f} MiB memory cgroup (v{cg.get('version')})"
            if cg.get("made")
            else f"NOT in a memory cgroup ({cg.get('why')})"
        )
        + (
            "; KILLED by the cgroup's OOM killer"
            if server.get("killed by the cgroup (OOM)")
            else "; killed"
            if server.get("killed")
            else "; alive"
            if server.get("alive at the end")
            else f"; exited {server.get('exit code')}"
        )
        + (f" at {server.get('died at s')} s" if server.get("died at s") else "")
        + f"; priority nice {report.get('server priority (nice)', 0)} (browsers: 0, Chromium's own -8)"
    )
    if report["scenario"] == "visitors":
        s = report["summary"]
        d = report["data"]
        print(
            f"visitors: {s['visitors']} x (qrels {d['judgements']:,} judgements + 2 runs of {d['lines a run']:,} lines: "
            f"{d['files a visitor MB']} MB of files); pages {', '.join(d['pages'])}"
        )
        print(
            f"memory: idle {mem.get('idle')} MB; peak {mem.get('peak during the visits')}; "
            f"visitors idle {mem.get('visitors idle')} MB = {mem.get('per visitor idle')} MB a visitor "
            f"({mem.get('per visitor idle / files')}x its files)"
        )
        print(
            f"leaderboards: {s['got their leaderboard']} of {s['visitors']}; p50 {s['leaderboard p50 s']} s, "
            f"p95 {s['leaderboard p95 s']} s (from the common start)"
        )
        alone = report.get("visitor alone") or {}
        if alone.get("CPU s before its board"):
            print(
                f"one visitor alone: leaderboard at {alone.get('board s')} s; CPU s before it "
                f"{alone['CPU s before its board']}; after it {alone.get('CPU s after it')}"
            )
        cpu = report.get("CPU s during the visits")
        if cpu:
            print(
                f"CPU during the visits ({report.get('drive s')} s): server {cpu['server']} s, "
                f"whole machine {cpu['whole machine (browsers, driver, server)']} s"
            )
            by = cpu.get("by process (processes that ended during the visits not counted)", {})
            print("   by process: " + ", ".join(f"{k} {v} s" for k, v in sorted(by.items())))
        print(
            f"waits: {s['waited']} saw the waiting line, {s['waited with their place shown']} with their place; "
            f"without: {s['waited without their place']}"
        )
        for t in s["wait texts"][:5]:
            print(f"   waiting line: {t[:200]!r}")
        print(f"refused: {s['refused']} visitors")
        for x in s["refusals"][:10]:
            print(
                f"   v{x['visitor']:02d}{'' if x['one line'] else ' (MORE THAN ONE LINE)'}: {x['text'][:300]!r}"
            )
        for x in s["without a leaderboard"][:10]:
            print(
                f"   v{x['visitor']:02d} got no leaderboard: stage {x['stage']}, {x['error'] or ''} last wait {x['last wait']!r}"
            )
        for t in s["tracebacks"][:5]:
            print(f"   traceback shown: {t}")
        print(
            f"isolation: {'held' if s['isolated'] else 'BROKEN: ' + str(s[OTHERS])}; "
            f"own data seen by {s['saw their own data']} of {s['visitors']}"
        )
        last = mem.get("last after close")
        if last:
            print(
                f"after they left: {last['rss']} MB at {last['s']} s ({last['above idle']:+} MB); back within "
                f"{BACK_WITHIN_MB} MB of idle after {mem.get(f'back within {BACK_WITHIN_MB} MB of idle after s')} s"
            )
    elif report["scenario"] == "big-run":
        r = report.get("visitor", {})
        if r.get("error"):
            print(f"the visitor's error: {r['error']}")
        print(
            f"run: {report['data']['run file']} ({report['data']['run MB']} MB), {report['data']['lines']:,} lines"
        )
        print(
            f"upload end -> listed {r.get('upload end to listed s')} s, -> leaderboard {r.get('upload end to board s')} s; "
            f"accepted {r.get('accepted')}, evaluated {r.get('evaluated')}"
        )
        print(
            f"memory: idle {mem.get('idle')} MB; peak {mem.get(RUN_PEAK)}; at the board {mem.get('at the board')} MB"
        )
        for t in r.get("refusals", []):
            print(f"   shown: {t[:300]!r}")
        for w in r.get("waits", [])[:5]:
            print(f"   waiting line at {w['s']} s: {w['text'][:200]!r}")
    elif report["scenario"] == "bombs":
        for step, b in report["bombs"].items():
            print(
                f"{step}: growth {b.get('growth MB')} MB above {b.get('rss before MB')} MB; alive {b.get('server alive')}"
            )
            for o in b.get("outcomes", []):
                print(f"   {o.get('file')}: {o.get('outcome')}: {o.get('refusal', '')[:300]!r}")
    print("targets:")
    for t in report.get("targets", []):
        mark = "not measured" if t["met"] is None else "met" if t["met"] else "NOT MET"
        print(f"  [{mark}] {t['target']}: {t['seen']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", choices=("visitors", "big-run", "bombs"), default="visitors")
    ap.add_argument("--visitors", type=int, default=25)
    ap.add_argument("--lines", type=int, help="lines a run (visitors: 100,000; big-run: 1,000,000)")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument(
        "--judgements", type=int, default=100_000, help="judgements in a visitor's qrels"
    )
    ap.add_argument(
        "--pages",
        nargs="+",
        help=f"pages each visitor opens (default: {', '.join(VISITOR_PAGES)}; big-run: Overview)",
    )
    ap.add_argument(
        "--compress",
        choices=("none", "gzip", "zstd"),
        default="none",
        help="big-run: upload the run compressed",
    )
    ap.add_argument(
        "--bombs", nargs="+", default=["parquet-dictionary", "csv-one-line", "zstd-text-x3"]
    )
    ap.add_argument(
        "--cgroup-mb", type=int, default=1024, help="the server's memory cgroup (MiB; 0: none)"
    )
    ap.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="the server's environment"
    )
    ap.add_argument(
        "--wait-after",
        type=int,
        default=180,
        help="seconds of memory readings after the tabs close",
    )
    ap.add_argument(
        "--idle-wait",
        type=int,
        default=20,
        help="seconds the visitors sit idle before their memory is read",
    )
    ap.add_argument(
        "--server-nice",
        type=int,
        help="the server's nice value (default -10 as root, else 0; 0: the browsers' priority)",
    )
    ap.add_argument("--settle", type=float, default=5, help="seconds before the idle reading")
    ap.add_argument(
        "--timeout", type=int, default=900, help="seconds a visitor may wait for one step"
    )
    ap.add_argument(
        "--no-warm-up", dest="warm_up", action="store_false", help="no warm-up visitor first"
    )
    ap.add_argument(
        "--no-alone",
        dest="alone",
        action="store_false",
        help="visitors: no visitor alone at the end (its CPU before its board: the p95 floor)",
    )
    ap.add_argument(
        "--json", type=Path, help="the report (default bench/out/load_SCENARIO_TIME.json)"
    )
    args = ap.parse_args(argv)
    if args.lines is None:
        args.lines = 1_000_000 if args.scenario == "big-run" else 100_000
    if args.pages is None:
        args.pages = list(VISITOR_PAGES) if args.scenario == "visitors" else ["Overview"]
    for kv in args.env:
        if "=" not in kv:
            ap.error(f"--env {kv}: NAME=VALUE")

    def stopped(signum, frame):  # a terminated run still stops its server and its cgroup
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stopped)
    run = Run(args)
    report = run.report
    report["settings"] = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    try:
        run.start()
        report.setdefault("memory MB", {})["fresh"] = run.memory().get("rss")
        scenario = {"visitors": run.visitors, "big-run": run.big_run, "bombs": run.bombs}[
            args.scenario
        ]
        asyncio.run(scenario())
    except (Exception, KeyboardInterrupt) as exc:  # said, and the report still written
        report["harness error"] = f"{type(exc).__name__}: {exc}"
        import traceback

        traceback.print_exc()
    finally:
        run.stop()
    report["targets"] = targets(report)
    out = args.json or OUT_DIR / f"load_{args.scenario}_{dt.datetime.now():%Y%m%d_%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str))
    print_summary(report)
    print(f"report: {out}")
    ok = (
        "harness error" not in report
        and report.get("server", {}).get("alive at the end")
        and report.get("summary", {}).get("isolated", True)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
