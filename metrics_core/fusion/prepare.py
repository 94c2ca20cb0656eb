"""The runs' rows in one table: ids encoded once, each run ranked by trec_eval's tie rule.

Used by :mod:`metrics_core.fusion.core` and :mod:`metrics_core.fusion.training`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from metrics_core.data import Run
from metrics_core.errors import N_, InputError
from metrics_core.ranking.keys import score_key
from metrics_core.ranking.strings import encode_strings, stable_argsort_codes, string_order


def _plain_strings(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    return arr


def encode_many(columns: Sequence) -> tuple[list[np.ndarray], pa.Array]:
    """Codes of several string columns in ONE dictionary (each column encoded on its own,
    then the small dictionaries united)."""
    codes, vocabs = [], []
    for col in columns:
        c, v = encode_strings(col)
        codes.append(c)
        vocabs.append(_plain_strings(v))
    if len(vocabs) == 1:
        return [codes[0].astype(np.int64)], vocabs[0]
    enc = pa.concat_arrays(vocabs).dictionary_encode()
    glob = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    out, at = [], 0
    for c, v in zip(codes, vocabs, strict=True):
        out.append(glob[at : at + len(v)][c])
        at += len(v)
    return out, _plain_strings(enc.dictionary)


def _encode_together(columns: Sequence) -> tuple[list[np.ndarray], pa.Array]:
    """Codes of several string columns in one dictionary, by one hash pass over all of them."""
    chunks: list = []
    for col in columns:
        col = (
            _plain_strings(col)
            if not isinstance(col, pa.ChunkedArray)
            or pa.types.is_dictionary(col.type)
            or not pa.types.is_string(col.type)
            else col
        )
        chunks.extend(col.chunks if isinstance(col, pa.ChunkedArray) else [col])
    enc = pa.chunked_array(chunks, type=pa.string()).dictionary_encode()
    codes = [c.indices.to_numpy(zero_copy_only=False).astype(np.int64) for c in enc.chunks]
    out, at = [], 0
    for col in columns:
        k = (
            col.num_chunks
            if isinstance(col, pa.ChunkedArray)
            and not pa.types.is_dictionary(col.type)
            and pa.types.is_string(col.type)
            else 1
        )
        part = codes[at : at + k]
        out.append(np.concatenate(part) if len(part) != 1 else part[0])
        at += k
    dictionary = enc.chunks[-1].dictionary if enc.num_chunks else pa.array([], pa.string())
    return out, _plain_strings(dictionary)


def _sorted_vocab(codes: list[np.ndarray], vocab: pa.Array) -> tuple[list[np.ndarray], pa.Array]:
    """Renumber codes so that their order is the ids' string order."""
    order = string_order(vocab)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return [rank[c] for c in codes], vocab.take(pa.array(order))


@dataclass
class Prepared:
    """The runs' rows in one table: codes, ranks, list lengths, (normalised) scores."""

    names: list[str]
    qvocab: pa.Array  # query ids, string order (code = position)
    dvocab: pa.Array  # document ids (code = position)
    run: np.ndarray  # run index of each row (rows grouped by run)
    q: np.ndarray  # query code of each row
    d: np.ndarray  # document code
    raw: np.ndarray  # the run's score
    pos: np.ndarray  # 0-based rank within the run's list for the query
    lengths: np.ndarray  # runs x queries: list lengths L
    sources: list[str]

    @property
    def n_runs(self) -> int:
        return len(self.names)

    @property
    def n_queries(self) -> int:
        return len(self.qvocab)


