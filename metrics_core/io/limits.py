"""How much a reader will decode: the limits every reader checks before it decodes.

A small file can stand for a huge amount of data (a compressed stream of repeated lines, a
Parquet dictionary that each row repeats, a ``.npy`` header, one line of 500 MB). Every
reader of :mod:`metrics_core.io` -- runs and qrels (TREC, CSV/TSV, JSON/JSONL, Parquet),
scores and candidate tables, query metadata, click logs, hash codes (``.npy``, ``.npz``,
torch ``.pt``) and history files -- measures what it is about to decode and refuses, with
one :class:`~metrics_core.errors.InputError` naming the file, what is too large and the
limit, before it decodes it:

========================  ==========  ==========================================================
limit                     default     what it bounds
========================  ==========  ==========================================================
``max_input_mb``          1024        the data of one input held at once: a file read whole,
                                      what a compressed stream or a zip member decodes to
                                      (counted while it is decoded, 1 MiB at a time), a
                                      Parquet table once decoded (its metadata and its
                                      dictionaries read first), an array's shape x dtype (read
                                      from its header); JSON text takes 1/8 of it (Python's
                                      objects take about 8 times the text)
``max_line_kb``           1024        the longest line of a text input (TREC, CSV/TSV, JSON
                                      Lines, a table of codes), checked on the bytes before
                                      they are decoded
``max_field_kb``          64          the longest single value: an id, a table cell, a text
                                      of a Parquet or JSON file
``max_json_depth``        100         how deeply JSON may nest (scanned before it is parsed)
========================  ==========  ==========================================================

Raise them for one call (``limits=Limits(max_input_mb=4096)`` on the readers,
:func:`metrics_core.evaluate` and :func:`metrics_core.evaluate_many`), for a block of code
(``with using_limits(Limits(...)):``, as an application does with its own memory budget),
for a process (the environment variables ``RANKLAB_MAX_INPUT_MB``, ``RANKLAB_MAX_LINE_KB``,
``RANKLAB_MAX_FIELD_KB``, ``RANKLAB_MAX_JSON_DEPTH``), or on the command line
(``--max-input-mb``, ``--max-line-kb``). A run file read in blocks (the streamed path) is not
held at once: only its blocks are bounded.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

from metrics_core.errors import N_, InputError, Phrase

MIB = 1 << 20
KIB = 1 << 10

#: The environment variables of the process-wide defaults (numbers; MB = MiB, KB = KiB).
ENV = {
    "max_input_mb": "RANKLAB_MAX_INPUT_MB",
    "max_line_kb": "RANKLAB_MAX_LINE_KB",
    "max_field_kb": "RANKLAB_MAX_FIELD_KB",
    "max_json_depth": "RANKLAB_MAX_JSON_DEPTH",
}
#: The former variable of the input limit, in bytes (still read when the new one is unset).
LEGACY_INPUT_BYTES_ENV = "RANKLAB_MAX_INPUT_BYTES"


@dataclass(frozen=True)
class Limits:
    """What one reader will decode (see the module's table).

    Parameters
    ----------
    max_input_mb : float
        MiB of data one input may hold at once once decoded.
    max_line_kb : float
        KiB of the longest line of a text input.
    max_field_kb : float
        KiB of the longest single value (id, cell, text).
    max_json_depth : int
        Deepest nesting of a JSON document.

    Examples
    --------
    >>> Limits().input_bytes, Limits(max_input_mb=0.5).input_bytes
    (1073741824, 524288)
    >>> Limits(max_line_kb=2).line_bytes, Limits().json_bytes
    (2048, 134217728)
    """

    max_input_mb: float = 1024
    max_line_kb: float = 1024
    max_field_kb: float = 64
    max_json_depth: int = 100

    def __post_init__(self):
        for name in ("max_input_mb", "max_line_kb", "max_field_kb", "max_json_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise InputError(
                    N_("{name} must be a positive number, not {value}"),
                    hint=N_("e.g. Limits(max_input_mb=2048)"),
                    field=name,
                    params={"name": name, "value": repr(value)},
                )

    @property
    def input_bytes(self) -> int:
        return int(self.max_input_mb * MIB)

    @property
    def line_bytes(self) -> int:
        return int(self.max_line_kb * KIB)

    @property
    def field_bytes(self) -> int:
        return int(self.max_field_kb * KIB)

    @property
    def json_bytes(self) -> int:
        """The most text of a JSON document: 1/8 of the input limit (once parsed, Python's
        dictionaries, lists and strings take about eight times their text)."""
        return self.input_bytes // 8

    def with_input_bytes(self, n: int | None) -> Limits:
        """These limits with the input limit set to ``n`` bytes (None: unchanged)."""
        return self if n is None else replace(self, max_input_mb=max(int(n), 1) / MIB)

    @classmethod
    def from_env(cls, environ=None) -> Limits:
        """The defaults, changed by the environment variables of :data:`ENV`."""
        environ = os.environ if environ is None else environ
        given: dict = {}
        for name, var in ENV.items():
            text = environ.get(var)
            if text:
                given[name] = _env_number(var, text, integer=name == "max_json_depth")
        if "max_input_mb" not in given and environ.get(LEGACY_INPUT_BYTES_ENV):
            text = environ[LEGACY_INPUT_BYTES_ENV]
            given["max_input_mb"] = max(_env_number(LEGACY_INPUT_BYTES_ENV, text, True), 1) / MIB
        return cls(**given)


def _env_number(var: str, text: str, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        value = 0
    if not value > 0 or value != value:
        raise InputError(
            N_("the environment variable {var} is {value}, not a positive number"),
            params={"var": var, "value": repr(text)},
        )
    return value


_CURRENT: contextvars.ContextVar[Limits | None] = contextvars.ContextVar(
    "ranklab_limits", default=None
)


def current_limits() -> Limits:
    """The limits in force: those of the innermost :func:`using_limits`, else the
    environment's (:meth:`Limits.from_env`)."""
    limits = _CURRENT.get()
    return limits if limits is not None else Limits.from_env()


@contextlib.contextmanager
def using_limits(limits: Limits | None) -> Iterator[Limits]:
    """Every reader called inside the block (in this thread or task) checks ``limits``
    (None: the limits in force stay).

    >>> with using_limits(Limits(max_input_mb=8)):
    ...     current_limits().max_input_mb
    8
    """
    if limits is None:
        yield current_limits()
        return
    token = _CURRENT.set(limits)
    try:
        yield limits
    finally:
        _CURRENT.reset(token)


def resolve(limits: Limits | None = None, max_bytes: int | None = None) -> Limits:
    """``limits`` (default: :func:`current_limits`), its input limit replaced by
    ``max_bytes`` when given (the readers' older keyword)."""
    return (limits if limits is not None else current_limits()).with_input_bytes(max_bytes)


# -- the refusals ----------------------------------------------------------------------

#: Advice of every refusal: how to raise the limit, in the library's words (the command
#: line shows its flags) and in an application's.
RAISE_INPUT = N_("Split the input, or raise the limit: limits=Limits(max_input_mb=...)")
RAISE_LINE = N_(
    "A file with lines this long is not a run, a table or a list of codes; "
    "raise the limit with limits=Limits(max_line_kb=...) if it is"
)
PLAIN_SPLIT = N_("Split the file, or read it with the command line, which can raise the limit")


def size_words(n: int) -> str:
    """A byte count as a limit is stated: in MiB or KiB (one decimal, none when whole), or
    bytes.

    >>> size_words(1 << 30), size_words(4_800_000), size_words(65536), size_words(1000)
    ('1,024 MiB', '4.6 MiB', '64 KiB', '1,000 bytes')
    """
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if n >= unit:
            text = f"{n / unit:,.1f}"
            return f"{text[:-2] if text.endswith('.0') else text} {name}"
    return f"{n:,} bytes"


def over_input(source: str, what: str, size: int | None, limit: int) -> InputError:
    """``source``: ``what`` (a :class:`Phrase`) takes more than the input limit."""
    if size is None:
        return InputError(
            N_("{what} is larger than the input limit of {limit}"),
            source=source,
            hint=RAISE_INPUT,
            plain_hint=PLAIN_SPLIT,
            field="max_input_mb",
            params={"what": what, "limit": size_words(limit)},
        )
    return InputError(
        N_("{what} takes {size}, above the input limit of {limit}"),
        source=source,
        hint=RAISE_INPUT,
        plain_hint=PLAIN_SPLIT,
        field="max_input_mb",
        params={"what": what, "size": size_words(size), "limit": size_words(limit)},
    )


def over_line(source: str, line: int | None, limit: int) -> InputError:
    """``source``, line ``line``: a line longer than the line limit."""
    return InputError(
        N_("a line longer than the line limit of {limit}"),
        source=source,
        line=line,
        hint=RAISE_LINE,
        plain_hint=N_("A file with lines this long is not a run, a table or a list of codes"),
        field="max_line_kb",
        params={"limit": size_words(limit)},
    )


def over_field(source: str, what: str, size: int, limit: int) -> InputError:
    """``source``: a value (``what``) longer than the field limit."""
    return InputError(
        N_("a {what} of {size}, above the field limit of {limit}"),
        source=source,
        hint=N_(
            "Ids and cells are short texts; raise the limit with limits=Limits(max_field_kb=...)"
        ),
        plain_hint=N_("Ids and cells are short texts: this file holds something else"),
        field="max_field_kb",
        params={"what": what, "size": size_words(size), "limit": size_words(limit)},
    )


def over_depth(source: str, limit: int) -> InputError:
    """``source``: JSON nested deeper than the depth limit."""
    return InputError(
        N_("JSON nested more than {limit} levels deep"),
        source=source,
        hint=N_("A table is a list of flat row objects, or {{qid: {{docid: value}}}}"),
        field="max_json_depth",
        params={"limit": limit},
    )


WORDS = {
    "file": Phrase(N_("the file")),
    "stream": Phrase(N_("the stream")),
    "data": Phrase(N_("the data")),
    "json": Phrase(N_("the JSON text")),
}

__all__ = [
    "ENV",
    "Limits",
    "current_limits",
    "over_depth",
    "over_field",
    "over_input",
    "over_line",
    "resolve",
    "size_words",
    "using_limits",
]
