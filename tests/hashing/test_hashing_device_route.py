"""The device route without a GPU: its torch engine runs with the CPU as its device, its
Triton kernels run in Triton's interpreter (``TRITON_INTERPRET=1``), and both give the numpy
CPU route's numbers bit for bit (the integers are equal, and every measure is computed from
them by the same host code)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.hashing import evaluate_hashing
from metrics_core.hashing.device import fixed_point_sums
from metrics_core.hashing.histograms import hamming_counts

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [
    dict(ks=(1, 10, 1000)),
    dict(topk=40, ks=(5,)),
    dict(ties="stable", ks=(1, 10, 1000)),
    dict(ties="stable", topk=25, ks=(3,)),
    dict(topk=40, normalizer="min_r_k", ties="optimistic", ks=()),
    dict(ties="pessimistic", zero_relevant="exclude", ks=(2,)),
]


def case(seed, bits, multilabel, nq=45, ndb=700):
    """Random codes with many ties (a block of database items copies the first query's
    code, and short codes tie by themselves) and the largest distances present, class ids or
    0/1 label rows."""
    rng = np.random.default_rng(seed)
    qc, dc = rng.choice([-1, 1], (nq, bits)), rng.choice([-1, 1], (ndb, bits))
    dc[:60] = qc[0]
    dc[100:130] = qc[1]
    dc[-10:-5] = -qc[2]  # the largest distances, K and K - 1, for the third and fourth query
    dc[-5:] = -qc[3]
    dc[-5:, 0] *= -1
    if multilabel:
        return qc, dc, rng.integers(0, 2, (nq, 6)), rng.integers(0, 2, (ndb, 6))
    return qc, dc, rng.integers(0, 5, nq), rng.integers(0, 4, ndb)


def same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key == "ap":
            assert a[key].dtype == b[key].dtype
            np.testing.assert_array_equal(a[key], b[key])
        else:
            assert repr(a[key]) == repr(b[key]), key  # floats to the bit, NaN equal to NaN


@pytest.mark.parametrize("bits", [8, 16, 31, 32, 64, 65, 128])
@pytest.mark.parametrize("multilabel", [False, True])
def test_torch_engine_on_the_cpu_equals_numpy_route_bit_for_bit(bits, multilabel):
    qc, dc, ql, dl = case(bits, bits, multilabel)
    for options in OPTIONS:
        want = evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="numpy", **options)
        # a small budget: chunks of a few queries, boundaries inside the data
        got = evaluate_hashing(
            qc, dc, ql, dl, device="cpu", engine="torch", memory_budget=150_000, **options
        )
        same(got, want)
    assert 0 < want["map"] < 1


def test_torch_engine_takes_tensors_and_01_codes():
    qc, dc, ql, dl = case(5, 32, False)
    want = evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="numpy", ks=(1, 5))
    as_tensors = [
        torch.as_tensor(qc, dtype=torch.float32),
        torch.as_tensor(dc > 0),
        torch.as_tensor(ql),
        torch.as_tensor(dl),
    ]
    same(evaluate_hashing(*as_tensors, device="cpu", engine="torch", ks=(1, 5)), want)
    same(
        evaluate_hashing(
            (qc > 0).astype(np.int8), dc, ql, dl, device="cpu", engine="torch", ks=(1, 5)
        ),
        want,
    )
    stable = evaluate_hashing(*as_tensors, device="cpu", engine="torch", ties="stable", ks=(1, 5))
    same(stable, evaluate_hashing(qc, dc, ql, dl, device="cpu", ties="stable", ks=(1, 5)))


@pytest.mark.parametrize(
    "scale, offset", [(1, -(2**31)), (1, 2**31 - 10), (1, 2**31), (2**32, 2**40)]
)
def test_class_ids_beyond_int32_stay_distinct_classes(scale, offset):
    """The engines compare int64 class ids as given, never a narrowed copy (two ids 2**32
    apart must stay two classes)."""
    qc, dc, ql, dl = case(9, 16, False)
    want = evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="numpy", ks=(1, 5))
    shifted = [ql * scale + offset, dl * scale + offset]
    got = evaluate_hashing(qc, dc, *shifted, device="cpu", engine="torch", ks=(1, 5))
    want["per_class_map"] = {
        str(int(c) * scale + offset): v for c, v in want["per_class_map"].items()
    }
    same(got, want)
    labels_as_tensors = [torch.as_tensor(x) for x in shifted]
    same(evaluate_hashing(qc, dc, *labels_as_tensors, device="cpu", engine="torch", ks=(1, 5)), got)


def test_device_route_refuses_bad_codes_with_the_host_messages():
    qc, dc, ql, dl = case(6, 16, False)
    bad = torch.as_tensor(qc, dtype=torch.float32)
    bad[3, 4] = 0.5
    with pytest.raises(InputError, match=r"query codes: value 0.5 at row 3, bit 4"):
        evaluate_hashing(bad, dc, ql, dl, device="cpu", engine="torch")
    with pytest.raises(InputError, match="query codes have 16 bits, database codes 8"):
        evaluate_hashing(qc, dc[:, :8], ql, dl, device="cpu", engine="torch")
    with pytest.raises(InputError, match="both be class ids or both 0/1"):
        evaluate_hashing(qc, dc, ql, np.ones((len(dc), 3)), device="cpu", engine="torch")
    with pytest.raises(InputError, match="unknown engine"):
        evaluate_hashing(qc, dc, ql, dl, engine="cupy")


def test_code_checks_in_blocks_see_the_whole_matrix(monkeypatch):
    """Codes checked (and made ±1 for the product) a block of rows at a time: ±1 rows in
    one block and 0/1 rows in another mix the two encodings and are refused; either alone
    passes in any blocks, with the numpy route's numbers."""
    from metrics_core.hashing import device

    monkeypatch.setattr(device, "BLOCK_ELEMENTS", 16 * 5)  # five rows a block
    qc, dc, ql, dl = case(10, 16, False)
    want = evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="numpy", ks=(1, 5))
    for codes in (dc, (dc > 0).astype(np.int8)):
        got = evaluate_hashing(qc, torch.as_tensor(codes), ql, dl, device="cpu", engine="torch")
        assert repr(got["map"]) == repr(want["map"])
    qm, dm, qlm, dlm = case(10, 16, True)  # multi-label: label rows made in blocks too
    same(
        evaluate_hashing(qm, dm, qlm, dlm, device="cpu", engine="torch", ks=(1, 5)),
        evaluate_hashing(qm, dm, qlm, dlm, device="cpu", engine="numpy", ks=(1, 5)),
    )
    mixed = torch.as_tensor(dc)
    mixed[20:] = (mixed[20:] > 0).to(mixed.dtype)
    with pytest.raises(InputError, match="mix -1/\\+1 and 0/1"):
        evaluate_hashing(qc, mixed, ql, dl, device="cpu", engine="torch")


