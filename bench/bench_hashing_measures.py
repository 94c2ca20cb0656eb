"""The measures from the distance histograms, and the CPU route end to end, against another tree.

Whatever device counts the (queries x (bits + 1)) histograms, the measures (AP under the tie
rule and the band's two ends, radius precision and recall, per-class mAP) are computed from
them by one torch function where they are (on the CPU: in blocks of rows, in threads), then
divided and averaged by numpy on the host. This script times that step alone on synthetic
histograms (a binomial distance model, the counting replaced by the prepared arrays), as
``bench_hashing.py --device cuda`` calls it (``ks=()``), expected and stable ties, class ids
and multi-label rows; and the CPU route end to end on random codes.

    python bench/bench_hashing.py ...                           # the device route (GPU)
    python bench/bench_hashing_measures.py                      # this tree
    python bench/bench_hashing_measures.py --base /tmp/base --rounds 3   # against another tree
    python bench/bench_hashing_measures.py --base /tmp/base --cores 1    # the work alone

``--base DIR``: a checkout of another commit (``git archive COMMIT | tar -x -C DIR``); each
round runs both trees in fresh processes one after the other (alternated, so load drifts hit
both), prints the best time of each and checks that both trees give the same numbers bit for
bit (a digest of every output); ``--expect-differences`` lists the outputs that differ instead
of failing (a change that moves last bits on purpose), with the mAP of each tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: queries, database, bits, label kind: class ids (number of classes) or multi-label (-labels)
MEASURE_SIZES = [
    (1000, 54000, 64, 10),
    (1000, 54000, 64, -21),
    (10000, 50000, 64, 100),
    (10000, 50000, 64, -21),
]
END_TO_END_SIZES = [(1000, 54000, 64), (10000, 50000, 32)]


def synthetic_counts(nq, ndb, bits, labels, seed=0):
    """Distance histograms of a binomial model (each query's codes flip a share of bits),
    relevant items concentrated at small distances, the stable rule's integers drawn to
    match, and query labels."""
    rng = np.random.default_rng(seed)
    width = bits + 1
    pmfs = []
    for p in rng.uniform(0.1, 0.5, 64):
        draws = np.bincount(rng.binomial(bits, p, 20000), minlength=width)
        pmfs.append(draws / draws.sum())
    pick = rng.integers(0, 64, nq)
    n = np.stack([rng.multinomial(ndb, pmfs[i]) for i in pick]).astype(np.int64)
    share = np.clip(1 - np.arange(width) / (0.6 * bits), 0.01, 1)[None, :]
    r = rng.binomial(n, share * rng.uniform(0.05, 1.0, (nq, 1))).astype(np.int64)
    R = r.sum(axis=1)
    stable = {
        "hi": rng.integers(0, 2**24, nq) * (R > 0),
        "lo": rng.integers(0, 2**24, nq) * (R > 0),
        "in_cut": R,
    }
    if labels > 0:
        ql = rng.integers(0, labels, nq)
    else:
        ql = (rng.random((nq, -labels)) < 0.15).astype(np.int8)
        ql[np.arange(nq), rng.integers(0, -labels, nq)] = 1
    return n, r, stable, ql


def digest(out) -> str:
    h = hashlib.sha256()
    for key in sorted(out):
        value = out[key]
        h.update(key.encode())
        h.update(value.tobytes() if isinstance(value, np.ndarray) else repr(value).encode())
    return h.hexdigest()[:16]


def worker(repeat: int) -> dict:
    """Times in the tree on ``sys.path`` (one process per tree and round)."""
    import metrics_core.hashing.evaluate as ev
    from metrics_core.hashing import evaluate_hashing
    from metrics_core.hashing.device import StableCounts

    results = {}
    # trees before 1b627c2 count the histograms alone with distance_histograms
    counting = getattr(ev, "distance_histograms", None), ev.hamming_counts
    for nq, ndb, bits, labels in MEASURE_SIZES:
        n, r, st, ql = synthetic_counts(nq, ndb, bits, labels)
        counts = StableCounts(st["hi"], st["lo"], st["in_cut"], {})
        if counting[0] is not None:
            ev.distance_histograms = lambda *a, _n=n, _r=r, **k: (_n, _r)
        ev.hamming_counts = lambda *a, _n=n, _r=r, _c=counts, stable=None, **k: (
            _n,
            _r,
            None if stable is None else _c,
        )
        for ties in ("expected", "stable"):
            best, out = float("inf"), None
            for _ in range(repeat + 1):  # the first is a warm-up
                t = time.perf_counter()
                out = ev.evaluate_hashing(None, None, ql, None, ties=ties, ks=())
                best = min(best, time.perf_counter() - t)
            kind = f"{labels} classes" if labels > 0 else f"{-labels} labels"
            key = f"measures {nq:,} x {bits + 1} bins, {kind}, {ties}"
            results[key] = (best, digest(out), repr(out["map"]))
    if counting[0] is not None:
        ev.distance_histograms = counting[0]
    ev.hamming_counts = counting[1]
    for nq, ndb, bits in END_TO_END_SIZES:
        rng = np.random.default_rng(1)
        centres = rng.choice(np.array([-1, 1], np.int8), (10, bits))
        ql, dl = rng.integers(0, 10, nq), rng.integers(0, 10, ndb)

        def codes(lab):
            c = centres[lab].copy()
            c[rng.random(c.shape) < 0.2] *= -1
            return c

        qc, dc = codes(ql), codes(dl)
        best, out = float("inf"), None
        for _ in range(max(1, repeat // 2) + 1):
            t = time.perf_counter()
            out = evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=())
            best = min(best, time.perf_counter() - t)
        results[f"CPU route {nq:,} x {ndb:,} x {bits}, expected"] = (
            best,
            digest(out),
            repr(out["map"]),
        )
    return results


def run_tree(tree: Path, repeat: int, cores: int | None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--repeat", str(repeat)]
    cmd += ["--cores", str(cores)] if cores else []
    done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: the worker failed\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--base", type=Path, help="another checkout to time against")
    p.add_argument("--rounds", type=int, default=1, help="alternated rounds (fresh processes)")
    p.add_argument("--repeat", type=int, default=5, help="timed calls per round (best kept)")
    p.add_argument(
        "--cores", type=int, help="run the workers on this many cores (default: all allowed)"
    )
    p.add_argument(
        "--expect-differences",
        action="store_true",
        help="with --base: list the outputs whose numbers differ (and each tree's mAP) instead of failing",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        if args.cores:  # both trees size their threads from the cores allowed
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cores])
        print(json.dumps(worker(args.repeat)))
        return 0
    trees = {"this tree": ROOT} | ({"base": args.base.resolve()} if args.base else {})
    best: dict = {name: {} for name in trees}
    digests: dict = {name: {} for name in trees}
    maps: dict = {name: {} for name in trees}
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for key, (t, d, m) in run_tree(tree, args.repeat, args.cores).items():
                best[name][key] = min(t, best[name].get(key, float("inf")))
                digests[name][key] = d
                maps[name][key] = m
    print(
        f"numpy {np.__version__}; {args.cores or len(os.sched_getaffinity(0))} cores; "
        f"best of {args.repeat} "
        f"calls x {args.rounds} rounds; load average {load:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end"
    )
    names = list(trees)
    print(
        "| step | "
        + " | ".join(f"{n} (s)" for n in names)
        + (" | speed-up |" if args.base else " |")
    )
    print("|---|" + "---:|" * len(names) + ("---|" if args.base else ""))
    for key in best[names[0]]:
        cells = " | ".join(f"{best[n][key]:.4f}" for n in names)
        ratio = f" | {best['base'][key] / best['this tree'][key]:.1f}x" if args.base else ""
        print(f"| {key} | {cells}{ratio} |")
    if args.base:
        differ = [k for k in digests["base"] if digests["base"][k] != digests["this tree"][k]]
        if not differ:
            print("every output equal bit for bit in both trees")
        elif args.expect_differences:
            for k in differ:
                print(
                    f"numbers differ: {k}: mAP {maps['this tree'][k]} here, {maps['base'][k]} in base"
                )
        else:
            raise SystemExit(f"the trees' numbers differ: {differ}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
