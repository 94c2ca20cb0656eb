"""Where a file of data goes when it must leave memory: a folder on a disk.

A ``tmpfs`` (often ``/tmp`` in containers) keeps its files' pages in memory and cannot
drop them, so writing there would only move the memory: :func:`disk_folder` chooses a
folder that lies on a disk (``$RANKLAB_SPILL_DIR``, the system's temporary folder,
``/var/tmp``), :func:`memory_backed` reads a folder's file system from ``/proc/mounts``.
The readers decompress a large input there (:mod:`metrics_core.io.source`); the spilled
runs and ranked lists of :mod:`metrics_core.scale.spill` go there too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: File systems whose files live in memory (their pages cannot be dropped, only moved).
MEMORY_FILE_SYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs", "shm"})
#: The environment variable that names where spilled files go (a deployer's choice).
SPILL_DIR_ENV = "RANKLAB_SPILL_DIR"


def _mounts(mounts_file: str) -> list[tuple[str, str]]:
    """``(mount point, file system type)`` of every line of ``mounts_file``."""
    out = []
    try:
        with open(mounts_file, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3:
                    # /proc/mounts writes a space in a path as \040
                    out.append((parts[1].replace("\\040", " "), parts[2]))
    except OSError:
        pass
    return out


def filesystem_of(path: str | os.PathLike, mounts_file: str = "/proc/mounts") -> str | None:
    """The type of the file system ``path`` lies on (``"ext4"``, ``"tmpfs"`` ...), from the
    longest mount point that contains it; None where ``mounts_file`` cannot be read (not
    Linux)."""
    real = os.path.realpath(os.fspath(path))
    best, kind = -1, None
    for point, fstype in _mounts(mounts_file):
        inside = real == point or real.startswith(point.rstrip("/") + "/") or point == "/"
        if inside and len(point) > best:
            best, kind = len(point), fstype
    return kind


def memory_backed(path: str | os.PathLike, mounts_file: str = "/proc/mounts") -> bool:
    """Whether files under ``path`` are kept in memory (a ``tmpfs`` or the like): False on a
    disk, and where the file system cannot be told (not Linux)."""
    return filesystem_of(path, mounts_file) in MEMORY_FILE_SYSTEMS


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def disk_folder(
    candidates: Iterable[str | os.PathLike | None] = (), mounts_file: str = "/proc/mounts"
) -> tuple[Path, bool]:
    """``(folder, on_disk)``: the first of ``candidates`` that can be written and lies on a
    disk, then ``$RANKLAB_SPILL_DIR``, the system's temporary folder and ``/var/tmp``, tried
    in that order (None entries skipped). When every writable one is memory-backed, the first
    writable one with ``on_disk`` False (files there cost memory: say so)."""
    tried: list[Path] = []
    for c in (
        *candidates,
        os.environ.get(SPILL_DIR_ENV) or None,
        tempfile.gettempdir(),
        "/var/tmp",
    ):
        if c is None:
            continue
        folder = Path(c)
        if folder in tried:
            continue
        tried.append(folder)
        if _writable(folder) and not memory_backed(folder, mounts_file):
            return folder, True
    for folder in tried:
        if _writable(folder):
            return folder, False
    raise OSError("no writable folder for spilled data")


__all__ = ["MEMORY_FILE_SYSTEMS", "SPILL_DIR_ENV", "disk_folder", "filesystem_of", "memory_backed"]
