"""The Learn page's worked examples: the seeds' rankings and what the seeds say they give.

Pure (no Streamlit): tests evaluate every preset and compare with the seeds' numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.common.i18n import N_

# shown name -> labels (rank order), k, relevant documents in the collection (None: those
# in the list), convention overrides, the values the source states {measure: text}, a note.
# Sources: the graded example and queries 1-2 are seeds/003's notebook; the four-result
# nDCG example and Precision@K are seeds/001's.
PRESETS = {
    N_("Graded example, k = 6"): dict(
        labels=[4, 4, 3, 0, 0, 1, 3, 3, 3, 0],
        k=6,
        num_relevant=None,
        conventions=dict(discount="jarvelin", ideal="retrieved", p_denominator="retrieved"),
        expected={"DCG@6": "10.279642067948915", "nDCG@6": "0.7424602308163405"},
        note=N_(
            "Labels 4, 4, 3, 0, 0, 1, 3, 3, 3, 0 at k = 6, with DCG divided by log2(max(i, 2)) "
            "(discount = jarvelin, Jarvelin and Kekalainen 2002) and the ideal ranking made "
            "from the retrieved labels only (ideal = retrieved)."
        ),
    ),
    N_("Four results, labels 3, 1, 3, 0"): dict(
        labels=[3, 1, 3, 0],
        k=4,
        num_relevant=None,
        conventions={},
        expected={"DCG@4": "5.13", "nDCG@4": "1.00"},
        note=N_(
            "DCG@4 = 5.13. A common slip gives IDCG@4 = 5.13 and nDCG@4 = 1.00 by discounting "
            "the ideal [3, 3, 1, 0] in the wrong order. With 1/log2(i+1) the ideal is "
            "3 + 3/log2(3) + 1/log2(4) = 5.39, so nDCG@4 = 0.951."
        ),
    ),
    N_("Precision with 4 relevant documents in the collection"): dict(
        labels=[0, 0, 0, 1],
        k=1,
        num_relevant=4,
        conventions=dict(p_denominator="retrieved"),
        expected={"P": "0.25", "P@1": "0.0", "R@1": "0.0"},
        note=N_("k = 1, four relevant documents in the collection."),
    ),
    N_("Average precision over 5 relevant"): dict(
        labels=[0, 1, 0, 1, 1, 1, 1],
        k=5,
        num_relevant=None,
        conventions={},
        expected={"AP": "0.5961904761904762"},
        note=N_("AP over the 5 relevant documents of the list."),
    ),
    N_("Precision at 1, 3 and 5"): dict(
        labels=[1, 0, 1, 0, 1],
        k=3,
        num_relevant=None,
        conventions={},
        expected={"P@1": "1.00", "P@3": "0.67", "P@5": "0.60"},
        note=N_("Five results; the first, third and fifth are relevant."),
    ),
}
#: the two examples with buttons of their own
GRADED, FOUR_RESULTS = "Graded example, k = 6", "Four results, labels 3, 1, 3, 0"


def example_measures(k: int) -> list[str]:
    return [
        "P",
        "P@1",
        f"P@{k}",
        "P@5",
        f"R@{k}",
        "R@1",
        "RR",
        "AP",
        f"DCG@{k}",
        f"nDCG@{k}",
        f"Success@{k}",
        f"Hits@{k}",
        "FirstRel",
        "NumRel",
    ]


def dcg_frame(steps: dict) -> pd.DataFrame:
    """Rank by rank: label, gain, discount, contribution and running DCG (the Learn table),
    from :func:`metrics_core.ranking.kernels.dcg_steps`'s steps (the engine's arithmetic: the
    last row is ``DCG@k`` evaluated, bit for bit)."""
    return pd.DataFrame(
        {
            "rank": steps["rank"],
            "label": steps["label"],
            "gain": steps["gain"],
            "discount": steps["discount"],
            "gain × discount": steps["contribution"],
            "DCG so far": steps["dcg"],
        }
    )


def seed_comparison(ev, expected: dict) -> pd.DataFrame:
    """The values the source states next to RankLab's."""
    rows = []
    for m, text in expected.items():
        ours = float(ev.aggregate.get(m, np.nan))
        decimals = min(len(text.split(".")[1]) if "." in text else 0, 12)
        rows.append(
            {
                "measure": m,
                "the seed says": text,
                "RankLab": ours,
                "agrees to the seed's decimals": bool(
                    abs(float(text) - ours) <= 0.5 * 10.0**-decimals + 1e-12
                ),
            }
        )
    return pd.DataFrame(rows)
