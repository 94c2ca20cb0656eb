"""Dynamic K: a variable number of evidence items per query, by a probability threshold.

Input is columnar: one row per (query, candidate) with the candidate's probability and
whether it is gold. Rows are sorted once by (query, probability descending, candidate
order of appearance); every query is then a contiguous segment and all selections are
prefix lengths, so recall and precision come from one cumulative sum of the gold flags.

Selection for a query with ``n`` candidates, ``a`` of which have probability >= tau:

* ``k_max = min(hard_cap, floor(n * k_max_ratio))`` (the product floored exactly, the
  ratio read as its decimal spelling, see :func:`metrics_core.detection.allowed_count`);
* ``K = min(max(a, k_min), k_max, n)`` -- the default ``conflict="k_max"``: when
  ``k_max < k_min`` the upper bound wins (the caps are limits the pipeline must never
  exceed), so a query with 3 candidates and ratio 0.5 gets at most 1 item and a query
  with 1 candidate gets 0;
* ``conflict="k_min"``: ``K = min(max(min(a, k_max), k_min), n)`` -- the lower bound
  wins, limited only by the number of candidates.

With fewer candidates than ``k_min`` all candidates are the most that can be chosen
(and with ``conflict="k_max"`` the ratio cap usually makes it fewer).

Equal probabilities at the cut are taken in input order (stable sort).

Metrics over N queries, with ``G_i`` the gold candidates of query
i and ``S_i`` the selected ones:

* recall_i = |S_i ∩ G_i| / |G_i|; if |G_i| = 0: 1 when |S_i| = 0, else 0;
* precision_i = |S_i ∩ G_i| / |S_i|; if |S_i| = 0: 1 when |G_i| = 0, else 0;
* avg_K = mean |S_i|.

Gold items that are not among a query's candidates cannot be represented here; |G_i|
counts gold candidates.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.validation import (
    as_fraction,
    check_binary,
    check_choice,
    check_int,
    check_lengths,
)

__all__ = [
    "CandidateTable",
    "prepare",
    "select_k",
    "dynamic_k_scores",
    "dynamic_k_curve",
    "per_criterion",
    "DEFAULTS",
    "CONFLICT_RULES",
    "FIELD_WORDS",
    "field_words",
]

DEFAULTS = {"tau": 0.5, "k_min": 2, "hard_cap": 10, "k_max_ratio": 0.5}
CONFLICT_RULES = ("k_max", "k_min")

#: The settings and results of Dynamic K in plain words: field -> (name, one-sentence
#: explanation), in English (the catalogs' msgids; :func:`field_words` translates them).
FIELD_WORDS = {
    "tau": (
        N_("Probability threshold"),
        N_("A candidate is chosen when its probability is at least this value."),
    ),
    "k_min": (
        N_("Minimum items per query"),
        N_("Every query gets at least this many items, even when fewer reach the threshold."),
    ),
    "hard_cap": (
        N_("Maximum items per query"),
        N_("No query gets more than this many items, whatever their probabilities."),
    ),
    "k_max_ratio": (
        N_("Maximum share of the candidates"),
        N_("No query gets more than this share of its own candidates (rounded down)."),
    ),
    "conflict": (
        N_("When the minimum exceeds the maximum"),
        N_("Which limit wins for a query whose maximum is below the minimum."),
    ),
    "avg_k": (
        N_("Average items per query"),
        N_("The number of items chosen for a query, averaged over the queries."),
    ),
    "recall": (
        N_("Evidence recall"),
        N_("The share of a query's gold items that were chosen, averaged over the queries."),
    ),
    "precision": (
        N_("Evidence precision"),
        N_("The share of a query's chosen items that are gold, averaged over the queries."),
    ),
    "micro_recall": (
        N_("Pooled recall"),
        N_("Gold items chosen divided by all gold items, every query counted together."),
    ),
    "micro_precision": (
        N_("Pooled precision"),
        N_("Gold items chosen divided by all items chosen, every query counted together."),
    ),
    "n_queries": (N_("Queries"), N_("The number of queries with candidates.")),
}


def field_words(field: str, gettext: Callable[[str], str] | None = None) -> tuple[str, str]:
    """The plain name and the one-sentence explanation of a Dynamic K setting or result
    (:data:`FIELD_WORDS`), in English or through ``gettext`` (e.g.
    ``metrics_core.report.catalogs.translations("es").gettext``).

    Raises
    ------
    InputError
        An unknown field (the hint lists them).

    Examples
    --------
    >>> field_words("tau")
    ('Probability threshold', 'A candidate is chosen when its probability is at least this value.')
    >>> from metrics_core.report.catalogs import translations
    >>> field_words("avg_k", translations("es").gettext)[0]
    'Media de elementos por consulta'
    """
    if field not in FIELD_WORDS:
        raise InputError(
            N_("unknown Dynamic K field {field!r}"),
            hint=N_("accepted: {choices}"),
            field="field",
            params={"field": field, "choices": ", ".join(FIELD_WORDS)},
        )
    tr = gettext or (lambda text: text)
    name, sentence = FIELD_WORDS[field]
    return tr(name), tr(sentence)


class CandidateTable:
    """Candidates sorted by (query, probability descending), with segment offsets.

    Attributes
    ----------
    query_ids : ndarray of object
        The query id of each unit (query, or (query, criterion) pair), sorted.
    start, size : ndarray of int64
        Offset and number of candidates of each query in the sorted arrays.
    prob, gold : ndarray
        Sorted probabilities and gold flags (int64).
    gold_prefix : ndarray of int64, shape (n + 1,)
        Cumulative gold counts (``gold_prefix[j]`` = gold among the first j rows).
    criterion : ndarray or None
        The criterion of each query segment (when given per row, constant per query).
    """

    def __init__(self, query_ids, start, size, prob, gold, criterion=None):
        self.query_ids = query_ids
        self.start = start
        self.size = size
        self.prob = prob
        self.gold = gold
        self.gold_prefix = np.r_[0, np.cumsum(gold, dtype=np.int64)]
        self.n_gold = self.gold_prefix[start + size] - self.gold_prefix[start]
        self.criterion = criterion

    @property
    def n_queries(self) -> int:
        """Number of units (queries, or (query, criterion) pairs)."""
        return int(self.start.size)


def prepare(
    query, probability, is_gold, criterion=None, *, source: str | None = None
) -> CandidateTable:
    """Validate and sort candidate rows once.

    Parameters
    ----------
    query : array-like
        Query id of each row (any hashable; strings or ints).
    probability : array-like of float in [0, 1]
    is_gold : array-like of {0, 1} or bool
    criterion : array-like, optional
        Criterion of each row; a (query, criterion) pair is then the unit (per-criterion evaluation).

    Examples
    --------
    >>> t = prepare(["a", "a", "b"], [0.2, 0.9, 0.5], [1, 0, 1])
    >>> t.size.tolist(), t.prob.tolist(), t.n_gold.tolist()
    ([2, 1], [0.9, 0.2, 0.5], [1, 1])
    """
    prob, gold = np.asarray(probability), np.asarray(is_gold)
    if prob.ndim == 1 and prob.shape[0] == 0:
        raise InputError(N_("no candidates given"), source=source)
    check_lengths(
        source=source,
        hint="Give one query, probability and is_gold per candidate",
        queries=query,
        probabilities=prob,
        is_gold_values=gold,
    )
    gold, prob = check_binary(
        gold,
        prob,
        what="probability",
        probabilities=True,
        label_what="is_gold value",
        source=source,
        label_dtype=np.int64,
        locate=lambda i: {"problem_prefix": f"row {i + 1}: "},
    )
    n = prob.shape[0]
    keys = pd.Series(np.asarray(query, dtype=object))
    if criterion is not None:
        crit = pd.Series(np.asarray(criterion, dtype=object))
        unit = pd.MultiIndex.from_arrays([keys, crit])
        codes, uniques = pd.factorize(unit, sort=True)
    else:
        codes, uniques = pd.factorize(keys, sort=True)
    # one stable sort by (unit code, -probability): lexsort's last key is the primary.
    order = np.lexsort((-prob, codes))
    codes_sorted = codes[order]
    start = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
    size = np.diff(np.r_[start, n])
    if criterion is not None:
        qids = np.asarray(uniques.get_level_values(0), dtype=object)
        crit_of_unit = np.asarray(uniques.get_level_values(1), dtype=object)
    else:
        qids = np.asarray(uniques, dtype=object)
        crit_of_unit = None
    return CandidateTable(
        qids, start.astype(np.int64), size.astype(np.int64), prob[order], gold[order], crit_of_unit
    )


def _floor_ratio(n: np.ndarray, ratio) -> np.ndarray:
    frac = as_fraction(ratio, "k_max_ratio")
    if frac < 0:
        raise InputError(N_("k_max_ratio {value!r} must not be negative"), params={"value": ratio})
    return (n * frac.numerator) // frac.denominator


def _check_params(k_min, hard_cap, conflict):
    check_choice(conflict, CONFLICT_RULES, "conflict rule")
    for name, value in (("k_min", k_min), ("hard_cap", hard_cap)):
        try:
            check_int(value, name, minimum=0)
        except InputError:
            raise InputError(
                N_("{name} must be a non-negative integer, got {value!r}"),
                params={"name": name, "value": value},
            ) from None


def _count_at_least(table: CandidateTable, tau: float) -> np.ndarray:
    # Probabilities are descending inside each segment: count >= tau with a global
    # cumulative sum of the indicator.
    above = np.r_[0, np.cumsum(table.prob >= tau, dtype=np.int64)]
    return above[table.start + table.size] - above[table.start]


def select_k(
    table: CandidateTable,
    tau: float = 0.5,
    k_min: int = 2,
    hard_cap: int = 10,
    k_max_ratio=0.5,
    *,
    conflict: str = "k_max",
) -> np.ndarray:
    """Number of candidates K selected for each query (see module docstring).

    Examples
    --------
    >>> t = prepare(["a"] * 6 + ["b"] * 3, [.9, .8, .7, .6, .1, .1, .9, .2, .1], [1] * 9)
    >>> select_k(t, tau=0.5).tolist()   # a: 4 above tau, k_max=3; b: k_max = 1 < k_min
    [3, 1]
    >>> select_k(t, tau=0.5, conflict="k_min").tolist()
    [3, 2]
    """
    _check_params(k_min, hard_cap, conflict)
    above = _count_at_least(table, tau)
    k_max = np.minimum(int(hard_cap), _floor_ratio(table.size, k_max_ratio))
    if conflict == "k_max":
        k = np.minimum(np.maximum(above, int(k_min)), k_max)
    else:
        k = np.maximum(np.minimum(above, k_max), int(k_min))
    return np.minimum(k, table.size)


def _per_query(table: CandidateTable, k: np.ndarray):
    hits = table.gold_prefix[table.start + k] - table.gold_prefix[table.start]
    g = table.n_gold
    recall = np.where(g > 0, hits / np.maximum(g, 1), (k == 0).astype(np.float64))
    precision = np.where(k > 0, hits / np.maximum(k, 1), (g == 0).astype(np.float64))
    return hits, recall, precision


def dynamic_k_scores(
    table: CandidateTable,
    tau: float = 0.5,
    k_min: int = 2,
    hard_cap: int = 10,
    k_max_ratio=0.5,
    *,
    conflict: str = "k_max",
    per_query: bool = False,
) -> dict:
    """Evidence recall, evidence precision and average K.

    Returns
    -------
    dict with ``recall``, ``precision``, ``avg_k``, ``n_queries``, and the pooled
    (micro) ``micro_recall`` = sum hits / sum gold and ``micro_precision`` = sum hits /
    sum K; with ``per_query=True`` also a DataFrame ``per_query`` (query, k, hits,
    n_gold, recall, precision).

    Examples
    --------
    >>> t = prepare(["a", "a", "a", "a", "b", "b", "b", "b"],
    ...             [.9, .6, .3, .1, .4, .3, .2, .1], [1, 0, 1, 0, 0, 0, 0, 0])
    >>> r = dynamic_k_scores(t, tau=0.5)   # a: K=2, 1 hit of 2 gold; b: K=2, no gold
    >>> r["recall"], r["precision"], r["avg_k"]
    (0.25, 0.25, 2.0)
    """
    k = select_k(table, tau, k_min, hard_cap, k_max_ratio, conflict=conflict)
    hits, recall, precision = _per_query(table, k)
    total_gold, total_k = int(table.n_gold.sum()), int(k.sum())
    out = {
        "recall": float(recall.mean()),
        "precision": float(precision.mean()),
        "avg_k": float(k.mean()),
        "n_queries": table.n_queries,
        "micro_recall": int(hits.sum()) / total_gold if total_gold else math.nan,
        "micro_precision": int(hits.sum()) / total_k if total_k else math.nan,
        "params": {
            "tau": float(tau),
            "k_min": int(k_min),
            "hard_cap": int(hard_cap),
            "k_max_ratio": float(k_max_ratio),
            "conflict": conflict,
        },
    }
    if per_query:
        df = pd.DataFrame(
            {
                "query": table.query_ids,
                "k": k,
                "hits": hits,
                "n_gold": table.n_gold,
                "recall": recall,
                "precision": precision,
            }
        )
        if table.criterion is not None:
            df.insert(1, "criterion", table.criterion)
        out["per_query"] = df
    return out


def dynamic_k_curve(
    table: CandidateTable,
    taus=None,
    k_min: int = 2,
    hard_cap: int = 10,
    k_max_ratio=0.5,
    *,
    conflict: str = "k_max",
) -> pd.DataFrame:
    """Recall, precision and average K for each tau (default 0, 0.01, ..., 1).

    Examples
    --------
    >>> t = prepare(["a"] * 4, [.9, .6, .3, .1], [1, 0, 1, 0])
    >>> dynamic_k_curve(t, [0.0, 0.5, 1.0])["avg_k"].tolist()
    [2.0, 2.0, 2.0]
    """
    taus = np.round(np.linspace(0, 1, 101), 2) if taus is None else np.asarray(taus, float)
    rows = []
    for tau in taus:  # one O(n) pass per tau; the queries are vectorised
        r = dynamic_k_scores(table, float(tau), k_min, hard_cap, k_max_ratio, conflict=conflict)
        rows.append((float(tau), r["recall"], r["precision"], r["avg_k"]))
    return pd.DataFrame(rows, columns=["tau", "recall", "precision", "avg_k"])


def per_criterion(
    table: CandidateTable,
    tau: float = 0.5,
    k_min: int = 2,
    hard_cap: int = 10,
    k_max_ratio=0.5,
    *,
    conflict: str = "k_max",
) -> dict:
    """Per-criterion metrics with micro and macro averages.

    The unit is a (query, criterion) pair. Per criterion: mean recall, precision and K
    over its units. Macro: the mean of the per-criterion values. Micro: all units
    pooled -- hits / gold and hits / selected over every unit at once.

    Examples
    --------
    >>> t = prepare(["q", "q", "q", "q"], [.9, .8, .7, .6], [1, 0, 0, 0],
    ...             criterion=["A", "A", "B", "B"])
    >>> r = per_criterion(t, k_min=1, k_max_ratio=1)
    >>> r["table"]["recall"].tolist(), r["macro"]["recall"], r["micro"]["recall"]
    ([1.0, 0.0], 0.5, 1.0)
    """
    if table.criterion is None:
        raise InputError(N_("no criterion column"), hint=N_("Give a criterion per row"))
    k = select_k(table, tau, k_min, hard_cap, k_max_ratio, conflict=conflict)
    hits, recall, precision = _per_query(table, k)
    df = pd.DataFrame(
        {
            "criterion": table.criterion.astype(str),
            "recall": recall,
            "precision": precision,
            "k": k,
            "hits": hits,
            "gold": table.n_gold,
        }
    )
    g = df.groupby("criterion", sort=True)
    per = pd.DataFrame(
        {
            "recall": g["recall"].mean(),
            "precision": g["precision"].mean(),
            "avg_k": g["k"].mean(),
            "n_queries": g.size(),
            "micro_recall": g["hits"].sum() / g["gold"].sum().replace(0, np.nan),
            "micro_precision": g["hits"].sum() / g["k"].sum().replace(0, np.nan),
        }
    )
    macro = {c: float(per[c].mean()) for c in ("recall", "precision", "avg_k")}
    th, tg, tk = int(hits.sum()), int(table.n_gold.sum()), int(k.sum())
    micro = {
        "recall": th / tg if tg else math.nan,
        "precision": th / tk if tk else math.nan,
        "avg_k": float(k.mean()),
    }
    return {"table": per, "macro": macro, "micro": micro}
