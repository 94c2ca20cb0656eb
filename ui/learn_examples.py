"""The Learn page's worked examples: the seeds' rankings and what the seeds say they give.

Pure (no Streamlit): tests evaluate every preset and compare with the seeds' numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import metrics_core as mc

# name -> labels (rank order), k, relevant documents in the collection (None: those in
# the list), convention overrides, the seed's own statements {measure: value}, a note.
PRESETS = {
    "Seed 003 example": dict(
        labels=[4, 4, 3, 0, 0, 1, 3, 3, 3, 0], k=6, num_relevant=None,
        conventions=dict(discount="jarvelin", ideal="retrieved", p_denominator="retrieved"),
        expected={"DCG@6": "10.279642067948915", "nDCG@6": "0.7424602308163405"},
        note="Seed 003 (relevance_query_3, k = 6): its DCG divides by log2(max(i, 2)) "
             "(discount = jarvelin) and its ideal ranking sorts the retrieved labels only "
             "(ideal = retrieved)."),
    "Seed 001 example": dict(
        labels=[3, 1, 3, 0], k=4, num_relevant=None, conventions={},
        expected={"DCG@4": "5.13", "nDCG@4": "1.00"},
        note="Seed 001's NDCG example (HAW001..HAW004, labels 3, 1, 3, 0). The seed gives "
             "DCG@4 = 5.13, which is right, but also IDCG@4 = 5.13 and NDCG@4 = 1.00: its ideal "
             "[3, 3, 1, 0] was discounted in the wrong order. With 1/log2(i+1) the ideal is "
             "3 + 3/log2(3) + 1/log2(4) = 5.39, so nDCG@4 = 0.951."),
    "Seed 003, query 1 (precision)": dict(
        labels=[0, 0, 0, 1], k=1, num_relevant=4, conventions=dict(p_denominator="retrieved"),
        expected={"P": "0.25", "P@1": "0.0", "R@1": "0.0"},
        note="Seed 003 (relevance_query_1, k = 1, number_relevant_documents = 4)."),
    "Seed 003, query 2 (average precision)": dict(
        labels=[0, 1, 0, 1, 1, 1, 1], k=5, num_relevant=None, conventions={},
        expected={"AP": "0.5961904761904762"},
        note="Seed 003 (relevance_query_2): AP over the 5 relevant documents of the list."),
    "Seed 001, Precision@K": dict(
        labels=[1, 0, 1, 0, 1], k=3, num_relevant=None, conventions={},
        expected={"P@1": "1.00", "P@3": "0.67", "P@5": "0.60"},
        note="Seed 001: results HAW001..HAW005, relevant HAW001, HAW003, HAW005."),
}


def example_measures(k: int) -> list[str]:
    return ["P", "P@1", f"P@{k}", "P@5", f"R@{k}", "R@1", "RR", "AP", f"DCG@{k}", f"nDCG@{k}",
            f"Success@{k}", f"Hits@{k}", "FirstRel", "NumRel"]


def evaluate_example(labels, k: int, num_relevant: int | None, conventions: mc.Conventions):
    """Evaluate one ranking given as relevance labels (seed 003's input form)."""
    labels = [float(x) for x in labels]
    extra = {"example": int(num_relevant)} if num_relevant else None
    run, qrels = mc.io.from_relevance_vectors({"example": labels}, num_relevant=extra)
    return mc.evaluate(qrels, run, example_measures(int(k)), conventions=conventions)


def dcg_steps(labels, k: int, conventions: mc.Conventions) -> pd.DataFrame:
    """Rank by rank: label, gain, discount, contribution and running DCG (the Learn table)."""
    lab = np.asarray(labels, dtype=float)[: int(k)]
    ranks = np.arange(1, len(lab) + 1)
    gain = (2.0 ** lab - 1.0) if conventions.gain == "exp" else lab
    gain = np.where(lab > 0, gain, 0.0)
    disc = 1.0 / (np.log2(np.maximum(ranks, 2)) if conventions.discount == "jarvelin" else np.log2(ranks + 1))
    contrib = gain * disc
    return pd.DataFrame({"rank": ranks, "label": lab, "gain": gain, "discount": disc,
                         "gain × discount": contrib, "DCG so far": np.cumsum(contrib)})


def seed_comparison(ev, expected: dict) -> pd.DataFrame:
    """The seed's statements next to RankLab's values."""
    rows = []
    for m, text in expected.items():
        ours = float(ev.aggregate.get(m, np.nan))
        decimals = min(len(text.split(".")[1]) if "." in text else 0, 12)
        rows.append({"measure": m, "the seed says": text, "RankLab": ours,
                     "agrees to the seed's decimals": bool(
                         abs(float(text) - ours) <= 0.5 * 10.0 ** -decimals + 1e-12)})
    return pd.DataFrame(rows)
