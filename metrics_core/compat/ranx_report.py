"""ranx's ``compare`` and its ``Report`` on RankLab's evaluation (the ranx drop-in,
:mod:`metrics_core.compat.ranx`).

The runs are evaluated as ranx evaluates them (its metric names, its order of tied
documents) and compared pair by pair with ranx's tests: ``student`` (two-sided paired
t-test, scipy's ``ttest_rel``: ranx's p-values), ``tukey`` (Tukey's HSD, scipy's
``tukey_hsd``: ranx's p-values) and ``fisher`` (the paired randomization test: each query's
two values swapped at random, ``n_permutations`` times; ranx draws its permutations from
numba's random generators, one per thread, which no seed reproduces, so the p-values are
the same test's estimate from other draws, and a warning says so). ranx 0.3 applies no
correction for multiple comparisons; :func:`metrics_core.compare` gives corrected p-values.

The ``Report`` prints ranx's table (the layout of ``tabulate``'s ``simple`` format ranx
uses: superscript letters for the runs each one beats significantly), and gives
``to_latex``, ``to_dict``, ``to_dataframe``, ``save`` (JSON), ``print_results``,
``win_tie_loss`` and ``comparisons`` as ranx's do.
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict

import numpy as np

CHARS = list("abcdefghijklmnopqrstuvwxyz")
SUPER_CHARS = list("ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ")  # ranx's (۹ for q)
METRIC_LABELS = {
    "hits": "Hits",
    "hit_rate": "Hit Rate",
    "precision": "P",
    "recall": "Recall",
    "f1": "F1",
    "r-precision": "R-Prec",
    "mrr": "MRR",
    "map": "MAP",
    "dcg": "DCG",
    "dcg_burges": "DCG Burges",
    "ndcg": "NDCG",
    "ndcg_burges": "NDCG Burges",
    "bpref": "BPref",
    **{f"rbp.{i}": f"RBP.{i}" for i in range(1, 100)},
}
STAT_TEST_LABELS = {
    "fisher": "Fisher's randomization test",
    "student": "paired Student's t-test",
    "tukey": "Tukey's HSD test",
}


def format_score(score: float, rounding_digits: int, show_percentages: bool) -> str:
    """ranx's formatting: rounded to ``rounding_digits`` (percentages: two fewer)."""
    if show_percentages:
        new = round(score * 100, max(0, rounding_digits - 2))
        return f"%.{rounding_digits - 2}f" % new
    return f"%.{rounding_digits}f" % round(score, rounding_digits)


def metric_label(m: str) -> str:
    """ranx's label of a metric (``ndcg@10`` -> ``NDCG@10``, ``map@100-l2`` -> ``MAP@100-l2``)."""
    suffix = ""
    if "-l" in m:
        m, level = m.split("-l")
        suffix = f"-l{level}"
    name, _, cutoff = m.partition("@")
    label = METRIC_LABELS.get(name, name)
    return f"{label}@{cutoff}{suffix}" if cutoff else f"{label}{suffix}"


