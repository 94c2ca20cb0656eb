"""Make the bundled diversity samples (seeded; run from anywhere, rewrites
sample_data/diversity/).

    python sample_data/make_diversity_samples.py

Writes, all small (< 60 KB together):

* ``subtopics.qrels``  ndeval's subtopic qrels (``qid subtopic docid relevance``, the second
  column the subtopic): 20 ambiguous queries, each with 2-6 subtopics (intents); a
  document may be relevant to several subtopics; labels 0-2 (ndeval counts any label >= 1);
  one query judged with no relevant document at all
* ``relevance.txt``  a TREC run, 20 documents per query, that ranks the documents of the
  main intent first (noisy scores, two decimals: a few equal scores): few intents covered
* ``diverse.txt``  a TREC run over the same documents that gives each rank a new intent
  while one is left: higher alpha-nDCG, ERR-IA and subtopic recall; one query it does
  not answer
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "diversity"
N_QUERIES = 20
DEPTH = 20
POOL = 30  # documents judged per query


def main(seed: int = 40) -> None:
    rng = np.random.default_rng(seed)
    OUT.mkdir(parents=True, exist_ok=True)
    qrels, rel_run, div_run = [], [], []
    for q in range(1, N_QUERIES + 1):
        qid = str(300 + q)
        n_sub = int(rng.integers(2, 7))
        # intent popularity: the first subtopic is the main one
        weight = np.sort(rng.dirichlet(np.ones(n_sub) * 0.8))[::-1]
        docs = [f"clueweb-{q:02d}-{i:03d}" for i in range(POOL)]
        covers = {}
        for d in docs:
            main_intent = int(rng.choice(n_sub, p=weight))
            intents = {main_intent}
            if rng.random() < 0.25:
                intents.add(int(rng.integers(0, n_sub)))
            covers[d] = intents
        judged = {}
        for d in docs:
            for s in range(n_sub):
                if q == 7:  # a query judged without any relevant document
                    label = 0
                elif s in covers[d]:
                    label = int(rng.choice([0, 1, 1, 2], p=[0.2, 0.4, 0.2, 0.2]))
                else:
                    label = 0
                if label or rng.random() < 0.15 or s == 0:
                    judged[(s, d)] = label
        for (s, d), label in judged.items():
            qrels.append((qid, s + 1, d, label))
        # the relevance run: documents of the main intent first, noisy scores
        score_rel = {d: (2.0 if 0 in covers[d] else 0.0) + rng.normal(0, 0.6) for d in docs}
        ranked = sorted(docs, key=lambda d: -score_rel[d])[:DEPTH]
        rel_run += [(qid, d, round(score_rel[d], 2)) for d in ranked]
        # the diverse run: greedily a new intent each rank, then by relevance
        seen, order, left = set(), [], list(ranked) + [d for d in docs if d not in ranked]
        while left and len(order) < DEPTH:
            fresh = [d for d in left if covers[d] - seen]
            pick = fresh[0] if fresh and rng.random() < 0.85 else left[0]
            order.append(pick)
            seen |= covers[pick]
            left.remove(pick)
        if q != 12:  # a query the diverse run does not answer
            div_run += [(qid, d, round(float(DEPTH - i) / 2.0, 1)) for i, d in enumerate(order)]
    qrels.sort(key=lambda r: (int(r[0]), r[1], r[2]))
    (OUT / "subtopics.qrels").write_text("".join(f"{q} {s} {d} {v}\n" for q, s, d, v in qrels))
    for name, run in (("relevance", rel_run), ("diverse", div_run)):
        lines = []
        rank = {}
        for q, d, v in run:
            rank[q] = rank.get(q, 0) + 1
            lines.append(f"{q} Q0 {d} {rank[q]} {v} {name}\n")
        (OUT / f"{name}.txt").write_text("".join(lines))


if __name__ == "__main__":
    main()
