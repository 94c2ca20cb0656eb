"""What kind of file this is: one sniffing rule for every reader.

Content first (magic bytes: Parquet, NumPy ``.npy``, a zip archive such as torch's ``.pt``),
then the name's extension (after a compression suffix), then the text itself (a JSON
array or object, JSON Lines, tab- or comma-separated). Compression is recognised earlier,
by :mod:`metrics_core.io.source`, also by content. Whether a text file is a TREC run or
qrels depends on what is being read, and is decided by :mod:`metrics_core.io`.

>>> from metrics_core.io.source import read_source
>>> sniff_format(read_source(b"PAR1....", "scores.csv"))
'parquet'
>>> sniff_format(read_source(b'{"q": 1}\\n{"q": 2}\\n', "log"))
'jsonl'
>>> sniff_format(read_source(b"query\\tcategory\\nq1\\ta\\n", "meta.txt"))
'tsv'
"""

from __future__ import annotations

from metrics_core.io.source import PARQUET_MAGIC, RawData

#: every format a sniff can give
SNIFFED_FORMATS = ("parquet", "npy", "pt", "jsonl", "json", "tsv", "csv")

_BY_EXTENSION = {".parquet": "parquet", ".pq": "parquet", ".npy": "npy", ".pt": "pt", ".pth": "pt",
                 ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".tsv": "tsv", ".tab": "tsv",
                 ".csv": "csv"}


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
