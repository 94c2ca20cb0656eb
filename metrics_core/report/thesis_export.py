"""Exports of the comparative table (:mod:`metrics_core.report.thesis`): CSV, Markdown,
LaTeX (booktabs, pdflatex-safe) and an HTML fragment.

Every export takes ``words``: the words around the numbers (headers, summary, caption,
legend), English by default (:data:`DEFAULT_WORDS`); a caller that shows another language
passes translated words, e.g. ``{k: tr.gettext(v) for k, v in DEFAULT_WORDS.items()}``.
Measure names and numbers stay canonical in every language (``RR``'s mean is shown as
``MRR``). ``words["runs_count"]`` may also be a function of the number of rows, for
plural forms.

* CSV: one header line, one line per run, the summary line last; numbers in their
  shortest round-trip form (``repr``: ``0.2``, never ``0.20000000000000001``); no comment
  lines (provenance belongs in a JSON sidecar); a text cell that a spreadsheet would run
  as a formula gets a leading ``'`` (:func:`metrics_core.report.csv_safe`).
* Markdown, LaTeX, HTML: ``digits`` decimals; the best value of each column in bold;
  a significant difference from the baseline marked with a superscript ``*``.
"""

from __future__ import annotations

import csv
import html
import io
import math
import re
from collections.abc import Callable
from typing import Any

from metrics_core.report.catalogs import N_, translations
from metrics_core.report.cells import MISSING, csv_number, latex_escape, markdown_escape
from metrics_core.report.exports import csv_safe
from metrics_core.report.thesis import LEVEL_NAMES, VERDICT_NAMES, ThesisTable, display_measure

#: Words of the exports, in English (the catalogs' msgids).
DEFAULT_WORDS = {
    "run": N_("Run"),
    "queries": N_("Queries"),
    "label": N_("Interpretation"),
    "summary": N_("Summary"),
    "runs_count": N_("{n} runs"),
    "label_of": N_("{measure} label"),
    "p_of": N_("p ({measure})"),
    "caption": N_("Comparative table"),
    "queries_caption": N_("{n} queries"),
    "dated": N_("dated {start} to {end}"),
    "significance": N_(
        "{marker} p < {alpha} against {baseline} ({test}; {correction} over {m} comparisons)"
    ),
    "test_t": N_("paired t-test"),
    "test_wilcoxon": N_("Wilcoxon signed-rank test"),
    "test_permutation": N_("paired permutation test"),
    "correction_holm": N_("Holm correction"),
    "correction_bonferroni": N_("Bonferroni correction"),
    "correction_bh": N_("Benjamini-Hochberg correction"),
    "correction_none": N_("no correction"),
}


def localized_words(lang: str, rows: str = "runs") -> tuple[dict, tuple, tuple]:
    """``(words, level names, verdict names)`` in ``lang``, from its catalog.

    ``rows="evaluations"`` names the rows saved evaluations ("3 evaluaciones", as the
    specification's summary reads) instead of runs; ``rows="queries"`` names them queries
    (the queries of one run, each labelled). ``words["runs_count"]`` is a function
    of the number of rows (plural forms).

    >>> words, names, verdicts = localized_words("es")
    >>> words["summary"], names, verdicts[0], words["runs_count"](1)
    ('Resumen', ('Bueno', 'Regular', 'Mejorable'), 'Eficiente', '1 ejecución')
    >>> words, _, _ = localized_words("es", rows="evaluations")
    >>> words["run"], words["runs_count"](3)
    ('Evaluación', '3 evaluaciones')
    """
    if rows not in ("runs", "evaluations", "queries"):
        raise ValueError(f"rows must be 'runs', 'evaluations' or 'queries', not {rows!r}")
    tr = translations(lang)
    # texts, and the counting phrase (a function of n: plural forms differ by language)
    words: dict[str, Any] = {k: tr.gettext(v) for k, v in DEFAULT_WORDS.items()}
    if rows == "runs":
        words["runs_count"] = lambda n: tr.ngettext("{n} run", "{n} runs", n).format(n=n)
    elif rows == "queries":  # the queries of one run, each labelled (controlled tests)
        words["run"] = tr.gettext(N_("Query"))
        words["runs_count"] = lambda n: tr.ngettext("{n} query", "{n} queries", n).format(n=n)
    else:
        words["run"] = tr.gettext(N_("Evaluation"))
        words["runs_count"] = lambda n: tr.ngettext("{n} evaluation", "{n} evaluations", n).format(
            n=n
        )
    return (
        words,
        tuple(tr.gettext(n) for n in LEVEL_NAMES),
        tuple(tr.gettext(n) for n in VERDICT_NAMES),
    )


