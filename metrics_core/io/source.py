"""Getting bytes out of whatever the user handed us, with clear errors and bounded work.

A source may be a path (``str`` / ``os.PathLike``; ``"-"`` is standard input), ``bytes``,
or a file-like object (an open file, ``io.BytesIO``, Streamlit's ``UploadedFile``).

* Regular files are not read into memory up front (see :class:`RawData`).
* Pipes, FIFOs, character devices and standard input are read **once**, in chunks, up to
  :data:`MAX_INPUT_BYTES`; a stream that starts with binary junk (``/dev/zero``) is refused
  at its first chunk, and a FIFO that delivers nothing within :data:`PIPE_WAIT_S` seconds
  is refused instead of blocking forever.
* Compression is recognised by its magic bytes, whatever the file is called: gzip, bzip2,
  xz, and zstd / lz4 frames (through pyarrow's codecs). Decompression is streamed, 1 MiB
  at a time, and stops at a limit (``max_bytes``; by default
  :data:`MAX_DECOMPRESSED_BYTES`); the text is checked as it comes out (NUL bytes,
  UTF-16/32, UTF-8 validity), so a bomb of zeros is refused at its first MiB instead of
  after filling memory.
* Binary junk, UTF-16/UTF-32 text and non-UTF-8 text are refused with the line where they
  start.
"""

from __future__ import annotations

import bz2
import errno
import io
import lzma
import mmap
import os
import select
import stat
import sys

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.text_check import (
    TextCheck,
    encoding_error,
    nul_error,
    text_encoding_problem,
    utf8_error,
)

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"

#: Largest input (after decompression) read into memory, in bytes; the environment
#: variable ``RANKLAB_MAX_INPUT_BYTES`` changes it.
MAX_INPUT_BYTES = int(os.environ.get("RANKLAB_MAX_INPUT_BYTES", str(4 << 30)))
#: Largest output of a decompression, in bytes, when the caller gives no ``max_bytes``
#: (``RANKLAB_MAX_DECOMPRESSED_BYTES``): a compressed input is held in memory whole, so the
#: default suits a host of 1 GB (a 5,000,000-line TREC run is about 256 MB); plain files
#: are read in blocks by the command line and need no such limit.
MAX_DECOMPRESSED_BYTES = int(os.environ.get("RANKLAB_MAX_DECOMPRESSED_BYTES", str(256 << 20)))
#: Seconds a FIFO may stay silent before it is refused (``RANKLAB_PIPE_WAIT_S``).
PIPE_WAIT_S = float(os.environ.get("RANKLAB_PIPE_WAIT_S", "10"))
_CHUNK = 1 << 20

# magic bytes of formats that legitimately hold NUL bytes (never refused as "binary junk")
_BINARY_MAGIC = (b"\x93NUMPY", PARQUET_MAGIC, b"PK\x03\x04", b"SQLite format 3\x00")

_stdin_used = False


def _limit_error(
    label: str, what: str = Phrase(N_("the data")), limit: int | None = None
) -> InputError:
    return InputError(
        N_("{what} is larger than the input limit of {limit} bytes"),
        source=label,
        hint=N_("Split the file, or raise the limit with RANKLAB_MAX_INPUT_BYTES"),
        plain_hint=N_("Split the file"),
        params={"what": what, "limit": f"{MAX_INPUT_BYTES if limit is None else limit:,}"},
    )


def _decompressed_limit_error(label: str, fmt: str, limit: int) -> InputError:
    return InputError(
        N_("the {format} data decompresses to more than {limit} bytes"),
        source=label,
        hint=N_(
            "Decompress the file first (plain files are read in blocks), or raise the "
            "limit with RANKLAB_MAX_DECOMPRESSED_BYTES"
        ),
        plain_hint=N_("Split the file, or give it uncompressed"),
        params={"format": fmt, "limit": f"{limit:,}"},
    )


def compression_of(head: bytes) -> str | None:
    """The compression format whose magic bytes start ``head`` (None: not compressed).

    >>> compression_of(b"\\x1f\\x8b\\x08"), compression_of(b"q1 Q0 d1 1 2.0 x")
    ('gzip', None)
    """
    if head[:2] == GZIP_MAGIC:
        return "gzip"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return "zstd"
    if head[:4] == b"\x04\x22\x4d\x18":
        return "lz4"
    return None


