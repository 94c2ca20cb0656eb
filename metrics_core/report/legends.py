"""The words of a comparison with a baseline: the names of the query sets, tests and
corrections, the paper table of means with markers, and the legends and sentences under the
tables (markers, the correction's family, the query set, the leaderboard's legend).

The numbers come from :mod:`metrics_core.stats.comparison` (:func:`compare_runs`,
:func:`leaderboard`, :func:`correction_family`); this module only writes them in words.
Every function takes ``gettext``, a translation function (the app's), applied to every phrase
and name; English without it.
"""

from __future__ import annotations

import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.stats.comparison import MARKERS, correction_family

#: Plain-language description of each query set (legends, reports).
QUERY_SET_LABELS = {
    "common": N_("the queries every run answered"),
    "qrels": N_("every qrels query, a run that did not answer a query scoring 0 (trec_eval -c)"),
    "pairwise": N_("the queries both runs of each pair answered"),
}
#: Names of the tests and corrections (marked for the catalogs: translated where shown).
TEST_NAMES = {
    "t": N_("paired t-test"),
    "wilcoxon": N_("Wilcoxon signed-rank test"),
    "permutation": N_("paired randomization test"),
}
CORRECTION_NAMES = {
    "holm": N_("Holm"),
    "bonferroni": N_("Bonferroni"),
    "bh": N_("Benjamini-Hochberg"),
    "none": N_("no"),
}


def _same(text: str) -> str:
    return text


def paper_table(frame: pd.DataFrame, tests=("permutation",), digits: int = 4) -> pd.DataFrame:
    """A run x measure table of means with markers, for a paper.

    The baseline row shows its means; each other row shows ``mean (+delta)`` followed by
    the markers of ``tests`` whose corrected p-value is below alpha (see :data:`MARKERS`).
    """
    if frame.empty:
        return pd.DataFrame()
    measures = list(dict.fromkeys(frame["measure"]))
    for m in measures:
        rows = frame[frame["measure"] == m]
        if rows["n_queries"].nunique() > 1:
            raise InputError(
                N_("the comparisons of {measure} use different query sets ({counts} queries)"),
                hint=N_("compare on one query set (query_set='common' or 'qrels')"),
                params={
                    "measure": m,
                    "counts": ", ".join(map(str, sorted(set(rows["n_queries"])))),
                },
            )
    baseline = frame["baseline"].iloc[0]
    table = {
        baseline: {
            m: f"{frame.loc[frame['measure'] == m, 'mean_baseline'].iloc[0]:.{digits}f}"
            for m in measures
        }
    }
    for r in frame.itertuples(index=False):
        marks = "".join(MARKERS[t] for t in tests if r.significant[t])
        table.setdefault(r.run, {})[r.measure] = (
            f"{r.mean_run:.{digits}f} ({r.mean_delta:+.{digits}f}){marks}"
        )
    out = pd.DataFrame.from_dict(table, orient="index")[measures]
    out.index.name = "run"
    return out


def markers_legend(
    frame: pd.DataFrame, tests=("permutation",), paper: bool = True, gettext=None
) -> str:
    """One sentence explaining the markers of :func:`paper_table`, the correction's family
    (:func:`family_sentence`) and the query set. ``paper=False``: a table with a delta
    column of its own, so no "in parentheses". ``gettext``: a translation function (the
    app's), applied to every phrase and name; English without it."""
    _ = gettext or _same
    a = frame.attrs
    names = {t: _(n) for t, n in TEST_NAMES.items()}
    names["permutation"] = _("paired randomization test ({flips} sign flips, seed {seed})").format(
        flips=a.get("permutations"), seed=a.get("seed")
    )
    parts = [f"{MARKERS[t]} p < {a.get('alpha', 0.05)} ({names[t]})" for t in tests]
    return (
        _("Baseline: {baseline}. ").format(baseline=a.get("baseline"))
        + (_("Delta vs baseline in parentheses; ") if paper else "")
        + "; ".join(parts)
        + ". "
        + " ".join(
            t
            for t in (
                family_sentence(frame, explain=not paper, gettext=gettext),
                queries_sentence(frame, gettext=gettext),
            )
            if t
        )
    )


def family_sentence(frame: pd.DataFrame, explain: bool = True, gettext=None) -> str:
    """The words that say which comparisons a table's correction covers (see
    :func:`correction_family`): every page that shows corrected p-values states it, so two
    pages that show a pair with different corrected p-values say why. ``explain=False``
    stops after the family (a paper's table note). ``gettext``: as :func:`markers_legend`.
    Empty when the table compares nothing (a single run).

    >>> f = pd.DataFrame({"run": ["b", "b"], "measure": ["RR", "AP"]})
    >>> f.attrs.update(baseline="a", correction="holm")
    >>> print(family_sentence(f))
    Holm correction over the 2 comparisons of this table (1 run against a × 2 measures); a table with other runs or measures corrects over its own comparisons, so its corrected p-value for the same pair differs (the uncorrected p-value is the same).
    >>> print(family_sentence(f, explain=False))
    Holm correction over the 2 comparisons of this table (1 run against a × 2 measures).
    """
    _ = gettext or _same
    f = correction_family(frame)
    if f["n"] == 0:  # nothing compared (one run): no correction to state
        return ""
    if f["correction"] == "none":
        return _("No multiple-comparison correction: each p-value is its test's own.")
    runs, measures = len(f["runs"]), len(f["measures"])
    against = (
        _("{runs} run against {baseline}") if runs == 1 else _("{runs} runs against {baseline}")
    ).format(runs=runs, baseline=f["baseline"])
    shape = (_("{measures} measure") if measures == 1 else _("{measures} measures")).format(
        measures=measures
    )
    method = CORRECTION_NAMES[f["correction"]]
    if f["scope"] == "per_measure":
        family = (
            _(
                "{correction} correction per measure (as PyTerrier), over the one comparison of each "
                "measure ({against})"
            )
            if f["n"] == 1
            else _(
                "{correction} correction per measure (as PyTerrier), over the {n} comparisons of each "
                "measure ({against})"
            )
        ).format(correction=_(method), n=f["n"], against=against)
    else:
        family = (
            _("{correction} correction over the one comparison of this table ({against} × {shape})")
            if f["n"] == 1
            else _(
                "{correction} correction over the {n} comparisons of this table ({against} × {shape})"
            )
        ).format(correction=_(method), n=f["n"], against=against, shape=shape)
    if f["excluded"]:
        family += _(
            "; {measures} describe the runs rather than judge them: not corrected, never marked"
        ).format(measures=", ".join(f["excluded"]))
    if not explain:
        return family + "."
    return family + _(
        "; a table with other runs or measures corrects over its own comparisons, so its "
        "corrected p-value for the same pair differs (the uncorrected p-value is the same)."
    )


