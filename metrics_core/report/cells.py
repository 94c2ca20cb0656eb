"""One way to print a cell, a p-value and a piece of text in every export.

Every exporter (:func:`metrics_core.report.format_table`, the HTML report, the comparison
and comparative-table exports) and the app print through these functions, so a missing
value is the same en dash everywhere (never "nan", "NaN" or "None"), a small p-value is
"< 0.0001" everywhere, a CSV number is the shortest text that reads back as the same float,
and LaTeX is plain ASCII that pdflatex compiles.
"""

from __future__ import annotations

import csv
import io
import math
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

#: A missing value in a table for people (en dash); LaTeX prints it as ``--``.
MISSING = "\u2013"


def is_missing(value) -> bool:
    """True for None, NaN (any float type), pandas' NA and NaT.

    >>> is_missing(None), is_missing(float("nan")), is_missing(np.float32("nan")), is_missing(0.0)
    (True, True, True, False)
    """
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    try:
        import pandas as pd

        return value is pd.NA or value is pd.NaT
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False


def format_cell(value, digits: int = 4) -> str:
    """A table cell for people: numbers with ``digits`` decimals, integers as they are,
    booleans as yes / no, a missing value (None, NaN, NA, NaT) as :data:`MISSING`,
    infinities as ``inf`` / ``-inf``; any other value as its text.

    >>> [format_cell(v) for v in (0.51234, 3, True, None, float("nan"), "bm25", float("inf"))]
    ['0.5123', '3', 'yes', '–', '–', 'bm25', 'inf']
    """
    if is_missing(value):
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{digits}f}"
    return str(value)


def format_p(p, digits: int = 4) -> str:
    """A p-value for people: ``digits`` decimals, and ``< 0.0001`` (for ``digits=4``) when
    it would print as zero; a missing p-value (no test, e.g. the baseline's own row) is
    :data:`MISSING`.

    >>> format_p(0.18878), format_p(0.00001), format_p(0.0), format_p(1.0), format_p(None)
    ('0.1888', '< 0.0001', '< 0.0001', '1.0000', '–')
    >>> format_p(0.0004, digits=3)
    '< 0.001'
    """
    if is_missing(p):
        return MISSING
    p = float(p)
    floor = 10.0**-digits
    if p < floor:
        return f"< {floor:.{digits}f}"
    return f"{p:.{digits}f}"


_P_COLUMN = re.compile(r"^(p|p[ _(].*|.*\bp-value.*|.*\bp_corrected.*)$", re.IGNORECASE)


def is_p_column(name) -> bool:
    """Whether a column holds p-values (``p``, ``p_corrected_t``, ``p (AP)``, ``p Wilcoxon``,
    "... p-value"): the exporters print its cells with :func:`format_p`.

    >>> [is_p_column(c) for c in ("p", "p_corrected_t", "p (AP)", "Holm p-value", "precision", "P@5")]
    [True, True, True, True, False, False]
    """
    return bool(_P_COLUMN.match(str(name))) and not str(name).startswith("P")


#: A plain decimal number as :func:`csv_number` writes it (no grouping, a point, maybe an exponent).
_DECIMAL = re.compile(r"[+-]?\d+\.\d+(?:[eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+")


def spreadsheet_csv(text: str, delimiter: str = ";", decimal: str = ",") -> str:
    """A CSV text rewritten for a spreadsheet set to a comma-decimal locale (Spanish, French,
    German, ...): cells separated by ``delimiter``, numbers written with ``decimal``, and a
    UTF-8 byte-order mark first, so the spreadsheet splits the columns, reads the numbers as
    numbers and the accents right. Text cells are unchanged (a formula guard of
    :func:`metrics_core.report.csv_safe` stays in place).

    The standard CSV (comma, decimal point, no mark) stays the default of every export; this
    is the variant a Spanish spreadsheet opens in columns.

    >>> spreadsheet_csv("run,AP,note\\nbm25,0.25,a.b\\n")
    '\\ufeffrun;AP;note\\r\\nbm25;0,25;a.b\\r\\n'
    """
    rows = csv.reader(io.StringIO(text))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter)
    for row in rows:
        writer.writerow([c.replace(".", decimal) if _DECIMAL.fullmatch(c) else c for c in row])
    return "\ufeff" + out.getvalue()


