"""The visitor's data off the heap: each session's own folder of Arrow files, mapped back.

A loaded run or qrels, and a ranking the pages keep (the tie band, the per-query views), is
written once, compactly, to files of the session's own folder and memory-mapped back
(:mod:`metrics_core.scale.spill`: ids encoded once, integer codes, no Python object per row;
the same object, the same values). The server's memory then holds the work in flight, not
every visitor's data: mapped pages are the page cache, which the system drops and reads again
when memory is short, not the process's anonymous memory (what the memory gate,
:mod:`ui.common.budget`, counts).

Where (:func:`root`, chosen once per server process): ``RANKLAB_SPILL_DIR`` (a deployer's
setting), the system's temporary folder, ``/var/tmp``, then the app's own folder
(``.ranklab-data``): the first that can be written and lies on a disk. A ``tmpfs`` keeps its
files in memory, which would only move the memory: when every candidate is one, the first is
used and :func:`on_disk` says so (the README tells deployers to set ``RANKLAB_SPILL_DIR``).

Folders (``0700``) and files (``0600``) are named by the server, never from anything a
visitor types: ``<root>/ranklab-server-<random>/<random 128-bit>/run-<n>.*.arrow``. A
session's folder name is kept in its state (:data:`FOLDER`); a reload, or the address in
another tab, brings it back with the data (:mod:`ui.common.keep`), so no visitor can name
another's folder and no page shows a path.

Removed: a file when the object it holds is gone (a run removed or replaced, at the end of
the script run that dropped it: :func:`settle`); a session's folder when its data is released
(:func:`ui.common.keep.purge`: the session closed and the keeping time over) or, found by the
reclaimer (:func:`sweep`), when no open session and no kept data names it; the server's folder
when the server exits (``atexit``); at start-up, the folder of a server that is gone (killed,
crashed: nothing holds the lock of its ``owner.lock`` any more, :func:`sweep_stale_servers`).
A deleted file stays readable through a mapping until the object holding it goes: removing a
folder never breaks a page.
"""

from __future__ import annotations

import atexit
import itertools
import os
import secrets
import shutil
import threading
import time
import weakref
from pathlib import Path

import streamlit as st

import metrics_core as mc
from metrics_core.scale import spill
from ui.common import budget, state
from ui.common.style import say

#: The session-state key of the session's folder name (a reload brings it back).
FOLDER = "ranklab.store.folder"
#: The prefix of a server's folder under :func:`root`.
SERVER_PREFIX = "ranklab-server-"
#: A folder no open session and no kept data names is removed once it is this old (s).
SWEEP_AFTER_S = 60.0
#: Bytes a row takes while data is moved to its files (its query codes, made at once).
SPILL_BYTES_PER_ROW = 8

_APP_FOLDER = Path(__file__).resolve().parents[2] / ".ranklab-data"
_lock = threading.RLock()
_server: dict = {"root": None, "on_disk": True, "folder": None, "lock": None}
#: folder name -> ids of the sessions that used it
_users: dict[str, set[str]] = {}
#: folder name -> {stem: weak reference to the object its files hold}
_stems: dict[str, dict[Path, weakref.ref]] = {}
_counter = itertools.count(1)


def root() -> Path:
    """Where servers put their folders (see the module docstring), chosen once."""
    with _lock:
        if _server["root"] is None:
            folder, on_disk = spill.disk_folder([], mounts_file="/proc/mounts")
            if not on_disk:  # the app's own folder may be on a disk
                try:
                    alt, alt_disk = spill.disk_folder([_APP_FOLDER])
                    if alt_disk:
                        folder, on_disk = alt, True
                except OSError:
                    pass
            _server["root"], _server["on_disk"] = folder, on_disk
        return _server["root"]


def on_disk() -> bool:
    """Whether the visitors' files lie on a disk (False: a tmpfs, their pages in memory)."""
    root()
    return bool(_server["on_disk"])


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)  # whatever the umask made of it
    return path


