"""Columns kept on disk and mapped back: runs, qrels and ranked lists off the heap.

A process that keeps many large runs (the app keeps every visitor's) or sets rows aside (the
streamed evaluation of a run whose queries are not contiguous) writes them once, compactly,
to Arrow IPC files and maps the files back. The arrays are then views of the mapping: their
pages are the operating system's page cache, which it may drop and read again from the disk,
not the process's anonymous memory, which it can only keep (a memory cgroup charges both but
reclaims only the first). The bytes are the very bytes written, so every number computed from
a mapped run is the number computed from the run in memory.

- :func:`disk_folder` chooses where: a folder on a disk. A ``tmpfs`` (often ``/tmp`` in
  containers) keeps its files' pages in memory and cannot drop them, so writing there would
  only move the memory; :func:`memory_backed` reads the folder's file system from
  ``/proc/mounts``.
- :func:`write_columns` / :func:`map_columns`: equal-length columns in one IPC file (created
  ``0600``, never over an existing file, its pages written to the disk before it is mapped so
  that they are clean and can be dropped); :func:`map_table` maps any IPC file or stream.
- :func:`spill_data` moves a :class:`~metrics_core.data.Run` or
  :class:`~metrics_core.data.Qrels` to a file and points the object at the mapped columns (the
  same object: whatever holds it keeps holding it); :func:`spill_lists` does the same for the
  ranked lists of a :class:`~metrics_core.ranking.ranked.Ranking`, :func:`shed` drops what a
  ranking derived and kept in memory since (it is derived again when asked).
- :class:`RunWriter` writes a run batch by batch as it is read (the whole text never parsed at
  once) and maps it back: a run the size of the memory is read in the memory of one batch.

Layout (compact: ids encoded once, no Python object per row): a run or qrels is three files,
``<stem>.qids.arrow`` (the distinct query ids, once), ``<stem>.cols.arrow`` (one record batch:
each row's query as an int32 code into them, the scores or labels as float64, the source lines
when they are not the rows') and ``<stem>.ids.arrow`` (the document ids, Arrow strings, in the
chunks they were read in); ranked lists are ``<stem>.rows.arrow`` (per ranked row) and ``<stem>.judged.arrow`` (per
judgement). A mapped file may be deleted while mapped (Linux keeps its blocks until the last
view goes).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.data import Qrels, Run
from metrics_core.io.disk import (  # where files go: io's, shared with its decompression
    MEMORY_FILE_SYSTEMS,
    SPILL_DIR_ENV,
    disk_folder,
    filesystem_of,
    memory_backed,
)

if TYPE_CHECKING:
    from metrics_core.ranking.ranked import Ranking
    from metrics_core.ranking.ranked_lists import RankedLists

#: objects moved to disk -> the stem of their files
_SPILLED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _open_new(path: Path):
    """A new file at ``path`` for writing, readable by its owner only; an existing file is
    an error (never written over)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    return os.fdopen(fd, "wb")


def _array(values) -> pa.Array | pa.ChunkedArray:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    return pa.array(np.asarray(values))


def write_columns(
    path: str | os.PathLike, columns: Mapping[str, Any], *, sync: bool = True
) -> Path:
    """Write equal-length ``columns`` (numpy arrays, Arrow arrays or chunked arrays) to a new
    Arrow IPC file at ``path`` (``0600``; an existing file is an error); numpy arrays are
    written without a copy. ``sync``: the file's pages reach the disk before this returns
    (clean pages: the system may drop them, which matters inside a memory cgroup)."""
    path = Path(path)
    arrays = {name: _array(v) for name, v in columns.items()}
    table = pa.table(arrays)
    with _open_new(path) as fh:
        options = pa.ipc.IpcWriteOptions(use_threads=False)
        with pa.ipc.new_file(fh, table.schema, options=options) as writer:
            writer.write_table(table)
        fh.flush()
        if sync:
            os.fdatasync(fh.fileno())
    return path


