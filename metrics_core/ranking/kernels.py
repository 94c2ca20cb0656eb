"""The arithmetic every ranking measure shares, in one place: safe division, gains,
discounts, discounted gains, the ideal ranking and its DCG, and sums over query segments.

The engine's measures (:mod:`metrics_core.ranking.measures`), the tie report
(:mod:`metrics_core.ranking.ties`) and the app's Learn page use these functions, so a
DCG shown step by step is computed by the same operations as the DCG evaluated."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics_core.errors import N_, InputError
from metrics_core.ranking.definition import gains_table
from metrics_core.ranking.ranked_lists import RankedLists

if TYPE_CHECKING:
    from metrics_core.conventions import Conventions


def safe_div(num, den):
    """``num / den`` elementwise as float64, 0 where ``den`` is 0 (trec_eval's rule for an
    empty denominator).

    >>> safe_div([1, 2, 3], [2, 0, 4]).tolist()
    [0.5, 0.0, 0.75]
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


EXP_GAIN_MAX_LABEL = 1023  # 2.0**1024 is inf in float64


class GainOverflow(InputError):
    """A relevance label too large for ``gain=exp`` (``label``: the label). Raised by
    :func:`gain_of`; :func:`locate_gain_overflow` names the qrels line that holds it, or
    (``row``, 1-based) the judgement's position in the qrels as read when no line is kept."""

    def __init__(
        self,
        label: float,
        source: str | None = None,
        line: int | None = None,
        row: int | None = None,
    ):
        self.label = float(label)
        problem = (
            N_(
                "relevance {label:.17g} is too large for gain=exp: 2**relevance - 1 overflows above {limit}"
            )
            if row is None
            else N_(
                "relevance {label:.17g} (judgement {row} of the qrels as read; line numbers not kept) "
                "is too large for gain=exp: 2**relevance - 1 overflows above {limit}"
            )
        )
        super().__init__(
            problem,
            source=source,
            line=line,
            hint=N_("Use gain=linear, or relevance grades below 1024"),
            params={"label": self.label, "row": row, "limit": EXP_GAIN_MAX_LABEL},
        )


def gain_of(labels: np.ndarray, kind: str) -> np.ndarray:
    """Gain of positive labels: the label (trec_eval) or ``2**label - 1`` (``kind="exp"``;
    :class:`GainOverflow` above :data:`EXP_GAIN_MAX_LABEL`).

    >>> gain_of(np.array([1.0, 3.0]), "exp").tolist(), gain_of(np.array([1.0, 3.0]), "linear").tolist()
    ([1.0, 7.0], [1.0, 3.0])
    """
    if kind == "exp":
        if labels.size and labels.max() > EXP_GAIN_MAX_LABEL:
            raise GainOverflow(labels.max())
        return np.exp2(labels) - 1.0
    return labels.astype(np.float64)


def locate_gain_overflow(exc: GainOverflow, R: RankedLists) -> GainOverflow:
    """``exc`` with the qrels file and the line of the first judgement holding its label
    (from the qrels ``R`` was built from); where the reader kept no line numbers, the
    1-based position of that judgement in the qrels as read."""
    qrels = getattr(R, "qrels", None)
    hit = np.flatnonzero(R.qrels_label == exc.label)
    if qrels is None or not len(hit):
        return exc
    row = int(R.qrels_row[hit[0]]) if R.qrels_row is not None else int(hit[0])
    line = qrels.line_of(row)
    return GainOverflow(
        exc.label, source=qrels.source, line=line, row=None if line is not None else row + 1
    )


def discount_of(pos: np.ndarray, kind: str) -> np.ndarray:
    """1/log2(i+1) (trec_eval), or 1/max(1, log2 i) (Jarvelin & Kekalainen's original).

    >>> discount_of(np.array([1, 2, 3]), "log2").round(4).tolist()
    [1.0, 0.6309, 0.5]
    """
    if kind == "jarvelin":
        return 1.0 / np.maximum(1.0, np.log2(pos.astype(np.float64)))
    return 1.0 / np.log2(pos.astype(np.float64) + 1.0)


def discounted(gain: np.ndarray, pos: np.ndarray, kind: str) -> np.ndarray:
    """gain * discount(pos); for log2, gain / log2(i+1) as trec_eval divides (multiplying
    by the reciprocal can differ in the last bit)."""
    if kind == "jarvelin":
        return gain * discount_of(pos, kind)
    return gain / np.log2(pos.astype(np.float64) + 1.0)


