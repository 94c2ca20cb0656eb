"""Tables for people and papers: interpretation labels and exports with provenance.

Every export states the RankLab version and the conventions it was computed with:
CSV as leading ``#`` lines, Markdown as a footnote line, LaTeX as ``%`` comments and a
caption note, JSON as keys.
"""

from __future__ import annotations

import errno
import io
import json
import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from metrics_core import __version__

FORMATS = ("table", "csv", "json", "markdown", "latex")


def provenance(conventions=None, **extra) -> dict:
    """``{"ranklab_version": ..., "conventions": {...}, **extra}`` for an output."""
    out = {"ranklab_version": __version__}
    if conventions is not None:
        out["conventions"] = conventions.as_dict() if hasattr(conventions, "as_dict") else dict(conventions)
    out.update(extra)
    return out


def _provenance_line(prov: Mapping | None) -> str:
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


def _fmt_value(v, digits: int) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return "NaN"
        return f"{float(v):.{digits}f}"
    return str(v)


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


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in a cell or header."""
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "\n": " ", "\r": " "}
    return "".join(repl.get(c, c) for c in str(text))


def _one_line(text: str) -> str:
    return str(text).replace("\r", " ").replace("\n", " ")


def markdown_escape(text: str) -> str:
    """Escape a Markdown table cell: HTML is escaped (no tag or entity survives) and the
    brackets of Markdown's links and images are backslash-escaped, so ``<script>`` and
    ``[x](javascript:...)`` stay text; ``|`` and line breaks cannot break the table.

    >>> print(markdown_escape("<b>a|b</b>"))
    &lt;b&gt;a\\|b&lt;/b&gt;
    >>> print(markdown_escape("[x](javascript:alert(1))"))
    \\[x\\](javascript:alert(1))
    """
    import html

    text = html.escape(str(text), quote=False).replace("\r", " ").replace("\n", " ")
    return "".join("\\" + c if c in "\\|[]`" else c for c in text)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value):
    """A CSV cell that a spreadsheet will not run as a formula: text starting with
    ``=``, ``+``, ``-`` (when not a number), ``@``, a tab or a carriage return gets a
    leading ``'`` (OWASP's CSV-injection rule). Numbers pass unchanged.

    >>> csv_safe("=HYPERLINK(1)"), csv_safe("-0.5"), csv_safe("-x"), csv_safe(3.5)
    ("'=HYPERLINK(1)", '-0.5', "'-x", 3.5)
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    if value[0] in "+-":
        from metrics_core.validation import parse_number

        if parse_number(value) is not None and value.strip() == value:
            return value
    return "'" + value


