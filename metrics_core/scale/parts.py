"""The engine applied to parts of one run (whole queries each), and the parts put together.

Used by the streaming path (:mod:`metrics_core.scale.streaming`: blocks of a file read
in sequence) and the Dask path (:mod:`metrics_core.scale.distributed`: partitions by a
hash of the query id): :class:`QrelsIndex` takes the judgements of a part's queries,
:class:`Evaluator` evaluates a part and assembles the :class:`~metrics_core.evaluation.Evaluation`
of the whole run exactly as the whole-run path would, :class:`MergedDiagnostics` sums the
parts' diagnostics, :func:`hash_partition` assigns rows to partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core.conventions import Conventions
from metrics_core.data import Qrels, Run, SubtopicQrels
from metrics_core.evaluation import Evaluation
from metrics_core.ranking.engine import Diagnostics, Prepared, build_ranked_lists
from metrics_core.ranking.measures import compute, summary
from metrics_core.ranking.strings import encode_strings, hash_strings, string_order


class QrelsIndex:
    """Qrels indexed by query, so the judgements of a few queries are taken in O(their rows).

    Parameters
    ----------
    qrels : Qrels
    """

    def __init__(self, qrels: Qrels):
        self.qrels = qrels
        codes, vocab = encode_strings(qrels.qid)
        names = vocab.to_pylist()
        self.vocab = vocab
        self.order = np.argsort(codes, kind="stable")
        counts = np.bincount(codes, minlength=len(names))
        self.starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.extra = set(qrels.extra_query_ids)
        self._extra_values = pa.array(sorted(self.extra), type=pa.string())
        self.judged = set(names) | self.extra

    def subset(self, query_ids) -> Qrels:
        """The judgements of ``query_ids`` (rows in their qrels order, lines kept)."""
        q = self.qrels
        ids = (
            query_ids
            if isinstance(query_ids, pa.Array)
            else pa.array(list(query_ids), type=pa.string())
        )
        codes = pc.drop_null(pc.index_in(ids, value_set=self.vocab)).to_numpy(zero_copy_only=False)
        codes = codes.astype(np.int64)
        lo, hi = self.starts[codes], self.starts[codes + 1]
        count = hi - lo
        at = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        rows = np.sort(self.order[at])
        if q.line_numbers is not None:
            lines = q.line_numbers[rows]
        elif q.rows_are_lines:
            lines = rows + 1
        else:
            lines = None
        extra = (
            ids.filter(pc.is_in(ids, value_set=self._extra_values)).to_pylist()
            if self.extra
            else []
        )
        if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):
            # one stretch of the qrels (qrels and run written in the same query order):
            # slices, no copies of the ids
            lo, n = int(rows[0]), len(rows)
            qid, docid = q.qid.slice(lo, n), q.docid.slice(lo, n)
        else:
            take = pa.array(rows, type=pa.int64())
            qid, docid = q.qid.take(take), q.docid.take(take)
        if isinstance(q, SubtopicQrels):  # the block's subtopic judgements come along
            return q.take_rows(rows, qid, docid, line_numbers=lines, extra_query_ids=extra)
        return Qrels(
            qid,
            docid,
            q.relevance[rows],
            source=q.source,
            line_numbers=lines,
            extra_query_ids=extra,
        )


@dataclass
class MergedDiagnostics:
    """Diagnostics summed over parts of a run (each is a sum over queries): :meth:`add`
    a part's (``sign=-1`` takes one back), :meth:`diagnostics` the whole run's."""

    cutoffs: tuple
    duplicates: int = 0
    tied_groups: int = 0
    tied_documents: int = 0
    straddling: dict = field(default_factory=dict)

    def add(self, d: Diagnostics, sign: int = 1) -> None:
        """Add a part's diagnostics (``sign=-1``: take them back)."""
        self.duplicates += sign * d.duplicates
        self.tied_groups += sign * d.tied_groups
        self.tied_documents += sign * d.tied_documents
        for k, v in d.ties_straddling.items():
            self.straddling[k] = self.straddling.get(k, 0) + sign * v

    def diagnostics(self, missing, extra, qrels_duplicates) -> Diagnostics:
        """The whole run's diagnostics, with its missing and extra queries."""
        d = Diagnostics(
            missing_queries=list(missing),
            extra_queries=list(extra),
            duplicates=self.duplicates,
            qrels_duplicates=qrels_duplicates,
            tied_groups=self.tied_groups,
            tied_documents=self.tied_documents,
        )
        # the engine reports every cutoff when the run has a tie, none otherwise
        if self.tied_groups:
            d.ties_straddling = {k: self.straddling.get(k, 0) for k in sorted(set(self.cutoffs))}
        return d