def threshold_text(value: float) -> str:
    """A decision threshold as people read it, never rounded to another threshold: the
    shortest text that reads back as the same float, up to 10 significant digits
    (``0.66`` stays ``0.66``; a threshold taken from the data, ``0.655582``, is not shown as
    ``0.66``, whose counts differ).

    >>> threshold_text(0.66), threshold_text(0.6555823), threshold_text(1.0), threshold_text(2.5e-07)
    ('0.66', '0.6555823', '1', '2.5e-07')
    """
    return format(float(value), ".10g")


def csv_number(value):
    """A CSV cell: a float in its shortest round-trip form (``repr``: ``0.2``, never
    ``0.20000000000000001``), a missing value empty, anything else unchanged.

    ``float(csv_number(x)) == x`` for every finite float ``x``.

    >>> csv_number(0.2), csv_number(np.float64(1) / 3), csv_number(float("nan")), csv_number(7), csv_number("a")
    ('0.2', '0.3333333333333333', '', 7, 'a')
    """
    if is_missing(value):
        return ""
    if isinstance(value, (float, np.floating)) and not isinstance(value, bool):
        return repr(float(value))
    return value


# --- LaTeX ------------------------------------------------------------------------------
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "[": "{[}",
    "]": "{]}",
    "\u2013": "--",
    "\u2014": "---",
    "\u00a0": "~",
    "\u00ab": r"\guillemotleft{}",
    "\u00bb": r"\guillemotright{}",
    "\u00bf": r"?`",
    "\u00a1": r"!`",
    "\u00df": r"\ss{}",
    "\u00f8": r"\o{}",
    "\u00d8": r"\O{}",
}
#: The symbols the tables and legends use, in commands of LaTeX's own (no package needed).
_SYMBOLS = {
    "\u2020": r"\textdagger{}",
    "\u2021": r"\textdaggerdbl{}",
    "\u2605": r"$\star$",
    "\u0394": r"$\Delta$",
    "\u00d7": r"$\times$",
    "\u2265": r"$\geq$",
    "\u2264": r"$\leq$",
    "\u00b1": r"$\pm$",
    "\u2212": "-",
    "\u2026": r"\dots{}",
    "\u2192": r"$\rightarrow$",
}
_ACCENTS = {
    "\u0301": "'",
    "\u0300": "`",
    "\u0302": "^",
    "\u0303": "~",
    "\u0308": '"',
    "\u0327": "c",
    "\u030a": "r",
    "\u030c": "v",
    "\u0304": "=",
}
#: Markers a table cell may end with, in LaTeX (text mode): the best mark and the significance markers.
LATEX_MARKERS = {
    "\u2605": r"$\star$",
    "\u2020": r"\textdagger{}",
    "\u2021": r"\textdaggerdbl{}",
    "*": "*",
}


#: Characters with an inline meaning in Markdown (CommonMark and GitHub's tables):
#: backslash, code, emphasis, links and images, table cells, strikethrough, and the ``$`` of
#: math (GitHub's and Streamlit's Markdown render ``$x$`` as LaTeX).
MARKDOWN_SPECIALS = "\\`*_[]|~$"
#: What would start a block at the start of a line: a heading ``#``, a list item ``-``/``+``
#: (not a signed number), an ordered list item ``1.`` / ``1)``.
_MARKDOWN_BLOCK_START = re.compile(r"^(\s*)(#|[-+](?![0-9.])|[0-9]{1,9}(?=[.)](?:\s|$)))")
#: What GitHub's Markdown (and Streamlit's) turns into a link with no brackets at all, an
#: "autolink literal": the ``:`` of ``scheme://``, the ``.`` of ``www.``, the ``@`` of an
#: e-mail address (a domain with a dot follows; ``nDCG@10`` is no address). A backslash
#: before that one character keeps the text and breaks the link.
_AUTOLINK = re.compile(
    r"(?<=[A-Za-z0-9]):(?=//)|(?<![A-Za-z0-9])[Ww]{3}\.|@(?=[A-Za-z0-9_-]+\.[A-Za-z0-9])"
)


