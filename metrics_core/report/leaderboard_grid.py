"""The leaderboard grid as a table of text: per run a row of means (best marked, the
significance marker), a row of interval bounds and, when given, a row with the band of the
mean over tie orders (:func:`tie_band`) and one with its band over the labellings of the
unjudged documents (the same function on :meth:`metrics_core.Ranking.unjudged_bounds`);
:func:`reversible_pairs` names the pairs whose order a band could reverse. The app styles
it; the HTML report renders it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from metrics_core.report.thesis import display_measure

BEST = "★"
#: the label of the interval rows starts with spaces (indented under the run's name)
CI_INDENT = "   "
TIE_ROW = CI_INDENT + "tie band"
UNJUDGED_ROW = CI_INDENT + "unjudged band"


def _same(text: str) -> str:
    return text


def leaderboard_grid(
    board: pd.DataFrame,
    band: pd.DataFrame | None = None,
    gettext=None,
    unjudged: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The runs x measures grid shown first: per run a row of means (★ best, significance
    marker) and, under it, a row of interval bounds; with ``band`` (index (run, measure), columns low and high), a third
    row "tie band" for each run whose mean depends on the order of tied scores (blank where
    it does not). When the measures' query sets differ in size, each measure's header carries
    its n.

    Columns are the measures' means, named as people name them (RR's mean is MRR:
    :func:`~metrics_core.report.thesis.display_measure`).

    ``gettext``: a translation function (str -> str) for the first column's name ("Run")
    and the row labels ("(baseline)", "95% CI", "tie band", "unjudged band"); English
    without it. The interval and band rows' labels start with :data:`CI_INDENT` in every
    language. ``unjudged``: the band over the labellings of the unjudged documents (the
    shape of ``band``), a row "unjudged band" under the tie band."""
    _ = gettext or _same
    measures = list(dict.fromkeys(board["measure"]))
    baseline = board.attrs.get("baseline")
    conf = board.attrs.get("confidence", 0.95)
    sizes = board.groupby("measure", sort=False)["n_queries"].first()
    # the columns are the measures' means over the queries: the mean of RR reads MRR
    header = (
        {m: display_measure(m) for m in measures}
        if sizes.nunique() <= 1
        else {m: f"{display_measure(m)} (n={int(sizes[m])})" for m in measures}
    )
    rows = []
    for run, part in board.groupby("run", sort=False):
        part = part.set_index("measure")
        mean_row = {"Run": _("{run} (baseline)").format(run=run) if run == baseline else str(run)}
        ci_row = {"Run": CI_INDENT + _("{confidence} CI").format(confidence=f"{conf:.0%}")}
        for m in measures:
            r = part.loc[m]
            text = "–" if pd.isna(r["mean"]) else f"{r['mean']:.4f}"
            marks = (BEST if r["best"] else "") + r["marker"]
            mean_row[header[m]] = f"{text} {marks}".rstrip()
            ci_row[header[m]] = "–" if pd.isna(r["ci_lo"]) else f"{r['ci_lo']:.4f}–{r['ci_hi']:.4f}"
        rows += [mean_row, ci_row]
        for table, label in ((band, _("tie band")), (unjudged, _("unjudged band"))):
            if table is not None and run in table.index.get_level_values("run"):
                band_row = {"Run": CI_INDENT + label}
                for m in measures:
                    b = table.loc[(run, m)] if (run, m) in table.index else None
                    band_row[header[m]] = "" if b is None else f"{b['low']:.4f}–{b['high']:.4f}"
                rows.append(band_row)
    return pd.DataFrame(rows, columns=["Run", *header.values()]).rename(columns={"Run": _("Run")})