class Evaluator:
    """The engine applied to parts of one run, with the results put together.

    Holds the qrels (indexed once), the measures and the conventions; :meth:`rows`
    evaluates a Run made of whole queries, :meth:`finish` assembles the
    :class:`~metrics_core.evaluation.Evaluation` exactly as the whole-run path
    would.
    """

    def __init__(self, qrels: Qrels | QrelsIndex, specs, conv: Conventions, cutoffs):
        self.index = qrels if isinstance(qrels, QrelsIndex) else QrelsIndex(qrels)
        self.specs = list(specs)
        self.conv = conv
        self.cutoffs = tuple(cutoffs)
        # per block the absent queries are not added: they are added once, at the end
        self.block_conv = conv.replace(missing_queries="skip")

    def qrels_diagnostics(self) -> int:
        """Duplicate judgements over the whole qrels (raises under ``duplicates="error"``)."""
        empty = Run(
            pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), source="<run>"
        )
        ranked = build_ranked_lists(self.index.qrels, empty, self.block_conv, self.cutoffs)
        return ranked.diagnostics.qrels_duplicates

    def prepare(self, run: Run):
        """(the judgements of ``run``'s queries, the codes and names of its query ids):
        the part of :meth:`rows` that can be done on the read-ahead thread. (The
        fingerprints are left to :meth:`rows`: on the 10 M-line benchmark this splits the
        work about evenly between the two threads.)"""
        codes, vocab = encode_strings(run.qid)
        return self.index.subset(vocab), (codes, vocab)

    def rows(self, run: Run, prepared=None):
        """Evaluate ``run`` (whole queries). Returns (query ids, {measure: values}, diagnostics).

        ``prepared``: what :meth:`prepare` gave for this run (made here when None).
        """
        sub, run_qid = self.prepare(run) if prepared is None else prepared
        ranked = build_ranked_lists(
            sub, run, self.block_conv, self.cutoffs, Prepared(sub, run, run_qid)
        )
        ranked.judged_anywhere = (
            self.index.qrels.docid
        )  # Hole@k asks the whole qrels, not the block's
        columns = {s.name: compute(ranked, s, self.conv) for s in self.specs}
        return ranked.query_ids, columns, ranked.diagnostics

    def missing_rows(self, missing):
        """Values of the qrels queries absent from the run (``missing_queries="zero"``)."""
        empty = Run(
            pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0), source="<run>"
        )
        ranked = build_ranked_lists(self.index.subset(missing), empty, self.conv, self.cutoffs)
        return ranked.query_ids, {s.name: compute(ranked, s, self.conv) for s in self.specs}

    def finish(
        self,
        run_name,
        query_ids,
        position,
        columns,
        merged: MergedDiagnostics,
        run_queries,
        qrels_duplicates,
        extra_diagnostics=None,
    ):
        """The Evaluation of the whole run from per-query values in any order.

        ``position`` orders the queries as the whole run would (first appearance).
        """
        judged = self.index.judged
        missing = sorted(judged - run_queries)
        extra = sorted(run_queries - judged)
        order = np.argsort(np.asarray(position, dtype=np.int64), kind="stable")
        ids = [query_ids[i] for i in order]
        cols = {
            s.name: np.asarray(columns[s.name], dtype=np.float64)[order]
            if len(order)
            else np.zeros(0)
            for s in self.specs
        }
        if self.conv.missing_queries == "zero" and missing:
            mids, mcols = self.missing_rows(missing)
            ids += mids
            cols = {k: np.concatenate((v, mcols[k])) for k, v in cols.items()}
        diag = merged.diagnostics(missing, extra, qrels_duplicates)
        miss = np.zeros(len(ids), dtype=bool)
        miss[len(ids) - (len(missing) if self.conv.missing_queries == "zero" else 0) :] = True
        # as the whole-run path: trec_eval's query order once for every measure, and the
        # count of positive judgements (trec_eval 9's summed num_rel under -c)
        trec_sorted = string_order(ids)
        labels = self.index.qrels.relevance
        if self.conv.labels == "truncate":
            labels = np.trunc(labels)
        positive = int(np.count_nonzero(labels > 0))
        agg = {
            s.name: summary(
                cols[s.name],
                s,
                ids,
                self.conv,
                missing=miss,
                positive_labels=positive,
                order=trec_sorted,
            )
            for s in self.specs
        }
        out = diag.as_dict() | (extra_diagnostics or {}) | {"num_queries": len(ids)}
        return Evaluation(run_name, self.specs, (ids, cols), agg, out, self.conv, None)


def plain_strings(arr):
    """A dictionary-encoded Arrow string column decoded to plain strings (others as given)."""
    if pa.types.is_dictionary(arr.type):
        return arr.cast(arr.type.value_type)
    return arr


def hash_partition(qid, n_parts: int) -> np.ndarray:
    """Partition (0 .. n_parts - 1) of every row by a hash of its query id."""
    h = hash_strings(plain_strings(qid))
    with np.errstate(over="ignore"):
        h = (h * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(33)
    return (h % np.uint64(n_parts)).astype(np.int64)


__all__ = ["QrelsIndex", "MergedDiagnostics", "Evaluator", "plain_strings", "hash_partition"]