def map_table(path: str | os.PathLike, mappings: list | None = None) -> pa.Table:
    """The Arrow IPC file or stream at ``path``, memory-mapped: its columns are views of the
    mapping (no copy; the mapping lasts as long as any of them). ``mappings``: a list that gets
    a buffer over the whole mapping (what :func:`release_pages` hands back)."""
    source = pa.memory_map(os.fspath(path), "r")
    if mappings is not None and source.size():
        mappings.append(source.read_buffer())
        source.seek(0)
    try:
        return pa.ipc.open_file(source).read_all()
    except pa.ArrowInvalid:  # not the file format: a stream
        source.seek(0)
        return pa.ipc.open_stream(source).read_all()


def map_columns(
    path: str | os.PathLike, mappings: list | None = None
) -> dict[str, pa.ChunkedArray]:
    """The columns of the IPC file at ``path``, memory-mapped (:func:`map_table`)."""
    table = map_table(path, mappings)
    return {name: table.column(name) for name in table.column_names}


#: objects moved to disk -> buffers over their files' whole mappings (which they keep alive)
_MAPPINGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: ``madvise``'s advice that a range's pages are not needed now (Linux: ``MADV_DONTNEED``)
_MADV_DONTNEED = 4


def release_pages(obj) -> int:
    """Take the pages of the files ``obj`` (a spilled Run, Qrels or ranked lists) is mapped
    from out of the process's resident memory (``madvise(MADV_DONTNEED)``: the mappings are
    read-only views of files, so a later read brings each page back from the page cache or the
    disk, the same bytes). Between computations a process that keeps many visitors' data
    (the app) holds none of it resident. Returns the bytes advised; 0 where this is not Linux
    or ``obj`` was not spilled."""
    buffers = _MAPPINGS.get(obj) if spilled(obj) is not None else None
    if not buffers:
        return 0
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = os.sysconf("SC_PAGE_SIZE")
    done = 0
    for buf in buffers:  # each a whole mapping: it starts on a page
        length = -(-buf.size // page) * page
        if buf.address % page == 0 and madvise(buf.address, length, _MADV_DONTNEED) == 0:
            done += buf.size
    return done


def as_numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A numpy view (read-only, no copy) of a column of one chunk of fixed-width values
    without nulls; a column of several chunks is joined (a copy)."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 0:  # no rows: an IPC file of no batch
            empty = np.zeros(0, dtype=column.type.to_pandas_dtype())
            return empty.astype(bool) if pa.types.is_boolean(column.type) else empty
        if column.num_chunks != 1:
            return np.concatenate([c.to_numpy(zero_copy_only=False) for c in column.chunks])
        column = column.chunk(0)
    if pa.types.is_boolean(column.type):  # Arrow packs booleans in bits: numpy needs bytes
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=bool)
    return column.to_numpy(zero_copy_only=True)


def _codes(qid) -> tuple[np.ndarray, pa.Array]:
    """``(int32 code of every row, the distinct ids)`` of a query-id column (dictionary or
    plain strings, chunked or not)."""
    if isinstance(qid, pa.ChunkedArray):
        if pa.types.is_dictionary(qid.type):
            qid = qid.unify_dictionaries()
            dictionary = qid.chunk(0).dictionary if qid.num_chunks else pa.array([], pa.string())
            codes = [np.asarray(c.indices.to_numpy(zero_copy_only=False)) for c in qid.chunks]
            return (
                np.concatenate(codes).astype(np.int32, copy=False)
                if codes
                else np.zeros(0, np.int32)
            ), dictionary
        qid = qid.combine_chunks() if qid.num_chunks != 1 else qid.chunk(0)
    if not pa.types.is_dictionary(qid.type):
        qid = pc.dictionary_encode(qid)
    return qid.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False), qid.dictionary


def _doc_ids_file(stem: Path) -> Path:
    return stem.with_name(stem.name + ".ids.arrow")


