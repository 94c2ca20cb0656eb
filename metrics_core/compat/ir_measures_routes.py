"""Which provider ir_measures would use for a measure, and RankLab's name and conventions
for it (for :mod:`metrics_core.compat.ir_measures`).

ir_measures 0.4's ``DefaultPipeline`` picks, per measure, the first provider that serves it:
pytrec_eval (trec_eval 9.0.8: float32 scores, equal ones by document id descending) for P,
R, AP, RR, nDCG, Rprec, Bpref, Success, IPrec, infAP, the Set measures and the counts;
msmarco for ``RR@k`` (float64 scores, equal ones by document id ascending); judged for
``Judged@k`` (document id ascending); gdeval for ``ERR@k`` and ``nDCG(dcg='exp-log2')@k``
(document id descending, float64, 5 decimals); cwl_eval for ``RBP``. :func:`route` maps a
measure object to RankLab's measure name and those conventions; :func:`source` and
:func:`binary_qrels` prepare the inputs.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, NamedTuple

import numpy as np

from metrics_core.errors import InputError

__all__ = [
    "NOT_PROVIDED",
    "Route",
    "route",
    "refuse",
    "source",
    "subtopic_qrels",
    "binary_qrels",
]

#: the value of a parameter that was not given (ir_measures' ``NOT_PROVIDED``)
NOT_PROVIDED: Any = object()


class Route(NamedTuple):
    name: str  # RankLab's measure name
    # (conventions as sorted items, binary relevance threshold or None, subtopic qrels?)
    group: tuple
    places: int | None  # decimals the provider prints (gdeval: 5)


_PYTREC = (("compat", "trec_eval9"), ("ties", "trec"))
_DOCID_ASC = (("compat", "trec_eval10"), ("ties", "docid_asc"))
_TREC_FLOAT64 = (("compat", "trec_eval10"), ("ties", "trec"))
# cwl_eval, as ir_measures drives it: float64 scores sorted descending by a stable sort (equal
# ones keep the run's order), the first 1,000 documents of each query (its RankingMaker's max_n)
_CWL = (("compat", "trec_eval10"), ("depth", 1000), ("ties", "input"))


#: ir_measures' diversity measures (its pyndeval provider) -> RankLab's families
DIVERSITY = {
    "alpha_nDCG": "alpha-nDCG",
    "alpha_DCG": "alpha-DCG",
    "ERR_IA": "ERR-IA",
    "nERR_IA": "nERR-IA",
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
    "AP_IA": "MAP-IA",
    "P_IA": "P-IA",
    "StRecall": "strec",
}


def refuse(measure, why: str):
    raise InputError(f"ir_measures drop-in: {measure!r} is not offered ({why})")


def route(m) -> Route:
    """RankLab's name for ``m`` and the conventions of the provider ir_measures would use."""
    m.validate_params()
    if not getattr(m, "OFFERED", True):
        refuse(m, "RankLab does not compute this measure")
    name, k, rel = m.NAME, m.params.get("cutoff"), m["rel"] if "rel" in m.SUPPORTED_PARAMS else None
    jo = bool(m.params.get("judged_only", False))
    group = (_PYTREC + ((("judged_only", True),) if jo else ()), None, False)
    if name in DIVERSITY:
        return _diversity(m, name, k, rel, jo)
    r = f"(rel={rel})" if rel not in (None, 1, NOT_PROVIDED) else ""
    at = f"@{k}" if k is not None else ""
    if name == "RR" and k is not None:
        if jo:
            refuse(m, "no ir_measures provider computes RR@k on judged documents only")
        return Route(f"RR{r}{at}", (_DOCID_ASC, None, False), None)
    if name == "Judged":
        return Route(f"Judged{at}", (_DOCID_ASC, None, False), None)
    if name == "ERR":
        if k is None:
            refuse(m, "ir_measures computes ERR with gdeval, which needs a cutoff: ERR@k")
        return Route(f"ERR(max_grade=4)@{k}", (_TREC_FLOAT64, None, False), 5)
    if name == "nDCG" and m["dcg"] == "exp-log2":
        if k is None or jo or m.params.get("gains") is not None:
            refuse(
                m,
                "RankLab serves nDCG(dcg='exp-log2') as gdeval computes it: with a cutoff, "
                "without gains or judged_only",
            )
        return Route(f"nDCG(gain=exp)@{k}", (_TREC_FLOAT64, None, False), 5)
    if name == "RBP":
        if k is not None:
            refuse(m, "no ir_measures provider computes RBP with a cutoff")
        if rel is NOT_PROVIDED or rel is None:
            # ir_measures' only RBP provider (cwl_eval) needs rel=; graded RBP is RankLab's
            warnings.warn(
                "ir_measures computes RBP only with rel= (cwl_eval); RankLab gives graded RBP "
                "(gain label / highest label of the query), which ir_measures refuses",
                stacklevel=4,
            )
            return Route(f"RBP(p={float(m['p'])!r})", (_CWL, None, False), None)
        return Route(f"RBP(p={float(m['p'])!r})", (_CWL, rel, False), None)
    if name == "nDCG":
        gains = m.params.get("gains")
        g = ""
        if gains:
            g = "(gains=" + ",".join(f"{a}:{b}" for a, b in sorted(gains.items())) + ")"
        return Route(f"nDCG{g}{at}", group, None)
    if name == "NCG":
        return Route(f"NCG{at}", group, None)
    if name == "NumRel" and rel != 1:
        refuse(m, "ir_measures' pytrec_eval provider counts NumRel at rel=1 only")
    if name == "NumRet":
        if rel is NOT_PROVIDED or rel is None:
            return Route("NumRet", group, None)
        return Route(f"NumRelRet(rel={rel})", group, None)
    if name == "IPrec":
        return Route(f"IPrec{r}@{float(m['recall'])!r}", group, None)
    if name == "SetP":
        return Route(f"SetRelP{r}" if m["relative"] else f"P{r}", group, None)
    if name == "SetR":
        return Route(f"R{r}", group, None)
    if name == "SetF":
        beta = float(m["beta"])
        inner = ",".join(
            x for x in ((f"rel={rel}" if r else ""), (f"beta={beta!r}" if beta != 1.0 else "")) if x
        )
        return Route(f"SetF({inner})" if inner else "SetF", group, None)
    if name in (
        "P",
        "R",
        "AP",
        "RR",
        "Rprec",
        "Bpref",
        "Success",
        "infAP",
        "SetAP",
        "NumRel",
        "NumQ",
    ):
        return Route(f"{name}{r}{at}", group, None)
    refuse(m, "RankLab does not compute this measure")
    raise AssertionError  # pragma: no cover


