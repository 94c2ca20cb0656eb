"""The checks that decide whether bytes are text RankLab reads: the encoding of the first bytes,
NUL bytes, UTF-8, the line limit and JSON's size and depth, each refusal naming the file and
the line. :class:`TextCheck` runs them on
decompressed output piece by piece, as it comes out (a bomb is refused at its first piece);
:func:`metrics_core.io.source.check_text` on a whole input."""

from __future__ import annotations

import codecs
import io
from typing import TYPE_CHECKING

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.io.limits import Limits, over_depth, over_line, size_words

if TYPE_CHECKING:
    from metrics_core.io.source import RawData

_CHUNK = 1 << 20


def text_encoding_problem(head: bytes) -> str | None:
    """A named problem when ``head`` is UTF-16/UTF-32 text (None otherwise)."""
    if head[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        return "UTF-32"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16"
    sample = head[:256]
    if len(sample) >= 8:
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
            return "UTF-16"
        if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
            return "UTF-16"
    return None


def encoding_error(kind: str, label: str) -> InputError:
    return InputError(
        N_("{encoding} text: this reader takes UTF-8"),
        source=label,
        hint=N_("Save the file as UTF-8"),
        params={"encoding": kind},
    )


def nul_error(label: str, line: int) -> InputError:
    return InputError(
        N_("binary data (a NUL byte): this is not a text file"),
        source=label,
        line=line,
        hint=N_("Give a plain-text TREC file or a CSV/TSV/JSON/Parquet table"),
    )


def utf8_error(label: str, line: int, byte: int) -> InputError:
    return InputError(
        N_("not UTF-8 text (byte 0x{byte})"),
        source=label,
        line=line,
        hint=N_("Save the file as UTF-8"),
        params={"byte": f"{byte:02x}"},
    )


class TextCheck:
    """The text checks of :func:`check_text`, made on data as it arrives, chunk by chunk.

    :meth:`feed` refuses UTF-16/32 text (in the first chunk), a NUL byte and bytes that are
    not UTF-8 (a character cut between two chunks is joined first), naming the line: the
    newlines of the chunks already fed are counted. :meth:`close` refuses a character cut
    by the end of the data. Cost: one ``memchr`` and one ``isascii`` per chunk; only
    non-ASCII chunks are decoded (and the text dropped at once).

    >>> check = TextCheck("run.txt")
    >>> check.feed(b"q1 Q0 d1 1 2.0 t\\n")
    >>> try:
    ...     check.feed(b"q2 Q0 d\\x00")
    ... except InputError as exc:
    ...     print(exc.line, exc.problem)
    2 binary data (a NUL byte): this is not a text file
    """

    def __init__(self, label: str):
        self.label = label
        self.newlines = 0
        self._first = True
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, chunk: bytes) -> None:
        if self._first:
            self._first = False
            enc = text_encoding_problem(chunk[:256])
            if enc:
                raise encoding_error(enc, self.label)
        nul = chunk.find(b"\x00")
        if nul >= 0:
            raise nul_error(self.label, self.newlines + chunk.count(b"\n", 0, nul) + 1)
        pending = self._decoder.getstate()[0]
        if pending or not chunk.isascii():
            try:
                self._decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                at = max(exc.start - len(pending), 0)
                byte = (pending + chunk[: at + 1])[exc.start]
                raise utf8_error(
                    self.label, self.newlines + chunk.count(b"\n", 0, at) + 1, byte
                ) from None
        self.newlines += chunk.count(b"\n")

    def close(self) -> None:
        pending = self._decoder.getstate()[0]
        if pending:
            raise utf8_error(self.label, self.newlines + 1, pending[0])


