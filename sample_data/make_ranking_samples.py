"""Make the bundled ranking samples (seeded; run from anywhere, rewrites sample_data/ranking/).

    python sample_data/make_ranking_samples.py

Writes, all small (< 500 KB together):

* ``qrels.txt``   graded TREC qrels (labels 0-3) for 50 queries, 12-30 judged documents each
* ``queries.csv`` query metadata: query_id, query, category, difficulty, date, criterion, fold
* ``bm25.txt``, ``dense.txt``, ``hybrid.txt``  TREC runs, 40 documents per query, scores
  rounded so that equal scores occur (some across the @5 / @10 cutoffs); ``dense``
  misses two queries and ``bm25`` has one query the qrels do not judge
* ``clicks.csv``  a click log (query, shown ids separated by ``|``, clicked ids), clicks
  drawn from the labels with a position bias; some impressions have no click and a few
  clicks are on ids that were not shown (ads)
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "ranking"
N_QUERIES = 50
DEPTH = 40
CATEGORIES = ("shipping", "electronics", "billing", "returns", "account")
TOPICS = {
    "shipping": [
        "parcels to Quito",
        "express delivery times",
        "international shipping rates",
        "tracking a lost package",
        "customs forms for parcels",
    ],
    "electronics": [
        "phones from last month",
        "laptop warranty",
        "refurbished tablets",
        "headphones under 50",
        "phone chargers in stock",
    ],
    "billing": [
        "invoice with tax id",
        "refund to credit card",
        "payment failed twice",
        "monthly statement download",
        "change billing address",
    ],
    "returns": [
        "return a damaged item",
        "exchange shoe size",
        "return label printing",
        "refund time after return",
        "return without receipt",
    ],
    "account": [
        "reset password",
        "two factor login",
        "delete my account",
        "change email address",
        "merge two accounts",
    ],
}
DIFFICULTIES = ("easy", "medium", "hard")
CRITERIA = ("exact", "semantic")


def main(seed: int = 20250128) -> None:
    rng = np.random.default_rng(seed)
    OUT.mkdir(parents=True, exist_ok=True)
    qids = [f"q{i:02d}" for i in range(1, N_QUERIES + 1)]
    start = dt.date(2025, 1, 6)

    meta_lines = ["query_id,query,category,difficulty,date,criterion,fold"]
    qrels_lines, judged = [], {}
    for i, q in enumerate(qids):
        cat = CATEGORIES[i % len(CATEGORIES)]
        text = TOPICS[cat][(i // len(CATEGORIES)) % 5]
        diff = DIFFICULTIES[int(rng.integers(0, 3))]
        date = start + dt.timedelta(days=int(rng.integers(0, 60)))
        meta_lines.append(f"{q},{text},{cat},{diff},{date.isoformat()},{CRITERIA[i % 2]},{i % 5}")
        n_judged = int(rng.integers(12, 31))
        docs = rng.choice(4000, size=n_judged, replace=False)
        # harder queries have fewer and weaker relevant documents
        p = {
            "easy": [0.45, 0.25, 0.18, 0.12],
            "medium": [0.6, 0.2, 0.12, 0.08],
            "hard": [0.75, 0.15, 0.07, 0.03],
        }[diff]
        labels = rng.choice(4, size=n_judged, p=p)
        if i % 9 == 4:
            labels[:] = 0  # a query without any relevant document
        judged[q] = dict(zip((f"D{d:05d}" for d in docs), labels.tolist(), strict=True))
        qrels_lines += [f"{q} 0 {d} {r}" for d, r in judged[q].items()]
    (OUT / "qrels.txt").write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    (OUT / "queries.csv").write_text("\n".join(meta_lines) + "\n", encoding="utf-8")

    systems = {"bm25": (1.2, 1, 0), "dense": (1.8, 2, 2), "hybrid": (2.4, 1, 0)}
    for name, (skill, decimals, n_missing) in systems.items():
        lines = []
        run_qids = qids[n_missing:] if n_missing else qids + (["q99"] if name == "bm25" else [])
        for q in run_qids:
            labels = judged.get(q, {})
            pool = list(labels)
            others = [f"D{d:05d}" for d in rng.choice(4000, size=DEPTH, replace=False)]
            cand = list(dict.fromkeys(pool + others))
            rel = np.array([labels.get(d, 0) for d in cand], dtype=float)
            noise = rng.normal(0, 1.0, size=len(cand))
            score = skill * rel / 3.0 + noise
            order = np.argsort(-score, kind="stable")[:DEPTH]
            top = score[order]
            # rounded scores make ties, as real systems with coarse scores have
            top = np.round((top - top.min()) / (np.ptp(top) or 1.0) * 10, decimals)
            for rank, (j, s) in enumerate(zip(order, top, strict=True), start=1):
                lines.append(f"{q} Q0 {cand[j]} {rank} {s:.{decimals}f} {name}")
        (OUT / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    # Click log from the bm25 top 10: examine top-down with decaying attention.
    bm25 = {}
    for line in (OUT / "bm25.txt").read_text().splitlines():
        q, _, d, *_ = line.split()
        bm25.setdefault(q, []).append(d)
    click_lines = ["query,shown,clicked"]
    for _ in range(200):
        q = qids[int(rng.integers(0, N_QUERIES))]
        shown = bm25[q][:10]
        clicks = []
        for pos, d in enumerate(shown, start=1):
            attract = {0: 0.03, 1: 0.35, 2: 0.6, 3: 0.85}[int(judged[q].get(d, 0))]
            if rng.random() < attract / pos**0.5:
                clicks.append(d)
        rng.shuffle(clicks)  # click order is not rank order
        if rng.random() < 0.05:
            clicks.insert(0, "AD-0001")  # an ad: not among the shown results
        click_lines.append(f"{q},{'|'.join(shown)},{'|'.join(clicks)}")
    (OUT / "clicks.csv").write_text("\n".join(click_lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