def _decoder_stream(src, fmt: str):
    """A file-like object giving the decompressed bytes of ``src`` (a path or bytes)."""
    if fmt in ("zstd", "lz4"):
        import pyarrow as pa

        base = pa.OSFile(src) if isinstance(src, str) else pa.BufferReader(src)
        return pa.CompressedInputStream(base, fmt)
    fileobj = None if isinstance(src, str) else io.BytesIO(src)  # shares the bytes, no copy
    if fmt == "gzip":
        import gzip

        return gzip.GzipFile(filename=src if fileobj is None else None, fileobj=fileobj, mode="rb")
    opener = bz2.BZ2File if fmt == "bzip2" else lzma.LZMAFile
    return opener(src if fileobj is None else fileobj, "rb")


def _decompress(data_or_path, fmt: str, label: str, limit: int) -> RawData:
    """Decompress a whole input, 1 MiB at a time, checking the text as it comes out.

    The output never grows past ``limit`` bytes (one chunk more at most is read to know
    that it would): a bomb costs ``limit`` bytes at worst, and one of binary junk (zeros)
    is refused at its first chunk by :class:`TextCheck`. Output that starts like a binary
    format this project reads (Parquet, ``.npy``, a zip, SQLite) is not checked as text.
    """
    out = io.BytesIO()  # grows in place; getvalue() hands over its buffer without a copy
    check: TextCheck | None = None
    try:
        with _decoder_stream(data_or_path, fmt) as stream:
            while True:
                chunk = stream.read(min(_CHUNK, limit + 1 - out.tell()))
                if not chunk:
                    break
                if out.tell() == 0 and not chunk.startswith(_BINARY_MAGIC):
                    check = TextCheck(label)
                if check is not None:
                    check.feed(chunk)
                out.write(chunk)
                if out.tell() > limit:
                    raise _decompressed_limit_error(label, fmt, limit)
        if check is not None:
            check.close()
    except InputError:
        raise
    except ImportError:
        raise InputError(
            N_("{format}-compressed data, and no {format} decoder is installed"),
            source=label,
            hint=N_("Decompress the file first"),
            params={"format": fmt},
        ) from None
    except MemoryError:
        raise _decompressed_limit_error(label, fmt, limit) from None
    except (
        Exception
    ) as exc:  # each codec raises its own kinds (OSError, EOFError, LZMAError, ArrowInvalid)
        raise InputError(
            N_("the {format} data is truncated or corrupt ({error})"),
            source=label,
            hint=N_("Compress the file again, or give it uncompressed"),
            params={"format": fmt, "error": type(exc).__name__},
        ) from None
    raw = RawData(out.getvalue(), label, max_bytes=limit)
    raw.text_checked = check is not None
    return raw