def test_stable_precision_sums_are_exact_fixed_point():
    """The stable rule's per-query sum is the sum of truncated 2**-48 multiples of each
    precision: the value a plain float loop gives, to 1e-12."""
    qc, dc, ql, dl = case(7, 16, False)
    n, r, st = hamming_counts(qc, dc, ql, dl, device="cpu", engine="torch", stable=(None, (1,)))
    D = (16 - qc @ dc.T) // 2
    for i in range(len(qc)):
        order = np.argsort(D[i], kind="stable")
        rel = (dl[order] == ql[i]).astype(float)
        s = float((np.cumsum(rel) / np.arange(1, len(rel) + 1) * rel).sum())
        assert fixed_point_sums(st.hi[i : i + 1], st.lo[i : i + 1])[0] == pytest.approx(
            s, abs=1e-12
        )
        assert st.in_cut[i] == rel.sum() == r[i].sum()
        assert n[i].sum() == len(dc)


TRITON_CHECK = r"""
import numpy as np
from metrics_core.hashing import triton_engine
from metrics_core.hashing.histograms import hamming_counts
from tests.hashing.test_hashing_device_route import case

# small blocks and segments: several per database, boundaries inside the data
triton_engine.SEG_MIN, triton_engine.HIST_BN = 32, 32
for bits, multi, nq, ndb in [(16, False, 35, 90), (65, True, 9, 70), (128, False, 9, 70), (8, True, 9, 70)]:
    qc, dc, ql, dl = case(bits, bits, multi, nq=nq, ndb=ndb)
    want = hamming_counts(qc, dc, ql, dl, device="cpu", engine="numpy", stable=(20, (1, 7, 500)))
    got = hamming_counts(qc, dc, ql, dl, device="cpu", engine="triton", stable=(20, (1, 7, 500)))
    hist = hamming_counts(qc, dc, ql, dl, device="cpu", engine="triton")
    for a, b in [(want[0], got[0]), (want[1], got[1]), (want[0], hist[0]), (want[1], hist[1]),
                 (want[2].in_cut, got[2].in_cut)]:
        np.testing.assert_array_equal(a, b)
    for k in (1, 7, 500):
        np.testing.assert_array_equal(want[2].at_k[k], got[2].at_k[k])
    # the same exact integer, whatever its split into parts
    np.testing.assert_array_equal(want[2].hi + (want[2].lo >> 24), got[2].hi + (got[2].lo >> 24))
    np.testing.assert_array_equal(want[2].lo & (2**24 - 1), got[2].lo & (2**24 - 1))
    assert want[2].in_cut.sum() > 0 and (want[1] > 0).any()
print("triton kernels equal the CPU route")
"""


