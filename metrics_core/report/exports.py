"""Tables for people and papers: exports with provenance.

Every export states the RankLab version and the conventions it was computed with, where
the format has room for it outside the table: Markdown and the plain table as a footnote
line, LaTeX as ``%`` comments, JSON as keys. A CSV file is the table only (one header line,
no comment lines a spreadsheet would read as rows): its provenance is
:func:`provenance_json`, offered as a second download by the app and written beside the file
as ``FILE.provenance.json`` by :func:`write_export` (the command line's ``-o FILE.csv``).

Cells print through :mod:`metrics_core.report.cells`: a missing value is an en dash, a small
p-value ``< 0.0001`` (:func:`format_p`), a CSV number its shortest round-trip text.
"""

from __future__ import annotations

import errno
import io
import json
import math
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from metrics_core._version import __version__
from metrics_core.report.cells import (
    csv_number,
    format_cell,
    format_p,
    is_p_column,
    latex_cell,
    latex_text,
    markdown_escape,
    short_caption,
)

TABLE_FORMATS = ("table", "csv", "json", "markdown", "latex")
#: Suffix of the provenance file written beside a CSV export (:func:`write_export`).
SIDECAR_SUFFIX = ".provenance.json"


def provenance(conventions=None, **extra) -> dict:
    """``{"ranklab_version": ..., "conventions": {...}, **extra}`` for an output."""
    out: dict = {"ranklab_version": __version__}
    if conventions is not None:
        out["conventions"] = (
            conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions)
        )
    out.update(extra)
    return out


def provenance_line(prov: Mapping | None) -> str:
    """The provenance as one line: ``RankLab VERSION; conventions: k=v, ...; key: value``.

    >>> provenance_line({"ranklab_version": "1.0", "conventions": {"ties": "trec_eval"}, "seed": 0})
    'RankLab 1.0; conventions: ties=trec_eval; seed: 0'
    """
    if not prov:
        return f"RankLab {__version__}"
    parts = [f"RankLab {prov.get('ranklab_version', __version__)}"]
    conv = prov.get("conventions")
    if conv:
        parts.append("conventions: " + ", ".join(f"{k}={v}" for k, v in conv.items()))
    for k, v in prov.items():
        if k not in ("ranklab_version", "conventions"):
            parts.append(f"{k}: {v}")
    return "; ".join(parts)


def provenance_json(prov: Mapping | None = None, title: str | None = None, **extra) -> str:
    """The provenance of an export as JSON text: what a CSV file cannot hold.

    ``{"provenance": {...}, "title": ..., **extra}`` (the same ``provenance`` object as the
    JSON export), indented; the app offers it as a second download beside a CSV, and
    :func:`write_export` writes it to ``FILE.csv.provenance.json``.

    >>> print(provenance_json({"ranklab_version": "1.0"}, "Leaderboard"))
    {
      "provenance": {
        "ranklab_version": "1.0"
      },
      "title": "Leaderboard"
    }
    """
    out = {"provenance": json_safe(dict(prov or provenance())), "title": title}
    out.update(json_safe(dict(extra)))
    return json.dumps(out, indent=2, ensure_ascii=False)


def _fmt_value(v, digits: int) -> str:
    return format_cell(v, digits)


def json_safe(obj):
    """Convert numpy scalars/arrays and NaN into JSON-friendly values (NaN -> None)."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def _one_line(text: str) -> str:
    return str(text).replace("\r", " ").replace("\n", " ")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: A signed decimal number in ASCII (what a spreadsheet reads as a number, not a formula).
_SIGNED_NUMBER = re.compile(r"[+-](?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def csv_safe(value):
    """A CSV cell that a spreadsheet will not run as a formula: text starting with
    ``=``, ``+``, ``-`` (when not a number), ``@``, a tab or a carriage return gets a
    leading ``'`` (OWASP's CSV-injection rule). Numbers pass unchanged.

    >>> csv_safe("=HYPERLINK(1)"), csv_safe("-0.5"), csv_safe("-x"), csv_safe(3.5)
    ("'=HYPERLINK(1)", '-0.5', "'-x", 3.5)
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    if value[0] in "+-" and _SIGNED_NUMBER.fullmatch(value):
        return value
    return "'" + value