def _words(words) -> dict:
    out = dict(DEFAULT_WORDS)
    out.update(words or {})
    return out


def _runs_count(w: dict, n: int) -> str:
    text = w["runs_count"]
    return text(n) if callable(text) else str(text).format(n=n)


def _higher_is_better(measure: str) -> int:
    base = re.split(r"[@(]", measure, maxsplit=1)[0]
    return 0 if base.startswith("Num") else -1 if base == "FirstRel" else 1


def best_runs(table: ThesisTable) -> dict[str, set[str]]:
    """measure -> the runs with the best value (ties: all of them; none for counts)."""
    out: dict[str, set[str]] = {}
    for m in table.measures:
        sign = _higher_is_better(m)
        col = table.values[m].dropna()
        if sign == 0 or col.empty:
            out[m] = set()
            continue
        best = col.max() if sign > 0 else col.min()
        out[m] = set(col.index[col == best])
    return out


def _date_text(table: ThesisTable, w: dict) -> str:
    if table.date_from is None and table.date_to is None:
        return ""
    return w["dated"].format(start=table.date_from or "...", end=table.date_to or "...")


def caption(table: ThesisTable, words=None) -> str:
    """One short sentence: the table's name, its rows and queries, the date range.

    The queries are the largest number any run was measured on.
    """
    w = _words(words)
    parts = [
        _runs_count(w, len(table.runs)),
        w["queries_caption"].format(n=int(table.n_queries.max()) if len(table.n_queries) else 0),
    ]
    dated = _date_text(table, w)
    if dated:
        parts.append(dated)
    return f"{w['caption']}: {', '.join(parts)}."


def legend(table: ThesisTable, words=None, marker: str = "*") -> str:
    """The significance note ("" without a baseline)."""
    if table.baseline is None:
        return ""
    w = _words(words)
    return w["significance"].format(
        marker=marker,
        alpha=f"{table.alpha:g}",
        baseline=table.baseline,
        test=w[f"test_{table.test}"],
        correction=w[f"correction_{table.correction}"],
        m=table.n_comparisons,
    )


def _num(v: float) -> str:
    return "" if v is None else str(csv_number(float(v)))


def to_csv(table: ThesisTable, words=None) -> str:
    """CSV text: run, queries, per measure its value and label, p-values, interpretation.

    Parameters
    ----------
    table : ThesisTable
    words : mapping, optional
        Words replacing :data:`DEFAULT_WORDS` (translations).

    Returns
    -------
    str
        One header line, one line per run, then the summary line: the summary word in
        the run column, the mean of each measure over the runs, their labels and the
        overall verdict. p-value columns only with a baseline. Numbers in shortest
        round-trip form, a missing value empty.

    Examples
    --------
    >>> import pandas as pd
    >>> from metrics_core.report.thesis import thesis_table
    >>> t = thesis_table({"bm25": pd.DataFrame({"RR": [1.0, 0.25]}, index=["q1", "q2"])}, ["MRR"])
    >>> print(to_csv(t), end="")
    Run,Queries,MRR,MRR label,Interpretation
    bm25,2,0.625,Fair,Fair
    Summary,,0.625,Fair,Acceptable
    """
    w = _words(words)
    g = table.grading
    header = [w["run"], w["queries"]]
    for m in table.measures:
        header += [display_measure(m), w["label_of"].format(measure=display_measure(m))]
    with_p = table.baseline is not None
    if with_p:
        header += [w["p_of"].format(measure=display_measure(m)) for m in table.measures]
    header.append(w["label"])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_safe(h) for h in header])
    for run in table.runs:
        row = [run, int(table.n_queries[run])]
        for m in table.measures:
            row += [_num(table.values.at[run, m]), g.name(table.levels.at[run, m])]
        if with_p:
            row += [_num(table.pvalues.at[run, m]) for m in table.measures]
        writer.writerow([csv_safe(c) for c in (*row, g.name(table.row_levels[run]))])
    row = [w["summary"], ""]
    for m in table.measures:
        row += [_num(table.summary[m]), g.name(table.summary_levels[m])]
    if with_p:
        row += [""] * len(table.measures)
    writer.writerow([csv_safe(c) for c in (*row, g.name(table.verdict, verdict=True))])
    return out.getvalue()