BOUNDED_CHECK = r"""
import resource
import torch
from metrics_core.hashing import device

torch.set_num_threads(1)
device.BLOCK_ELEMENTS = 1 << 20  # 4 MB of float32 codes a block
n = 1 << 19
codes = torch.ones((n, 64), dtype=torch.float32)  # 128 MB, made without temporaries
codes[::2] = -1.0
one = torch.ones((1, 64), dtype=torch.float32)
labels = torch.zeros(n, dtype=torch.int64)


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


before = peak_mb()
inp, checks = device.device_bits(one, codes, labels[:1], labels)
words = device.pack_words(inp.dbits)
assert checks.tolist() == [1, 1] and words.shape == (n, 2)
assert (words[0] == 0).all() and (words[1] == -1).all()
print("growth", peak_mb() - before)
"""


def test_code_checks_and_packing_take_bounded_temporaries():
    """Checking and packing a database's codes take temporaries of a bounded size (blocks
    of rows), not several copies of the codes: 128 MB of float32 codes grow the process's
    peak by their bits (32 MB), their words (4 MB) and a block's temporaries, where a
    whole-matrix check and a 64-bit product took over 400 MB."""
    done = subprocess.run(
        [sys.executable, "-c", BOUNDED_CHECK],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    growth = float(done.stdout.split("growth")[1])
    assert growth < 100, growth


needs_triton = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None,
    reason="triton is not installed (requirements-dev.txt has it where its wheel exists: "
    "Linux x86-64)",
)


def in_interpreter(script: str) -> str:
    """Run ``script`` in a fresh Python with Triton's interpreter (Triton reads
    TRITON_INTERPRET when a kernel is defined): the kernels on the CPU, numpy underneath.
    Its standard output, once it has exited cleanly."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow  # Triton's interpreter (the README's quick tier leaves it out)
@needs_triton
def test_triton_kernels_in_the_interpreter_equal_the_cpu_route():
    assert "triton kernels equal the CPU route" in in_interpreter(TRITON_CHECK)


COUNTED_CHECK = r"""
import numpy as np
import torch
from metrics_core.errors import InputError
from metrics_core.hashing import evaluate, evaluate_hashing, triton_engine
from tests.hashing.test_hashing_device_route import OPTIONS, case, same

calls = []
counted = evaluate._counted_measures
evaluate._counted_measures = lambda *a, **k: calls.append(1) or counted(*a, **k)
triton_engine.HIST_BN = 32  # several blocks per row: boundaries inside the data
# 65 bits: 3 words; 128: 4 (the most the kernels take); 200 bits: the torch engine's
for bits, multi, nq, ndb in [(16, False, 35, 90), (65, True, 9, 70), (128, False, 9, 40),
                             (200, False, 5, 40)]:
    qc, dc, ql, dl = case(bits, bits, multi, nq=nq, ndb=ndb)
    for options in [o for o in OPTIONS if o.get("ties") != "stable"]:
        before = len(calls)
        want = evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="numpy", **options)
        same(evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="triton", **options), want)
        # counted with the measures unless the kernels cannot take the codes, or the measure
        # needs the histograms on the host (expected AP@k with the retrieved normalizer)
        host = "topk" in options and options.get("normalizer") != "min_r_k" and not options.get("ties")
        assert len(calls) - before == (0 if bits > 128 or host else 1), (bits, options)
    want = evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=(1, 5))
    as_tensors = [torch.as_tensor(qc, dtype=torch.float32), torch.as_tensor(dc > 0),
                  torch.as_tensor(ql), torch.as_tensor(dl)]
    same(evaluate_hashing(*as_tensors, device="cpu", engine="triton", ks=(1, 5)), want)
    zero_one = torch.as_tensor((qc > 0).astype(np.int8))  # 0/1 codes: the device check passes
    same(evaluate_hashing(zero_one, dc, ql, dl, device="cpu", engine="triton", ks=(1, 5)), want)
    bad = torch.as_tensor(dc, dtype=torch.float32)
    bad[3, 4] = 0.5
    try:
        evaluate_hashing(qc, bad, ql, dl, device="cpu", engine="triton")
        raise SystemExit("a code of 0.5 was not refused")
    except InputError as exc:
        assert "database codes: value 0.5 at row 3, bit 4" in str(exc), str(exc)
