"""What kind of file this is: one sniffing rule for every reader.

Content first (magic bytes: Parquet, NumPy ``.npy``, a zip archive such as torch's ``.pt``),
then the name's extension (after a compression suffix), then the text itself (a JSON
array or object, JSON Lines, tab- or comma-separated). Compression is recognised earlier,
by :mod:`metrics_core.io.source`, also by content. Whether a text file is a TREC run or
qrels, or an MS MARCO run, depends on what is being read: :func:`is_trec`,
:func:`is_msmarco_run` (the whole-file readers of :mod:`metrics_core.io` and the streamed
ones of :mod:`metrics_core.scale` both ask here).

>>> from metrics_core.io.source import read_source
>>> sniff_format(read_source(b"PAR1....", "scores.csv"))
'parquet'
>>> sniff_format(read_source(b'{"q": 1}\\n{"q": 2}\\n', "log"))
'jsonl'
>>> sniff_format(read_source(b"query\\tcategory\\nq1\\ta\\n", "meta.txt"))
'tsv'
"""

from __future__ import annotations

import numpy as np

from metrics_core.io.columns import is_table_header
from metrics_core.io.source import PARQUET_MAGIC, RawData
from metrics_core.io.trec import columns_of, value_column
from metrics_core.validation import parse_number

#: every format a sniff can give
SNIFFED_FORMATS = ("parquet", "npy", "pt", "jsonl", "json", "tsv", "csv")

_BY_EXTENSION = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
    ".pt": "pt",
    ".pth": "pt",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
}


def sniff_format(raw: RawData) -> str:
    """The format of ``raw``: content, then extension, then the text's shape."""
    head = raw.head(8)
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK\x03\x04"):
        return "pt"
    by_name = _BY_EXTENSION.get(raw.extension)
    if by_name is not None:
        return by_name
    text = raw.head(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith((b"[", b"{")):
        first = text.split(b"\n", 1)[0].strip()
        if first.startswith(b"{") and first.endswith(b"}") and b"\n" in text:
            return "jsonl"
        return "json"
    first = text.split(b"\n", 1)[0]
    return "tsv" if first.count(b"\t") > first.count(b",") else "csv"


def table_format(raw: RawData) -> str:
    """The table format of ``raw`` (:func:`sniff_format`; CSV for what is not a table)."""
    fmt = sniff_format(raw)
    return fmt if fmt in ("parquet", "jsonl", "json", "tsv", "csv") else "csv"


def input_format(raw: RawData, kind: str, fmt: str = "auto") -> str:
    """How a run or qrels file is read: ``"msmarco"`` (a run of ``qid pid rank`` lines),
    ``"trec"``, or a table format (``"csv"``, ``"tsv"``, ``"parquet"``, ``"json"``,
    ``"jsonl"``). ``fmt`` is the caller's choice ("auto": recognised here); MS MARCO qrels
    are TREC qrels. The one dispatch of every reader of runs and qrels: whole
    (:func:`metrics_core.io.read_run`), in batches (:func:`metrics_core.io.open_run_stream`)
    and cut into Dask units (:func:`metrics_core.scale.units.plan_units`).

    >>> from metrics_core.io.source import read_source
    >>> input_format(read_source(b"q1 Q0 d1 1 2.5 bm25\\n"), "run")
    'trec'
    >>> input_format(read_source(b"1 7 1\\n1 9 2\\n"), "run"), input_format(read_source(b"x"), "qrels", "msmarco")
    ('msmarco', 'trec')
    >>> input_format(read_source(b"query_id,doc_id,score\\nq1,d1,2\\n", "run.csv"), "run")
    'csv'
    """
    if fmt == "msmarco" or (fmt == "auto" and kind == "run" and is_msmarco_run(raw)):
        return "msmarco" if kind == "run" else "trec"
    if fmt == "trec" or (fmt == "auto" and is_trec(raw, kind)):
        return "trec"
    return table_format(raw) if fmt == "auto" else fmt


def is_msmarco_run(raw: RawData) -> bool:
    """A text file whose first data line is ``qid pid rank`` and not a table header."""
    if (
        raw.extension in (".csv", ".parquet", ".pq", ".json", ".jsonl", ".ndjson")
        or raw.head(4) == b"PAR1"
    ):
        return False
    if raw.head(4096).lstrip()[:1] in (b"{", b"["):
        return False
    return looks_like_msmarco_run(raw) and not is_table_header(b" ".join(first_data_fields(raw)))


def is_trec(raw: RawData, kind: str) -> bool:
    if raw.extension in (".parquet", ".pq", ".json", ".jsonl", ".ndjson"):
        return False
    if raw.head(4) == b"PAR1":
        return False
    head = raw.head(4096).lstrip()
    first = next(
        (line for line in head.split(b"\n") if line.strip() and not line.startswith(b"#")), b""
    )
    if raw.extension in (".csv", ".tsv"):
        # a table, unless headerless with the TREC shape (MS MARCO's qrels.dev.tsv)
        return not is_table_header(first) and looks_like_trec(raw, kind)
    if looks_like_trec(raw, kind):
        return True
    if head[:1] in (b"{", b"["):
        return False
    if is_table_header(first):
        return False
    # No recognisable table header: a line of whitespace-separated fields (even with a
    # value that is not a number) is TREC, so the error names that line and value
    fields = first.split()
    if len(fields) >= 4:
        return True
    return b"," not in first


def first_data_fields(raw: RawData) -> list[bytes]:
    """The whitespace-separated fields of the first line that is not blank or a comment."""
    for line in raw.head(65536).splitlines():
        s = line.strip()
        if s and not s.startswith(b"#"):
            return s.split()
    return []


def looks_like_msmarco_run(raw: RawData) -> bool:
    """Whether the first data line is ``qid pid rank``: three fields, the last a whole number."""
    parts = first_data_fields(raw)
    if len(parts) != 3:
        return False
    try:
        rank = parse_number(parts[2].decode("ascii"))
    except UnicodeDecodeError:
        return False
    return (
        rank is not None
        and bool(np.isfinite(rank))
        and rank == int(rank)
        and b"," not in b"".join(parts)
    )


def looks_like_trec(raw: RawData, kind: str) -> bool:
    """Whether the first data line has the shape of a TREC ``kind`` line."""
    for line in raw.head(65536).splitlines():
        s = line.strip()
        if not s or s.startswith(b"#"):
            continue
        parts = s.split()
        ncols, vcol = columns_of(kind), value_column(kind)
        # a comma is allowed (document ids may hold one); a CSV line has no whitespace
        # between its fields, so it does not split into enough columns
        if len(parts) < ncols:
            return False
        try:
            return parse_number(parts[vcol].decode("ascii")) is not None
        except UnicodeDecodeError:
            return False
    return False