def custom_labels_gain(lab: np.ndarray, table: dict, kind: str) -> np.ndarray:
    """Gains of labels >= 0 with a ``gains`` table: the table's gain for the labels it
    names (exact: no truncation of gain differences, unlike trec_eval's sort), the usual
    gain for the others."""
    g = gain_of(lab, kind)
    for label, gain in table.items():
        g = np.where(lab == label, gain, g)
    return g


def custom_ideal(R: RankedLists, spec, conv, table):
    """(query, gain, rank) of the ideal ranking under a gains table: positive gains of the
    judged documents (or the retrieved ones, ideal=retrieved), descending."""
    if spec.param("ideal", conv) == "retrieved":
        jr = R.judged_rows
        rows = jr[R.label[jr] >= 0]
        seg, lab = R.seg[rows], R.label[rows].astype(np.float64)
    else:
        ok = R.qrels_label >= 0
        seg, lab = R.qrels_seg[ok], R.qrels_label[ok].astype(np.float64)
    g = custom_labels_gain(lab, table, spec.param("gain", conv))
    keep = g > 0
    seg, g = seg[keep], g[keep]
    order = np.lexsort((-g, seg))
    seg, g = seg[order], g[order]
    _, within, _ = segment_layout(seg)
    return seg, g, within + 1


def ideal_ranking(R: RankedLists, ideal: str):
    """(query, label, rank) of the positive labels in the ideal order: labels descending
    within each query. Cached on ``R``: nDCG@10 and nDCG@100 share one sort."""
    return R.memo(("ideal", ideal), lambda: _ideal_order(R, ideal))


def _ideal_order(R: RankedLists, ideal: str):
    if ideal == "retrieved":
        # ideal=retrieved: the best reordering of the retrieved labels
        jr = R.judged_rows
        rows = jr[R.label[jr] > 0]
        seg, lab = R.seg[rows], R.label[rows]
    else:
        ok = R.qrels_label > 0
        seg, lab = R.qrels_seg[ok], R.qrels_label[ok]
    order = np.lexsort((-lab, seg))
    seg, lab = seg[order], lab[order]
    if len(seg):
        first = np.r_[True, seg[1:] != seg[:-1]]
        start_idx = np.flatnonzero(first)
        group_start = np.repeat(start_idx, np.diff(np.r_[start_idx, len(seg)]))
        pos = np.arange(len(seg)) - group_start + 1
    else:
        pos = np.zeros(0, dtype=np.int64)
    return seg, lab, pos


def ideal_dcg(R: RankedLists, spec, conv) -> np.ndarray:
    """DCG of the ideal ranking per query (IDCG@k): the positive gains of the judged documents
    (``ideal=retrieved``: of the retrieved ones) sorted descending, cut at k, discounted."""
    k = spec.cutoff
    table = gains_table(spec.param("gains", conv))
    if table:
        seg, g, pos = custom_ideal(R, spec, conv, table)
    else:
        seg, lab, pos = ideal_ranking(R, spec.param("ideal", conv))
        g = gain_of(lab, spec.param("gain", conv))
    if k is not None:
        keep = pos <= k
        seg, g, pos = seg[keep], g[keep], pos[keep]
    w = discounted(g, pos, spec.param("discount", conv))
    return np.bincount(seg, weights=w, minlength=R.n_queries)


def segment_layout(seg: np.ndarray):
    """(group of each entry, index within its group, groups' first entries) for entries
    grouped by ``seg`` (equal values adjacent)."""
    n = len(seg)
    if not n:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    first = np.r_[True, seg[1:] != seg[:-1]]
    heads = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    within = np.arange(n) - heads[group]
    return group, within, heads