def bounds_of_report(report: dict) -> dict[str, tuple[pd.Series, pd.Series]]:
    """Per measure (minimum, maximum) Series indexed by query id, from a tie report
    (``Evaluation.tie_report`` shape, :func:`metrics_core.ranking.ties.tie_report`)."""
    per = report.get("per_query", {})
    out = {}
    for m in report.get("aggregate", {}):
        queries = [q for q, d in per.items() if m in d]
        out[m] = (
            pd.Series([per[q][m]["min"] for q in queries], index=queries, dtype="float64"),
            pd.Series([per[q][m]["max"] for q in queries], index=queries, dtype="float64"),
        )
    return out


def tie_band(board: pd.DataFrame, frames: dict, bounds: dict) -> pd.DataFrame:
    """The band of each leaderboard mean over every order of tied scores, on the board's own
    query set: the mean of the per-query minima and the mean of the per-query maxima (a query
    the bounds lack, e.g. scored 0 as unanswered, counts its value for both), so the band
    contains the mean.

    Parameters
    ----------
    board : DataFrame
        :func:`metrics_core.stats.comparison.leaderboard` output (its ``query_set`` attr).
    frames : dict
        Run name -> per-query values (the evaluations the board was built from).
    bounds : dict
        Run name -> None, or per measure ``(minimum, maximum)`` Series indexed by query id
        (:func:`metrics_core.ranking.ties.tie_bounds` with the query ids), or a whole tie
        report (``Evaluation.tie_report`` shape).

    Returns
    -------
    DataFrame indexed by (run, measure): low, high, dependent (queries whose value depends
    on the tie order). Only pairs whose band is not a single point; measures the bounds do
    not cover are absent.

    Examples
    --------
    >>> from metrics_core.stats.comparison import leaderboard
    >>> pq = pd.DataFrame({"RR": [1.0, 1.0]}, index=["q1", "q2"])
    >>> board = leaderboard([SimpleNamespace(run_name="a", per_query=pq)], "a", ["RR"], n_resamples=10)
    >>> lo, hi = pd.Series([0.5, 1.0], index=["q1", "q2"]), pd.Series([1.0, 1.0], index=["q1", "q2"])
    >>> tie_band(board, {"a": pq}, {"a": {"RR": (lo, hi)}}).loc[("a", "RR")].tolist()
    [0.75, 1.0, 1.0]
    """
    from metrics_core.stats.comparison import aligned_values

    query_set = board.attrs.get("query_set", "common")
    evaluations = [SimpleNamespace(run_name=n, per_query=f) for n, f in frames.items()]
    bounds = {
        n: (bounds_of_report(b) if b is not None and "per_query" in b else b)
        for n, b in bounds.items()
    }
    rows = []
    for m in dict.fromkeys(board["measure"]):
        covered = [n for n, b in bounds.items() if b is not None and m in b]
        if not covered:
            continue
        table = aligned_values(evaluations, m, query_set)
        for name in covered:
            value = table[name]
            low, high = (
                s.reindex(table.index).fillna(value).to_numpy(dtype=np.float64)
                for s in bounds[name][m]
            )
            dependent = int((low != high).sum())
            if dependent:
                rows.append(
                    {
                        "run": name,
                        "measure": m,
                        "low": float(low.mean()),
                        "high": float(high.mean()),
                        "dependent": dependent,
                    }
                )
    return pd.DataFrame(rows, columns=["run", "measure", "low", "high", "dependent"]).set_index(
        ["run", "measure"]
    )