def format_table(df: pd.DataFrame, fmt: str = "table", *, prov: Mapping | None = None,
                 digits: int = 4, title: str | None = None, index: bool = True) -> str:
    """Render a DataFrame as ``table`` (plain text), ``csv``, ``json``, ``markdown`` or ``latex``.

    Numbers are printed with ``digits`` decimals (CSV and JSON keep full precision).
    Provenance (version, conventions) is always included.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"nDCG@10": [0.51234]}, index=pd.Index(["bm25"], name="run"))
    >>> print(format_table(df, "markdown", prov={"ranklab_version": "0.1.0"}))
    | run | nDCG@10 |
    |---|---|
    | bm25 | 0.5123 |
    <BLANKLINE>
    _RankLab 0.1.0_
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; accepted: {', '.join(FORMATS)}")
    import pandas as pd

    frame = df.reset_index() if index and (df.index.name or not isinstance(df.index, pd.RangeIndex)) else df
    line = _provenance_line(prov)
    if fmt == "csv":
        buf = io.StringIO()
        buf.write(f"# {_one_line(line)}\n")
        if title:
            buf.write(f"# {_one_line(title)}\n")
        safe = frame.rename(columns=lambda c: csv_safe(str(c)))
        text_cols = [c for c in safe.columns if safe[c].dtype == object or
                     pd.api.types.is_string_dtype(safe[c])]
        if text_cols:
            safe = safe.copy()
            for c in text_cols:
                safe[c] = safe[c].map(csv_safe)
        safe.to_csv(buf, index=False, float_format="%.17g")
        return buf.getvalue()
    if fmt == "json":
        records = [json_safe(r) for r in frame.to_dict(orient="records")]
        return json.dumps({"provenance": json_safe(dict(prov or provenance())), "title": title,
                           "rows": records}, indent=2)
    cols = [str(c) for c in frame.columns]
    rows = [[_fmt_value(v, digits) for v in r] for r in frame.itertuples(index=False, name=None)]
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
        out = [f"% {line}", r"\begin{table}[t]", r"\centering",
               r"\begin{tabular}{l" + "r" * (len(cols) - 1) + "}", r"\toprule",
               " & ".join(latex_escape(c) for c in cols) + r" \\", r"\midrule"]
        for r in rows:
            out.append(" & ".join(latex_escape(c) for c in r) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
        cap = latex_escape(title) + ". " if title else ""
        out.append(r"\caption{" + cap + latex_escape(line) + "}")
        out.append(r"\end{table}")
        return "\n".join(out)
    # plain text table
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]
    head = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=False))
    body = ["  ".join((r[i].rjust(w) if i else r[i].ljust(w)) for i, w in enumerate(widths)) for r in rows]
    out = ([title] if title else []) + [head, "  ".join("-" * w for w in widths)] + body + ["", line]
    return "\n".join(out)


def write_text(text: str, path: str | None = None) -> None:
    """Write to ``path``, or to stdout when ``path`` is None or ``-``.

    A failed write (missing folder, permission, a full disk, an I/O error) is an
    :class:`~metrics_core.errors.InputError` naming the output.
    """
    from metrics_core.errors import InputError

    text = text if text.endswith("\n") else text + "\n"
    if path in (None, "-"):
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise InputError(f"cannot write the output ({exc.strerror or type(exc).__name__})",
                             source="<stdout>", hint="Check the disk, or write with -o FILE") from None
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        reason = {errno.ENOENT: "the folder does not exist", errno.EACCES: "permission denied",
                  errno.ENOSPC: "no space left on the device", errno.EIO: "an input/output error",
                  errno.EISDIR: "it is a folder", errno.EROFS: "a read-only file system"}.get(
            exc.errno, exc.strerror or type(exc).__name__)
        raise InputError(f"cannot write the output ({reason})", source=str(path),
                         hint="Choose another output path (-o) or free some space") from None


#: Run colours, in run order (colour-blind friendly: blue, orange, teal, red, purple, grey,
#: ochre, pink): the HTML report's and the app's one palette.
PALETTE = ("#3559e0", "#e07a35", "#2a9d8f", "#c0392b", "#8e44ad", "#7f8c8d", "#d4a017", "#d63384")

#: The measures of the interpreted reports (comparative report, history): MRR, nDCG@10, P@5.
REPORT_MEASURES = ("RR", "nDCG@10", "P@5")
# Interpretation labels: a value at or above its threshold is "Good".
DEFAULT_GOOD_THRESHOLDS = {"RR": 0.7, "nDCG@10": 0.6, "P@5": 0.5}
LABELS = ("Good", "Fair", "Needs improvement")


def interpret(value: float, good: float, fair_ratio: float = 0.5) -> str:
    """The interpretation label of one value: Good at or above ``good``, Fair at or above
    ``good * fair_ratio``, else Needs improvement; NaN gives "".

    >>> interpret(0.75, 0.7), interpret(0.4, 0.7), interpret(0.2, 0.7)
    ('Good', 'Fair', 'Needs improvement')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if value >= good:
        return LABELS[0]
    if value >= good * fair_ratio:
        return LABELS[1]
    return LABELS[2]


def worst_labels(columns: Mapping[str, object], thresholds: Mapping[str, float],
                 fair_ratio: float = 0.5) -> np.ndarray:
    """Per row, the worst :func:`interpret` label over the measures that have a threshold
    ("" when none has a value): the row's interpretation (its worst label), for all rows at once.

    ``columns`` maps a measure to its values (one per row); NaN and None are skipped.

    >>> worst_labels({"RR": [0.8, 0.8, float("nan")], "P@5": [0.6, 0.3, float("nan")]},
    ...              {"RR": 0.7, "P@5": 0.5}).tolist()
    ['Good', 'Fair', '']
    """
    n = len(next(iter(columns.values()))) if columns else 0
    worst = np.full(n, -1)                    # index into LABELS; -1: no label yet
    for measure, values in columns.items():
        if measure not in thresholds:
            continue
        v = np.asarray(values, dtype=float)
        good = thresholds[measure]
        rank = np.where(v >= good, 0, np.where(v >= good * fair_ratio, 1, 2))
        rank[np.isnan(v)] = -1
        np.maximum(worst, rank, out=worst)
    return np.array([*LABELS, ""], dtype=object)[worst]


def row_label(values: Mapping[str, float], thresholds: Mapping[str, float],
              fair_ratio: float = 0.5) -> str:
    """The worst label of one row's measures (see :func:`worst_labels`).

    >>> row_label({"RR": 0.833, "nDCG@10": 0.72, "P@5": 0.6}, DEFAULT_GOOD_THRESHOLDS)
    'Good'
    >>> row_label({"RR": 0.25, "nDCG@10": 0.41, "P@5": 0.2}, DEFAULT_GOOD_THRESHOLDS)
    'Needs improvement'
    """
    return str(worst_labels({m: [v] for m, v in values.items()}, thresholds, fair_ratio)[0])