def markdown_escape(text) -> str:
    """A piece of text (a table cell, a caption, a sentence) that Markdown prints as itself.

    The one Markdown escaper of every export (:func:`metrics_core.report.format_table`,
    :meth:`~metrics_core.report.comparison.Comparison.to_markdown`, the comparative table's
    :func:`~metrics_core.report.thesis_export.to_markdown`):

    * ``&``, ``<`` and ``>`` become HTML entities, so no tag or entity survives
      (``<script>`` stays text);
    * the characters of :data:`MARKDOWN_SPECIALS` get a backslash: ``\\``, a backtick,
      ``*`` and ``_`` (no emphasis), ``[`` and ``]`` (no link or image), ``|`` (a cell
      cannot break the table), ``~`` (no strikethrough), ``$`` (no math);
    * a line break (``\\n``, ``\\r``) becomes a space (one table row, one paragraph);
    * a bare address is no link: ``http\\://``, ``www\\.``, ``name\\@example.org``
      (GitHub's and Streamlit's Markdown link them without brackets);
    * at the start, a ``#`` (heading), a ``-`` or ``+`` not followed by a digit or a point
      (list item; ``-0.5`` stays a number) and the number of an ordered list item
      (``1.`` or ``1)`` followed by a space) are backslash-escaped.

    Anything else (letters, digits, ``@``, ``(``, ``=``, non-ASCII) is left as it is, so
    measure names (``nDCG@10``, ``P(rel=2)@5``) and numbers read unchanged.

    Examples
    --------
    >>> print(markdown_escape("<b>a|b</b>"))
    &lt;b&gt;a\\|b&lt;/b&gt;
    >>> print(markdown_escape("[x](javascript:alert(1))"))
    \\[x\\](javascript:alert(1))
    >>> print(markdown_escape("*bold* my_run `code` C:\\\\temp"))
    \\*bold\\* my\\_run \\`code\\` C:\\\\temp
    >>> print(markdown_escape("# run"), markdown_escape("- a"), markdown_escape("-0.5"), markdown_escape("1. a"))
    \\# run \\- a -0.5 1\\. a
    >>> print(markdown_escape("two\\nlines"))
    two lines
    """
    text = str(text).replace("\r", " ").replace("\n", " ")
    text = "".join("\\" + c if c in MARKDOWN_SPECIALS else c for c in text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], text)
    match = _MARKDOWN_BLOCK_START.match(text)
    if match:
        lead, mark = match.groups()
        if mark[0].isdigit():
            return lead + mark + "\\" + text[match.end() :]
        return lead + "\\" + text[len(lead) :]
    return text


def latex_escape(text, symbols: bool = False) -> str:
    r"""Plain ASCII LaTeX for any text: specials escaped, accented letters as accent
    commands, any other non-ASCII character written as its code point; brackets braced so
    that a cell never reads as an optional argument of ``\\`` (pdflatex-safe). With
    ``symbols`` (:func:`latex_text`), the legends' symbols (★ † ‡ Δ × ≥ ...) become LaTeX's
    own commands.

    >>> print(latex_escape("a_b & 50% {x} ~ñ"))
    a\_b \& 50\% \{x\} \textasciitilde{}\~{n}
    >>> print(latex_escape(chr(0x2605) + " run"))
    {[}U+2605{]} run
    """
    out = []
    for ch in str(text).replace("\r", " ").replace("\n", " "):
        if ch in _LATEX:
            out.append(_LATEX[ch])
        elif symbols and ch in _SYMBOLS:
            out.append(_SYMBOLS[ch])
        elif ch.isascii():
            out.append(ch)
        else:
            base, *marks = list(unicodedata.normalize("NFD", ch))  # the letter, its marks
            if base.isascii() and len(marks) == 1 and marks[0] in _ACCENTS:
                letter = {"i": r"\i", "j": r"\j"}.get(base, base)
                out.append(f"\\{_ACCENTS[marks[0]]}{{{letter}}}")
            else:
                out.append(f"{{[}}U+{ord(ch):04X}{{]}}")
    return "".join(out)