class RawData:
    """The bytes of one input and the name to use for it in messages.

    A plain (uncompressed) regular file is not read into memory up front: ``head`` and
    ``contains`` look at it without loading it, and Arrow's reader can take
    ``arrow_source`` (the path) directly, so a 500 MB run never sits in memory twice.
    """

    def __init__(
        self, data: bytes | None, name: str, path: str | None = None, max_bytes: int | None = None
    ):
        self._data = data
        self.name = name
        self.path = path
        #: the most bytes :attr:`data` may read from the file (default :data:`MAX_INPUT_BYTES`)
        self.max_bytes = max_bytes
        #: True when :func:`check_text`'s checks were already made on all of the data
        #: (while it was decompressed): :func:`check_text` does not make them again
        self.text_checked = False

    def _file(self) -> str:
        """The path of data not held in memory (one of the two is always given)."""
        if self.path is None:
            raise ValueError(f"{self.name}: neither data nor a path")
        return self.path

    @property
    def data(self) -> bytes:
        if self._data is None:
            limit = MAX_INPUT_BYTES if self.max_bytes is None else self.max_bytes
            if self.size() > limit:
                raise _limit_error(self.name, Phrase(N_("the file")), limit)
            with open(self._file(), "rb") as fh:
                self._data = fh.read()
        return self._data

    def head(self, n: int) -> bytes:
        if self._data is not None:
            return self._data[:n]
        with open(self._file(), "rb") as fh:
            return fh.read(n)

    def size(self) -> int:
        return len(self._data) if self._data is not None else os.path.getsize(self._file())

    def contains(self, byte: bytes) -> bool:
        """Whether the data holds ``byte`` anywhere: one memchr over the file mapped in
        memory (no copy), about 0.07 s for 400 MB in the page cache."""
        if self._data is not None:
            return byte in self._data
        if os.path.getsize(self._file()) == 0:
            return False
        with (
            open(self._file(), "rb") as fh,
            mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm,
        ):
            return mm.find(byte) >= 0

    def arrow_source(self):
        import pyarrow as pa

        # an open file, not the path: given a path, Arrow picks a decompressor by the
        # file's extension (a plain file named .gz fails); compression is handled here
        return (
            pa.input_stream(self.path, compression=None)
            if self._data is None
            else pa.py_buffer(self._data)
        )

    @property
    def stem(self) -> str:
        base = os.path.basename(self.name)
        for suffix in (".gz", ".gzip", ".bz2", ".xz", ".zst", ".lz4"):
            if base.lower().endswith(suffix):
                base = base[: -len(suffix)]
        root, ext = os.path.splitext(base)
        return root if ext else base

    @property
    def extension(self) -> str:
        """Lower-case extension without a compression suffix, e.g. ``.csv``; ``""`` when none."""
        base = os.path.basename(self.name).lower()
        for suffix in (".gz", ".gzip", ".bz2", ".xz", ".zst", ".lz4"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        return os.path.splitext(base)[1]


def _read_stream(read, label: str, limit: int | None = None) -> bytes:
    """Read a stream once, in chunks, up to ``limit`` bytes (default :data:`MAX_INPUT_BYTES`);
    refuse binary junk at once."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    out = io.BytesIO()  # grows in place; getvalue() hands over its buffer without a copy
    first = True
    while True:
        chunk = read(_CHUNK)
        if not chunk:
            break
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        if first:
            first = False
            if compression_of(chunk) is None and not chunk.startswith(_BINARY_MAGIC):
                enc = text_encoding_problem(chunk)
                if enc:
                    raise encoding_error(enc, label)
                nul = chunk.find(b"\x00")
                if nul >= 0:
                    raise nul_error(label, chunk.count(b"\n", 0, nul) + 1)
        out.write(chunk)
        if out.tell() > limit:
            raise _limit_error(label, Phrase(N_("the stream")), limit)
    return out.getvalue()


def _open_error(exc: OSError, label: str) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(N_("file not found"), source=label, hint=N_("Check the path"))
    if isinstance(exc, PermissionError):
        return InputError(
            N_("permission denied: cannot read this file"),
            source=label,
            hint=N_("Check the file's permissions"),
        )
    if exc.errno == errno.ELOOP:
        return InputError(
            N_("a symbolic link loop (the link points back to itself)"),
            source=label,
            hint=N_("Give the path of a real file"),
        )
    if exc.errno == errno.ENAMETOOLONG:
        return InputError(N_("the path is too long"), source=label, hint=N_("Check the path"))
    return InputError(
        N_("cannot read this file ({error})"),
        source=label,
        hint=N_("Check the path"),
        params={"error": exc.strerror or type(exc).__name__},
    )


def _is_inherited_descriptor(path: str) -> bool:
    """``/dev/stdin``, ``/dev/fd/N`` and ``/proc/self/fd/N``: a pipe this process was given
    (a shell pipeline, process substitution), whose writer exists: read without a wait limit."""
    return path in ("/dev/stdin",) or path.startswith(("/dev/fd/", "/proc/self/fd/"))


def _read_special(path: str, mode: int, label: str, limit: int | None = None) -> bytes:
    """A FIFO, pipe, socket or device: opened once, waited for (a named FIFO), read once."""
    named_fifo = stat.S_ISFIFO(mode) and not _is_inherited_descriptor(path)
    try:
        fd = os.open(path, os.O_RDONLY | (os.O_NONBLOCK if named_fifo else 0))
    except OSError as exc:
        raise _open_error(exc, label) from None
    owned: int | None = fd  # closed below unless the file object took it
    try:
        if named_fifo:
            ready, _, _ = select.select([fd], [], [], PIPE_WAIT_S)
            if not ready:
                raise InputError(
                    N_(
                        "no data arrived from this pipe within {seconds} s (a FIFO with no writer?)"
                    ),
                    source=label,
                    hint=N_("Start the program that writes to it, or give a file"),
                    params={"seconds": f"{PIPE_WAIT_S:g}"},
                )
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as fh:
            owned = None
            return _read_stream(fh.read, label, limit)
    except OSError as exc:
        raise _open_error(exc, label) from None
    finally:
        if owned is not None:
            os.close(owned)


def read_source(source, name: str | None = None, *, max_bytes: int | None = None) -> RawData:
    """Read a path, bytes or file-like object into :class:`RawData`, decompressing it.

    ``"-"`` reads standard input (once per process). ``max_bytes`` is the most bytes the
    input may take in memory once decompressed (a caller's memory budget); without it, a
    plain input may take :data:`MAX_INPUT_BYTES` and a decompression may give
    :data:`MAX_DECOMPRESSED_BYTES`. Over the limit is an :class:`InputError`, raised
    before more than one chunk (1 MiB) past the limit is read.

    >>> import gzip
    >>> read_source(gzip.compress(b"q1 0 d1 1\\n"), "qrels.gz").data
    b'q1 0 d1 1\\n'
    >>> try:
    ...     read_source(gzip.compress(bytes(10 << 20)), "zeros.gz")
    ... except InputError as exc:
    ...     print(exc.problem)
    binary data (a NUL byte): this is not a text file
    """
    global _stdin_used
    plain_limit = MAX_INPUT_BYTES if max_bytes is None else max_bytes
    unpacked_limit = (
        min(MAX_DECOMPRESSED_BYTES, MAX_INPUT_BYTES) if max_bytes is None else max_bytes
    )
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, label = bytes(source), name or "<bytes>"
        if len(data) > plain_limit:
            raise _limit_error(label, limit=plain_limit)
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        label = str(name or path)
        if path == "-":
            label = name or "<stdin>"
            if _stdin_used:
                raise InputError(
                    N_("standard input was already read for another input"),
                    source=label,
                    hint=N_("Give at most one input as '-'"),
                )
            _stdin_used = True
            data = _read_stream(sys.stdin.buffer.read, label, plain_limit)
        else:
            if "\x00" in path:
                raise InputError(
                    N_("the path contains a NUL character"),
                    source=repr(path),
                    hint=N_("Check the path"),
                )
            try:
                st = os.stat(path)
            except OSError as exc:
                raise _open_error(exc, label) from None
            if stat.S_ISDIR(st.st_mode):
                raise InputError(
                    N_("is a folder, not a file"), source=label, hint=N_("Give the path of a file")
                )
            if not stat.S_ISREG(st.st_mode):
                data = _read_special(path, st.st_mode, label, plain_limit)
            else:
                try:
                    with open(path, "rb") as fh:
                        magic = fh.read(16)
                except OSError as exc:
                    raise _open_error(exc, label) from None
                fmt = compression_of(magic)
                if fmt is None:
                    return RawData(None, label, path=path, max_bytes=max_bytes)
                return _decompress(path, fmt, label, unpacked_limit)
    elif hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "<upload>"
        label = str(label)
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass

        def read(n, _first=[True]):  # noqa: B006 - per-call state of this closure
            try:
                return source.read(n)
            except TypeError:  # a file-like object whose read() takes no size
                if not _first[0]:
                    return b""
                _first[0] = False
                return source.read()

        try:
            data = _read_stream(read, label, plain_limit)
        except OSError as exc:
            raise _open_error(exc, label) from None
    else:
        raise InputError(
            N_("cannot read data from an object of type {type}"),
            hint=N_("Pass a file path, bytes, a file object, a DataFrame or a dict"),
            params={"type": type(source).__name__},
        )
    label = str(label)
    fmt = compression_of(data[:16])
    if fmt is not None:
        return _decompress(data, fmt, label, unpacked_limit)
    return RawData(data, label, max_bytes=max_bytes)


def line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, offset) + 1


def check_text(raw: RawData, *, sample: int | None = None) -> None:
    """Refuse binary junk (NUL bytes), UTF-16/32 and non-UTF-8 text, naming the line.

    Only the first ``sample`` bytes are checked when given (the fast path checks the
    rest through pyarrow's own UTF-8 validation). The line is counted in the bytes
    already looked at: a NUL at the start of a huge file costs no more than the sample.
    """
    if raw.text_checked:
        return
    data = raw.data if sample is None else raw.head(sample)
    enc = text_encoding_problem(data[:256])
    if enc:
        raise encoding_error(enc, raw.name)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise nul_error(raw.name, line_of_offset(data, nul))
    if data.isascii():  # ASCII is UTF-8: no decoding (and no copy of the text) needed
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if sample is not None and exc.start >= len(data) - 4:
            return  # a multi-byte character cut by the sample boundary
        raise utf8_error(raw.name, line_of_offset(data, exc.start), data[exc.start]) from None


def text_lines(raw: RawData):
    """Decoded lines with their 1-based numbers (strict UTF-8)."""
    check_text(raw)
    text = raw.data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return enumerate(io.StringIO(text, newline=None), start=1)
