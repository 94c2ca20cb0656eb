"""Every table of the app downloads through :func:`download_table`: one row of buttons (CSV,
JSON, Markdown, LaTeX). The JSON, Markdown and LaTeX files state RankLab's version, the
conventions and the settings they were made with (``metrics_core.report.format_table``);
the CSV is the table alone, so it opens cleanly in a spreadsheet (its provenance is the
JSON file's). :func:`download_buttons` is the row itself, for a page whose files are
already rendered texts (the Compare page's JSON document and paper table; the comparative
table's CSV, Markdown, LaTeX and HTML). In a Spanish session the CSV is the one a Spanish
spreadsheet opens in columns (semicolons, decimal commas, a byte-order mark).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import pandas as pd
import streamlit as st

from metrics_core.report import format_table, provenance
from metrics_core.report.cells import spreadsheet_csv
from ui.common import budget, state
from ui.common.i18n import _, current_language

#: (format, button label, MIME type, file extension), in button order. Format names are
#: the same in every language.
EXPORTS = (
    ("csv", "CSV", "text/csv", "csv"),
    ("json", "JSON", "application/json", "json"),
    ("markdown", "Markdown", "text/markdown", "md"),
    ("latex", "LaTeX", "application/x-tex", "tex"),
    ("html", "HTML", "text/html", "html"),
    ("trec", "TREC", "text/plain", "txt"),
)
#: The formats :func:`export_texts` makes of a table (HTML only comes pre-rendered).
DOWNLOAD_FORMATS = ("csv", "json", "markdown", "latex")


def export_texts(
    df: pd.DataFrame,
    conventions=None,
    title: str | None = None,
    *,
    formats=DOWNLOAD_FORMATS,
    index: bool = True,
    digits: int = 4,
    **extra,
) -> dict[str, str]:
    """The export texts of a table, one per format (pure; tests call it without Streamlit).

    ``conventions`` and ``extra`` are the provenance every file states; ``index`` whether the
    table's index is a column of the files; ``digits`` the decimals of Markdown and LaTeX.
    """
    prov = provenance(conventions, **extra)
    df = plain_dates(df)
    return {
        fmt: format_table(df, fmt, prov=prov, title=title, index=index, digits=digits)
        for fmt in formats
    }


def plain_dates(df: pd.DataFrame) -> pd.DataFrame:
    """Dates as ISO text (report.json_safe does not know Timestamps)."""
    dated = [c for c in df.columns if pd.api.types.is_datetime64_any_dtype(df[c])]
    if not dated:
        return df
    out = df.copy()
    for c in dated:
        out[c] = out[c].dt.strftime("%Y-%m-%d").where(out[c].notna(), "")
    return out


def slug(name: str) -> str:
    """A file name made of ``name`` (letters, digits, ``_.-``).

    Examples
    --------
    >>> slug("per query: bm25/q 1")
    'per_query_bm25_q_1'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "table"


def gated(make: Callable[[], str], need: int) -> Callable[[], str]:
    """``make`` run inside the memory gate (:func:`ui.common.budget.work` with ``need``): an
    export made when its button is clicked (on a server thread of its own) reserves what it
    takes, as every computation on a visitor's data does."""

    def made() -> str:
        with budget.work(need):
            return make()

    return made


def table_need(df: pd.DataFrame) -> int:
    """What exporting ``df`` may take: :data:`EXPORT_BYTES_PER_BYTE` per byte of the table."""
    return int(df.memory_usage(deep=True).sum()) * EXPORT_BYTES_PER_BYTE


#: Bytes one export of a table takes per byte of the table (its text and the formatter's
#: copies): 41.3 at most, the four formats made one after the other, measured by
#: ``bench/app_gate_needs.py`` (case export, tables of 20,000 and 200,000 rows, under
#: ``flock /work/bench.lock``); rounded up.
EXPORT_BYTES_PER_BYTE = 42