def _csv(frame: pd.DataFrame) -> str:
    """One header line and the rows: numbers in shortest round-trip form, a missing value
    empty, text that a spreadsheet would run as a formula quoted (:func:`csv_safe`)."""
    import pandas as pd

    buf = io.StringIO()
    safe = frame.rename(columns=lambda c: csv_safe(str(c))).copy()
    for c in safe.columns:
        col = safe[c]
        if pd.api.types.is_float_dtype(col):
            safe[c] = col.map(csv_number).astype(object)
        elif col.dtype == object or pd.api.types.is_string_dtype(col):
            safe[c] = col.map(lambda v: csv_safe(csv_number(v)))
    safe.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def _latex(cols: list[str], rows: list[list[str]], title: str | None, line: str) -> str:
    caption, note = short_caption(title) if title else ("", "")
    out = [
        f"% {_one_line(line)}",
        r"% needs \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
    ]
    if caption:
        out.append(r"\caption{" + latex_text(caption) + "}")
    out += [
        r"\begin{tabular}{l" + "r" * (len(cols) - 1) + "}",
        r"\toprule",
        " & ".join(latex_text(c) for c in cols) + r" \\",
        r"\midrule",
    ]
    for r in rows:
        out.append(" & ".join(latex_cell(c) for c in r) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    if note:
        out.append(r"\par\smallskip{\footnotesize " + latex_text(note) + "}")
    out.append(r"\end{table}")
    return "\n".join(out)


def format_table(
    df: pd.DataFrame,
    fmt: str = "table",
    *,
    prov: Mapping | None = None,
    digits: int = 4,
    title: str | None = None,
    index: bool = True,
) -> str:
    """Render a DataFrame as ``table`` (plain text), ``csv``, ``json``, ``markdown`` or ``latex``.

    Parameters
    ----------
    df : DataFrame
    fmt : {"table", "csv", "json", "markdown", "latex"}
    prov : mapping, optional
        :func:`provenance` (default: the version only).
    digits : int
        Decimals of the numbers in ``table``, ``markdown`` and ``latex``.
    title : str, optional
        The table's name, optionally followed by its legend ("Leaderboard. ★ best ...").
    index : bool
        Write a named or non-range index as the first columns.

    Returns
    -------
    str
        * ``csv``: one header line and the rows only, no comment lines (the provenance and
          the title are :func:`provenance_json`); numbers in shortest round-trip form
          (``0.2``), a missing value empty.
        * ``json``: ``{"provenance", "title", "rows"}`` with full precision, NaN as null.
        * ``markdown`` / ``table``: the title, the table, the provenance line.
        * ``latex``: a booktabs ``table`` (``\\usepackage{booktabs}``), ASCII only so
          pdflatex compiles it; the caption is the title's first sentence, the rest of the
          title a footnote-size note under the table; markers (★ † ‡ ``*``) at the end of
          a cell in superscript, a ★ cell bold; the provenance in ``%`` comments.

        A missing value prints as an en dash (``--`` in LaTeX) in every format but CSV and
        JSON; never "nan" or "None". A p-value column (:func:`is_p_column`) prints with
        :func:`format_p` (``< 0.0001``).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"nDCG@10": [0.51234, float("nan")]}, index=pd.Index(["bm25", "x"], name="run"))
    >>> print(format_table(df, "markdown", prov={"ranklab_version": "0.1.0"}))
    | run | nDCG@10 |
    |---|---|
    | bm25 | 0.5123 |
    | x | – |
    <BLANKLINE>
    _RankLab 0.1.0_
    >>> print(format_table(pd.DataFrame({"run": ["a", "b"], "p": [0.2, float("nan")]}), "csv"), end="")
    run,p
    a,0.2
    b,
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; accepted: {', '.join(TABLE_FORMATS)}")
    import pandas as pd

    frame = (
        df.reset_index()
        if index and (df.index.name or not isinstance(df.index, pd.RangeIndex))
        else df
    )
    line = provenance_line(prov)
    if fmt == "csv":
        return _csv(frame)
    if fmt == "json":
        records = [json_safe(r) for r in frame.to_dict(orient="records")]
        return json.dumps(
            {"provenance": json_safe(dict(prov or provenance())), "title": title, "rows": records},
            indent=2,
        )
    cols = [str(c) for c in frame.columns]
    p_cols = [is_p_column(c) for c in cols]
    rows = [
        [
            format_p(v, digits) if is_p and not isinstance(v, str) else _fmt_value(v, digits)
            for v, is_p in zip(r, p_cols, strict=True)
        ]
        for r in frame.itertuples(index=False, name=None)
    ]
    if fmt == "markdown":
        out = []
        if title:
            out.append(f"**{markdown_escape(title)}**\n")
        out.append("| " + " | ".join(markdown_escape(c) for c in cols) + " |")
        out.append("|" + "---|" * len(cols))
        for r in rows:
            out.append("| " + " | ".join(markdown_escape(c) for c in r) + " |")
        out.append("")
        out.append(f"_{markdown_escape(line)}_")
        return "\n".join(out)
    if fmt == "latex":
        return _latex(cols, rows, title, line)
    # plain text table
    widths = [
        max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)
    ]
    head = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=False))
    body = [
        "  ".join((r[i].rjust(w) if i else r[i].ljust(w)) for i, w in enumerate(widths))
        for r in rows
    ]
    out = (
        ([title] if title else []) + [head, "  ".join("-" * w for w in widths)] + body + ["", line]
    )
    return "\n".join(out)


def sidecar_path(path: str) -> str:
    """Where :func:`write_export` puts a CSV's provenance: ``PATH.provenance.json``.

    >>> sidecar_path("runs.csv")
    'runs.csv.provenance.json'
    """
    return str(path) + SIDECAR_SUFFIX


def write_export(
    text: str, path: str | None, fmt: str, prov: Mapping | None = None, title: str | None = None
) -> str | None:
    """Write an export like :func:`write_text`; a CSV written to a file also gets its
    provenance beside it (:func:`sidecar_path`, :func:`provenance_json`), since the CSV
    itself has no comment lines. Returns the sidecar's path, or None (stdout, or not CSV).
    """
    write_text(text, path)
    if fmt != "csv" or path in (None, "-"):
        return None
    side = sidecar_path(path)
    write_text(provenance_json(prov, title), side)
    return side


def write_text(text: str, path: str | None = None) -> None:
    """Write to ``path``, or to stdout when ``path`` is None or ``-``.

    A failed write (missing folder, permission, a full disk, an I/O error) is an
    :class:`~metrics_core.errors.InputError` naming the output.
    """
    from metrics_core.errors import N_, InputError

    text = text if text.endswith("\n") else text + "\n"
    if path in (None, "-"):
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise InputError(
                N_("cannot write the output ({reason})"),
                source="<stdout>",
                hint=N_("Check the disk, or write with -o FILE"),
                params={"reason": exc.strerror or type(exc).__name__},
            ) from None
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        reason = {
            errno.ENOENT: "the folder does not exist",
            errno.EACCES: "permission denied",
            errno.ENOSPC: "no space left on the device",
            errno.EIO: "an input/output error",
            errno.EISDIR: "it is a folder",
            errno.EROFS: "a read-only file system",
        }.get(exc.errno or 0, exc.strerror or type(exc).__name__)
        raise InputError(
            N_("cannot write the output ({reason})"),
            source=str(path),
            hint=N_("Choose another output path (-o) or free some space"),
            params={"reason": reason},
        ) from None
