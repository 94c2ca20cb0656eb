"""The evaluation conventions, in one place.

Where specifications disagree (P@k's denominator, AP's normalizer, the DCG discount,
RR@k's misses ...) every convention exists under a name, and the default is
trec_eval's. Every output states the conventions it was computed with
(:meth:`Conventions.as_dict`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from metrics_core.errors import N_, InputError

#: Allowed values of each convention; the first one is the default.
CHOICES: dict[str, tuple] = {
    # Equal scores: trec_eval orders them by document id, descending; "expected": the exact
    # average over every order of the tied documents (sklearn's ndcg_score, torchmetrics).
    "ties": ("trec", "docid_asc", "input", "expected"),
    # A (query, doc) pair given twice in a run or qrels.
    "duplicates": ("error", "first", "max", "last", "count"),
    # A query judged in the qrels but absent from the run: skipped (trec_eval),
    # or scored 0 and averaged over all qrels queries (trec_eval -c).
    "missing_queries": ("skip", "zero"),
    # P@k when fewer than k documents were retrieved: divide by k, or by the number retrieved.
    "p_denominator": ("k", "retrieved"),
    # AP's normalizer: all relevant in the qrels; min(R, k); relevant retrieved (in the cut).
    "ap_normalizer": ("num_rel", "min_rel_k", "rel_retrieved"),
    # nDCG: gain of a label, positional discount, and where the ideal ranking comes from.
    "gain": ("linear", "exp"),
    "discount": ("log2", "jarvelin"),
    "ideal": ("qrels", "retrieved"),
    # RR@k when nothing relevant is in the top k: 0, or 1/(k+1) (seed 001's MRR@K).
    "rr_miss": ("zero", "k_plus_1"),
    # Fractional relevance labels: cut to whole numbers as trec_eval reads them (1.7 -> 1),
    # or kept as the gain (graded-relevance data sets).
    "labels": ("truncate", "keep"),
    # Which trec_eval to reproduce: 10.0, or 9.0.8 (what pytrec_eval and ir_measures
    # wrap): scores held as float32, recall levels rounded as (long)(r * R + 0.9).
    "compat": ("trec_eval10", "trec_eval9"),
}

DESCRIPTIONS: dict[str, str] = {
    "ties": "order of equal scores",
    "duplicates": "a (query, doc) pair given twice",
    "missing_queries": "qrels query absent from the run",
    "p_denominator": "P@k when fewer than k retrieved",
    "ap_normalizer": "AP normalizer",
    "gain": "nDCG gain",
    "discount": "nDCG discount",
    "ideal": "nDCG ideal ranking",
    "rr_miss": "RR@k with no relevant in the top k",
    "relevance_threshold": "relevance threshold of binary measures",
    "depth": "depth cut (trec_eval -M)",
    "labels": "fractional relevance labels",
    "compat": "trec_eval version reproduced",
    "judged_only": "judged documents only (trec_eval -J)",
    "num_docs": "documents in the collection (trec_eval -N)",
    "ignore_identical_ids": "drop a retrieved document whose id is the query's (BEIR)",
}


@dataclass(frozen=True)
class Conventions:
    """Conventions of an evaluation; the defaults reproduce trec_eval.

    Parameters
    ----------
    ties : {"trec", "docid_asc", "input", "expected"}
        Order of documents with equal scores: document id descending (trec_eval),
        document id ascending, or the order of the input lines; ``"expected"`` reports
        each value as its exact average over every order of the tied documents (each
        order equally likely; McSherry & Najork, ECIR 2008), as scikit-learn's
        ``ndcg_score`` and torchmetrics do: for the measures the tie report covers
        (:data:`metrics_core.ranking.ties.COVERED`) and the counts, which no order changes;
        another measure is an error. Needs the whole run in memory.
    duplicates : {"error", "first", "max", "last", "count"}
        What to do with a (query, doc) pair given more than once.
    missing_queries : {"skip", "zero"}
        Queries in the qrels but not in the run: skipped, or scored 0 (trec_eval ``-c``).
    relevance_threshold : float
        A document is relevant to binary measures when its label is ``>=`` this (``-l``).
    p_denominator : {"k", "retrieved"}
        P@k divides by k, or by min(k, number retrieved).
    ap_normalizer : {"num_rel", "min_rel_k", "rel_retrieved"}
        AP (and AP@k) divides by the number of relevant documents in the qrels,
        by min(that, k), or by the number of relevant documents retrieved.
    gain : {"linear", "exp"}
        nDCG gain of label ``g``: ``g`` or ``2**g - 1``.
    discount : {"log2", "jarvelin"}
        Discount at rank ``i``: ``1/log2(i+1)`` or ``1/max(1, log2 i)``.
    ideal : {"qrels", "retrieved"}
        The ideal ranking sorts all judged documents of the qrels, or only the
        retrieved ones.
    rr_miss : {"zero", "k_plus_1"}
        RR@k of a query without a relevant document in the top k: 0 or 1/(k+1).
    depth : int or None
        Keep only the top ``depth`` documents of each ranking (trec_eval ``-M``).
    labels : {"truncate", "keep"}
        Fractional relevance labels: cut toward zero to whole numbers, as trec_eval reads
        them (1.7 -> 1), or kept (the label is the gain).
    compat : {"trec_eval10", "trec_eval9"}
        ``trec_eval9`` reproduces trec_eval 9.0.8 and the tools that wrap it (pytrec_eval,
        ir_measures): scores are held as float32 before ranking (scores equal in float32
        tie, then trec_eval's tie order), and recall levels of IPrec and 11pt_avg become
        c = (long)(r * R + 0.9) documents instead of round(r * R); with missing queries
        scored 0, its summaries (geometric means, the summed ``num_rel``) are patched as
        trec_eval 9 patches them. Per-query rows of missing queries are still given
        (trec_eval 9 prints none; their values are the 0 its averages count).
    judged_only : bool
        Drop retrieved documents that are not judged (or judged with a negative label)
        before ranking measures see the list (trec_eval ``-J``).
    num_docs : int
        Documents in the collection, for measures that count non-retrieved non-relevant
        documents (``utility``; trec_eval ``-N``).
    ignore_identical_ids : bool
        Drop every retrieved document whose id equals its query's id before ranking, as
        BEIR's ``EvaluateRetrieval.evaluate(..., ignore_identical_ids=True)`` (its default)
        does for corpora where queries are documents too (ArguAna, Quora); the qrels are
        kept as they are. A query left without documents is evaluated as an empty
        ranking. Off by default (trec_eval keeps them).
    """

    ties: str = "trec"
    duplicates: str = "error"
    missing_queries: str = "skip"
    relevance_threshold: float = 1
    p_denominator: str = "k"
    ap_normalizer: str = "num_rel"
    gain: str = "linear"
    discount: str = "log2"
    ideal: str = "qrels"
    rr_miss: str = "zero"
    depth: int | None = None
    labels: str = "truncate"
    compat: str = "trec_eval10"
    judged_only: bool = False
    num_docs: int = 0
    ignore_identical_ids: bool = False

    def __post_init__(self):
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(
                    N_("unknown value {value!r} for convention {name!r}"),
                    hint=N_("accepted: {choices}"),
                    params={"value": value, "name": name, "choices": ", ".join(map(str, allowed))},
                )
        from metrics_core.validation import check_float, check_int

        threshold = check_float(self.relevance_threshold, "relevance_threshold")
        if isinstance(self.relevance_threshold, str):
            object.__setattr__(self, "relevance_threshold", threshold)
        if self.depth is not None:
            try:
                check_int(self.depth, "depth", minimum=1)
            except InputError:
                raise InputError(
                    N_("depth must be a positive integer, got {value!r}"),
                    params={"value": self.depth},
                ) from None
        if not isinstance(self.ignore_identical_ids, (bool, np.bool_)):
            raise InputError(
                N_("{name} must be true or false, got {value!r}"),
                params={"name": "ignore_identical_ids", "value": self.ignore_identical_ids},
            )
        if int(self.num_docs) != self.num_docs or self.num_docs < 0:
            raise InputError(
                N_("num_docs must be a whole number >= 0, got {value!r}"),
                params={"value": self.num_docs},
            )

    def replace(self, **changes) -> Conventions:
        """A copy with some conventions changed; unknown names are an error."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise InputError(
                N_("unknown convention(s): {names}"),
                hint=N_("accepted: {choices}"),
                params={
                    "names": ", ".join(sorted(unknown)),
                    "choices": ", ".join(f.name for f in dataclasses.fields(self)),
                },
            )
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        """Plain dict of every convention, for outputs and provenance."""
        return dataclasses.asdict(self)

    def differences(self) -> dict:
        """The conventions that differ from trec_eval's defaults."""
        default = Conventions()
        return {k: v for k, v in self.as_dict().items() if getattr(default, k) != v}


TREC_EVAL = Conventions()
