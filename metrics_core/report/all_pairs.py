"""Every run against every other (or several baselines) as a Comparison that formats itself.

:func:`compare_all_pairs` (``mc.compare(..., all_pairs=True)`` or a list of baselines) runs
:func:`metrics_core.stats.allpairs.all_pairs` and returns an :class:`AllPairsComparison`:
per measure, each run's mean with the letters of the runs it significantly beats, as ranx's
report shows them, in Markdown, LaTeX, HTML, CSV and JSON.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.report.cells import latex_escape, latex_table, markdown_escape
from metrics_core.report.evaluations import as_runs, evaluations_json
from metrics_core.report.exports import format_table, json_safe, provenance

#: the tests of the all-pairs tables, as the legends name them
PAIR_TEST_NAMES = {
    "permutation": N_("paired randomization test"),
    "t": N_("paired t-test"),
    "wilcoxon": N_("Wilcoxon signed-rank test"),
    "tukey": N_("Tukey's HSD test"),
}
#: superscript letters for the all-pairs tables (Unicode has no superscript q; ranx uses this one)
SUPERSCRIPTS = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᑫʳˢᵗᵘᵛʷˣʸᶻ", strict=True))


class AllPairsComparison:
    """Every run against every other (or against several baselines), measure by measure.

    Made by :func:`compare` with ``all_pairs=True`` or a list of ``baselines``. Each run gets
    a letter (a, b, c ...); a run's cell carries the letters of the runs it significantly
    beats on that measure (higher mean, corrected p-value below alpha), as ranx's report does.
    :meth:`pairs` is the long table of every tested pair
    (:func:`metrics_core.stats.allpairs.all_pairs`).
    """

    def __init__(self, pairs: pd.DataFrame, runs: Sequence = (), conventions=None):
        self._pairs = pairs
        self.runs = tuple(runs)
        self._conventions = conventions
        conv = conventions.as_dict() if hasattr(conventions, "as_dict") else conventions
        self._frame = pairs
        self.settings = {
            **pairs.attrs,
            "baseline": None,
            "all_pairs": pairs.attrs.get("baselines") is None,
            "permutations": pairs.attrs.get("n_permutations"),
            "bootstrap": None,
            "confidence": None,
            "tests": [pairs.attrs["test"]],
            "conventions": None if conv is None else dict(conv),
        }

    @property
    def records(self) -> list[dict]:
        return json_safe(self.to_frame().to_dict(orient="records"))

    def to_frame(self) -> pd.DataFrame:
        out = self._pairs.copy()
        out.attrs = {}
        return out

    pairs = to_frame

    def wide(self) -> pd.DataFrame:
        return self.to_frame()

    def letters(self) -> dict[str, str]:
        from metrics_core.stats.allpairs import letters

        return letters(self.settings["runs"])

    def paper(self, tests: Sequence[str] = (), digits: int = 4) -> pd.DataFrame:
        """Runs (``"a bm25"``) x measures: ``mean`` followed by the letters of the runs it beats."""
        from metrics_core.stats.allpairs import beats, means_table

        means = means_table(self.runs, self._pairs)
        won = beats(self._pairs)
        let = self.letters()
        out = pd.DataFrame(
            index=pd.Index([f"{let[r]} {r}" for r in means.index], name="run"),
            columns=means.columns,
            dtype=object,
        )
        for r in means.index:
            for m in means.columns:
                v = means.loc[r, m]
                cell = "–" if pd.isna(v) else f"{v:.{digits}f}"
                marks = "".join(let[x] for x in won.get((r, m), []))
                out.loc[f"{let[r]} {r}", m] = cell + (
                    " " + "".join(SUPERSCRIPTS.get(c, c) for c in marks) if marks else ""
                )
        return out

    def leaderboard(self, n_resamples: int = 1000, test: str | None = None) -> pd.DataFrame:
        raise InputError(
            N_("the leaderboard needs one baseline"),
            field="baseline",
            hint=N_("compare against one baseline for the leaderboard"),
        )

    def legend(self, tests: Sequence[str] = (), paper: bool = True, gettext=None) -> str:
        from metrics_core.errors import fill
        from metrics_core.report.legends import CORRECTION_NAMES, QUERY_SET_LABELS

        tr = gettext or (lambda s: s)
        s = self.settings
        n = len(self._pairs)
        if s["test"] == "tukey":
            text = fill(
                N_(
                    "Letters: the runs a run beats on the measure ({test}, alpha {alpha}; the "
                    "test controls the error over all pairs of a measure). Queries: {queries}."
                ),
                {
                    "test": tr(PAIR_TEST_NAMES["tukey"]),
                    "alpha": s["alpha"],
                    "queries": tr(QUERY_SET_LABELS[s["query_set"]]),
                },
                tr,
            )
        else:
            text = fill(
                N_(
                    "Letters: the runs a run beats on the measure ({test}, alpha {alpha}, "
                    "{correction} correction over {count} comparisons). Queries: {queries}."
                ),
                {
                    "test": tr(PAIR_TEST_NAMES[s["test"]]),
                    "alpha": s["alpha"],
                    "correction": tr(CORRECTION_NAMES.get(s["correction"], s["correction"])),
                    "count": n,
                    "queries": tr(QUERY_SET_LABELS[s["query_set"]]),
                },
                tr,
            )
        if s.get("baselines"):
            text += " " + fill(
                N_("Pairs tested: each baseline ({baselines}) against every run."),
                {"baselines": ", ".join(s["baselines"])},
                tr,
            )
        return text

    def queries(self, gettext=None) -> str:
        from metrics_core.report.legends import QUERY_SET_LABELS

        tr = gettext or (lambda s: s)
        return tr(QUERY_SET_LABELS[self.settings["query_set"]])

    def provenance(self) -> dict:
        """RankLab version, conventions and :meth:`parameters` (what every export states)."""
        return provenance(self._conventions, **self.parameters())

    def parameters(self) -> dict:
        s = self.settings
        return {
            "all_pairs": s["all_pairs"],
            "baselines": s.get("baselines"),
            "test": s["test"],
            "permutations": s.get("n_permutations"),
            "seed": s.get("seed"),
            "correction": s["correction"],
            "alpha": s["alpha"],
            "query_set": s["query_set"],
        }

    def to_dict(self, per_query: bool = False) -> dict:
        out = evaluations_json(self.runs, self._conventions, per_query)
        out["comparison"] = self.parameters()
        out["letters"] = self.letters()
        out["comparisons"] = self.records
        return json_safe(out)

    def to_table(self, fmt: str = "table") -> str:
        if fmt not in ("table", "csv"):
            raise InputError(
                N_("unknown table format {format!r}"),
                hint=N_("accepted: table, csv"),
                field="format",
                params={"format": fmt},
            )
        return format_table(
            self.to_frame(), fmt, prov=self.provenance(), index=False, title=self.queries()
        )

    def to_markdown(self, tests: Sequence[str] = (), digits: int = 4) -> str:
        table = self.paper(digits=digits).reset_index()
        cols = [str(c) for c in table.columns]
        lines = [
            "| " + " | ".join(markdown_escape(c) for c in cols) + " |",
            "|" + "---|" * len(cols),
        ]
        for row in table.itertuples(index=False, name=None):
            lines.append("| " + " | ".join(markdown_escape(v) for v in row) + " |")
        line = format_table(pd.DataFrame(), "table", prov=self.provenance()).strip()
        return (
            "\n".join([*lines, "", markdown_escape(self.legend()), "", markdown_escape(line)])
            + "\n"
        )

    def to_latex(
        self,
        tests: Sequence[str] = (),
        digits: int = 4,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        r"""The runs x measures table as a LaTeX ``table`` (booktabs): each mean followed by
        ``$^{ab}$``, the letters of the runs it beats; names and legend escaped."""
        from metrics_core.stats.allpairs import beats, means_table

        means = means_table(self.runs, self._pairs)
        won = beats(self._pairs)
        let = self.letters()
        caption = caption or "Every run against every other: mean, and the runs it beats"
        line = format_table(pd.DataFrame(), "table", prov=self.provenance()).strip()
        rows = []
        for r in means.index:
            cells = [f"({let[r]}) " + latex_escape(r)]
            for m in means.columns:
                v = means.loc[r, m]
                marks = "".join(let[x] for x in won.get((r, m), []))
                cells.append(
                    ("--" if pd.isna(v) else f"{v:.{digits}f}")
                    + (f"$^{{{marks}}}$" if marks else "")
                )
            rows.append(cells)
        return latex_table(["run", *means.columns], rows, caption, label, line, self.legend())

    def to_html(self, digits: int = 4, gettext=None) -> str:
        """The runs x measures table as an HTML fragment (names escaped, letters in ``<sup>``);
        ``gettext`` translates the header and the legend (the HTML report's)."""
        import html

        from metrics_core.stats.allpairs import beats, means_table

        means = means_table(self.runs, self._pairs)
        won = beats(self._pairs)
        let = self.letters()
        tr = gettext or (lambda text: text)
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [tr(N_("run")), *means.columns])
        body = []
        for r in means.index:
            cells = [f"<td>({let[r]}) {html.escape(str(r))}</td>"]
            for m in means.columns:
                v = means.loc[r, m]
                marks = "".join(let[x] for x in won.get((r, m), []))
                cells.append(
                    f"<td>{'–' if pd.isna(v) else f'{v:.{digits}f}'}"
                    + (f"<sup>{marks}</sup>" if marks else "")
                    + "</td>"
                )
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (
            f"<table class='all-pairs'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f'<p class="legend">{html.escape(self.legend(gettext=gettext))}</p>'
        )

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"AllPairsComparison(runs={list(s['runs'])}, measures={list(s['measures'])}, test={s['test']!r}, "
            f"correction={s['correction']!r}, baselines={s.get('baselines')})"
        )

    def _repr_html_(self) -> str:
        return self.to_html()