def _columns_file(stem: Path) -> Path:
    return stem.with_name(stem.name + ".cols.arrow")


def _write_doc_ids(path: Path, docid, sync: bool) -> None:
    chunks = docid.chunks if isinstance(docid, pa.ChunkedArray) else [docid]
    schema = pa.schema([("docid", pa.string())])
    with _open_new(path) as fh:
        with pa.ipc.new_file(fh, schema) as writer:
            for chunk in chunks:
                writer.write_batch(pa.record_batch([chunk.cast(pa.string())], schema=schema))
        fh.flush()
        if sync:
            os.fdatasync(fh.fileno())


def _mapped_query_ids(cols: dict, dictionary) -> pa.ChunkedArray:
    codes = cols["qid"].chunk(0) if cols["qid"].num_chunks else pa.array([], pa.int32())
    return pa.chunked_array(
        [pa.DictionaryArray.from_arrays(codes, dictionary)],
        type=pa.dictionary(pa.int32(), pa.string()),
    )


def _point_at(data: Run | Qrels, stem: Path) -> None:
    """Point ``data`` at the mapped files of ``stem`` (same values)."""
    mappings: list = []
    cols = map_columns(_columns_file(stem), mappings)
    dictionary = map_columns(stem.with_name(stem.name + ".qids.arrow"), mappings)["id"]
    dictionary = dictionary.chunk(0) if dictionary.num_chunks else pa.array([], pa.string())
    docid = map_columns(_doc_ids_file(stem), mappings)["docid"]
    _MAPPINGS[data] = mappings
    data.qid = _mapped_query_ids(cols, dictionary)
    data.docid = docid.chunk(0) if docid.num_chunks == 1 else docid
    data.values = as_numpy(cols["value"]) if len(cols["value"]) else np.zeros(0)
    data.line_numbers = as_numpy(cols["line"]) if "line" in cols else None
    _SPILLED[data] = stem


def spill_data(data: Run | Qrels, stem: str | os.PathLike, *, sync: bool = True) -> Run | Qrels:
    """Move ``data``'s columns to new files named from ``stem`` (see the module docstring) and
    point ``data`` at their mapping: the same object, the same values, its rows now the page
    cache's. Returns ``data``. An object already spilled stays as it is."""
    if spilled(data) is not None:
        return data
    stem = Path(stem)
    codes, dictionary = _codes(data.qid)
    write_columns(stem.with_name(stem.name + ".qids.arrow"), {"id": dictionary}, sync=sync)
    cols: dict[str, Any] = {"qid": codes, "value": np.asarray(data.values, dtype=np.float64)}
    if data.line_numbers is not None:
        cols["line"] = np.asarray(data.line_numbers, dtype=np.int64)
    write_columns(_columns_file(stem), cols, sync=sync)
    del codes, cols
    _write_doc_ids(_doc_ids_file(stem), data.docid, sync)
    _point_at(data, stem)
    return data


def spilled(obj) -> Path | None:
    """The stem of the files ``obj`` (a Run, Qrels or ranked lists) was moved to, or None."""
    try:
        return _SPILLED.get(obj)
    except TypeError:  # not weakly referable: never spilled
        return None


def files_of(stem: str | os.PathLike) -> list[Path]:
    """The files written for ``stem`` (those that exist)."""
    stem = Path(stem)
    return sorted(p for p in stem.parent.glob(stem.name + ".*.arrow"))