def seg_cumsum(seg: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Running sums of ``vals`` within each run of equal ``seg``, added left to right.

    Exactly the sums a C loop accumulates (a cumulative sum over all queries minus an
    offset would round differently): the groups are laid out as rows of a zero-padded
    matrix and summed along the rows (``np.cumsum`` along an axis adds sequentially; the
    padding adds exact zeros). In blocks of rows, so the matrix stays small.
    """
    return seg_accumulate(seg, vals, np.add, 0.0)


def seg_accumulate(seg: np.ndarray, vals: np.ndarray, op, pad: float) -> np.ndarray:
    """``op.accumulate`` of ``vals`` within each run of equal ``seg`` (``pad``: op's
    identity), row by row of a padded matrix built in blocks."""
    vals = np.asarray(vals, dtype=np.float64)
    out = np.empty(len(vals), dtype=np.float64)
    if not len(vals):
        return out
    group, within, heads = segment_layout(seg)
    width = int(within.max()) + 1
    step = max(1, (1 << 22) // width)  # groups per block
    for g0 in range(0, len(heads), step):
        g1 = min(len(heads), g0 + step)
        lo, hi = heads[g0], (heads[g1] if g1 < len(heads) else len(seg))
        mat = np.full((g1 - g0, width), pad, dtype=np.float64)
        mat[group[lo:hi] - g0, within[lo:hi]] = vals[lo:hi]
        op.accumulate(mat, axis=1, out=mat)
        out[lo:hi] = mat[group[lo:hi] - g0, within[lo:hi]]
    return out


def seg_powers(p: float, count: int) -> np.ndarray:
    """1, p, p*p, ... (``count`` values) by repeated multiplication, as trec_eval's loop."""
    if count <= 0:
        return np.ones(1, dtype=np.float64)
    steps = np.full(count, p, dtype=np.float64)
    steps[0] = 1.0
    return np.cumprod(steps)


def seg_cumprod_exclusive(seg: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Product of the earlier ``vals`` of the same group (1 for a group's first)."""
    out = np.ones(len(vals), dtype=np.float64)
    if not len(vals):
        return out
    inclusive = seg_accumulate(seg, vals, np.multiply, 1.0)
    _, within, _ = segment_layout(seg)
    prev = np.flatnonzero(within > 0)
    out[prev] = inclusive[prev - 1]
    return out


def dcg_steps(
    labels,
    k: int | None = None,
    conventions: Conventions | None = None,
    *,
    gain: str | None = None,
    discount: str | None = None,
    labels_rule: str | None = None,
) -> dict:
    """DCG of one ranking rank by rank, with the arithmetic of the engine's DCG: what a page
    that explains DCG shows, so its running total equals ``DCG@k`` evaluated.

    Parameters
    ----------
    labels : sequence of float
        Relevance label at each rank (rank 1 first).
    k : int, optional
        Cutoff (all ranks when None).
    conventions : Conventions, optional
        Where ``gain``, ``discount`` and ``labels`` come from (trec_eval's defaults when
        None); the keywords below override it.
    gain, discount, labels_rule : str, optional
        ``gain`` ("linear" | "exp"), ``discount`` ("log2" | "jarvelin") and the labels
        rule ("truncate": a fractional label counts as its whole part, as trec_eval reads
        it; "keep").

    Returns
    -------
    dict of numpy arrays
        ``rank``, ``label`` (as the engine uses it), ``gain`` (0 where the label is not
        positive), ``discount`` (the factor, for display), ``contribution`` (gain divided by
        log2(i+1) as trec_eval divides, or gain times 1/max(1, log2 i)) and ``dcg`` (the
        running sum, in rank order as the engine adds).

    Examples
    --------
    >>> steps = dcg_steps([3, 0, 2], k=3)
    >>> steps["contribution"].round(4).tolist(), float(steps["dcg"][-1].round(4))
    ([3.0, 0.0, 1.0], 4.0)
    """
    if conventions is not None:
        gain, discount = gain or conventions.gain, discount or conventions.discount
        labels_rule = labels_rule or conventions.labels
    gain, discount, labels_rule = gain or "linear", discount or "log2", labels_rule or "truncate"
    lab = np.asarray(labels, dtype=np.float64)
    if k is not None:
        lab = lab[: int(k)]
    if labels_rule == "truncate":
        lab = np.trunc(lab)
    ranks = np.arange(1, len(lab) + 1, dtype=np.int64)
    positive = lab > 0
    g = np.zeros(len(lab), dtype=np.float64)
    g[positive] = gain_of(lab[positive], gain)
    contribution = np.zeros(len(lab), dtype=np.float64)
    contribution[positive] = discounted(g[positive], ranks[positive], discount)
    running = np.zeros(len(lab), dtype=np.float64)
    total = 0.0
    for i, c in enumerate(contribution):  # one addition per positive label, in rank order
        if positive[i]:
            total += c
        running[i] = total
    return {
        "rank": ranks,
        "label": lab,
        "gain": g,
        "discount": discount_of(ranks, discount),
        "contribution": contribution,
        "dcg": running,
    }
