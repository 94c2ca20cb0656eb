"""ranx's measure spellings, as aliases of RankLab's measures.

ranx writes measures in lower case with ``@k`` cutoffs (``ndcg@10``, ``map@100``,
``hit_rate@5``, ``r-precision``). :func:`translate` maps such a name to RankLab's canonical
spelling; the measure registry consults it for names it does not know, so
``mc.evaluate(qrels, run, ["ndcg_burges@10", "hit_rate@5"])`` works unchanged.
This module is data only: it imports nothing from RankLab.

ranx -> RankLab:

- ``hits@k`` -> ``Hits@k`` (relevant documents in the top k)
- ``hit_rate@k`` -> ``Success@k``
- ``precision@k`` / ``recall@k`` / ``f1@k`` -> ``P@k`` / ``R@k`` / ``F1@k``
- ``r-precision`` -> ``Rprec``
- ``mrr@k`` -> ``RR@k`` (the mean over queries is MRR)
- ``map@k`` -> ``AP@k`` (divided by every relevant document of the query)
- ``ndcg@k`` / ``dcg@k`` -> ``nDCG@k`` / ``DCG@k`` (gain = label, 1/log2(i+1))
- ``ndcg_burges@k`` / ``dcg_burges@k`` -> ``nDCG(gain=exp)@k`` / ``DCG(gain=exp)@k``
  (gain 2^label - 1)
- ``bpref`` -> ``Bpref``
- ``rbp.90`` -> ``RBP(p=0.9,scale=none)`` (persistence after the dot; gain = the label itself)

Without ``@k`` a name covers the whole ranking (``ndcg`` -> ``nDCG``). A relevance level
``-lL`` (``ndcg@10-l2``, ``precision@5-l2``) is ranx's: labels below L are dropped from the
qrels. Binary measures then take ``rel=L``; for (n)DCG the labels 1 .. L-1 gain 0
(``nDCG(gains=1:0)@10``), labels from L on keep their gain; ``rbp`` with a level other than
1 is not translated (RankLab's RBP has no threshold).
"""

from __future__ import annotations

import re

__all__ = ["RANX_NAMES", "translate"]

#: ranx's measure name (lower case, without the cutoff) -> RankLab's name without the cutoff
RANX_NAMES: dict[str, str] = {
    "hits": "Hits",
    "hit_rate": "Success",
    "precision": "P",
    "recall": "R",
    "f1": "F1",
    "r-precision": "Rprec",
    "r_precision": "Rprec",
    "mrr": "RR",
    "map": "AP",
    "ndcg": "nDCG",
    "dcg": "DCG",
    "ndcg_burges": "nDCG(gain=exp)",
    "dcg_burges": "DCG(gain=exp)",
    "bpref": "Bpref",
}
_CUT_FREE = {"r-precision", "r_precision", "bpref"}
_GRADED = {"ndcg", "dcg", "ndcg_burges", "dcg_burges"}

_RANX_RE = re.compile(r"^\s*([a-z0-9_\-]+?)\s*(?:@\s*(\d+))?\s*(?:-l(\d+))?\s*$")
_RBP_RE = re.compile(r"^\s*rbp[.@](\d+)\s*(?:-l(\d+))?\s*$")


def _with_params(base: str, params: list[str]) -> str:
    """``nDCG`` + [gains=1:0] -> ``nDCG(gains=1:0)``; ``nDCG(gain=exp)`` + [...] -> merged."""
    if not params:
        return base
    if base.endswith(")"):
        return f"{base[:-1]},{','.join(params)})"
    return f"{base}({','.join(params)})"


def translate(name: str) -> str | None:
    """RankLab's name for a ranx measure name, or None when it is not one.

    >>> translate("ndcg_burges@10"), translate("hit_rate@5"), translate("r-precision")
    ('nDCG(gain=exp)@10', 'Success@5', 'Rprec')
    >>> translate("ndcg@10-l2"), translate("precision@5-l2"), translate("rbp.90")
    ('nDCG(gains=1:0)@10', 'P(rel=2)@5', 'RBP(p=0.9,scale=none)')
    >>> translate("nDCG@10") is None, translate("bpref@5") is None, translate("rbp.90-l2") is None
    (True, True, True)
    """
    rbp = _RBP_RE.match(str(name))
    if rbp:
        if rbp.group(2) not in (None, "1"):
            return None
        return f"RBP(p={float('0.' + rbp.group(1))!r},scale=none)"
    m = _RANX_RE.match(str(name))
    if not m or m.group(1) not in RANX_NAMES:
        return None
    base, cutoff, level = RANX_NAMES[m.group(1)], m.group(2), int(m.group(3) or 1)
    if cutoff is not None and m.group(1) in _CUT_FREE:
        return None
    params: list[str] = []
    if level != 1:
        if m.group(1) in _GRADED:
            if level > 1:
                params.append("gains=" + ",".join(f"{g}:0" for g in range(1, level)))
            else:  # level 0: ranx keeps label 0 (gain 0 anyway)
                pass
        else:
            params.append(f"rel={level}")
    text = _with_params(base, params)
    return text if cutoff is None else f"{text}@{cutoff}"