def _diversity(m, name: str, k, rel, jo: bool) -> Route:
    """ir_measures' pyndeval provider: ndeval on the subtopic qrels (their iteration column),
    the run sorted by score with equal scores by document id ascending (float64)."""
    from metrics_core.ranking.registry import parse_measure

    family = DIVERSITY[name]
    needs_cut = family not in ("NRBP", "nNRBP", "MAP-IA")
    if needs_cut and k is None:
        refuse(m, "ir_measures computes it with pyndeval, which needs a cutoff: " + name + "@k")
    params = [f"rel={rel}"] if rel not in (None, 1, NOT_PROVIDED) else []
    if "alpha" in m.SUPPORTED_PARAMS and float(m["alpha"]) != 0.5:
        params.append(f"alpha={float(m['alpha'])!r}")
    if "beta" in m.SUPPORTED_PARAMS and float(m["beta"]) != 0.5:
        params.append(f"beta={float(m['beta'])!r}")
    text = family + (f"({','.join(params)})" if params else "") + (f"@{k}" if needs_cut else "")
    conventions = _DOCID_ASC + ((("judged_only", True),) if jo else ())
    return Route(parse_measure(text).name, (conventions, None, True), None)


def source(data, kind: str):
    """ir_measures' inputs -> what RankLab's readers take: a dict of dicts (column by
    column), a DataFrame or a path as they are, records through a DataFrame."""
    import pandas as pd

    if isinstance(data, dict):
        from metrics_core.compat.pytrec_eval import columns_from_mapping

        return columns_from_mapping(data, kind)
    if isinstance(data, (str, os.PathLike)) or hasattr(data, "columns"):
        return data
    import metrics_core as mc

    if isinstance(data, (mc.Qrels, mc.Run)):
        return data
    value = "score" if kind == "run" else "relevance"
    records = list(data)
    if kind == "qrels" and records and all(hasattr(r, "iteration") for r in records):
        # ir_measures' qrels keep their iteration: the subtopic of its diversity measures
        return pd.DataFrame(
            [(r.query_id, r.iteration, r.doc_id, r.relevance) for r in records],
            columns=["query_id", "iteration", "doc_id", value],
        )
    rows = [
        (r.query_id, r.doc_id, getattr(r, value)) if hasattr(r, "query_id") else tuple(r)[:3]
        for r in records
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def subtopic_qrels(data):
    """:func:`source`'s qrels read with their subtopics (the iteration column, as ir_measures'
    pyndeval provider reads them; none: one subtopic, with a warning)."""
    import metrics_core as mc

    if isinstance(data, mc.Qrels) and not isinstance(data, mc.SubtopicQrels):
        data = data.to_frame()
    return mc.read_qrels(data, subtopics=True)


def binary_qrels(qrels, threshold: int):
    """A copy of ``qrels`` whose labels are 1 (label >= threshold) or 0."""
    import metrics_core as mc

    labels = (np.asarray(qrels.relevance, dtype=np.float64) >= threshold).astype(np.float64)
    return mc.Qrels(qrels.query_ids, qrels.doc_ids, labels, source=qrels.source)
