"""Builders of the bombs of ``test_bombs.py`` and the memory meter that judges them.

* :func:`peak_growth_mb`: how far the process's resident set rose above where it stood
  while a callable ran (Linux: the high-water mark is reset through ``/proc/self/clear_refs``
  first, so earlier tests' peaks do not hide the growth).
* :func:`compressed_bomb`: a compressed file of ``members`` copies of one compressed block
  (every format here decompresses concatenated members/streams/frames as one): 1 GiB of
  output costs the compression of a few MiB.
* :func:`patch_parquet_rows`: a real Parquet file whose footer (Thrift compact protocol)
  is changed to declare another row count, at file level, per row group and per column.
* :func:`check_bomb_history`: a real history file whose ``suite_qrels`` table carries a
  CHECK constraint that builds a string of ``size`` characters for every row.
"""

from __future__ import annotations

import bz2
import gc
import lzma
import sqlite3
import struct
import zlib

import pytest

FORMATS = ("gzip", "bzip2", "xz", "zstd", "lz4")


# -- memory ---------------------------------------------------------------------------


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def peak_growth_mb(fn) -> float:
    """MiB by which the resident set's peak while ``fn()`` ran exceeds the resident set
    just before it (``fn`` should catch the error it expects)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset the peak (VmHWM) to the current resident set
    except OSError:
        pytest.skip("the peak resident set cannot be reset here (/proc/self/clear_refs)")
    before = _status_kib("VmRSS")
    fn()
    return (_status_kib("VmHWM") - before) / 1024


# -- compression ----------------------------------------------------------------------


def compress(fmt: str, data: bytes) -> bytes:
    """``data`` as one gzip member, bzip2 stream, xz stream, zstd or LZ4 frame."""
    if fmt == "gzip":
        c = zlib.compressobj(9, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if fmt == "bzip2":
        return bz2.compress(data, 9)
    if fmt == "xz":
        return lzma.compress(data)
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, fmt) as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


def compressed_bomb(fmt: str, block: bytes, members: int, prefix: bytes = b"") -> bytes:
    """``prefix`` then ``members`` copies of ``block``, compressed (each copy a member)."""
    one = compress(fmt, block)
    return (compress(fmt, prefix) if prefix else b"") + one * members


# -- Parquet footer (Thrift compact protocol) -------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _varint_bytes(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _list_header(buf: bytes, pos: int) -> tuple[int, int, int]:
    head = buf[pos]
    size = head >> 4
    pos += 1
    if size == 15:
        size, pos = _varint(buf, pos)
    return size, head & 15, pos


def _skip(buf: bytes, pos: int, kind: int) -> int:
    if kind in (1, 2):  # booleans: the value is the type
        return pos
    if kind == 3:  # byte
        return pos + 1
    if kind in (4, 5, 6):  # i16, i32, i64: zigzag varints
        return _varint(buf, pos)[1]
    if kind == 7:  # double
        return pos + 8
    if kind == 8:  # binary
        n, pos = _varint(buf, pos)
        return pos + n
    if kind in (9, 10):  # list, set
        size, elem, pos = _list_header(buf, pos)
        for _ in range(size):
            pos = pos + 1 if elem in (1, 2) else _skip(buf, pos, elem)
        return pos
    if kind == 11:  # map
        n, pos = _varint(buf, pos)
        if n:
            kv = buf[pos]
            pos += 1
            for _ in range(n):
                pos = _skip(buf, _skip(buf, pos, kv >> 4), kv & 15)
        return pos
    if kind == 12:  # struct
        return _fields(buf, pos)[1]
    raise ValueError(f"Thrift type {kind}")


def _fields(buf: bytes, pos: int) -> tuple[dict, int]:
    """{field id: (type, start, end)} of the struct at ``pos``, and where it ends."""
    fields, last = {}, 0
    while True:
        head = buf[pos]
        pos += 1
        if head == 0:
            return fields, pos
        kind, delta = head & 15, head >> 4
        if delta:
            fid = last + delta
        else:
            z, pos = _varint(buf, pos)
            fid = (z >> 1) ^ -(z & 1)
        start, pos = pos, _skip(buf, pos, kind)
        fields[fid] = (kind, start, pos)
        last = fid


def _spans(meta: bytes, path: list) -> list[tuple[int, int]]:
    """Byte spans of the values at ``path`` (field ids; ``"*"``: every element of a list
    of structs)."""

    def walk(pos, path):
        _, start, end = _fields(meta, pos)[0][path[0]]
        if len(path) == 1:
            return [(start, end)]
        if path[1] == "*":
            size, elem, p = _list_header(meta, start)
            found = []
            for _ in range(size):
                found += walk(p, path[2:])
                p = _skip(meta, p, elem)
            return found
        return walk(start, path[1:])

    return walk(0, path)


# FileMetaData: 3 num_rows, 4 row_groups; RowGroup: 1 columns, 3 num_rows;
# ColumnChunk: 3 meta_data; ColumnMetaData: 5 num_values
FILE_ROWS, GROUP_ROWS, COLUMN_VALUES = [3], [4, "*", 3], [4, "*", 1, "*", 3, 5]


def patch_parquet_rows(data: bytes, rows: int, *paths: list) -> bytes:
    """``data`` (a Parquet file) with the i64 counts at ``paths`` set to ``rows``."""
    n = struct.unpack("<I", data[-8:-4])[0]
    meta = data[-8 - n : -8]
    value = _varint_bytes((rows << 1) ^ (rows >> 63))
    for start, end in sorted((s for p in paths for s in _spans(meta, p)), reverse=True):
        meta = meta[:start] + value + meta[end:]
    return data[: -8 - n] + meta + struct.pack("<I", len(meta)) + b"PAR1"


# -- History --------------------------------------------------------------------------


def check_bomb_history(size: int, rows: int = 50) -> bytes:
    """A history file (the store's own schema, ``rows`` qrels rows) whose ``suite_qrels``
    carries ``CHECK (length(printf('%.*c', size, 'x')) > 0)``: evaluating it builds a
    string of ``size`` characters per row (it holds for any ``size`` > 0)."""
    from metrics_core.history.store import HistoryStore

    with HistoryStore(":memory:") as store:
        image = store.to_bytes()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.deserialize(image)
        conn.execute("INSERT INTO suites VALUES (1, 's', '2026-11-27T00:00:00Z', 'x')")
        conn.executemany(
            "INSERT INTO suite_qrels VALUES (1, ?, 'd1', 1)", [(f"q{i}",) for i in range(rows)]
        )
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, 'relevance REAL NOT NULL', "
            "'relevance REAL NOT NULL CHECK (length(printf(''%.*c'', ?, ''x'')) > 0)') "
            "WHERE name = 'suite_qrels'".replace("?", str(int(size)))
        )
        conn.execute("PRAGMA writable_schema = OFF")
        return bytes(conn.serialize())
    finally:
        conn.close()


# -- the readers' limits (test_reader_limits.py, bench/bench_bombs.py) -------------------

#: A regular run line (20 bytes).
RUN_LINE = b"q1 Q0 d1 1 2.5 bm25\n"


def text_bomb(fmt: str, size: int = 900_000, block: int = 2 << 20) -> bytes:
    """About ``size`` bytes of ``fmt`` (gzip, bzip2, xz, zstd, lz4) decoding to valid run
    lines: copies of one member holding ``block`` bytes of them (0.9 MB of zstd decode to
    8.7 GB, of gzip to 367 MB, of LZ4 to 218 MB)."""
    one = compress(fmt, RUN_LINE * (block // len(RUN_LINE)))
    return one * max(size // len(one), 1)


def zip_text_bomb(path, text_bytes: int = 64 << 20) -> None:
    """A zip archive of one text file of ``text_bytes`` bytes of run lines (deflated)."""
    import zipfile

    block = RUN_LINE * ((1 << 20) // len(RUN_LINE))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("run.txt", "w") as fh:
            for _ in range(text_bytes // len(block)):
                fh.write(block)


def one_line_file(path, size: int, head: bytes = b"query_id,doc_id,score\n") -> None:
    """``head`` then one line of ``size`` bytes (``q1,ddd...d,1``), written in blocks."""
    block = b"d" * (1 << 24)
    with open(path, "wb") as fh:
        fh.write(head + b"q1,")
        left = size
        while left > 0:
            fh.write(block[: min(left, len(block))])
            left -= len(block)
        fh.write(b",1\n")


def parquet_dictionary_bomb(
    text_bytes: int = 1_000_000_000, entry: int = 60_000, distinct: int = 21, noise: bool = True
) -> bytes:
    """A Parquet run whose document-id dictionary of ``distinct`` texts of ``entry`` bytes
    each is referenced by enough rows to decode to ``text_bytes`` of text. With ``noise``
    the texts are random (base64), so the dictionary does not compress: by default the
    file takes 0.95 MB, as the one that took the hosted app past 1.2 GB; without, a few kB."""
    import base64
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = text_bytes // entry
    rng = np.random.default_rng(0)

    def text(i: int) -> str:
        body = base64.b64encode(rng.bytes(entry)).decode() if noise else "x" * entry
        return f"d{i:03d}" + body[: entry - 4]

    values = pa.array([text(i) for i in range(distinct)])
    docs = pa.DictionaryArray.from_arrays(pa.array(np.arange(rows) % distinct, pa.int32()), values)
    table = pa.table(
        {
            "query_id": pa.array([f"q{i % 50}" for i in range(rows)]),
            "doc_id": docs,
            "score": pa.array(np.ones(rows)),
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def deep_json(depth: int = 1_000_000) -> bytes:
    """A JSON list nested ``depth`` levels deep."""
    return b"[" * depth + b"]" * depth


def forged_zip_sizes(data: bytes, size: int = 0x7FFFFFFF) -> bytes:
    """A zip archive (a torch ``.pt``, an ``.npz``) whose central directory declares every
    member ``size`` bytes long once decompressed."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        out[at + 24 : at + 28] = size.to_bytes(4, "little")
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


def forged_npy(shape: tuple = (1_000_000_000_000, 64), dtype: str = "<f4") -> bytes:
    """A ``.npy`` file of a few hundred bytes whose header declares ``shape`` of ``dtype``
    (by default 256 TB) over 64 bytes of data."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": tuple(shape)}
    )
    return buf.getvalue() + bytes(64)


def forged_npz(shape: tuple = (1_000_000_000_000, 64)) -> bytes:
    """A ``.npz`` archive holding one member ``codes.npy`` of :func:`forged_npy` (its zip
    directory honest: the member is a few hundred bytes)."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("codes.npy", forged_npy(shape))
    return buf.getvalue()


def expanded_pt(rows: int = 100_000_000, bits: int = 64) -> bytes:
    """A torch ``.pt`` file of about 2 kB holding a tensor saved as a view: one row of
    ``bits`` float32 codes expanded to ``rows`` rows (stride 0). It declares
    ``rows x bits x 4`` bytes (by default 25.6 GB) that its one stored row does not hold."""
    import io

    import torch

    buf = io.BytesIO()
    torch.save(torch.ones(1, bits).expand(rows, bits), buf)
    return buf.getvalue()
