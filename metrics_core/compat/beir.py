"""BEIR's ``EvaluateRetrieval`` scoring on RankLab's engine: change the import.

>>> from metrics_core.compat.beir import EvaluateRetrieval
>>> qrels = {"q1": {"d1": 1}}
>>> results = {"q1": {"q1": 3.0, "d1": 2.0, "d2": 1.0}}
>>> ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, results, [1, 3])
>>> ndcg, precision
({'NDCG@1': 1.0, 'NDCG@3': 1.0}, {'P@1': 1.0, 'P@3': 0.33333})
>>> results  # evaluate deleted the identical id in place, as BEIR does
{'q1': {'d1': 2.0, 'd2': 1.0}}
>>> EvaluateRetrieval.evaluate_custom(qrels, results, [1, 3], "hole@k")
{'Hole@1': 0.0, 'Hole@3': 0.33333}

BEIR's conventions, reproduced: ``evaluate`` is pytrec_eval's nDCG@k, MAP@k (``map_cut``),
Recall@k and P@k (trec_eval 9: ``compat="trec_eval9"``) with ``ignore_identical_ids=True``
by default (a document whose id is the query's is dropped), averaged over the run's judged
queries and rounded to 5 decimals. Like BEIR, ``evaluate`` with ``ignore_identical_ids=True``
deletes those documents from the caller's ``results`` in place (``results[qid].pop(qid)``),
so that a second call on the same ``results`` -- or ``evaluate_custom`` after it -- sees
them gone and gives BEIR's numbers (copy the dict first to keep them). ``evaluate_custom`` gives ``mrr`` (MRR@k), ``r_cap``
(R_cap@k: relevant in the top k over min(R, k)), ``hole`` (Hole@k: the share of the top k
no query of the qrels judges) and ``acc`` (Accuracy@k: a relevant document in the top k),
with BEIR's order of equal scores (input order: Python's stable sort) and its mean (the sum
over the run's queries divided by the number of qrels queries). Differences: a run query without
judgements is ignored where BEIR's custom metrics fail with ``KeyError`` (``hole`` counts it);
``R_cap@k`` of a query without a relevant document is 0 where BEIR divides by zero.
Retrieval (``retrieve``, ``encode_and_retrieve``, ``rerank``) is refused with one line.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as _np

from metrics_core.errors import InputError as _InputError

__all__ = ["EvaluateRetrieval"]

_CUSTOM = {
    "mrr": "mrr",
    "mrr@k": "mrr",
    "mrr_cut": "mrr",
    "recall_cap": "r_cap",
    "r_cap": "r_cap",
    "r_cap@k": "r_cap",
    "hole": "hole",
    "hole@k": "hole",
    "acc": "acc",
    "top_k_acc": "acc",
    "accuracy": "acc",
    "accuracy@k": "acc",
    "top_k_accuracy": "acc",
}


def _evaluate(qrels, results, names, **conventions):
    import metrics_core as mc
    from metrics_core.compat.pytrec_eval import columns_from_mapping

    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # coverage: BEIR's rules are applied by the caller
        return mc.evaluate(
            columns_from_mapping(qrels, "qrels"),
            columns_from_mapping(results, "run"),
            names,
            **conventions,
        )


class EvaluateRetrieval:
    """BEIR's evaluator; only its scoring (:meth:`evaluate`, :meth:`evaluate_custom`) is
    offered."""

    def __init__(
        self,
        retriever=None,
        k_values=(1, 3, 5, 10, 100, 1000),
        score_function: str | None = "cos_sim",
    ):
        self.retriever = retriever
        self.k_values = list(k_values)
        self.top_k = max(self.k_values)
        self.score_function = score_function

    def retrieve(self, *args, **kwargs):
        raise _InputError(
            "BEIR drop-in: retrieval is not offered (RankLab evaluates results; run BEIR's "
            "retriever, then EvaluateRetrieval.evaluate here)"
        )

    encode_and_retrieve = retrieve
    rerank = retrieve

    @staticmethod
    def evaluate(qrels: dict, results: dict, k_values, ignore_identical_ids: bool = True):
        """``(ndcg, _map, recall, precision)``: ``{"NDCG@k": ...}``, ``{"MAP@k": ...}``,
        ``{"Recall@k": ...}``, ``{"P@k": ...}``, each rounded to 5 decimals.
        ``ignore_identical_ids=True`` (BEIR's default) deletes each query's own id from
        ``results`` in place, as BEIR does."""
        ks = list(k_values)
        if ignore_identical_ids:
            # BEIR's in-place deletion: the caller's results lose the identical ids
            for qid, rels in results.items():
                if qid in rels:
                    rels.pop(qid)
        names = [f"{m}@{k}" for m in ("nDCG", "AP", "R", "P") for k in ks]
        ev = _evaluate(qrels, results, names, compat="trec_eval9")
        agg = ev.aggregate
        out = []
        for family, key in (("nDCG", "NDCG"), ("AP", "MAP"), ("R", "Recall"), ("P", "P")):
            out.append({f"{key}@{k}": round(float(agg[f"{family}@{k}"]), 5) for k in ks})
        return tuple(out)

    @staticmethod
    def evaluate_custom(qrels: dict, results: dict, k_values, metric: str) -> dict:
        """BEIR's custom metrics: ``mrr``, ``r_cap``, ``hole``, ``acc`` (and their aliases)."""
        kind = _CUSTOM.get(str(metric).lower())
        if kind is None:
            raise _InputError(
                f"BEIR drop-in: metric {metric!r} is not one of BEIR's custom metrics "
                "(mrr, r_cap, hole, acc)"
            )
        ks = list(k_values)
        n_qrels = len(qrels)
        if kind == "hole":
            judged = set().union(*(set(d) for d in qrels.values())) if qrels else set()
            ev = _evaluate(qrels, results, [f"Hole@{k}" for k in ks], ties="input")
            sums = ev.per_query.sum()
            extra = [q for q in results if q not in qrels]
            extra_holes = {k: 0.0 for k in ks}
            for q in extra:  # run queries without judgements: BEIR still counts their holes
                top = sorted(results[q].items(), key=lambda item: item[1], reverse=True)
                for k in ks:
                    extra_holes[k] += sum(d not in judged for d, _ in top[:k]) / k
            return {
                f"Hole@{k}": round((float(sums[f"Hole@{k}"]) + extra_holes[k]) / n_qrels, 5)
                for k in ks
            }
        names = {
            "mrr": [f"RR@{k}" for k in ks],
            "acc": [f"Success@{k}" for k in ks],
            "r_cap": [f"Hits@{k}" for k in ks] + ["NumRel"],
        }[kind]
        ev = _evaluate(qrels, results, names, ties="input")
        frame = ev.per_query
        out = {}
        for k in ks:
            if kind == "r_cap":
                cap = _np.minimum(frame["NumRel"].to_numpy(dtype=float), k)
                hits = frame[f"Hits@{k}"].to_numpy(dtype=float)
                values = _np.divide(hits, cap, out=_np.zeros_like(hits), where=cap > 0)
                key = f"R_cap@{k}"
            else:
                values = frame[f"{'RR' if kind == 'mrr' else 'Success'}@{k}"].to_numpy(dtype=float)
                key = f"{'MRR' if kind == 'mrr' else 'Accuracy'}@{k}"
            out[key] = round(float(values.sum()) / n_qrels, 5)
        return out