def rank_order(
    q: np.ndarray, scores: np.ndarray, d: np.ndarray, nq: int, vocab: pa.Array
) -> np.ndarray:
    """Row order by query, then score descending, then document id descending (trec_eval's
    tie rule). A run already in that order is checked in O(n) and not sorted; only the
    documents inside groups of equal scores have their ids compared."""
    n = len(q)
    if (
        n > 1
        and bool(np.all(q[1:] >= q[:-1]))
        and bool(np.all((q[1:] != q[:-1]) | (scores[1:] <= scores[:-1])))
    ):
        order = np.arange(n)
    else:
        order = np.argsort(score_key(scores))  # equal scores are put in the tie rule's order below
        order = order[stable_argsort_codes(q[order], nq)]
    if n < 2:
        return order
    sq, ss = q[order], scores[order]
    same = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])
    if not same.any():
        return order
    tied = np.flatnonzero(np.r_[same, False] | np.r_[False, same])  # positions in ``order``
    group = np.cumsum(np.r_[True, ~same])[tied]  # tie group of each
    docs = d[order[tied]]
    used, inverse = np.unique(docs, return_inverse=True)
    rank = np.empty(len(used), dtype=np.int64)
    rank[string_order(vocab.take(pa.array(used)))] = np.arange(len(used))
    within = np.lexsort((-rank[inverse], group))
    order[tied] = order[tied][within]
    return order


def prepare(runs: Sequence[Run]) -> Prepared:
    """Encode and rank the runs (see the module's description)."""
    qcodes, qvocab = encode_many([r.qid for r in runs])
    qcodes, qvocab = _sorted_vocab(qcodes, qvocab)
    dcodes, dvocab = _encode_together([r.docid for r in runs])
    nq = len(qvocab)
    prep = Prepared(
        names=[r.name for r in runs],
        qvocab=qvocab,
        dvocab=dvocab,
        run=np.zeros(0, np.int16),
        q=np.zeros(0, np.int64),
        d=np.zeros(0, np.int64),
        raw=np.zeros(0),
        pos=np.zeros(0, np.int64),
        lengths=np.zeros((len(runs), nq), dtype=np.int64),
        sources=[r.source for r in runs],
    )
    parts_q, parts_d, parts_s, parts_p, parts_r = [], [], [], [], []
    for i, run in enumerate(runs):
        q, d, s = qcodes[i], dcodes[i], np.asarray(run.scores, dtype=np.float64)
        order = rank_order(q, s, d, nq, dvocab)
        q, d, s = q[order], d[order], s[order]
        starts = np.searchsorted(q, np.arange(nq + 1))
        prep.lengths[i] = np.diff(starts)
        parts_q.append(q)
        parts_d.append(d)
        parts_s.append(s)
        parts_p.append(np.arange(len(q), dtype=np.int64) - starts[q])
        parts_r.append(np.full(len(q), i, dtype=np.int16))
    prep.q = np.concatenate(parts_q) if parts_q else prep.q
    prep.d = np.concatenate(parts_d) if parts_d else prep.d
    prep.raw = np.concatenate(parts_s) if parts_s else prep.raw
    prep.pos = np.concatenate(parts_p) if parts_p else prep.pos
    prep.run = np.concatenate(parts_r) if parts_r else prep.run
    return prep


def as_runs(runs) -> list[Run]:
    """Runs from what the readers accept (paths, Run objects, mappings); a mapping of
    name -> source names them."""
    from metrics_core.io import read_run

    if isinstance(runs, Mapping):
        items = list(runs.items())
    else:
        items = [(None, r) for r in runs]
    out = []
    for name, source in items:
        run = read_run(source, name=name) if name is not None else read_run(source)
        out.append(run)
    if len(out) < 2:
        raise InputError(
            N_("fusion needs at least two runs, got {count}"),
            field="runs",
            params={"count": len(out)},
        )
    names = [r.name for r in out]
    if len(set(names)) < len(names):
        out = [
            _renamed(r, f"{r.name}#{i + 1}") if names.count(r.name) > 1 else r
            for i, r in enumerate(out)
        ]
    return out


def _renamed(run: Run, name: str) -> Run:
    import copy

    other = copy.copy(run)
    other.name = name
    return other


__all__ = ["Prepared", "prepare", "as_runs", "rank_order", "encode_many"]
