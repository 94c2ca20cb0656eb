"""The checks that decide whether bytes are text RankLab reads: the encoding of the first bytes,
NUL bytes and UTF-8, each refusal naming the file and the line. :class:`TextCheck` runs them on
decompressed output piece by piece, as it comes out (a bomb is refused at its first piece);
:func:`metrics_core.io.source.check_text` on a whole input."""

from __future__ import annotations

import codecs

from metrics_core.errors import N_, InputError


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


__all__ = ["TextCheck", "encoding_error", "nul_error", "text_encoding_problem", "utf8_error"]
