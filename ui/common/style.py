"""One style for every page: run colours, number formats, natural sort, plain headers.

Pure helpers (no Streamlit import, no session state), so figures, pages and exports share
them and tests call them directly. The session's run order is read by
:mod:`ui.common.colours`, which keys these colours by the loaded runs.

* :func:`run_colours` / :func:`run_colour`: one colour per run, by its position in a list of
  names.
* :data:`MEASURE_FORMAT` (4 decimals), :data:`COUNT_FORMAT` (integers) and
  :data:`THRESHOLD_FORMAT` (a threshold exactly).
* :func:`natural_key` / :func:`natural_sorted` / :func:`natural_rows`: query ids sorted as
  people read them (Q2 before Q10).
* :func:`difficulty_order`: easy, medium, hard (then any other label).
* :data:`HEADERS` / :func:`plain_headers`: plain-language column names.
* :func:`md_text` / :func:`plot_text`: a name as text in Streamlit's Markdown / in a plotly
  figure (never a link, a tag or math).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from metrics_core.report import PALETTE  # one copy: the run colours of every figure and export
from metrics_core.report.cells import MISSING, markdown_escape, threshold_text
from metrics_core.report.thesis import display_measure  # a measure as its mean reads (MRR)

MEASURE_DIGITS = 4
MEASURE_FORMAT = "%.4f"  # st.column_config.NumberColumn(format=...)
COUNT_FORMAT = "%d"
#: A decision threshold in a widget or a table column (sprintf.js, as Streamlit formats): the
#: value itself, up to 10 significant digits, as :func:`metrics_core.report.cells.threshold_text`
#: writes it in the captions (a threshold of 0.655105 shown "0.6551" reads as another one: a
#: score of 0.6551 is below it).
THRESHOLD_FORMAT = "%.10g"

DIFFICULTY_ORDER = ("very easy", "easy", "medium", "moderate", "hard", "very hard")

#: Column names shown on screen (and in exports of on-screen tables).
HEADERS = {
    "run": "Run",
    "measure": "Measure",
    "n_queries": "Queries",
    "queries": "Queries",
    "mean": "Mean",
    "median": "Median",
    "ci_lo": "CI low",
    "ci_hi": "CI high",
    "ci_low": "CI low",
    "ci_high": "CI high",
    "mean_baseline": "Baseline mean",
    "mean_run": "Run mean",
    "mean_delta": "Δ (run − baseline)",
    "wins": "Wins",
    "ties": "Ties",
    "losses": "Losses",
    "effect_size": "Effect size (d)",
    "markers": "Significant",
    "p_corrected_t": "p t-test (corrected)",
    "p_corrected_wilcoxon": "p Wilcoxon (corrected)",
    "p_corrected_permutation": "p randomization (corrected)",
    "p_t": "p t-test",
    "p_wilcoxon": "p Wilcoxon",
    "p_permutation": "p randomization",
    "aggregate": "Value",
    "query_id": "Query",
    "interpretation": "Interpretation",
    "baseline": "Baseline",
}


def run_colours(names: Iterable[str]) -> dict[str, str]:
    """Colour of each run, by its position in ``names`` (the loaded runs' order).

    Examples
    --------
    >>> run_colours(["bm25", "dense"])
    {'bm25': '#3559e0', 'dense': '#e07a35'}
    """
    return {str(n): PALETTE[i % len(PALETTE)] for i, n in enumerate(dict.fromkeys(names))}


def run_colour(name: str, names: Iterable[str]) -> str:
    """Colour of ``name`` among ``names`` (grey when it is not one of them)."""
    return run_colours(names).get(str(name), "#7f8c8d")


_DIGITS = re.compile(r"(\d+)")


def natural_key(text) -> tuple:
    """Sort key: digit runs compared as numbers ("Q2" < "Q10"), the rest case-insensitively.

    Examples
    --------
    >>> sorted(["Q10", "Q2", "q1"], key=natural_key)
    ['q1', 'Q2', 'Q10']
    """
    parts = _DIGITS.split(str(text))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in parts if p != "")


def natural_sorted(values: Iterable) -> list:
    """``values`` in natural order (see :func:`natural_key`)."""
    return sorted(values, key=natural_key)


def natural_rows(frame):
    """The rows of ``frame`` (a table indexed by query id) in the natural order of its index
    (see :func:`natural_key`; rows with equal keys keep their order).

    Examples
    --------
    >>> import pandas as pd
    >>> natural_rows(pd.DataFrame({"AP": [0.1, 0.2, 0.3]}, index=["q10", "q2", "Q1"])).index.tolist()
    ['Q1', 'q2', 'q10']
    """
    keys = [natural_key(q) for q in frame.index]
    return frame.iloc[sorted(range(len(keys)), key=keys.__getitem__)]


def difficulty_order(labels: Iterable) -> list:
    """Labels ordered easy -> hard when they are difficulty words, else naturally.

    Examples
    --------
    >>> difficulty_order(["hard", "easy", "medium"])
    ['easy', 'medium', 'hard']
    """
    labels = list(dict.fromkeys(labels))
    rank = {d: i for i, d in enumerate(DIFFICULTY_ORDER)}
    return sorted(
        labels, key=lambda v: (rank.get(str(v).strip().lower(), len(rank)), natural_key(v))
    )


def in_sentence(label: str) -> str:
    """A heading inside a sentence or a title: a capitalised word in lower case ("Category"
    -> "category", "Categoría" -> "categoría"); anything else (nDCG, URL path) as written.

    >>> in_sentence("Categoría"), in_sentence("URL path")
    ('categoría', 'URL path')
    """
    return label[:1].lower() + label[1:] if label[1:] == label[1:].lower() else label


def heading(label: str) -> str:
    """A name as a table heading: its first letter in upper case ("threshold" -> "Threshold",
    "umbral siguiente" -> "Umbral siguiente"); a name spelled with a capital inside its first
    word (nDCG, mAP) as written.

    >>> heading("next FPR"), heading("nDCG@10"), heading("mAP")
    ('Next FPR', 'nDCG@10', 'mAP')
    """
    if label[1:2].isupper():
        return label
    return label[:1].upper() + label[1:]


def plain_headers(columns: Iterable[str]) -> dict[str, str]:
    """Mapping column -> on-screen header (unknown columns: underscores become spaces)."""
    return {c: HEADERS.get(c, str(c).replace("_", " ")) for c in columns}


__all__ = [
    "Said",
    "say",
    "plain",
    "md_join",
    "MISSING",
    "display_measure",
    "threshold_text",
    "md_text",
    "plot_text",
    "PALETTE",
    "MEASURE_FORMAT",
    "THRESHOLD_FORMAT",
    "COUNT_FORMAT",
    "HEADERS",
    "run_colours",
    "run_colour",
    "natural_key",
    "natural_sorted",
    "natural_rows",
    "difficulty_order",
    "plain_headers",
    "in_sentence",
    "heading",
]


def plot_text(value) -> str:
    """A name (run, query, column, group) as text in a plotly figure: plotly reads
    ``<b>``, ``<a href=...>`` and entities in trace names, tick labels, titles and hover
    labels, so ``&``, ``<`` and ``>`` become entities, which it shows as the characters.

    >>> plot_text("<a href=x>t</a> & co")
    '&lt;a href=x&gt;t&lt;/a&gt; &amp; co'
    """
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: the escaper's backslash before the ``:``, ``.`` or ``@`` of a bare address
_BARE_LINK = re.compile(r"\\(?=[:.@])")
#: a colon that opens one of Streamlit's directives: an icon or emoji (``:material/home:``,
#: ``:smile:``) or a colour (``:red[...]``, ``:blue-background[...]``)
_DIRECTIVE = re.compile(r":(?=[A-Za-z])")


class Said(str):
    """Markdown the app composed: its own words, every value in them shown as text
    (:func:`md_text`, :func:`say`, :func:`md_join` make them; :func:`say` keeps them as they
    are when they are values of another message)."""

    __slots__ = ()

    def rstrip(self, chars=None) -> Said:  # its end cut: still the app's composition
        return Said(str.rstrip(self, chars))


def say(template: str, /, **values) -> Said:
    """The one way a message with values reaches Streamlit's Markdown (``st.markdown``,
    captions, alerts, titles, labels and help): ``template`` is the app's own text (a
    translation: its Markdown is meant), and every value is shown as text (:func:`md_text`:
    a run's or a file's name, a query id, a column, a number) unless the app composed it
    already (a :class:`Said`). A visitor's name can never become a link, an image, a tag,
    math, code or a heading; ``tests/app/test_names_as_text.py`` fails on a Markdown call
    given values any other way.

    >>> print(say("**{run}**: {n} queries", run="<b>x_y</b>", n=3))
    **&lt;b&gt;x\\_y&lt;/b&gt;**: 3 queries
    """
    if not values:  # the app's own words alone
        return Said(template)
    escaped = {k: v if isinstance(v, Said) else md_text(v) for k, v in values.items()}
    return Said(template.format(**escaped))


def plain(template: str, /, **values) -> str:
    """A message with values for a place that shows text as it is, never as Markdown: a
    grid's heading or cell, a download's title or file name (the exports escape for their
    own format), a plotly figure (its names through :func:`plot_text`), a message kept for
    an error. Its result is never given to a Markdown call (``say`` is for those;
    ``tests/app/test_names_as_text.py`` checks both).

    >>> plain("Per-query values of {run}", run="[t](x)")
    'Per-query values of [t](x)'
    """
    return template.format(**values)


def md_join(values, sep: str = ", ") -> Said:
    """``values`` (names, ids) as text, joined by ``sep`` (the app's own separator).

    >>> md_join(["a_b", "<c>"]) == "a\\_b, &lt;c&gt;"
    True
    """
    return Said(sep.join(v if isinstance(v, Said) else md_text(v) for v in values))


def md_text(value) -> Said:
    """A name (run, tag, query, document, column, file) or a reader's message as text in
    Streamlit's Markdown (``st.markdown``, captions, alerts, labels, help): the one escaper,
    :func:`metrics_core.report.cells.markdown_escape`, plus a word joiner (U+2060, invisible)
    before the character it breaks a bare address with (``http\\://``, ``www\\.``,
    ``me\\@x.org``): Streamlit links bare addresses in the text after the Markdown is read,
    where a backslash no longer counts; and one after a colon followed by a letter, which
    would open Streamlit's icons, emoji and colours (``:material/home:``, ``:smile:``,
    ``:red[...]``).

    >>> md_text("[t](http://x.org) <b>$x$</b>") == "\\\\[t\\\\](http\\u2060\\\\://x.org) &lt;b&gt;\\\\$x\\\\$&lt;/b&gt;"
    True
    """
    if isinstance(value, Said):  # composed by the app already: its values are text
        return value
    text = _BARE_LINK.sub("\u2060\\\\", markdown_escape(value))
    return Said(_DIRECTIVE.sub(":\u2060", text))
