"""Getting bytes out of whatever the user handed us, with clear errors.

A source may be a path (``str`` / ``os.PathLike``), ``bytes``, or a file-like object
(an open file, ``io.BytesIO``, Streamlit's ``UploadedFile``). Gzip is recognised by its
magic bytes, whatever the file is called. Binary junk and non-UTF-8 text are refused
with the line where they start.
"""

from __future__ import annotations

import gzip
import io
import mmap
import os
import zlib

from metrics_core.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"


class RawData:
    """The bytes of one input and the name to use for it in messages.

    A plain (uncompressed) file is not read into memory up front: ``head`` and
    ``contains`` look at it without loading it, and Arrow's reader can take
    ``arrow_source`` (the path) directly, so a 500 MB run never sits in memory twice.
    """

    def __init__(self, data: bytes | None, name: str, path: str | None = None):
        self._data = data
        self.name = name
        self.path = path

    @property
    def data(self) -> bytes:
        if self._data is None:
            with open(self.path, "rb") as fh:
                self._data = fh.read()
        return self._data

    def head(self, n: int) -> bytes:
        if self._data is not None:
            return self._data[:n]
        with open(self.path, "rb") as fh:
            return fh.read(n)

    def size(self) -> int:
        return len(self._data) if self._data is not None else os.path.getsize(self.path)

    def contains(self, byte: bytes) -> bool:
        """Whether the data holds ``byte`` anywhere: one memchr over the file mapped in
        memory (no copy), about 0.07 s for 400 MB in the page cache."""
        if self._data is not None:
            return byte in self._data
        if os.path.getsize(self.path) == 0:
            return False
        with open(self.path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return mm.find(byte) >= 0

    def arrow_source(self):
        import pyarrow as pa

        return self.path if self._data is None else pa.py_buffer(self._data)

    @property
    def stem(self) -> str:
        base = os.path.basename(self.name)
        for suffix in (".gz", ".gzip"):
            if base.lower().endswith(suffix):
                base = base[: -len(suffix)]
        root, ext = os.path.splitext(base)
        return root if ext else base

    @property
    def extension(self) -> str:
        """Lower-case extension without .gz, e.g. ``.csv``; ``""`` when there is none."""
        base = os.path.basename(self.name).lower()
        for suffix in (".gz", ".gzip"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        return os.path.splitext(base)[1]


def read_source(source, name: str | None = None) -> RawData:
    """Read a path, bytes or file-like object into :class:`RawData`, un-gzipping it."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, label = bytes(source), name or "<bytes>"
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        label = name or path
        if os.path.isdir(path):
            raise InputError("is a folder, not a file", source=label, hint="Give the path of a file")
        if not os.path.exists(path):
            raise InputError("file not found", source=label, hint="Check the path")
        with open(path, "rb") as fh:
            magic = fh.read(2)
        if magic != GZIP_MAGIC:
            return RawData(None, str(label), path=path)
        with open(path, "rb") as fh:
            data = fh.read()
    elif hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "<upload>"
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass
        data = source.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
    else:
        raise InputError(f"cannot read data from an object of type {type(source).__name__}",
                         hint="Pass a file path, bytes, a file object, a DataFrame or a dict")
    label = str(label)
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"the gzip data is truncated or corrupt ({exc})", source=label,
                             hint="Compress the file again, or give it uncompressed") from None
    return RawData(data, label)


def line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, offset) + 1


def check_text(raw: RawData, *, sample: int | None = None) -> None:
    """Refuse binary junk (NUL bytes) and non-UTF-8 text, naming the line.

    Only the first ``sample`` bytes are checked when given (the fast path checks the
    rest through pyarrow's own UTF-8 validation).
    """
    data = raw.data if sample is None else raw.head(sample)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError("binary data (a NUL byte): this is not a text file",
                         source=raw.name, line=line_of_offset(raw.data, nul),
                         hint="Give a plain-text TREC file or a CSV/TSV/JSON/Parquet table")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if sample is not None and exc.start >= len(data) - 4:
            return  # a multi-byte character cut by the sample boundary
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", source=raw.name,
                         line=line_of_offset(raw.data, exc.start),
                         hint="Save the file as UTF-8") from None


def text_lines(raw: RawData):
    """Decoded lines with their 1-based numbers (strict UTF-8)."""
    check_text(raw)
    text = raw.data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return enumerate(io.StringIO(text, newline=None), start=1)