def _cells(table: ThesisTable, digits: int):
    """Per run and measure: (number text, bold, significant, label)."""
    best = best_runs(table)
    sig = table.significant
    g = table.grading
    for run in table.runs:
        cells = []
        for m in table.measures:
            v = table.values.at[run, m]
            text = MISSING if math.isnan(v) else f"{v:.{digits}f}"
            cells.append(
                (text, run in best[m], bool(sig.at[run, m]), g.name(table.levels.at[run, m]))
            )
        yield run, cells


def _summary_cells(table: ThesisTable, digits: int):
    g = table.grading
    return [
        (
            MISSING if math.isnan(table.summary[m]) else f"{table.summary[m]:.{digits}f}",
            g.name(table.summary_levels[m]),
        )
        for m in table.measures
    ]


def to_markdown(table: ThesisTable, words=None, digits: int = 4) -> str:
    """A Markdown table (pipe syntax), its caption above and the legend below.

    Parameters
    ----------
    table : ThesisTable
    words : mapping, optional
        Words replacing :data:`DEFAULT_WORDS`.
    digits : int
        Decimals of the values.

    Returns
    -------
    str
        Each cell ``value (label)``; the best value of a column in bold, ``\\*`` after a
        value that differs significantly from the baseline; every name and word escaped
        (:func:`~metrics_core.report.cells.markdown_escape`: ``|``, ``*``, ``<`` ... cannot
        break the table); a missing value is an en dash.
    """
    w = _words(words)
    md = markdown_escape
    head = [
        md(w["run"]),
        md(w["queries"]),
        *(md(display_measure(m)) for m in table.measures),
        md(w["label"]),
    ]
    lines = [
        f"**{md(caption(table, w))}**",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---", "---:", *(["---:"] * len(table.measures)), "---"]) + "|",
    ]
    g = table.grading
    for run, cells in _cells(table, digits):
        shown = [
            (f"**{t}**" if bold else t) + ("\\*" if sig else "") + (f" ({md(lab)})" if lab else "")
            for t, bold, sig, lab in cells
        ]
        lines.append(
            "| "
            + " | ".join(
                [md(run), str(int(table.n_queries[run])), *shown, md(g.name(table.row_levels[run]))]
            )
            + " |"
        )
    summ = [t + (f" ({md(lab)})" if lab else "") for t, lab in _summary_cells(table, digits)]
    lines.append(
        "| "
        + " | ".join(
            [
                f"**{md(w['summary'])}** ({md(_runs_count(w, len(table.runs)))})",
                "",
                *summ,
                f"**{md(g.name(table.verdict, verdict=True))}**",
            ]
        )
        + " |"
    )
    note = md(legend(table, w, marker="*"))
    return "\n".join(lines + (["", note] if note else [])) + "\n"