def latex_text(text) -> str:
    r"""A sentence (caption, legend, header) in LaTeX: :func:`latex_escape` with the
    symbols of the legends as LaTeX commands.

    >>> print(latex_text("★ best; † p < 0.05; Δ vs bm25"))
    $\star$ best; \textdagger{} p \textless{} 0.05; $\Delta$ vs bm25
    """
    return latex_escape(text, symbols=True)


def latex_cell(cell) -> str:
    r"""A table cell in LaTeX: the escaped text (:func:`latex_text`) and the markers it
    ends with (★ † ‡ ``*``, :data:`LATEX_MARKERS`) in superscript; a cell marked ★ (the
    best value) is also bold.

    >>> print(latex_cell("0.5123 ★*"))
    \textbf{0.5123}\textsuperscript{$\star$*}
    >>> print(latex_cell("0.5 (+0.1)†‡"))
    0.5 (+0.1)\textsuperscript{\textdagger{}\textdaggerdbl{}}
    >>> print(latex_cell("a_b"))
    a\_b
    """
    text = str(cell)
    base = text.rstrip("".join(LATEX_MARKERS) + " ")
    marks = text[len(base) :].replace(" ", "")
    if not marks or not base:
        return latex_text(text)
    body = latex_text(base)
    if "\u2605" in marks:
        body = r"\textbf{" + body + "}"
    return body + r"\textsuperscript{" + "".join(LATEX_MARKERS[m] for m in marks) + "}"


def latex_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    caption: str,
    label: str | None,
    provenance_line: str,
    legend: str,
) -> str:
    r"""A LaTeX ``table`` with booktabs rules: the provenance as a ``%`` comment, the
    escaped caption (and label), the escaped ``header`` and the ``rows`` (cells already in
    LaTeX: :func:`latex_escape`, :func:`latex_cell`), the legend as a footnote-size note
    under the tabular. Needs ``\usepackage{booktabs}``. The one layout of every
    comparison's LaTeX table.

    >>> print(latex_table(["run", "AP"], [["a\\_b", "0.5"]], "Runs", None, "v1", "a & b"))
    % v1
    % needs \usepackage{booktabs}
    \begin{table}[t]
    \centering
    \caption{Runs}
    \begin{tabular}{lr}
    \toprule
    run & AP \\
    \midrule
    a\_b & 0.5 \\
    \bottomrule
    \end{tabular}
    \par\smallskip
    {\footnotesize a \& b}
    \end{table}
    <BLANKLINE>
    """
    out = [
        f"% {one_line(provenance_line)}",
        r"% needs \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{" + latex_escape(caption) + "}",
    ]
    if label:
        out.append(r"\label{" + latex_escape(label) + "}")
    out += [
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in header) + r" \\",
        r"\midrule",
        *(" & ".join(row) + r" \\" for row in rows),
        r"\bottomrule",
        r"\end{tabular}",
        r"\par\smallskip",
        r"{\footnotesize " + latex_text(legend) + "}",
        r"\end{table}",
    ]
    return "\n".join(out) + "\n"


def one_line(text) -> str:
    """``text`` with its line breaks turned into spaces (a comment line, a log line)."""
    return " ".join(str(text).splitlines())


def short_caption(title: str) -> tuple[str, str]:
    """``(caption, note)``: the first sentence of ``title`` (ending in one period) and the
    rest, for a table whose title is a name followed by its legend.

    >>> short_caption("Leaderboard. ★ best mean. Queries: n = 30.")
    ('Leaderboard.', '★ best mean. Queries: n = 30.')
    >>> short_caption("Per query (n = 30.)")
    ('Per query (n = 30.).', '')
    """
    text = " ".join(str(title).split())
    head, sep, rest = text.partition(". ")
    head = (head if sep else text).rstrip(".")
    return (head + "." if head else ""), rest.strip()


__all__ = [
    "MISSING",
    "MARKDOWN_SPECIALS",
    "markdown_escape",
    "is_missing",
    "is_p_column",
    "format_cell",
    "format_p",
    "csv_number",
    "spreadsheet_csv",
    "threshold_text",
    "latex_escape",
    "latex_text",
    "latex_table",
    "one_line",
    "latex_cell",
    "LATEX_MARKERS",
    "short_caption",
]
