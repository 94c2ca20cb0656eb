"""Where a device evaluation's time goes (issue 32): per size of bench_hashing.py's device
table, the whole evaluation (one CUDA graph from codes to sums, and the same kernel by
kernel: ``RANKLAB_CUDA_GRAPHS=0``) and each stage alone, best of 5 after a warm-up, in ms:
placing the inputs (host checks), the code checks and bits on the device, packing the
codes, the Triton histogram kernel, all the counting with its wait (``hamming_counts``),
and the measures from the histograms, replayed from a CUDA graph and kernel by kernel.

    python bench/bench_hashing_stages.py 1,2     # positions in bench_hashing.DEVICE_SIZES

Needs CUDA and Triton.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

import metrics_core.hashing.evaluate as ev  # noqa: E402
from bench.bench_hashing import DEVICE_SIZES, make_device_case  # noqa: E402
from metrics_core.hashing import device as dv  # noqa: E402
from metrics_core.hashing import triton_engine as te  # noqa: E402
from metrics_core.hashing.histograms import hamming_counts  # noqa: E402

dev = torch.device("cuda")


def best(fn, rep=5):
    fn()
    torch.cuda.synchronize()
    b = 1e9
    for _ in range(rep):
        t = time.perf_counter()
        v = fn()
        torch.cuda.synchronize()
        b = min(b, time.perf_counter() - t)
    return b * 1e3, v


for i in [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "1,2,4,5").split(",")]:
    nq, ndb, bits, classes = DEVICE_SIZES[i - 1]
    qc, dc, ql, dl = make_device_case(nq, ndb, bits, classes, dev)
    line = [f"size {i}:"]
    t, _ = best(lambda: ev.evaluate_hashing(qc, dc, ql, dl, ks=(), device=dev))
    line.append(f"evaluate {t:.3f}")
    os.environ["RANKLAB_CUDA_GRAPHS"] = "0"
    t, _ = best(lambda: ev.evaluate_hashing(qc, dc, ql, dl, ks=(), device=dev))
    line.append(f"evaluate(eager) {t:.3f}")
    del os.environ["RANKLAB_CUDA_GRAPHS"]
    t, placed = best(lambda: dv.place_inputs(qc, dc, ql, dl, dev))
    line.append(f"place {t:.3f}")
    t, (inp, _) = best(lambda: dv.device_bits(*placed))
    line.append(f"bits {t:.3f}")
    t, pk = best(lambda: te._packed(inp))
    line.append(f"packed {t:.3f}")
    qw, dw, qlp, dlp = pk
    nlw = -(-inp.qlab.shape[1] // 32) if inp.multi else 1
    t, _ = best(
        lambda: te._histograms(qw, dw, qlp, dlp, inp.multi, nlw, bits + 1, te._pow2(ndb), 1)
    )
    line.append(f"kernel {t:.3f}")
    t, nr = best(lambda: hamming_counts(qc, dc, ql, dl, device=dev, on_device=True))
    line.append(f"counts {t:.3f}")
    n, r = nr[0], nr[1]
    rules = ("expected", "optimistic", "pessimistic")
    asked = ev._Asked(rules, None, (), "expected", 2, False)
    t, _ = best(lambda: ev._device_measures(n, r, ndb, asked))
    line.append(f"measures(graph) {t:.3f}")
    os.environ["RANKLAB_CUDA_GRAPHS"] = "0"
    t, _ = best(lambda: ev._device_measures(n, r, ndb, asked))
    line.append(f"measures(eager) {t:.3f}")
    del os.environ["RANKLAB_CUDA_GRAPHS"]
    print(" | ".join(line), "ms", flush=True)