class LineCeiling:
    """The line limit, checked on bytes fed chunk by chunk (no line is decoded or kept).

    :meth:`feed` answers the offset, in the whole input, of the first line that runs past
    ``limit`` bytes (its newline not counted), or None. It looks at the bytes in windows of
    at most ``limit`` bytes -- a line longer than the limit spans a whole window without a
    newline, or reaches from one window into the next -- with two searches per window, for
    the first and the last newline: about two ``memchr`` per ``limit`` bytes, whatever the
    text holds.

    >>> check = LineCeiling(8)
    >>> check.feed(b"short\\nlines\\n"), check.feed(b"and then a long one\\n")
    (None, 12)
    """

    def __init__(self, limit: int):
        self.limit = max(int(limit), 1)
        self.fed = 0  # bytes fed so far
        self.line_start = 0  # offset of the line in progress

    def feed(self, data, start: int = 0, end: int | None = None) -> int | None:
        end = len(data) if end is None else end
        limit = self.limit
        at = start
        while at < end:
            stop = min(at + limit, end)
            first = data.find(b"\n", at, stop)
            if first < 0:
                if self.fed + stop - at - self.line_start > limit:
                    return self.line_start
            else:
                if self.fed + first - at - self.line_start > limit:
                    return self.line_start
                last = data.rfind(b"\n", first, stop)
                self.line_start = self.fed + last + 1 - at
                if self.fed + stop - at - self.line_start > limit:
                    return self.line_start
            self.fed += stop - at
            at = stop
        return None


class JsonDepth:
    """The deepest nesting of JSON text fed chunk by chunk, brackets inside strings not
    counted (a quote after an odd run of backslashes does not end or start a string; a
    backslash outside a string is invalid JSON, which the parser refuses where it
    stands): answers
    whether the depth went past ``limit`` before the text is parsed. numpy over each chunk:
    a few passes of its bytes, no Python step per byte.

    >>> d = JsonDepth(4)
    >>> d.feed(b'{"a": [1, "]]]]", {"b": '), d.feed(b'[2]}]}'), d.deepest
    (False, False, 4)
    >>> JsonDepth(3).feed(b'[[[["\\\\"]]]]'), JsonDepth(3).feed(b'[[["\\\\"]]]')
    (True, False)
    """

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.depth = 0
        self.deepest = 0
        self.in_string = False
        self.backslashes = 0  # the run of backslashes that ended the previous chunk

    def feed(self, chunk: bytes | memoryview) -> bool:
        a = np.frombuffer(chunk, dtype=np.uint8)
        if not len(a):
            return self.deepest > self.limit
        idx = np.arange(len(a), dtype=np.int64)
        is_bs = a == 92
        # the backslashes right before each byte: the run ending at i - 1
        last_other = np.maximum.accumulate(np.where(is_bs, -1, idx))
        run_before = np.empty(len(a), dtype=np.int64)
        run_before[0] = self.backslashes
        prev_last = last_other[:-1]
        run_before[1:] = np.where(
            prev_last >= 0, idx[1:] - 1 - prev_last, idx[1:] + self.backslashes
        )
        quotes = (a == 34) & (run_before % 2 == 0)
        toggles = np.cumsum(quotes)
        # inside a string at byte i: an odd number of quotes before it (this one excluded)
        inside = ((toggles - quotes) + self.in_string) % 2 == 1
        delta = ((a == 91) | (a == 123)).astype(np.int64) - ((a == 93) | (a == 125))
        delta[inside | quotes] = 0
        depths = self.depth + np.cumsum(delta)
        self.deepest = max(self.deepest, int(depths.max()))
        self.depth = int(depths[-1])
        self.in_string = bool((self.in_string + int(toggles[-1])) % 2)
        tail = int(last_other[-1])
        self.backslashes = len(a) - 1 - tail if tail >= 0 else self.backslashes + len(a)
        return self.deepest > self.limit


# -- the checks of a whole input ------------------------------------------------------


def line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, offset) + 1