class FrozensetDict(dict):
    """A dict keyed by unordered pairs: ``d["a", "b"]`` is ``d["b", "a"]`` (ranx's)."""

    def __getitem__(self, key):
        return super().__getitem__(frozenset(key))

    def __setitem__(self, key, value):
        super().__setitem__(frozenset(key), value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def simple_table(rows: list[list[str]], headers: list[str]) -> str:
    """The text of ``tabulate(rows, headers)`` (its ``simple`` format, as ranx prints a
    report): columns two spaces apart, each at least its heading plus two wide; a column
    whose every cell is a number is shown as numbers (``g`` format) aligned on the decimal
    point and to the right, the others to the left; trailing spaces removed."""
    columns = [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in headers]
    cells, aligns = [], []
    for col in columns:
        numeric = bool(col) and all(_is_number(c) for c in col)
        if numeric:
            shown = [str(int(c)) if c.lstrip("-").isdigit() else format(float(c), "g") for c in col]
            after = [len(s) - s.index(".") - 1 if "." in s else -1 for s in shown]
            most = max(after)
            shown = [s + " " * (most - a) for s, a in zip(shown, after, strict=True)]
            cells.append(shown)
            aligns.append("right")
        else:
            cells.append(list(col))
            aligns.append("left")
    widths = [
        max([len(h) + 2] + [len(c) for c in col]) for h, col in zip(headers, cells, strict=True)
    ]

    def pad(text, width, align):
        return text.rjust(width) if align == "right" else text.ljust(width)

    lines = [
        "  ".join(pad(h, w, a) for h, w, a in zip(headers, widths, aligns, strict=True)).rstrip()
    ]
    lines.append("  ".join("-" * w for w in widths))
    for i in range(len(rows)):
        lines.append(
            "  ".join(
                pad(col[i], w, a) for col, w, a in zip(cells, widths, aligns, strict=True)
            ).rstrip()
        )
    return "\n".join(lines)


class Report:
    """ranx's ``Report``: the mean of each metric per run and the pairwise tests.

    Attributes as ranx's: ``model_names``, ``results`` (``{run: {metric: mean}}``),
    ``comparisons`` (``report.comparisons[a, b][metric]`` -> ``{"p_value", "significant"}``),
    ``metrics``, ``max_p``, ``win_tie_loss`` (``{(a, b): {metric: {"W", "T", "L"}}}``),
    ``rounding_digits``, ``show_percentages``, ``stat_test``."""

    def __init__(
        self,
        model_names,
        results,
        comparisons,
        metrics,
        max_p,
        win_tie_loss,
        rounding_digits=3,
        show_percentages=False,
        stat_test="student",
    ):
        self.model_names, self.results, self.comparisons = model_names, results, comparisons
        self.metrics, self.max_p, self.win_tie_loss = metrics, max_p, win_tie_loss
        self.rounding_digits, self.show_percentages = rounding_digits, show_percentages
        self.stat_test = stat_test

    def format_score(self, score) -> str:
        return format_score(score, self.rounding_digits, self.show_percentages)

    def get_metric_label(self, m: str) -> str:
        return metric_label(m)

    def get_stat_test_label(self, stat_test: str) -> str:
        return STAT_TEST_LABELS[stat_test]

    def _beats(self, model: str, metric: str) -> list[int]:
        return [
            j
            for j, other in enumerate(self.model_names)
            if model != other
            and self.comparisons[model, other][metric]["significant"]
            and self.results[model][metric] > self.results[other][metric]
        ]

    def get_superscript_for_table(self, model, metric) -> str:
        return "".join(SUPER_CHARS[j] for j in self._beats(model, metric))

    def get_superscript_for_latex(self, model, metric) -> str:
        return "".join(CHARS[j] for j in self._beats(model, metric))

    def get_phantoms_for_latex(self, model, metric) -> str:
        beats = set(self._beats(model, metric))
        return "".join(
            CHARS[j]
            for j, other in enumerate(self.model_names)
            if model != other and j not in beats
        )

    def to_table(self) -> str:
        rows = []
        for i, (run, values) in enumerate(self.results.items()):
            rows.append(
                [CHARS[i], run]
                + [
                    self.format_score(score) + self.get_superscript_for_table(run, metric)
                    for metric, score in values.items()
                ]
            )
        return simple_table(rows, ["#", "Model"] + [metric_label(m) for m in self.metrics])

    def to_latex(self) -> str:
        """The report as ranx's LaTeX table (booktabs; the best value of each metric in bold,
        superscripts for significant wins)."""
        best = {}
        for m in self.metrics:
            best_model, best_score = None, 0.0
            for model in self.model_names:
                value = round(self.results[model][m], self.rounding_digits)
                if best_score < value:
                    best_score, best_model = value, model
            best[m] = best_model
        preamble = (
            "========================\n% Add in preamble\n\\usepackage{graphicx}\n"
            "\\usepackage{booktabs}\n========================\n\n"
        )
        prefix = (
            "% To change the table size, act on the resizebox argument `0.8`.\n"
            "\\begin{table*}[ht]\n\\centering\n\\caption{\nOverall effectiveness of the models.\n"
            "The best results are highlighted in boldface.\nSuperscripts denote significant "
            "differences in "
            + self.get_stat_test_label(self.stat_test)
            + " with $p \\le "
            + str(self.max_p)
            + "$.\n}\n\\resizebox{0.8\\textwidth}{!}{"
            + "\n\\begin{tabular}{c|l"
            + "|c" * len(self.metrics)
            + "}"
            + "\n\\toprule"
            + "\n\\textbf{\\#}"
            + "\n& \\textbf{Model}"
            + "".join(f"\n& \\textbf{{{metric_label(m)}}}" for m in self.metrics)
            + " \\\\ \n\\midrule"
        )
        body = []
        for i, model in enumerate(self.model_names):
            row = f"{CHARS[i]} &\n{model} &\n"
            scores = []
            for m in self.metrics:
                score = self.format_score(self.results[model][m])
                score = f"\\textbf{{{score}}}" if best[m] == model else score
                sup = self.get_superscript_for_latex(model, m)
                phantoms = self.get_phantoms_for_latex(model, m)
                scores.append(f"{score}$^{{{sup}}}$\\hphantom{{$^{{{phantoms}}}$}} &")
            scores[-1] = scores[-1][:-1]
            body.append(row + "\n".join(scores) + "\\\\")
        content = "\n".join(body).replace("_", "\\_").replace("$^{}$", "")
        suffix = "\\bottomrule\n\\end{tabular}\n}\n\\label{tab:results}\n\\end{table*}"
        return preamble + "\n" + prefix + "\n" + content + "\n" + suffix

    def to_dict(self) -> dict:
        d: dict = {
            "stat_test": self.stat_test,
            "metrics": self.metrics,
            "model_names": self.model_names,
        }
        for a in self.model_names:
            d[a] = {"scores": self.results[a], "comparisons": {}, "win_tie_loss": {}}
            for b in self.model_names:
                if a != b:
                    d[a]["comparisons"][b] = {
                        m: self.comparisons[a, b][m]["p_value"] for m in self.metrics
                    }
                    d[a]["win_tie_loss"][b] = {
                        m: self.win_tie_loss[(a, b)][m] for m in self.metrics
                    }
        return d

    def to_dataframe(self):
        import pandas as pd

        d = self.to_dict()
        frame = pd.DataFrame.from_dict(
            {name: d[name]["scores"] for name in d["model_names"]}, orient="index"
        )
        return frame.reset_index().rename(columns={"index": "model_names"})

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(self.to_dict(), indent=4, default=_plain))

    def print_results(self) -> None:
        print(json.dumps(self.results, indent=4))

    def __repr__(self) -> str:
        return self.to_table()

    __str__ = __repr__


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)