def download_buttons(
    texts: Mapping[str, str | Callable[[], str]],
    name: str,
    key: str | None = None,
    container=None,
    need: int = 0,
) -> None:
    """One row of download buttons, one per format in ``texts`` (in :data:`EXPORTS` order):
    ``<name>.<ext>``, labelled CSV / JSON / Markdown / LaTeX / HTML. A text may be a function,
    made only when its button is clicked, inside the memory gate with ``need`` (:func:`gated`).
    Clicking does not rerun the page.

    Examples
    --------
    Texts already rendered (the comparative table's)::

        download_buttons({"csv": csv_text, "html": html_text}, "comparative_table", key="table")
    """
    unknown = set(texts) - {fmt for fmt, *_rest in EXPORTS}
    if unknown:
        raise ValueError(
            f"no download format {sorted(unknown)}; known: {[f for f, *_r in EXPORTS]}"
        )
    shown = [(fmt, label, mime, ext) for fmt, label, mime, ext in EXPORTS if fmt in texts]
    base = slug(name)
    # one row that wraps on a narrow window, each button as wide as its label (in equal
    # columns, five buttons cut "Markdown" to "Mar…" at 800 px)
    row = (container or st).container(horizontal=True, gap="small")
    comma_decimal = current_language() in COMMA_DECIMAL_LANGUAGES
    for fmt, label, mime, ext in shown:
        data, help_text = texts[fmt], None
        if fmt == "csv" and comma_decimal:
            data, help_text = (
                for_spreadsheet(data),
                _(
                    "Separated by semicolons, with decimal commas and a byte-order mark: a spreadsheet "
                    "set to Spanish opens it in columns. The JSON file keeps the standard numbers."
                ),
            )
        if callable(data):
            data = gated(data, need)
        row.download_button(
            label,
            data,
            file_name=f"{base}.{ext}",
            mime=mime,
            key=f"{state.DOWNLOAD}.{key or base}.{fmt}",
            icon=":material/download:",
            on_click="ignore",
            help=help_text,
            width="content",
        )


#: Languages whose spreadsheets read a decimal comma and split CSV columns at semicolons.
COMMA_DECIMAL_LANGUAGES = frozenset({"es"})


def for_spreadsheet(text: str | Callable[[], str]) -> str | Callable[[], str]:
    """The CSV ``text`` (or the function making it) as a comma-decimal spreadsheet reads it
    (:func:`metrics_core.report.cells.spreadsheet_csv`), still made only when clicked."""
    if callable(text):
        return lambda: spreadsheet_csv(text())
    with budget.work(len(text) * EXPORT_BYTES_PER_BYTE):  # a text made before: rewritten now
        return spreadsheet_csv(text)


def download_table(
    df: pd.DataFrame,
    name: str,
    conventions=None,
    title: str | None = None,
    key: str | None = None,
    *,
    formats=DOWNLOAD_FORMATS,
    index: bool = True,
    digits: int = 4,
    container=None,
    **extra,
) -> None:
    """The download buttons of a table: ``df`` as CSV, JSON, Markdown and LaTeX (or the
    ``formats`` asked), each file with its provenance (``conventions`` and ``extra``, e.g.
    the bootstrap settings or the source file) and ``title``; each file made when its button
    is clicked, inside the memory gate (:func:`gated`, :func:`table_need`).

    ``name`` is the file name (without extension); ``key`` keeps two tables of a page apart
    (default: the name). See :func:`export_texts` for ``index`` and ``digits``.
    """
    texts = {
        fmt: (
            lambda fmt=fmt: export_texts(
                df, conventions, title, formats=(fmt,), index=index, digits=digits, **extra
            )[fmt]
        )
        for fmt in formats
    }
    download_buttons(texts, name, key=key, container=container, need=table_need(df))


__all__ = [
    "COMMA_DECIMAL_LANGUAGES",
    "EXPORTS",
    "DOWNLOAD_FORMATS",
    "for_spreadsheet",
    "export_texts",
    "plain_dates",
    "slug",
    "download_buttons",
    "download_table",
    "gated",
    "table_need",
    "EXPORT_BYTES_PER_BYTE",
]
