"""Devices: the CPU route never needs CUDA; the CUDA route (run only where a GPU is
visible, skipped elsewhere) gives the CPU route's numbers bit for bit."""

import importlib.util

import numpy as np
import pytest
import torch

from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.hashing import distance_histograms, evaluate_hashing

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible")


def case(seed, bits, multilabel, nq=70, ndb=900):
    rng = np.random.default_rng(seed)
    qc, dc = rng.choice([-1, 1], (nq, bits)), rng.choice([-1, 1], (ndb, bits))
    dc[:50] = qc[0]  # ties
    dc[-6:-3] = -qc[1]  # the largest distances, K and K - 1
    dc[-3:] = -qc[2]
    dc[-3:, 0] *= -1
    if multilabel:
        return qc, dc, rng.integers(0, 2, (nq, 6)), rng.integers(0, 2, (ndb, 6))
    return qc, dc, rng.integers(0, 5, nq), rng.integers(0, 4, ndb)


def same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key == "ap":
            np.testing.assert_array_equal(a[key], b[key])
        else:
            assert repr(a[key]) == repr(b[key]), key


def test_cpu_route_never_asks_for_cuda(monkeypatch, tmp_path, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("the CPU route asked torch.cuda")

    qc, dc, ql, dl = case(1, 24, False)
    want = evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=(1, 5))
    for name in ("is_available", "device_count", "current_device", "synchronize"):
        monkeypatch.setattr(torch.cuda, name, refuse)
    for multilabel in (False, True):
        qc, dc, ql, dl = case(1, 24, multilabel)
        for ties in ("expected", "stable"):
            out = evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=(1, 5), ties=ties)
            assert 0 < out["map"] < 1
    qc, dc, ql, dl = case(1, 24, False)
    same(evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=(1, 5)), want)
    for name, arr in (("q", qc), ("d", dc), ("ql", ql), ("dl", dl)):
        np.save(tmp_path / f"{name}.npy", arr)
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
            "--device",
            "cpu",
        ]
    )
    assert code == 0, capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible")
def test_cuda_refused_cleanly_without_a_gpu(tmp_path, capsys):
    qc, dc, ql, dl = case(2, 8, False)
    with pytest.raises(InputError, match="not available"):
        evaluate_hashing(qc, dc, ql, dl, device="cuda")
    for name, arr in (("q", qc), ("d", dc), ("ql", ql), ("dl", dl)):
        np.save(tmp_path / f"{name}.npy", arr)
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
            "--device",
            "cuda",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--device" in err and err.count("\n") == 1


@needs_gpu
@pytest.mark.parametrize("bits", [16, 64, 65])
@pytest.mark.parametrize("multilabel", [False, True])
def test_cuda_histograms_equal_cpu(bits, multilabel):
    qc, dc, ql, dl = case(bits, bits, multilabel)
    n_cpu, r_cpu = distance_histograms(qc, dc, ql, dl, device="cpu")
    n_gpu, r_gpu = distance_histograms(
        qc, dc, ql, dl, device="cuda", memory_budget=200_000
    )  # chunks
    np.testing.assert_array_equal(n_gpu, n_cpu)
    np.testing.assert_array_equal(r_gpu, r_cpu)


@needs_gpu
@pytest.mark.parametrize("multilabel", [False, True])
def test_cuda_outputs_bit_identical_to_cpu(multilabel):
    qc, dc, ql, dl = case(3, 32, multilabel)
    for options in (
        dict(ks=(1, 10)),
        dict(topk=40, ks=(5,)),
        dict(ties="stable", ks=(1, 10)),
        dict(topk=40, normalizer="min_r_k", ties="optimistic", ks=()),
    ):
        same(
            evaluate_hashing(qc, dc, ql, dl, device="cuda", **options),
            evaluate_hashing(qc, dc, ql, dl, device="cpu", **options),
        )


@needs_gpu
def test_cuda_tensors_as_inputs():
    qc, dc, ql, dl = case(4, 32, False)
    want = evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=(1,))
    args = [torch.as_tensor(x, device="cuda") for x in (qc, dc, ql, dl)]
    for device in ("cpu", "cuda"):
        same(evaluate_hashing(*args, device=device, ks=(1,)), want)


CUDA_ENGINES = ["torch"] + (["triton"] if importlib.util.find_spec("triton") else [])