def server_folder() -> Path:
    """This server's folder (made on first use, locked while the server runs, removed when
    it exits)."""
    with _lock:
        folder = _server["folder"]
        if folder is not None and folder.is_dir():
            return folder
        sweep_stale_servers()
        folder = _private_dir(root() / f"{SERVER_PREFIX}{secrets.token_hex(8)}")
        import fcntl

        fh = open(folder / "owner.lock", "w")  # noqa: SIM115  (held open while the server runs)
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if _server["lock"] is not None:
            _server["lock"].close()
        _server["folder"], _server["lock"] = folder, fh
        return folder


def _remove_server_folder() -> None:
    folder, fh = _server["folder"], _server["lock"]
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    if fh is not None:
        fh.close()
    _server["folder"] = _server["lock"] = None


atexit.register(_remove_server_folder)


def sweep_stale_servers() -> int:
    """Remove the folders under :func:`root` of servers that are gone (the lock of their
    ``owner.lock`` can be taken: no live process holds it). Returns how many."""
    import fcntl

    removed = 0
    try:
        candidates = [p for p in root().iterdir() if p.name.startswith(SERVER_PREFIX)]
    except OSError:
        return 0
    for folder in candidates:
        if folder == _server["folder"]:
            continue
        try:
            with open(folder / "owner.lock") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # taken: its server is gone
        except BlockingIOError:
            continue  # a live server holds it
        except OSError:  # no lock file: a folder being made, or not a server's
            try:
                if time.time() - folder.stat().st_mtime < SWEEP_AFTER_S:
                    continue
            except OSError:
                continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def session_folder() -> Path | None:
    """This session's folder (made on first use); None outside a script run."""
    if not state.in_app():
        return None
    name = st.session_state.get(FOLDER)
    if not (isinstance(name, str) and len(name) == 32 and name.isalnum()):
        name = st.session_state[FOLDER] = secrets.token_hex(16)
    with _lock:
        folder = _private_dir(server_folder() / name)
        _users.setdefault(name, set()).add(state.session_id())
    return folder


def _new_stem(kind: str) -> Path | None:
    folder = session_folder()
    return None if folder is None else folder / f"{kind}-{next(_counter)}"


def _track(stem: Path, obj) -> None:
    with _lock:
        _stems.setdefault(stem.parent.name, {})[stem] = weakref.ref(obj)


def put(data):
    """Move a loaded Run or Qrels off the heap, into this session's folder (the same object,
    its columns now mapped; see the module docstring). Outside a script run, or when its
    files cannot be written (a full disk), the data stays as it is. Returns ``data``."""
    if data is None or spill.spilled(data) is not None:
        return data
    stem = _new_stem("qrels" if isinstance(data, mc.Qrels) else "run")
    if stem is None:
        return data
    try:
        spill.spill_data(data, stem)
    except OSError:  # no room on the disk: kept in memory, as before
        for f in spill.files_of(stem):
            f.unlink(missing_ok=True)
        return data
    _track(stem, data)
    return data


def put_ranking(ranking):
    """Keep a ranking off the heap between reruns: its ranked lists moved to this session's
    folder (once; again if a computation rebuilt them), its run too (a run the ranking made:
    without identical ids), and what it derived during the computation dropped
    (:func:`metrics_core.scale.spill.shed`). Call it after every computation on a kept
    ranking. Returns ``ranking``."""
    if ranking is None:
        return ranking
    put(ranking.run)
    if spill.spilled(ranking.lists) is None:
        stem = _new_stem("ranking")
        if stem is not None:
            try:
                spill.spill_ranking(ranking, stem)
                _track(stem, ranking.lists)
            except OSError:  # no room on the disk: kept in memory, as before
                for f in spill.files_of(stem):
                    f.unlink(missing_ok=True)
    spill.shed(ranking)
    return ranking


def writer(kind: str = "run") -> spill.RunWriter | None:
    """A :class:`metrics_core.scale.spill.RunWriter` into this session's folder (a run read
    batch by batch straight to its files); None outside a script run."""
    stem = _new_stem(kind)
    if stem is None:
        return None
    w = spill.RunWriter(stem)
    return w


def adopt(data) -> None:
    """Track the files of ``data`` written by a :func:`writer` (removed when it goes)."""
    stem = spill.spilled(data)
    if stem is not None:
        _track(stem, data)


