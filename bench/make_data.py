"""Generate seeded TREC qrels and run files for the ranking benchmark.

The files imitate what people evaluate in practice:

* doc ids such as ``doc4817302`` drawn from a collection of nine million documents,
  distinct within each query;
* one run line per (query, doc), written per query in rank order (score descending,
  rank column 1..k, as ``trec_eval`` users produce them), or shuffled on request so
  that the reader's unsorted path is measured too;
* graded qrels (0-3, no negative labels) with 50-200 judged documents per query (10-40
  in the ``ties`` preset), a part of them retrieved by the run (more often near the
  top) and the rest not retrieved, judged non-relevant documents included.

Presets::

    python bench/make_data.py --preset 10m      # 10,000 queries x 1,000 docs
    python bench/make_data.py --preset ties     # 100,000 queries x 100 docs, tied scores
    python bench/make_data.py --preset quick    # 1,000 queries x 100 docs
    python bench/make_data.py --preset 50m      # 50,000 queries x 1,000 docs (1.9 GB)
    python bench/make_data.py --queries 50 --depth 20 --name tiny --out /tmp/x

Each call writes ``<out>/<name>.qrels`` and ``<out>/<name>.run`` (``--shuffle`` adds
``<name>.shuf.run`` with the same lines in random order). Everything is vectorised
with numpy and written by pyarrow's CSV writer, so 10 M lines take seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

#: Doc ids are ``doc`` + 7 digits: 1000000 .. 9999999.
COLLECTION_FIRST = 1_000_000
COLLECTION_SIZE = 9_000_000

PRESETS = {
    "10m": dict(queries=10_000, depth=1_000, decimals=4, name="q10k_d1000"),
    # Many short queries (a QA or passage set): fewer judgements per query, so that
    # the qrels (2.5 M lines) stay smaller than the run (10 M lines).
    "ties": dict(
        queries=100_000, depth=100, decimals=1, judged_min=10, judged_max=40, name="q100k_d100_ties"
    ),
    "quick": dict(queries=1_000, depth=100, decimals=4, name="q1k_d100"),
    # the streaming benchmark's large run (1.9 GB): 50,000 queries x 1,000 docs
    "50m": dict(queries=50_000, depth=1_000, decimals=4, name="q50k_d1000"),
}

DEFAULT_OUT = Path(__file__).resolve().parent / "data"


def _coprime_strides(rng: np.random.Generator, n: int) -> np.ndarray:
    """Strides in [1, COLLECTION_SIZE) coprime with COLLECTION_SIZE.

    ``(start + j * stride) mod COLLECTION_SIZE`` is then distinct for every
    ``j < COLLECTION_SIZE``: distinct doc ids per query without a per-query loop.
    """
    out = np.empty(0, dtype=np.int64)
    while out.size < n:
        cand = rng.integers(1, COLLECTION_SIZE, size=2 * n, dtype=np.int64)
        out = np.concatenate([out, cand[np.gcd(cand, COLLECTION_SIZE) == 1]])
    return out[:n]


def generate(
    queries: int,
    depth: int,
    *,
    decimals: int = 4,
    judged_min: int = 50,
    judged_max: int = 200,
    seed: int = 0,
):
    """Return ``(run_table, qrels_table)`` as pyarrow tables (TREC column order).

    Parameters
    ----------
    queries, depth : int
        Number of queries and retrieved documents per query.
    decimals : int
        Scores are rounded to this many decimals; 1 gives many tied scores.
        Scores stay exactly distinct in float32 too for ``decimals <= 4`` (values
        below 64), so float32 readers (pytrec_eval) see the same ties.
    judged_min, judged_max : int
        Judged documents per query are drawn uniformly in this range.
    seed : int
        Seed of numpy's default generator; the same arguments give the same bytes.
    """
    rng = np.random.default_rng(seed)
    qids = np.arange(queries, dtype=np.int64) + 10 ** len(str(queries))  # same width

    judged = rng.integers(judged_min, judged_max + 1, size=queries)
    # Part of the judged documents is retrieved (a pooled system); clip to depth.
    retrieved_share = rng.uniform(0.3, 0.8, size=queries)
    judged_in_run = np.minimum(np.round(judged * retrieved_share).astype(np.int64), depth)
    judged_out = judged - judged_in_run
    extra = int(judged_out.max()) if queries else 0

    # Doc ids: an arithmetic progression mod the collection size per query; the first
    # `depth` positions are retrieved, the next `judged_out` are judged but unretrieved.
    starts = rng.integers(0, COLLECTION_SIZE, size=queries, dtype=np.int64)
    strides = _coprime_strides(rng, queries)
    pos = np.arange(depth + extra, dtype=np.int64)
    docnums = (starts[:, None] + pos[None, :] * strides[:, None]) % COLLECTION_SIZE
    docnums += COLLECTION_FIRST
    # Scramble the retrieved part so neighbouring ranks do not share a stride pattern.
    perm = np.argsort(rng.random((queries, depth)), axis=1)
    run_docs = np.take_along_axis(docnums[:, :depth], perm, axis=1)
    unretrieved = docnums[:, depth:]

    # Scores: descending per query, gaps exponential; rounding makes ties.
    gaps = rng.exponential(15.0 / depth, size=(queries, depth))
    top = rng.uniform(20.0, 40.0, size=(queries, 1))
    scores = np.round(top - np.cumsum(gaps, axis=1) + gaps[:, :1], decimals)

    # Judged retrieved documents, biased to the top (Gumbel top-k on log weights).
    ranks = np.arange(1, depth + 1)
    keys = -np.log(ranks)[None, :] * 0.7 + rng.gumbel(size=(queries, depth))
    order = np.argsort(-keys, axis=1)
    take = np.arange(depth)[None, :] < judged_in_run[:, None]
    judged_rank_idx = order[take]  # row-major: grouped by query
    judged_q = np.repeat(np.arange(queries), judged_in_run)
    # Relevance more likely near the top; grades 1..3 for relevant documents.
    p_rel = 0.15 + 0.55 * np.exp(-judged_rank_idx / (0.1 * depth))
    rel_in = _grades(rng, p_rel)

    take_out = np.arange(extra)[None, :] < judged_out[:, None]
    out_docs = unretrieved[take_out]
    out_q = np.repeat(np.arange(queries), judged_out)
    rel_out = _grades(rng, np.full(out_docs.size, 0.25))

    q_all = np.concatenate([judged_q, out_q])
    d_all = np.concatenate([run_docs[judged_q, judged_rank_idx], out_docs])
    r_all = np.concatenate([rel_in, rel_out])
    qrels_order = np.lexsort((d_all, q_all))  # qrels files are sorted by query, doc
    q_all, d_all, r_all = q_all[qrels_order], d_all[qrels_order], r_all[qrels_order]

    qid_str = pc.cast(pa.array(qids), pa.string())
    run_table = pa.table(
        {
            "query_id": pc.take(qid_str, pa.array(np.repeat(np.arange(queries), depth))),
            "q0": _constant("Q0", queries * depth),
            "doc_id": _doc_strings(run_docs.ravel()),
            "rank": pa.array(np.tile(ranks, queries)),
            "score": pa.array(scores.ravel()),
            "tag": _constant("bench", queries * depth),
        }
    )
    qrels_table = pa.table(
        {
            "query_id": pc.take(qid_str, pa.array(q_all)),
            "iteration": pa.array(np.zeros(q_all.size, dtype=np.int64)),
            "doc_id": _doc_strings(d_all),
            "relevance": pa.array(r_all),
        }
    )
    return run_table, qrels_table


def _grades(rng: np.random.Generator, p_relevant: np.ndarray) -> np.ndarray:
    relevant = rng.random(p_relevant.size) < p_relevant
    grade = rng.choice(np.array([1, 2, 3]), size=p_relevant.size, p=[0.5, 0.3, 0.2])
    return np.where(relevant, grade, 0).astype(np.int64)


def _constant(text: str, n: int) -> pa.Array:
    return pc.take(pa.array([text]), pa.array(np.zeros(n, dtype=np.int32)))


def _doc_strings(nums: np.ndarray) -> pa.Array:
    text = pc.cast(pa.array(nums), pa.string())
    return pc.binary_join_element_wise("doc", text, "")


def write_table(table: pa.Table, path: Path) -> None:
    options = pa_csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pa_csv.write_csv(table, str(path), options)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), help="named size")
    parser.add_argument("--queries", type=int)
    parser.add_argument("--depth", type=int, help="documents retrieved per query")
    parser.add_argument("--decimals", type=int, help="score rounding (1 = many ties)")
    parser.add_argument("--judged-min", type=int)
    parser.add_argument("--judged-max", type=int)
    parser.add_argument("--name", help="file stem (default from the preset or sizes)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--shuffle",
        action="store_true",
        help="also write <name>.shuf.run with the lines in random order",
    )
    args = parser.parse_args(argv)

    cfg = dict(PRESETS[args.preset]) if args.preset else {"decimals": 4}
    cfg.setdefault("judged_min", 50)
    cfg.setdefault("judged_max", 200)
    for key in ("queries", "depth", "decimals", "name", "judged_min", "judged_max"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if "queries" not in cfg or "depth" not in cfg:
        parser.error("give --preset or both --queries and --depth")
    name = cfg.get("name") or f"q{cfg['queries']}_d{cfg['depth']}"

    t0 = time.perf_counter()
    run_table, qrels_table = generate(
        cfg["queries"],
        cfg["depth"],
        decimals=cfg["decimals"],
        judged_min=cfg["judged_min"],
        judged_max=cfg["judged_max"],
        seed=args.seed,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = args.out / f"{name}.run", args.out / f"{name}.qrels"
    write_table(run_table, run_path)
    write_table(qrels_table, qrels_path)
    written = [run_path, qrels_path]
    if args.shuffle:
        perm = np.random.default_rng(args.seed + 1).permutation(run_table.num_rows)
        shuf_path = args.out / f"{name}.shuf.run"
        write_table(run_table.take(pa.array(perm)), shuf_path)
        written.append(shuf_path)
    for path in written:
        print(f"{path}  {path.stat().st_size / 2**20:.1f} MiB", file=sys.stderr)
    print(
        f"{run_table.num_rows} run lines, {qrels_table.num_rows} qrels lines "
        f"in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