def reversible_pairs(board: pd.DataFrame, band: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The pairs of runs whose order on a measure a band could reverse: (measure, the run
    ahead, the run behind) where the run ahead's worst value in its band reaches the run
    behind's best (a run without a band counts its mean for both), in the direction the
    measure improves. The bands of two runs are taken apart: a document both retrieved takes
    one label in both, so this names every pair that could turn (a pair named may not).

    >>> board = pd.DataFrame({"run": ["a", "b"], "measure": ["AP", "AP"], "mean": [0.5, 0.4]})
    >>> band = pd.DataFrame({"low": [0.35], "high": [0.45]},
    ...                     index=pd.MultiIndex.from_tuples([("b", "AP")], names=["run", "measure"]))
    >>> reversible_pairs(board, band)
    []
    >>> band.loc[("b", "AP"), "high"] = 0.55
    >>> reversible_pairs(board, band)
    [('AP', 'a', 'b')]
    """
    from metrics_core.stats.direction import measure_direction

    out = []
    for m, part in board.groupby("measure", sort=False):
        sign = measure_direction(m) or 1
        rows = [
            (r.run, r.mean * sign, *_band_of(band, r.run, m, r.mean, sign))
            for r in part.itertuples()
            if not pd.isna(r.mean)
        ]
        rows.sort(key=lambda x: -x[1])
        for i, (ahead, mean_a, worst_a, _best_a) in enumerate(rows):
            for behind, mean_b, _worst_b, best_b in rows[i + 1 :]:
                if (
                    mean_a > mean_b
                    and worst_a < best_b
                    and ((ahead, m) in band.index or (behind, m) in band.index)
                ):
                    out.append((str(m), str(ahead), str(behind)))
    return out


def _band_of(band: pd.DataFrame, run, measure, mean: float, sign: int) -> tuple[float, float]:
    """(worst, best) of a run's mean in the direction ``sign`` (its mean when no band)."""
    if (run, measure) not in band.index:
        return mean * sign, mean * sign
    low, high = band.loc[(run, measure), "low"] * sign, band.loc[(run, measure), "high"] * sign
    return min(low, high), max(low, high)


#: Columns of :func:`leaderboard_long`, in order.
LONG_COLUMNS = (
    "run",
    "measure",
    "n_queries",
    "mean",
    "median",
    "ci_lo",
    "ci_hi",
    "delta",
    "p",
    "p_corrected",
    "marker",
)


def leaderboard_long(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard in long form for export: one row per (run, measure) that has a mean.

    A (run, measure) without a mean on the board's query set (e.g. a run that shares no
    query with the qrels) is left out rather than exported as a row of NaN; the baseline's
    rows keep their mean and interval and have no delta or p-value (it is the reference).
    ``attrs["note"]`` says both in words, for under the table or in the provenance;
    ``attrs["dropped"]`` lists the (run, measure) pairs left out.

    Parameters
    ----------
    board : DataFrame
        :func:`metrics_core.stats.comparison.leaderboard` output.

    Returns
    -------
    DataFrame
        :data:`LONG_COLUMNS` (``p`` where the board has it).

    Examples
    --------
    >>> board = pd.DataFrame({"run": ["a", "b"], "measure": ["RR", "RR"], "n_queries": [2, 2],
    ...                       "mean": [0.75, np.nan], "median": [0.75, np.nan], "ci_lo": [0.5, np.nan],
    ...                       "ci_hi": [1.0, np.nan], "delta": [np.nan, np.nan], "p": [np.nan, np.nan],
    ...                       "p_corrected": [np.nan, np.nan], "marker": ["", ""]})
    >>> board.attrs["baseline"] = "a"
    >>> long = leaderboard_long(board)
    >>> long["run"].tolist(), long.attrs["dropped"]
    (['a'], [('b', 'RR')])
    >>> print(long.attrs["note"])
    The baseline a has no difference or p-value (–): it is the reference. Left out, no value on this query set: b (RR).
    """
    cols = [c for c in LONG_COLUMNS if c in board.columns]
    has_mean = board["mean"].notna()
    dropped = [
        (str(r), str(m))
        for r, m in zip(board.loc[~has_mean, "run"], board.loc[~has_mean, "measure"], strict=True)
    ]
    out = board.loc[has_mean, cols].reset_index(drop=True)
    out.attrs = {}
    note = f"The baseline {board.attrs.get('baseline')} has no difference or p-value (–): it is the reference."
    if dropped:
        note += (
            " Left out, no value on this query set: "
            + ", ".join(f"{r} ({m})" for r, m in dropped)
            + "."
        )
    out.attrs.update(note=note, dropped=dropped)
    return out
