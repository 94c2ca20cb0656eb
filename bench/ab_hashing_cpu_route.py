"""The CPU route of the hash-code evaluation, this tree against another (/tmp/base: `git
archive COMMIT | tar -x -C /tmp/base`): fresh processes alternated, best of 3 in each of
3 rounds, `evaluate_hashing(..., ks=())` with the expected rule at two sizes; the mAP of
each printed (`repr`) so a change of numbers shows."""

import json
import subprocess
import sys
from pathlib import Path

CODE = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1])
import numpy as np
from bench.bench_hashing import make_codes
from metrics_core.hashing import evaluate_hashing
out = {}
for nq, ndb, bits in [(1000, 54000, 64), (10000, 50000, 32)]:
    qc, dc, ql, dl = make_codes(nq, ndb, bits)
    evaluate_hashing(qc, dc, ql, dl, ks=())
    best = 1e9
    for _ in range(3):
        t = time.perf_counter(); r = evaluate_hashing(qc, dc, ql, dl, ks=()); best = min(best, time.perf_counter() - t)
    out[f"{nq}x{ndb}x{bits}"] = (best, r["map"])
print(json.dumps(out))
"""
res = {"base": [], "this": []}
for _round in range(3):
    for name, root in (
        ("base", sys.argv[1] if len(sys.argv) > 1 else "/tmp/base"),
        ("this", str(Path(__file__).resolve().parents[1])),
    ):
        p = subprocess.run(
            [sys.executable, "-c", CODE, root], capture_output=True, text=True, cwd=root
        )
        res[name].append(json.loads(p.stdout.strip().splitlines()[-1]))
for name in res:
    for k in res[name][0]:
        ts = [r[k][0] for r in res[name]]
        print(
            name,
            k,
            f"best {min(ts):.4f} median {sorted(ts)[1]:.4f}",
            "mAP",
            repr(res[name][0][k][1]),
        )