assert calls

# What a replay reads: a stand-in for the CUDA graph on the CPU, which keeps the first
# call's function and copies of its inputs and, at each replay, runs that function on the
# copies refreshed with the call's values, as a captured graph does. Calls of one shape with
# other values must give their own numbers: nothing of a call but its inputs may reach a
# replay (its key holds the rest).
from metrics_core.hashing import device


def stand_in(fn, inputs, dev):
    static = [t.clone() for t in inputs]
    out = fn(*static).clone()

    class Graph:
        def replay(self):
            out.copy_(fn(*static))

    return Graph(), static, out, fn


device._capture = stand_in
device.GRAPH_DEVICES = ("cuda", "cpu")
device._GRAPHS.clear()
for seed in (21, 22, 23):
    for bits, multi, ks in ((64, False, (1, 5)), (65, True, ())):
        arrays = case(seed, bits, multi, nq=12, ndb=70)
        tensors = [torch.as_tensor(x) for x in arrays]  # int64 codes: checked on the device
        same(evaluate_hashing(*tensors, device="cpu", engine="triton", ks=ks),
             evaluate_hashing(*arrays, device="cpu", engine="numpy", ks=ks))
assert len(device._GRAPHS) == 2  # one per shape, replayed twice each
bad = tensors[1].clone()
bad[5, 6] = 2
try:
    evaluate_hashing(tensors[0], bad, *tensors[2:], device="cpu", engine="triton", ks=())
    raise SystemExit("a code of 2 was not refused after a replay")
except InputError as exc:
    assert "database codes: value 2.0 at row 5, bit 6" in str(exc), str(exc)
assert len(device._GRAPHS) == 2  # that was a replay
print("counted measures equal the CPU route")
"""


@pytest.mark.slow  # Triton's interpreter (the README's quick tier leaves it out)
@needs_triton
def test_counting_and_measures_in_one_computation_equal_the_cpu_route():
    """The Triton engine's evaluation counts and measures in one computation (what a CUDA
    graph captures: code checks, bits, histogram kernel, sums, labels in one result): in
    Triton's interpreter it gives the CPU route's numbers bit for bit, takes tensors and 0/1
    codes, names a bad code as the host does, and leaves codes the kernels do not take to
    the torch engine."""
    assert "counted measures equal the CPU route" in in_interpreter(COUNTED_CHECK)


@pytest.mark.slow  # Triton's compiler (the README's quick tier leaves it out)
@needs_triton
@pytest.mark.parametrize("popcount", [True, False])
def test_kernels_compile_for_an_h100_without_one(popcount, monkeypatch, tmp_path):
    """The kernels as a GPU runs them (not the interpreter's reading): compiled for an
    H100 (sm_90) by Triton and the ptxas of its wheel, no GPU needed, with the popcount
    instruction and without (the fallback), with int64 class ids and with the label words
    of multi-label rows, the stable pass too."""
    pytest.importorskip("triton.backends.nvidia")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # compiled afresh, nothing kept
    from metrics_core.hashing import triton_engine

    for kernel in ("histogram", "stable"):
        for multi in (False, True):
            done = triton_engine.compiled_for(kernel, popcount=popcount, multi=multi)
            assert len(done.asm["cubin"]) > 0
            assert ".target sm_90" in done.asm["ptx"]


def test_triton_engine_refused_without_cuda_or_interpreter(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    qc, dc, ql, dl = case(8, 16, False)
    with pytest.raises(InputError, match="triton engine needs"):
        evaluate_hashing(qc, dc, ql, dl, device="cpu", engine="triton")


def test_hash_command_without_torch_says_how_to_install(monkeypatch, tmp_path, capsys):
    qc, dc, ql, dl = case(9, 16, False)
    for name, arr in (("q", qc), ("d", dc), ("ql", ql), ("dl", dl)):
        np.save(tmp_path / f"{name}.npy", arr)
    monkeypatch.setitem(sys.modules, "torch", None)  # "import torch" fails as if not installed
    code = main(
        [
            "hash",
            "--query-codes",
            str(tmp_path / "q.npy"),
            "--db-codes",
            str(tmp_path / "d.npy"),
            "--query-labels",
            str(tmp_path / "ql.npy"),
            "--db-labels",
            str(tmp_path / "dl.npy"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert "pip install 'ranklab[hashing]'" in captured.err and "torch" in captured.err
