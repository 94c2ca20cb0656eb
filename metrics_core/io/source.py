"""Getting bytes out of whatever the user handed us, with clear errors and bounded work.

A source may be a path (``str`` / ``os.PathLike``; ``"-"`` is standard input), ``bytes``,
or a file-like object (an open file, ``io.BytesIO``, Streamlit's ``UploadedFile``).

* Regular files are not read into memory up front (see :class:`RawData`).
* Pipes, FIFOs, character devices and standard input are read **once**, in chunks, up to
  the input limit (:mod:`metrics_core.io.limits`); a stream that starts with binary junk
  (``/dev/zero``) is refused at its first chunk, and a FIFO that delivers nothing within
  :data:`PIPE_WAIT_S` seconds is refused instead of blocking forever.
* Compression is recognised by its magic bytes, whatever the file is called: gzip, bzip2,
  xz, zstd / lz4 frames (through pyarrow's codecs), and a zip archive of one text file.
  Decompression is streamed, 1 MiB at a time: the decoded total is counted as it comes out
  and stops at the input limit, the text is checked as it comes out (NUL bytes, UTF-16/32,
  UTF-8 validity), so a bomb of zeros is refused at its first MiB; past :data:`SPILL_BYTES` the output goes to a file on a disk
  (:func:`metrics_core.io.disk.disk_folder`), not to memory, so a bomb of valid lines costs
  the process a few MiB however far it decodes.
* Binary junk, UTF-16/UTF-32 text and non-UTF-8 text are refused with the line where they
  start; the readers of text refuse a line past the line limit
  (:mod:`metrics_core.io.text_check`).

Every :class:`RawData` carries the :class:`~metrics_core.io.limits.Limits` it was read
under, for the readers that decode it.
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
import tempfile
import typing
import zipfile

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.limits import (
    WORDS,
    Limits,
    over_input,
    resolve,
    size_words,
)
from metrics_core.io.text_check import (
    TextCheck,
    encoding_error,
    nul_error,
    text_encoding_problem,
)

GZIP_MAGIC = b"\x1f\x8b"
#: File name endings of compressed files (left out of a run's name and a file's extension).
COMPRESSED_SUFFIXES = (".gz", ".gzip", ".bz2", ".xz", ".zst", ".lz4", ".zip")
PARQUET_MAGIC = b"PAR1"

#: Bytes of decompressed output kept in memory; past this the output is written to a file
#: on a disk (and read from there), so a decompression bomb costs no more memory than this.
SPILL_BYTES = 16 << 20
#: The most bytes a compressed input may decode to per byte of it consumed: runs, qrels and
#: tables compress 3 to 10 times (measured: gzip 3-9, bzip2 5-17, zstd 4-23, xz 6-8; a run
#: of sequential ids and whole scores, the most regular made, 107 times with xz); a stream
#: that decodes to more is a decompression bomb (repeated lines: gzip 400, LZ4 240, zstd
#: 10,000 times), refused once it has given :data:`RATIO_FROM` bytes, long before the input
#: limit.
MAX_RATIO = 200
RATIO_FROM = 32 << 20
#: Seconds a FIFO may stay silent before it is refused (``RANKLAB_PIPE_WAIT_S``).
PIPE_WAIT_S = float(os.environ.get("RANKLAB_PIPE_WAIT_S", "10"))
_CHUNK = 1 << 20
#: Bytes read to tell a compression (a zip's first member name included).
_MAGIC = 512

# magic bytes of formats that legitimately hold NUL bytes (never refused as "binary junk")
_BINARY_MAGIC = (b"\x93NUMPY", PARQUET_MAGIC, b"PK\x03\x04", b"SQLite format 3\x00")

_stdin_used = False


def _decompressed_what(fmt: str) -> Phrase:
    return Phrase(N_("the {format} data once decompressed"), {"format": fmt})


def _bomb(label: str, fmt: str, decoded: int, consumed: int) -> InputError:
    return InputError(
        N_(
            "the {format} data decodes to over {ratio} times its size ({decoded} from the "
            "first {consumed}): a decompression bomb, not a compressed text or table"
        ),
        source=label,
        hint=N_("Decompress the file first if it is what you mean to read"),
        params={
            "format": fmt,
            "ratio": MAX_RATIO,
            "decoded": size_words(decoded),
            "consumed": size_words(consumed),
        },
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
    if head[:4] == b"PK\x03\x04" and _is_text_zip(head):
        return "zip"
    return None


def _is_text_zip(head: bytes) -> bool:
    """Whether a zip archive's first member (its local header, in ``head``) is a file
    of text rather than a torch archive or a NumPy ``.npz`` member (``.npy``)."""
    if len(head) < 30:
        return False
    n = int.from_bytes(head[26:28], "little")
    name = head[30 : 30 + n]
    if len(name) < n:
        return False
    return b"/" not in name and not name.endswith((b".npy", b".pkl"))


class _Counted(io.RawIOBase):
    """A file object that counts the bytes read from it: how much of a compressed input
    the decoder has consumed."""

    def __init__(self, fh):
        self.fh = fh
        self.count = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.fh.seekable()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.fh.seek(offset, whence)

    def tell(self) -> int:
        return self.fh.tell()

    def readinto(self, b) -> int:
        n = self.fh.readinto(b)
        self.count += n or 0
        return n

    def close(self) -> None:
        self.fh.close()
        super().close()


def _decoder_stream(compressed: _Counted, fmt: str, label: str, limits: Limits):
    """A file-like object giving the decompressed bytes of ``compressed``."""
    if fmt in ("zstd", "lz4"):
        import pyarrow as pa

        return pa.CompressedInputStream(pa.PythonFile(compressed, mode="r"), fmt)
    if fmt == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=compressed, mode="rb")
    if fmt == "zip":
        return _zip_member(compressed, label, limits)
    readable = typing.cast(typing.BinaryIO, compressed)  # a file object: all they need
    if fmt == "bzip2":
        return bz2.BZ2File(readable, "rb")
    return lzma.LZMAFile(readable, "rb")


def _zip_member(src, label: str, limits: Limits):
    """The one file of a zip archive, opened for reading; its declared size checked against
    the input limit first (what it really decodes to is counted as it is read)."""
    archive = zipfile.ZipFile(src)
    members = [m for m in archive.infolist() if not m.is_dir()]
    if len(members) != 1:
        archive.close()
        raise InputError(
            N_("a zip archive of {count} files: give one file, or the archive of one"),
            source=label,
            hint=N_("Extract the file you mean from the archive"),
            params={"count": len(members)},
        )
    if members[0].file_size > limits.input_bytes:
        archive.close()
        raise over_input(label, _decompressed_what("zip"), members[0].file_size, limits.input_bytes)
    return _ZipMember(archive, members[0])


class _ZipMember:
    """A zip archive's member open for reading; closing it closes the archive."""

    def __init__(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo):
        self.archive = archive
        self.member = archive.open(info)

    def read(self, n: int) -> bytes:
        return self.member.read(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.member.close()
        self.archive.close()


class _Output:
    """Decompressed output: in memory up to :data:`SPILL_BYTES`, then in an unnamed file of
    a disk folder (removed when its :class:`RawData` goes)."""

    def __init__(self):
        self.memory: io.BytesIO | None = io.BytesIO()
        self.file = None
        self.size = 0

    def write(self, chunk: bytes) -> None:
        if self.file is None and self.size + len(chunk) > SPILL_BYTES:
            from metrics_core.io.disk import disk_folder

            self.file = tempfile.TemporaryFile(prefix="ranklab-input-", dir=disk_folder()[0])
            assert self.memory is not None
            self.file.write(self.memory.getbuffer())
            self.memory = None
        if self.file is not None:
            self.file.write(chunk)
        else:
            assert self.memory is not None
            self.memory.write(chunk)
        self.size += len(chunk)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()

    def raw(self, label: str, limits: Limits) -> RawData:
        if self.file is None:
            assert self.memory is not None
            return RawData(self.memory.getvalue(), label, limits=limits)
        self.file.flush()
        return RawData.of_file(self.file, label, limits)


def _decompress(data_or_path, fmt: str, label: str, limits: Limits) -> RawData:
    """Decompress a whole input, 1 MiB at a time, counting and checking it as it comes out.

    The decoded total never passes the input limit (one chunk more at most is read to know
    that it would), and text is checked chunk by chunk (:class:`TextCheck`): a bomb of
    zeros is refused at its first chunk, one of text at the limit, having cost the process
    :data:`SPILL_BYTES` at most (the rest went to a file on a disk). The lines are left to
    the reader of the text (a JSON document may be one line), which measures them on the
    bytes (:func:`~metrics_core.io.text_check.check_lines`) before it decodes them. Output that starts like a binary format this project reads
    (Parquet, ``.npy``, a zip, SQLite) is not checked as text.
    """
    limit = limits.input_bytes
    out = _Output()
    check: TextCheck | None = None
    source = open(data_or_path, "rb") if isinstance(data_or_path, str) else io.BytesIO(data_or_path)
    compressed = _Counted(source)
    try:
        with compressed, _decoder_stream(compressed, fmt, label, limits) as stream:
            while True:
                chunk = stream.read(min(_CHUNK, limit + 1 - out.size))
                if not chunk:
                    break
                if out.size == 0 and not chunk.startswith(_BINARY_MAGIC):
                    check = TextCheck(label)
                if check is not None:
                    check.feed(chunk)
                if out.size + len(chunk) > limit:
                    raise over_input(label, _decompressed_what(fmt), None, limit)
                out.write(chunk)
                if out.size > RATIO_FROM and out.size > MAX_RATIO * max(compressed.count, 1):
                    raise _bomb(label, fmt, out.size, compressed.count)
        if check is not None:
            check.close()
    except InputError:
        out.close()
        raise
    except ImportError:
        out.close()
        raise InputError(
            N_("{format}-compressed data, and no {format} decoder is installed"),
            source=label,
            hint=N_("Decompress the file first"),
            params={"format": fmt},
        ) from None
    except MemoryError:
        out.close()
        raise over_input(label, _decompressed_what(fmt), None, limit) from None
    except (
        Exception
    ) as exc:  # each codec raises its own kinds (OSError, EOFError, LZMAError, ArrowInvalid)
        out.close()
        raise InputError(
            N_("the {format} data is truncated or corrupt ({error})"),
            source=label,
            hint=N_("Compress the file again, or give it uncompressed"),
            params={"format": fmt, "error": type(exc).__name__},
        ) from None
    raw = out.raw(label, limits)
    raw.text_checked = check is not None
    return raw


class RawData:
    """The bytes of one input and the name to use for it in messages.

    A plain (uncompressed) regular file is not read into memory up front: ``head`` and
    ``contains`` look at it without loading it, and Arrow's reader can take
    ``arrow_source`` (the path) directly, so a 500 MB run never sits in memory twice.
    ``limits`` (default: :func:`~metrics_core.io.limits.current_limits`; ``max_bytes``
    replaces its input limit) is what the readers of these bytes may decode.
    """

    def __init__(
        self,
        data: bytes | None,
        name: str,
        path: str | None = None,
        max_bytes: int | None = None,
        *,
        limits: Limits | None = None,
    ):
        self._data = data
        self.name = name
        self.path = path
        #: what the readers of these bytes may decode
        self.limits = resolve(limits, max_bytes)
        #: True when :func:`check_text`'s checks were already made on all of the data
        #: (while it was decompressed): :func:`check_text` does not make them again
        self.text_checked = False
        self._keep = None  # the open file behind ``path``, when it has no name of its own

    @classmethod
    def of_file(cls, fh, name: str, limits: Limits) -> RawData:
        """The bytes of an open file without a name of its own (a temporary file): read
        through ``/proc/self/fd`` while this object keeps it open."""
        path = f"/proc/self/fd/{fh.fileno()}"
        if not os.path.exists(path):  # not Linux: read it back into memory
            fh.seek(0)
            data = fh.read()
            fh.close()
            return cls(data, name, limits=limits)
        raw = cls(None, name, path=path, limits=limits)
        raw._keep = fh
        return raw

    @property
    def max_bytes(self) -> int:
        """The input limit of these bytes, in bytes."""
        return self.limits.input_bytes

    def _file(self) -> str:
        """The path of data not held in memory (one of the two is always given)."""
        if self.path is None:
            raise ValueError(f"{self.name}: neither data nor a path")
        return self.path

    def check_whole(self) -> None:
        """Refuse these bytes, read whole, when they are more than the input limit (a
        reader that parses a file whole, straight from the disk, asks before it does)."""
        limit = self.limits.input_bytes
        size = self.size()
        if size > limit:
            raise over_input(self.name, WORDS["file"], size, limit)

    @property
    def data(self) -> bytes:
        if self._data is None:
            self.check_whole()
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
        for suffix in COMPRESSED_SUFFIXES:
            if base.lower().endswith(suffix):
                base = base[: -len(suffix)]
        root, ext = os.path.splitext(base)
        return root if ext else base

    @property
    def extension(self) -> str:
        """Lower-case extension without a compression suffix, e.g. ``.csv``; ``""`` when none."""
        base = os.path.basename(self.name).lower()
        for suffix in COMPRESSED_SUFFIXES:
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        return os.path.splitext(base)[1]


def _read_stream(read, label: str, limits: Limits) -> bytes:
    """Read a stream once, in chunks, up to the input limit; refuse binary junk at once."""
    limit = limits.input_bytes
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
            raise over_input(label, WORDS["stream"], None, limit)
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


def _read_special(path: str, mode: int, label: str, limits: Limits) -> bytes:
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
            return _read_stream(fh.read, label, limits)
    except OSError as exc:
        raise _open_error(exc, label) from None
    finally:
        if owned is not None:
            os.close(owned)


def read_source(
    source,
    name: str | None = None,
    *,
    max_bytes: int | None = None,
    limits: Limits | None = None,
) -> RawData:
    """Read a path, bytes or file-like object into :class:`RawData`, decompressing it.

    ``"-"`` reads standard input (once per process). ``limits`` (default: the limits in
    force, :func:`~metrics_core.io.limits.current_limits`; ``max_bytes`` replaces its input
    limit, in bytes) bounds what is read: a plain input, or what a compressed one decodes
    to, may not pass the input limit -- an :class:`InputError`, raised before more than one
    chunk (1 MiB) past the limit is read -- and the readers of the result check the rest.

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
    limits = resolve(limits, max_bytes)
    plain_limit = limits.input_bytes
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, label = bytes(source), name or "<bytes>"
        if len(data) > plain_limit:
            raise over_input(label, WORDS["data"], len(data), plain_limit)
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
            data = _read_stream(sys.stdin.buffer.read, label, limits)
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
                data = _read_special(path, st.st_mode, label, limits)
            else:
                try:
                    with open(path, "rb") as fh:
                        magic = fh.read(_MAGIC)
                except OSError as exc:
                    raise _open_error(exc, label) from None
                fmt = compression_of(magic)
                if fmt is None:
                    return RawData(None, label, path=path, limits=limits)
                return _decompress(path, fmt, label, limits)
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
            data = _read_stream(read, label, limits)
        except OSError as exc:
            raise _open_error(exc, label) from None
    else:
        raise InputError(
            N_("cannot read data from an object of type {type}"),
            hint=N_("Pass a file path, bytes, a file object, a DataFrame or a dict"),
            params={"type": type(source).__name__},
        )
    label = str(label)
    fmt = compression_of(data[:_MAGIC])
    if fmt is not None:
        return _decompress(data, fmt, label, limits)
    return RawData(data, label, limits=limits)