def queries_sentence(frame: pd.DataFrame, gettext=None) -> str:
    """ "Queries: ..." naming the query set and its size per measure. ``gettext``: as
    :func:`markers_legend`."""
    _ = gettext or _same
    qs = frame.attrs.get("query_set", "common")
    label = _(QUERY_SET_LABELS[qs])
    if frame.empty:
        return _("Queries: {queries}.").format(queries=label)
    if qs == "pairwise":
        return _("Queries: {queries} (n per row).").format(queries=label)
    sizes = frame.groupby("measure", sort=False)["n_queries"].first()
    if sizes.nunique() == 1:
        return _("Queries: {queries}, n = {n}.").format(queries=label, n=int(sizes.iloc[0]))
    return _("Queries: {queries}, n = {n}.").format(
        queries=label, n=", ".join(f"{int(n)} ({m})" for m, n in sizes.items())
    )


def leaderboard_legend(board: pd.DataFrame, gettext=None, explain: bool = True) -> str:
    """The legend of a :func:`leaderboard`: best mark, significance marker, the correction's
    family (:func:`family_sentence`; ``explain=False`` leaves out why another table's
    corrected p-value differs), CI, query set. ``gettext``: as :func:`markers_legend`."""
    _ = gettext or _same
    a = board.attrs
    test = a.get("test", "permutation")
    sets = board.groupby("measure", sort=False)["n_queries"].first() if len(board) else pd.Series()
    n = (
        f"n = {int(sets.iloc[0])}"
        if len(sets) and sets.nunique() == 1
        else _("n per measure in the header")
    )
    interval = (
        _("CI: {confidence} percentile bootstrap interval of the mean.").format(
            confidence=f"{a.get('confidence', 0.95):.0%}"
        )
        + " "
        + _("Queries: {queries}, {n}.").format(
            queries=_(QUERY_SET_LABELS[a.get("query_set", "common")]), n=n
        )
    )
    if "run" not in board or board["run"].nunique() < 2:  # one run: no best, no test, no correction
        return interval
    return (
        _(
            "★ best mean of the measure. {marker} significantly different from the baseline "
            "{baseline} ({test}, p < {alpha})."
        ).format(
            marker=MARKERS[test],
            baseline=a.get("baseline"),
            test=_(TEST_NAMES[test]),
            alpha=a.get("alpha", 0.05),
        )
        + " "
        + family_sentence(board, gettext=gettext, explain=explain)
        + " "
        + interval
    )


__all__ = [
    "QUERY_SET_LABELS",
    "TEST_NAMES",
    "CORRECTION_NAMES",
    "paper_table",
    "markers_legend",
    "family_sentence",
    "queries_sentence",
    "leaderboard_legend",
]


#: the sentence under a table of the topic set size design (its method and references)
POWER_SENTENCE = N_(
    "Queries needed: the fewest queries for which a two-sided paired t-test at alpha {alpha} "
    "detects the difference with power {power}{chosen}; the power from the noncentral t "
    "distribution{approximation}, sigma the standard deviation of the per-query differences "
    "(T. Sakai, Topic set size design, Information Retrieval Journal 19(3), 2016; W. Webber, "
    "A. Moffat, J. Zobel, Statistical power in retrieval experimentation, CIKM 2008). "
    "Smallest detectable: the least difference the current queries detect with that power."
)
POWER_CHOSEN = N_("; for the chosen difference {delta}")
POWER_NAGATA = N_(" (Nagata's normal approximation of it, as Sakai's tool computes it)")


def power_sentence(settings: dict | None, gettext=None) -> str:
    """The sentence stating a power analysis (``settings``: a comparison's ``power``
    setting), in the words of ``gettext``; empty without one.

    >>> power_sentence({"power": 0.8, "alpha": 0.05, "delta": None, "method": "exact"})[:60]
    'Queries needed: the fewest queries for which a two-sided pai'
    """
    if not settings:
        return ""
    _ = gettext or _same
    chosen = (
        ""
        if settings.get("delta") is None
        else _(POWER_CHOSEN).format(delta=f"{settings['delta']:g}")
    )
    approx = _(POWER_NAGATA) if settings.get("method") == "nagata" else ""
    return _(POWER_SENTENCE).format(
        alpha=f"{settings['alpha']:g}",
        power=f"{settings['power']:g}",
        chosen=chosen,
        approximation=approx,
    )