def compare_all_pairs(
    evaluations,
    *,
    baselines=None,
    measures=None,
    test: str = "permutation",
    n_permutations: int = 10000,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    query_set: str = "common",
    conventions=None,
    power: float | None = None,
    power_alpha: float | None = None,
    power_delta: float | None = None,
    power_method: str = "exact",
) -> AllPairsComparison:
    """Every run against every other on every measure (or each of ``baselines`` against every
    run), as an :class:`AllPairsComparison`; ``test``: ``permutation`` (default), ``t``,
    ``wilcoxon`` or ``tukey`` (Tukey's HSD). ``compare(..., all_pairs=True)`` calls this.

    Examples
    --------
    >>> idx = pd.Index([f"q{i}" for i in range(6)], name="query_id")
    >>> from metrics_core.report.comparison import compare
    >>> c = compare({"a": pd.DataFrame({"AP": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3]}, index=idx),
    ...              "b": pd.DataFrame({"AP": [0.9, 0.7, 0.95, 0.8, 0.85, 0.75]}, index=idx),
    ...              "c": pd.DataFrame({"AP": [0.5, 0.45, 0.6, 0.55, 0.4, 0.5]}, index=idx)},
    ...             all_pairs=True, test="t")
    >>> c.paper(digits=1)["AP"].tolist()
    ['0.2', '0.8 ᵃᶜ', '0.5 ᵃ']
    """
    from metrics_core.stats.allpairs import all_pairs

    runs = as_runs(evaluations)
    if conventions is None and runs:
        conventions = getattr(runs[0], "conventions", None)
    frame = all_pairs(
        runs,
        measures,
        test=test,
        correction=correction,
        alpha=alpha,
        n_permutations=n_permutations,
        seed=seed,
        query_set=query_set,
        baselines=baselines,
        power=power,
        power_alpha=power_alpha,
        power_delta=power_delta,
        power_method=power_method,
    )
    return AllPairsComparison(frame, runs, conventions)


__all__ = ["AllPairsComparison", "compare_all_pairs", "SUPERSCRIPTS", "PAIR_TEST_NAMES"]