def check_text(raw: RawData, *, sample: int | None = None, lines: bool = True) -> None:
    """Refuse binary junk (NUL bytes), UTF-16/32, non-UTF-8 text and a line past the line
    limit, naming the line.

    Only the first ``sample`` bytes are checked when given (the fast path checks the
    rest through pyarrow's own UTF-8 validation, and the lines as it reads them). The line
    is counted in the bytes already looked at: a NUL at the start of a huge file costs no
    more than the sample. Checked whole, the lines are measured before the data is read
    into memory (:func:`check_lines`): a file of one 500 MB line is refused without
    loading it. ``lines`` False leaves the lines alone (a JSON document may be one line).
    """
    if sample is None and lines:
        check_lines(raw)
    if raw.text_checked and (sample is None or not lines):
        return
    data = raw.data if sample is None else raw.head(sample)
    if sample is not None and lines:
        long = LineCeiling(raw.limits.line_bytes).feed(data)
        if long is not None:
            raise over_line(raw.name, line_of_offset(data, long), raw.limits.line_bytes)
        if raw.text_checked:
            return
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


def check_lines(raw: RawData, chunk: int = 1 << 23) -> None:
    """Refuse ``raw`` at its first line past the line limit: the bytes are scanned in
    place (a file in chunks into one reused buffer, never loaded whole) with two searches
    per ``limit`` bytes (:class:`~metrics_core.io.text_check.LineCeiling`)."""
    limit = raw.limits.line_bytes
    ceiling = LineCeiling(limit)
    if raw.path is None or raw._data is not None:
        long = ceiling.feed(raw.data)
        if long is not None:
            raise over_line(raw.name, line_of_offset(raw.data, long), limit)
        return
    buf = bytearray(chunk)
    with open(raw.path, "rb", buffering=0) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                return
            long = ceiling.feed(buf, 0, n)
            if long is not None:
                raise over_line(raw.name, line_in_file(raw.path, long), limit)


def check_json(data, source: str, limits: Limits) -> None:
    """Refuse JSON text (``data``: bytes, JSON or JSON Lines) larger than the JSON limit
    (:attr:`~metrics_core.io.limits.Limits.json_bytes`) or nested deeper than the depth
    limit, before it is parsed: the depth is scanned 1 MiB at a time
    (:class:`~metrics_core.io.text_check.JsonDepth`)."""
    if len(data) > limits.json_bytes:
        raise InputError(
            N_(
                "the JSON text takes {size}, above the JSON limit of {limit} (an eighth of "
                "the input limit: parsed, JSON takes about eight times its text)"
            ),
            source=source,
            hint=N_("Give the table as CSV or Parquet, or raise limits=Limits(max_input_mb=...)"),
            plain_hint=N_("Give the table as CSV or Parquet"),
            field="max_input_mb",
            params={"size": size_words(len(data)), "limit": size_words(limits.json_bytes)},
        )
    depth = JsonDepth(limits.max_json_depth)
    view = memoryview(data)
    step = _CHUNK // 4  # numpy's temporaries: a few int64 arrays of a step each
    for at in range(0, len(data), step):
        if depth.feed(view[at : at + step]):
            raise over_depth(source, limits.max_json_depth)


def line_in_file(path: str, offset: int, chunk: int = 1 << 23) -> int:
    """The 1-based line of byte ``offset`` of the file at ``path`` (newlines counted in
    chunks)."""
    count, left = 0, offset
    buf = bytearray(chunk)
    with open(path, "rb", buffering=0) as fh:
        while left > 0:
            n = fh.readinto(memoryview(buf)[: min(chunk, left)])
            if not n:
                break
            count += buf.count(b"\n", 0, n)
            left -= n
    return count + 1


def text_lines(raw: RawData):
    """Decoded lines with their 1-based numbers (strict UTF-8)."""
    check_text(raw)
    text = raw.data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return enumerate(io.StringIO(text, newline=None), start=1)


__all__ = [
    "JsonDepth",
    "check_json",
    "check_lines",
    "check_text",
    "line_in_file",
    "line_of_offset",
    "text_lines",
    "LineCeiling",
    "TextCheck",
    "encoding_error",
    "nul_error",
    "text_encoding_problem",
    "utf8_error",
]