def _randomization(a: np.ndarray, b: np.ndarray, n: int, seed: int) -> float:
    """ranx's Fisher test: the share of ``n`` random swaps of each query's two values whose
    absolute difference of means is at least the observed one."""
    rng = np.random.default_rng(seed)
    observed = abs(a.mean() - b.mean())
    hits = 0
    block = max(1, 2_000_000 // max(len(a), 1))
    for start in range(0, n, block):
        size = min(block, n - start)
        swap = rng.random((size, len(a))) < 0.5
        x = np.where(swap, b, a).mean(axis=1)
        y = np.where(swap, a, b).mean(axis=1)
        hits += int(np.sum(np.abs(x - y) >= observed))
    return hits / n


def compare(
    qrels,
    runs,
    metrics,
    stat_test: str = "student",
    n_permutations: int = 1000,
    max_p: float = 0.01,
    random_seed: int = 42,
    threads: int = 0,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    make_comparable: bool = False,
) -> Report:
    """ranx's ``compare``: every run evaluated, every pair tested (``stat_test``:
    ``student``, ``fisher`` or ``tukey``), as a :class:`Report`."""
    from scipy import stats

    from metrics_core.compat.ranx_data import evaluate
    from metrics_core.errors import InputError

    if stat_test not in STAT_TEST_LABELS:
        raise InputError(
            f"ranx drop-in: statistical test {stat_test!r} is not supported (student, fisher, tukey)"
        )
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    names: list[str] = []
    scores: dict = {}
    results: dict = defaultdict(dict)
    for i, run in enumerate(runs):
        name = run.name if getattr(run, "name", None) is not None else f"run_{i + 1}"
        names.append(name)
        values = evaluate(qrels, run, metrics, return_mean=False, make_comparable=make_comparable)
        scores[name] = {metrics[0]: values} if len(metrics) == 1 else values
        for m in metrics:
            results[name][m] = float(np.mean(scores[name][m]))
    comparisons = FrozensetDict()
    if stat_test == "fisher":
        warnings.warn(
            "ranx drop-in: Fisher's randomization test draws its permutations here with numpy "
            f"(seed {random_seed}); ranx's come from numba's per-thread generators, which no seed "
            "reproduces: p-values differ by sampling error",
            stacklevel=2,
        )
    if stat_test in ("student", "fisher"):
        for a in names:
            for b in names:
                if a == b:
                    continue
                entry = {}
                for m in metrics:
                    x, y = scores[a][m], scores[b][m]
                    if stat_test == "student":
                        p = float(stats.ttest_rel(x, y, alternative="two-sided").pvalue)
                    else:
                        p = _randomization(x, y, n_permutations, random_seed)
                    entry[m] = {"p_value": p, "significant": p <= max_p}
                comparisons[a, b] = entry
    else:
        for i, a in enumerate(names):
            for b in names[i:]:
                comparisons[a, b] = {m: None for m in metrics}
        for m in metrics:
            p_values = stats.tukey_hsd(*[scores[n][m] for n in names]).pvalue
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    comparisons[a, b][m] = {
                        "p_value": float(p_values[i, j]),
                        "significant": bool(p_values[i, j] <= max_p),
                    }
    win_tie_loss: dict = defaultdict(dict)
    for a in names:
        for b in names:
            if a != b:
                for m in metrics:
                    x, y = scores[a][m], scores[b][m]
                    win_tie_loss[(a, b)][m] = {
                        "W": int(np.sum(x > y)),
                        "T": int(np.sum(x == y)),
                        "L": int(np.sum(x < y)),
                    }
    return Report(
        model_names=names,
        results=dict(results),
        comparisons=comparisons,
        metrics=metrics,
        max_p=max_p,
        win_tie_loss=dict(win_tie_loss),
        rounding_digits=rounding_digits,
        show_percentages=show_percentages,
        stat_test=stat_test,
    )


__all__ = ["compare", "Report", "FrozensetDict", "simple_table", "format_score", "metric_label"]