def to_latex(
    table: ThesisTable, words=None, digits: int = 4, label: str = "tab:comparative"
) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``).

    Parameters
    ----------
    table : ThesisTable
    words : mapping, optional
        Words replacing :data:`DEFAULT_WORDS`.
    digits : int
        Decimals of the values.
    label : str
        The ``\\label`` of the table.

    Returns
    -------
    str
        ASCII only (:func:`latex_escape`), so pdflatex compiles it. Its first line (a
        comment) names the packages it needs (:data:`LATEX_PACKAGES_NOTE`); the tabular is
        never wider than ``\\linewidth`` (shrunk only when it would overflow, on any paper
        size), and the caption never breaks a date. A value and a label
        column per measure, the best value bold, ``$^{*}$`` where the run differs
        significantly from the baseline, a short caption (:func:`caption`) and the
        legend (:func:`legend`) in a footnote-size line under the tabular.
    """
    w = _words(words)
    g = table.grading
    esc = latex_escape
    spec = "lr" + "rl" * len(table.measures) + "l"
    head = [
        esc(w["run"]),
        esc(w["queries"]),
        *(f"\\multicolumn{{2}}{{c}}{{{esc(display_measure(m))}}}" for m in table.measures),
        esc(w["label"]),
    ]
    rules = " ".join(
        f"\\cmidrule(lr){{{3 + 2 * i}-{4 + 2 * i}}}" for i in range(len(table.measures))
    )
    lines = [
        "% " + LATEX_PACKAGES_NOTE,
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{_latex_caption(caption(table, w))}}}",
        f"\\label{{{label}}}",
        "\\setlength{\\tabcolsep}{4pt}",
        # never wider than the text: shrunk to \\linewidth only when it would overflow
        "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(head) + " \\\\",
        *([rules] if rules else []),
        "\\midrule",
    ]
    for run, cells in _cells(table, digits):
        row = [esc(run), str(int(table.n_queries[run]))]
        for text, bold, sig, lab in cells:
            num = esc(text)
            num = f"\\textbf{{{num}}}" if bold else num
            row += [num + ("$^{*}$" if sig else ""), esc(lab)]
        lines.append(" & ".join([*row, esc(g.name(table.row_levels[run]))]) + " \\\\")
    lines.append("\\midrule")
    # the summary's label spans the run and queries columns (it is the widest first cell)
    row = [
        f"\\multicolumn{{2}}{{l}}{{{esc(w['summary'])} ({esc(_runs_count(w, len(table.runs)))})}}"
    ]
    for text, lab in _summary_cells(table, digits):
        row += [esc(text), esc(lab)]
    lines += [
        " & ".join([*row, esc(g.name(table.verdict, verdict=True))]) + " \\\\",
        "\\bottomrule",
        "\\end{tabular}}",
    ]
    note = legend(table, w, marker="$^{*}$")
    if note:
        parts = note.split("$^{*}$", 1)
        lines.append(
            "\\par\\smallskip{\\footnotesize " + "$^{*}$".join(esc(p) for p in parts) + "}"
        )
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


#: The packages a document needs for :func:`to_latex`'s table (stated in its first line).
LATEX_PACKAGES_NOTE = "Needs \\usepackage{booktabs} and \\usepackage{graphicx} in the preamble."


def _latex_caption(text: str) -> str:
    """The caption escaped, each ISO date kept whole (``\\mbox``): a line never breaks a date
    at its hyphen."""
    parts = re.split(r"(\d{4}-\d{2}-\d{2})", text)
    return "".join(f"\\mbox{{{p}}}" if i % 2 else latex_escape(p) for i, p in enumerate(parts))


def to_html(table: ThesisTable, words=None, digits: int = 4) -> str:
    """An HTML fragment for a report or a page.

    Parameters
    ----------
    table : ThesisTable
    words : mapping, optional
        Words replacing :data:`DEFAULT_WORDS`.
    digits : int
        Decimals of the values.

    Returns
    -------
    str
        ``<table class="ranklab-comparative">`` with a caption, the summary row in
        ``<tfoot>``, the best values in ``<strong>``, ``<sup>*</sup>`` for significance,
        labels in ``<span class="label">``, then the legend in a ``<p>``; every text
        escaped.
    """
    w = _words(words)
    g = table.grading
    e = html.escape
    head = "".join(
        f"<th>{e(h)}</th>"
        for h in [w["run"], w["queries"], *(display_measure(m) for m in table.measures), w["label"]]
    )
    body = []
    for run, cells in _cells(table, digits):
        tds = []
        for text, bold, sig, lab in cells:
            num = f"<strong>{e(text)}</strong>" if bold else e(text)
            num += "<sup>*</sup>" if sig else ""
            tds.append(
                f'<td class="num">{num}'
                + (f' <span class="label">{e(lab)}</span>' if lab else "")
                + "</td>"
            )
        body.append(
            f'<tr><th scope="row">{e(run)}</th><td class="num">{int(table.n_queries[run])}</td>'
            + "".join(tds)
            + f"<td>{e(g.name(table.row_levels[run]))}</td></tr>"
        )
    summ = "".join(
        f'<td class="num">{e(t)}'
        + (f' <span class="label">{e(lab)}</span>' if lab else "")
        + "</td>"
        for t, lab in _summary_cells(table, digits)
    )
    foot = (
        f'<tr><th scope="row">{e(w["summary"])} ({e(_runs_count(w, len(table.runs)))})</th><td></td>'
        f"{summ}<td><strong>{e(g.name(table.verdict, verdict=True))}</strong></td></tr>"
    )
    note = legend(table, w, marker="*")
    return (
        f'<table class="ranklab-comparative">\n<caption>{e(caption(table, w))}</caption>\n'
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n"
        f"<tfoot>{foot}</tfoot>\n</table>\n"
        + (f'<p class="legend">{e(note)}</p>\n' if note else "")
    )


# each takes (table, words) and, except CSV, digits=
THESIS_WRITERS: dict[str, Callable[..., str]] = {
    "csv": to_csv,
    "markdown": to_markdown,
    "latex": to_latex,
    "html": to_html,
}

__all__ = [
    "DEFAULT_WORDS",
    "THESIS_WRITERS",
    "LATEX_PACKAGES_NOTE",
    "localized_words",
    "MISSING",
    "best_runs",
    "caption",
    "legend",
    "latex_escape",
    "to_csv",
    "to_markdown",
    "to_latex",
    "to_html",
]
