"""ranx's measure spellings, as aliases of RankLab's measures.

ranx writes measures in lower case with ``@k`` cutoffs (``ndcg@10``, ``map@100``,
``hit_rate@5``, ``r-precision``). :func:`translate` maps such a name to RankLab's canonical
spelling; the measure registry consults it for names it does not know, so
``mc.evaluate(qrels, run, ["ndcg_burges@10", "hit_rate@5"])`` works unchanged.
This module is data only: it imports nothing from RankLab.

| ranx | RankLab | note |
|---|---|---|
| ``hits@k`` | ``Hits@k`` | relevant documents in the top k |
| ``hit_rate@k`` | ``Success@k`` | |
| ``precision@k`` / ``recall@k`` / ``f1@k`` | ``P@k`` / ``R@k`` / ``F1@k`` | |
| ``r-precision`` | ``Rprec`` | |
| ``mrr@k`` | ``RR@k`` | mean over queries: MRR |
| ``map@k`` | ``AP@k`` | divided by every relevant document of the query |
| ``ndcg@k`` / ``dcg@k`` | ``nDCG@k`` / ``DCG@k`` | gain = label, 1/log2(i+1) |
| ``ndcg_burges@k`` / ``dcg_burges@k`` | ``nDCG(gain=exp)@k`` / ``DCG(gain=exp)@k`` | gain 2^label - 1 |
| ``bpref`` | ``Bpref`` | |

Without ``@k`` a name covers the whole ranking (``ndcg`` -> ``nDCG``).
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

_RANX_RE = re.compile(r"^\s*([a-z0-9_\-]+)\s*(?:@\s*(\d+))?\s*$")


def translate(name: str) -> str | None:
    """RankLab's name for a ranx measure name, or None when it is not one.

    >>> translate("ndcg_burges@10"), translate("hit_rate@5"), translate("r-precision")
    ('nDCG(gain=exp)@10', 'Success@5', 'Rprec')
    >>> translate("nDCG@10") is None, translate("bpref@5") is None
    (True, True)
    """
    m = _RANX_RE.match(str(name))
    if not m or m.group(1) not in RANX_NAMES:
        return None
    base, cutoff = RANX_NAMES[m.group(1)], m.group(2)
    if cutoff is not None and m.group(1) in _CUT_FREE:
        return None
    return base if cutoff is None else f"{base}@{cutoff}"
