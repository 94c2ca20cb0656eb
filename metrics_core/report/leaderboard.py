"""The leaderboard grid as a table of text: per run a row of means (best marked, the
significance marker), a row of interval bounds and, when given, a row with the band of the
mean over tie orders. The app styles it; the HTML report renders it. Pure pandas."""

from __future__ import annotations

import pandas as pd

BEST = "★"
#: the label of the interval rows starts with spaces (indented under the run's name)
CI_INDENT = "   "
TIE_ROW = CI_INDENT + "tie band"


def leaderboard_grid(board: pd.DataFrame, band: pd.DataFrame | None = None) -> pd.DataFrame:
    """The runs x measures grid shown first: per run a row of means (★ best, significance
    marker) and, under it, a row of interval bounds; with ``band`` (index (run, measure), columns low and high), a third
    row "tie band" for each run whose mean depends on the order of tied scores (blank where
    it does not). When the measures' query sets differ in size, each measure's header carries
    its n."""
    measures = list(dict.fromkeys(board["measure"]))
    baseline = board.attrs.get("baseline")
    conf = board.attrs.get("confidence", 0.95)
    sizes = board.groupby("measure", sort=False)["n_queries"].first()
    header = ({m: m for m in measures} if sizes.nunique() <= 1 else
              {m: f"{m} (n={int(sizes[m])})" for m in measures})
    rows = []
    for run, part in board.groupby("run", sort=False):
        part = part.set_index("measure")
        mean_row = {"Run": f"{run} (baseline)" if run == baseline else str(run)}
        ci_row = {"Run": f"{CI_INDENT}{conf:.0%} CI"}
        for m in measures:
            r = part.loc[m]
            text = "–" if pd.isna(r["mean"]) else f"{r['mean']:.4f}"
            marks = (BEST if r["best"] else "") + r["marker"]
            mean_row[header[m]] = f"{text} {marks}".rstrip()
            ci_row[header[m]] = "–" if pd.isna(r["ci_lo"]) else f"{r['ci_lo']:.4f}–{r['ci_hi']:.4f}"
        rows += [mean_row, ci_row]
        if band is not None and run in band.index.get_level_values("run"):
            tie_row = {"Run": TIE_ROW}
            for m in measures:
                b = band.loc[(run, m)] if (run, m) in band.index else None
                tie_row[header[m]] = "" if b is None else f"{b['low']:.4f}–{b['high']:.4f}"
            rows.append(tie_row)
    return pd.DataFrame(rows, columns=["Run", *header.values()])