def spill_lists(lists: RankedLists, stem: str | os.PathLike, *, sync: bool = True) -> RankedLists:
    """Move the per-row and per-judgement arrays of ranked lists to new files named from
    ``stem`` and point the lists at their mapping (the same object, the same values; what
    the lists derived and kept is dropped). Returns ``lists``."""
    if spilled(lists) is not None:
        return lists
    stem = Path(stem)
    rows, judged = lists.stored_columns()
    # flags as bytes (Arrow packs booleans in bits, which numpy cannot view)
    flags = {n for part in (rows, judged) for n, a in part.items() if np.asarray(a).dtype == bool}
    for part, name in ((rows, "rows"), (judged, "judged")):
        write_columns(
            stem.with_name(f"{stem.name}.{name}.arrow"),
            {n: np.asarray(a).view(np.uint8) if n in flags else a for n, a in part.items()},
            sync=sync,
        )
    mappings: list = []
    mapped = {
        name: as_numpy(col).view(bool) if name in flags else as_numpy(col)
        for f in ("rows", "judged")
        for name, col in map_columns(stem.with_name(f"{stem.name}.{f}.arrow"), mappings).items()
    }
    lists.use_columns(mapped)
    _SPILLED[lists] = stem
    _MAPPINGS[lists] = mappings
    return lists


def spill_ranking(ranking: Ranking, stem: str | os.PathLike, *, sync: bool = True) -> Ranking:
    """:func:`spill_lists` of ``ranking.lists`` (the run and qrels are the caller's to move:
    :func:`spill_data`); what the ranking derived is dropped. Returns ``ranking``."""
    spill_lists(ranking.lists, stem, sync=sync)
    ranking.forget_derived()
    return ranking


def shed(ranking: Ranking | None) -> None:
    """Drop what ``ranking`` (and its lists) derived and kept in memory since it was built or
    mapped (judged rows, ideal orders, tie groups, the query index): computed again when
    asked. Nothing for None."""
    if ranking is not None:
        ranking.forget_derived()


