"""Make the hashing sample: 200 query and 2000 database codes of 16 bits, 10 classes.

Each class has a random prototype code; an item copies its class prototype and flips each
bit with probability 0.2, so same-class codes are near in Hamming distance and mAP is
meaningful (well above the 0.1 of random ranking), with many ties at 16 bits.
Run from the project root: ``python sample_data/hashing/make_sample.py``.
"""

from pathlib import Path

import numpy as np

SEED = 20260119
N_QUERY, N_DB, BITS, N_CLASSES, FLIP = 200, 2000, 16, 10, 0.2


def make(rng, n, prototypes):
    labels = rng.integers(0, len(prototypes), n)
    flips = rng.random((n, prototypes.shape[1])) < FLIP
    codes = np.where(flips, -prototypes[labels], prototypes[labels]).astype(np.int8)
    return codes, labels


def main(out=None):
    out = Path(__file__).resolve().parent if out is None else Path(out)
    rng = np.random.default_rng(SEED)
    prototypes = rng.choice(np.array([-1, 1], dtype=np.int8), size=(N_CLASSES, BITS))
    for part, n in (("query", N_QUERY), ("db", N_DB)):
        codes, labels = make(rng, n, prototypes)
        np.save(out / f"{part}_codes.npy", codes, allow_pickle=False)
        (out / f"{part}_labels.csv").write_text(
            "label\n" + "\n".join(str(int(x)) for x in labels) + "\n"
        )


if __name__ == "__main__":
    main()