@needs_gpu
@pytest.mark.parametrize("engine", CUDA_ENGINES)
@pytest.mark.parametrize("bits", [8, 31, 64, 65, 128])
@pytest.mark.parametrize("multilabel", [False, True])
def test_cuda_engines_bit_identical_to_cpu(engine, bits, multilabel):
    qc, dc, ql, dl = case(bits + 1, bits, multilabel, nq=150, ndb=3000)
    for options in (
        dict(ks=(1, 10, 5000)),
        dict(topk=40, ks=(5,)),
        dict(ties="stable", ks=(1, 10, 5000)),
        dict(ties="stable", topk=70, ks=(3,)),
        dict(ties="pessimistic", ks=(2,)),
    ):
        want = evaluate_hashing(qc, dc, ql, dl, device="cpu", **options)
        same(
            evaluate_hashing(
                qc, dc, ql, dl, device="cuda", engine=engine, memory_budget=300_000, **options
            ),
            want,
        )
        args = [torch.as_tensor(x, device="cuda") for x in (qc, dc, ql, dl)]
        same(evaluate_hashing(*args, device="cuda", engine=engine, **options), want)


@needs_gpu
@pytest.mark.parametrize("multilabel", [False, True])
def test_cuda_default_engine_many_segments(multilabel):
    """Sizes where the Triton engine takes several database segments and query chunks."""
    qc, dc, ql, dl = case(11, 64, multilabel, nq=700, ndb=40000)
    for options in (dict(ks=(1, 100)), dict(ties="stable", ks=(1, 100, 39999))):
        same(
            evaluate_hashing(qc, dc, ql, dl, device="cuda", memory_budget=2_000_000, **options),
            evaluate_hashing(qc, dc, ql, dl, device="cpu", **options),
        )


@needs_gpu
def test_cuda_graph_replays_equal_eager_runs_and_stay_bounded(monkeypatch):
    """The measures replayed from a captured CUDA graph equal the same kernels run one by
    one (RANKLAB_CUDA_GRAPHS=0), bit for bit, call after call; at most GRAPHS_KEPT graphs
    are kept."""
    from metrics_core.hashing import device

    qc, dc, ql, dl = case(7, 64, False, nq=300, ndb=5000)
    args = [torch.as_tensor(x, device="cuda") for x in (qc, dc, ql, dl)]
    replayed = [evaluate_hashing(*args, device="cuda", ks=(1, 10)) for _ in range(3)]
    monkeypatch.setenv("RANKLAB_CUDA_GRAPHS", "0")
    eager = evaluate_hashing(*args, device="cuda", ks=(1, 10))
    for got in replayed:
        same(got, eager)
    monkeypatch.delenv("RANKLAB_CUDA_GRAPHS")
    for nq in range(10, 10 + 2 * device.GRAPHS_KEPT):
        evaluate_hashing(*[a[:nq] if i % 2 == 0 else a for i, a in enumerate(args)], device="cuda")
    assert 0 < len(device._GRAPHS) <= device.GRAPHS_KEPT


@needs_gpu
def test_cuda_counted_graph_reads_each_calls_values(monkeypatch):
    """One graph from codes to sums (code checks, bits, histogram kernel, measures) is
    captured per shape and replayed with each call's own values: new codes and labels of
    the same shapes give their own CPU-route numbers, a bad code after the capture is still
    named, and inputs above GRAPH_INPUT_BYTES (counted, then measured from a graph of the
    measures alone) give the same bits."""
    from metrics_core.hashing import evaluate

    for seed in (11, 12, 13):  # the first call captures, the others replay
        qc, dc, ql, dl = case(seed, 64, False, nq=200, ndb=3000)
        args = [torch.as_tensor(x, device="cuda") for x in (qc, dc, ql, dl)]
        got = evaluate_hashing(*args, device="cuda", ks=(1, 10))
        same(got, evaluate_hashing(qc, dc, ql, dl, device="cpu", ks=(1, 10)))
    bad = args[1].clone().float()
    bad[7, 3] = 0.5
    with pytest.raises(InputError, match=r"database codes: value 0.5 at row 7, bit 3"):
        evaluate_hashing(args[0], bad, *args[2:], device="cuda", ks=(1, 10))
    zero_one = (args[0] > 0).to(torch.int64)  # 0/1 codes of the same shape and type
    same(evaluate_hashing(zero_one, *args[1:], device="cuda", ks=(1, 10)), got)
    monkeypatch.setattr(evaluate, "GRAPH_INPUT_BYTES", 0)
    same(evaluate_hashing(*args, device="cuda", ks=(1, 10)), got)