class RunWriter:
    """A run (or qrels) written to files batch by batch, then mapped back as a
    :class:`~metrics_core.data.Run`: each batch's document ids go to their Arrow file, its
    query codes, scores and (when they are not the rows') source lines to scratch files on
    the same disk, as it comes; :meth:`finish` turns the scratch files into the columns'
    Arrow file through the page cache (mapped, never read into memory) and deletes them. The
    memory of reading a run is then about one batch, whatever the text's size.

    ``add(qid, docid, score, line)`` per batch (Arrow arrays or numpy; ``line`` the source
    line of each row); ``finish(**run_keywords)`` returns the mapped Run (``kind="qrels"``:
    a Qrels). Lines equal to the rows' numbers are not stored (``rows_are_lines``)."""

    _SCRATCH = {"qid": np.int32, "value": np.float64, "line": np.int64}

    def __init__(self, stem: str | os.PathLike, *, sync: bool = True):
        self.stem = Path(stem)
        self.sync = sync
        self._schema = pa.schema([("docid", pa.string())])
        self._fh = _open_new(_doc_ids_file(self.stem))
        self._writer: Any = pa.ipc.new_file(self._fh, self._schema)
        self._ids: dict[str, int] = {}
        self._scratch = {
            name: self.stem.with_name(f"{self.stem.name}.{name}.scratch") for name in self._SCRATCH
        }
        self._out = {
            name: _open_new(path) for name, path in self._scratch.items() if name != "line"
        }
        self._rows = 0
        self._lines_are_rows = True

    def _write(self, name: str, values: np.ndarray) -> None:
        if name not in self._out:
            self._out[name] = _open_new(self._scratch[name])
        self._out[name].write(np.ascontiguousarray(values, dtype=self._SCRATCH[name]).data)

    def add(self, qid, docid, values, lines=None) -> None:
        n = len(values)
        if isinstance(qid, pa.ChunkedArray):
            qid = qid.combine_chunks()
        enc = qid if pa.types.is_dictionary(qid.type) else pc.dictionary_encode(qid)
        local = enc.dictionary.to_pylist()
        remap = np.fromiter(
            (self._ids.setdefault(q, len(self._ids)) for q in local),
            dtype=np.int32,
            count=len(local),
        )
        self._write("qid", remap[enc.indices.to_numpy(zero_copy_only=False)])
        self._write("value", np.asarray(values, dtype=np.float64))
        rows = np.arange(self._rows + 1, self._rows + n + 1, dtype=np.int64)
        given = rows if lines is None else np.asarray(lines, dtype=np.int64)
        if self._lines_are_rows and (lines is None or not np.array_equal(given, rows)):
            self._lines_are_rows = False
            # the rows so far were their own lines: written out now, a million at a time
            for lo in range(0, self._rows, 1 << 20):
                self._write("line", np.arange(lo + 1, min(lo + (1 << 20), self._rows) + 1))
        if not self._lines_are_rows:
            self._write("line", given if lines is not None else rows)
        chunks = docid.chunks if isinstance(docid, pa.ChunkedArray) else [docid]
        for chunk in chunks:
            self._writer.write_batch(
                pa.record_batch([chunk.cast(pa.string())], schema=self._schema)
            )
        self._rows += n

    def close(self) -> None:
        """Close the files being written (done by :meth:`finish`; call it when giving up)."""
        if self._writer is not None:
            self._writer.close()
            self._fh.flush()
            if self.sync:
                os.fdatasync(self._fh.fileno())
            self._fh.close()
            self._writer = None
        for fh in self._out.values():
            fh.close()
        self._out = {}

    def _remove_scratch(self) -> None:
        for path in self._scratch.values():
            path.unlink(missing_ok=True)

    def discard(self) -> None:
        """Give up: close and delete what was written."""
        self.close()
        self._remove_scratch()
        for f in files_of(self.stem):
            f.unlink(missing_ok=True)

    def _scratch_column(self, name: str) -> pa.Array:
        """A scratch file as an Arrow array over its mapping (read through the page cache)."""
        dtype = np.dtype(self._SCRATCH[name])
        if not self._rows:
            return pa.array(np.zeros(0, dtype=dtype))
        mapped = pa.memory_map(os.fspath(self._scratch[name]), "r")
        buffer = mapped.read_buffer()
        return pa.Array.from_buffers(pa.from_numpy_dtype(dtype), self._rows, [None, buffer])

    def finish(self, kind: str = "run", **keywords) -> Run | Qrels:
        self.close()
        dictionary = pa.array(list(self._ids), type=pa.string())
        write_columns(self.stem.with_name(self.stem.name + ".qids.arrow"), {"id": dictionary})
        rows_are_lines = self._lines_are_rows and bool(self._rows)
        names = ["qid", "value"] + ([] if rows_are_lines or not self._rows else ["line"])
        write_columns(
            _columns_file(self.stem), {n: self._scratch_column(n) for n in names}, sync=self.sync
        )
        self._remove_scratch()  # mapped views of them are gone; their blocks go with them
        # the object is built on the mapped columns (its checks read them: no copy kept)
        mapped = map_columns(_columns_file(self.stem))
        docid = map_columns(_doc_ids_file(self.stem))["docid"]
        qids = map_columns(self.stem.with_name(self.stem.name + ".qids.arrow"))["id"]
        qid = _mapped_query_ids(mapped, qids.chunk(0) if qids.num_chunks else dictionary)
        values = as_numpy(mapped["value"]) if self._rows else np.zeros(0)
        lines = as_numpy(mapped["line"]) if "line" in mapped else None
        cls = Qrels if kind == "qrels" else Run
        data = cls(
            qid,
            docid.chunk(0) if docid.num_chunks == 1 else docid,
            values,
            line_numbers=lines,
            rows_are_lines=rows_are_lines,
            **keywords,
        )
        _point_at(data, self.stem)
        return data

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
        self._remove_scratch()


__all__ = [
    "MEMORY_FILE_SYSTEMS",
    "SPILL_DIR_ENV",
    "RunWriter",
    "as_numpy",
    "disk_folder",
    "files_of",
    "filesystem_of",
    "map_columns",
    "map_table",
    "memory_backed",
    "release_pages",
    "shed",
    "spill_data",
    "spill_lists",
    "spill_ranking",
    "spilled",
    "write_columns",
]