def settle(release: bool = False) -> None:
    """At the start and the end of a script run: the session's loaded runs and qrels off the
    heap (whichever page loaded them: an upload, the sample, a fused run, History), and the
    files of objects that are gone (a run removed or replaced) deleted. ``release`` (the end
    of a run): the pages of the session's files leave the process's resident memory too
    (:func:`metrics_core.scale.spill.release_pages`; the next computation reads them back
    from the page cache), so a visitor between computations holds none of them."""
    if not state.in_app():
        return
    for data in [
        st.session_state.get(state.QRELS),
        *list((st.session_state.get(state.RUNS) or {}).values()),
    ]:
        if data is None or spill.spilled(data) is not None:
            continue
        try:  # moving it takes its query codes at once: within the memory gate
            with budget.work(len(data) * SPILL_BYTES_PER_ROW):
                put(data)
        except mc.InputError:
            pass  # no memory for it now: it stays where it is, moved at a later run's end
    name = st.session_state.get(FOLDER)
    with _lock:
        if name:  # this session uses the folder (a reload's new session too)
            _users.setdefault(name, set()).add(state.session_id())
        stems = _stems.get(name or "", {})
        gone = [s for s, ref in stems.items() if ref() is None]
        for s in gone:
            del stems[s]
        live = [obj for obj in (ref() for ref in stems.values()) if obj is not None]
    for s in gone:
        for f in spill.files_of(s):
            f.unlink(missing_ok=True)
    if release:
        for obj in live:
            spill.release_pages(obj)


def cost_line() -> str:
    """Where the visitor's data is kept, in the visitor's words (the Data page's caption)."""
    from ui.common.i18n import gettext as _

    size = budget.size_text(folder_bytes())

    if not on_disk():
        return say(
            _(
                "Your data takes {size} of this server's temporary files, which are in its memory "
                "here; computations wait their turn when its memory is busy."
            ),
            size=size,
        )
    return say(
        _(
            "Your data takes {size} of this server's disk, not its memory; computations wait "
            "their turn when its memory is busy."
        ),
        size=size,
    )


def folder_bytes(name: str | None = None) -> int:
    """The bytes of the files in a session's folder (this session's by default)."""
    name = name if name is not None else st.session_state.get(FOLDER) if state.in_app() else None
    folder = _server["folder"]
    if not name or folder is None:
        return 0
    total = 0
    try:
        for f in (folder / name).iterdir():
            try:
                total += f.stat().st_size
            except OSError:
                pass
    except OSError:
        return 0
    return total


def release(names, open_sessions: set[str] | None) -> int:
    """Remove the folders ``names`` (of data just released), unless an open session uses
    one (another tab at the same address). Returns how many were removed."""
    removed = 0
    folder = _server["folder"]
    for name in names:
        if not (isinstance(name, str) and name.isalnum()) or folder is None:
            continue
        with _lock:
            users = _users.get(name, set())
            if open_sessions is not None and users & open_sessions:
                continue
            _users.pop(name, None)
            _stems.pop(name, None)
        shutil.rmtree(folder / name, ignore_errors=True)
        removed += 1
    return removed


def sweep(open_sessions: set[str] | None, kept_names: set[str]) -> int:
    """Remove every session folder of this server that no open session uses and no kept
    data names, once older than :data:`SWEEP_AFTER_S` (nothing when the open sessions are
    unknown). Returns how many were removed."""
    folder = _server["folder"]
    if open_sessions is None or folder is None:
        return 0
    with _lock:
        live = {n for n, users in _users.items() if users & open_sessions}
    stale = []
    try:
        for path in folder.iterdir():
            if not path.is_dir() or path.name in live or path.name in kept_names:
                continue
            if time.time() - path.stat().st_mtime >= SWEEP_AFTER_S:
                stale.append(path.name)
    except OSError:
        return 0
    return release(stale, open_sessions)


__all__ = [
    "FOLDER",
    "root",
    "on_disk",
    "server_folder",
    "session_folder",
    "sweep_stale_servers",
    "put",
    "put_ranking",
    "writer",
    "adopt",
    "settle",
    "folder_bytes",
    "cost_line",
    "release",
    "sweep",
]
