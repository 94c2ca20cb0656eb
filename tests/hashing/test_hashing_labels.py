"""How labels are read: a 1-D array is class ids; a 2-D 0/1 matrix is multi-label, one
column included (items sharing a 1 match, two all-zero rows do not). Checked against a
brute-force ranking with the relevance written out, through the library, the file
reader and the command line."""

import json

import numpy as np
import pytest
import torch

from metrics_core.cli import main
from metrics_core.errors import InputError
from metrics_core.hashing import evaluate_hashing
from metrics_core.io.codes import read_matrix


def brute_ap(qc, dc, rel):
    """AP of every query over the stable Hamming ranking (distance, then index)."""
    dist = ((np.asarray(qc)[:, None, :] > 0) != (np.asarray(dc)[None, :, :] > 0)).sum(-1)
    out = []
    for i in range(len(qc)):
        r = rel[i][np.argsort(dist[i], kind="stable")].astype(float)
        hits = np.cumsum(r)
        out.append((hits / np.arange(1, len(r) + 1) * r).sum() / r.sum() if r.sum() else 0.0)
    return np.array(out)


def one_column_case(seed):
    rng = np.random.default_rng(seed)
    qc, dc = rng.choice([-1, 1], (12, 5)), rng.choice([-1, 1], (70, 5))
    ql, dl = rng.integers(0, 2, (12, 1)), rng.integers(0, 2, (70, 1))
    ql[:2] = 0  # at least two queries tagged 0: they match nothing
    return qc, dc, ql, dl


@pytest.mark.parametrize("seed", range(3))
def test_one_column_01_matrix_is_multi_label(seed):
    qc, dc, ql, dl = one_column_case(seed)
    rel = (ql @ dl.T) > 0  # shared 1: 0 never matches 0
    out = evaluate_hashing(qc, dc, ql, dl, ties="stable", ks=(1, 5))
    np.testing.assert_allclose(out["ap"], brute_ap(qc, dc, rel), atol=1e-12)
    assert out["ap"][0] == out["ap"][1] == 0.0
    assert out["zero_relevant_queries"] == int((ql[:, 0] == 0).sum())
    assert set(out["per_class_map"]) == {"0"}  # the one label column
    # an all-zero column added changes nothing under the multi-label reading
    for ties in ("expected", "optimistic", "pessimistic", "stable"):
        one = evaluate_hashing(qc, dc, ql, dl, ties=ties, ks=(1, 5), topk=20)
        two = evaluate_hashing(
            qc, dc, np.hstack([ql, 0 * ql]), np.hstack([dl, 0 * dl]), ties=ties, ks=(1, 5), topk=20
        )
        np.testing.assert_array_equal(one["ap"], two["ap"])
        assert one["precision_at_k"] == two["precision_at_k"]
        assert one["map_band"] == two["map_band"]


def test_one_dimensional_01_is_class_ids():
    qc, dc, ql, dl = one_column_case(7)
    q1, d1 = ql[:, 0], dl[:, 0]
    out = evaluate_hashing(qc, dc, q1, d1, ties="stable", ks=())
    np.testing.assert_allclose(out["ap"], brute_ap(qc, dc, q1[:, None] == d1[None, :]), atol=1e-12)
    assert out["zero_relevant_queries"] == 0  # class 0 matches class 0
    assert not np.array_equal(
        out["ap"], evaluate_hashing(qc, dc, ql, dl, ties="stable", ks=())["ap"]
    )


def test_one_column_of_class_ids_is_read_as_class_ids():
    qc, dc, _, _ = one_column_case(3)
    rng = np.random.default_rng(3)
    ql, dl = rng.integers(0, 4, 12), rng.integers(0, 4, 70)
    flat = evaluate_hashing(qc, dc, ql, dl, ks=(1, 5))
    column = evaluate_hashing(qc, dc, ql[:, None], dl[:, None], ks=(1, 5))
    np.testing.assert_array_equal(flat["ap"], column["ap"])
    assert flat["per_class_map"] == column["per_class_map"]


def test_torch_one_column_labels_and_mixed_kinds():
    qc, dc, ql, dl = one_column_case(4)
    out = evaluate_hashing(qc, dc, torch.tensor(ql), torch.tensor(dl), ties="stable", ks=())
    np.testing.assert_allclose(out["ap"], brute_ap(qc, dc, (ql @ dl.T) > 0), atol=1e-12)
    with pytest.raises(InputError, match="both be class ids or both 0/1") as info:
        evaluate_hashing(qc, dc, ql[:, 0], dl, ks=())  # 1-D class ids against a 0/1 column
    assert "one column" in info.value.hint


def test_reader_keeps_npy_columns_and_reads_text_columns_as_class_ids(tmp_path):
    col = np.array([[0], [1], [1]], dtype=np.int8)
    np.save(tmp_path / "l.npy", col)
    torch.save(torch.tensor(col), tmp_path / "l.pt")
    (tmp_path / "l.csv").write_text("0\n1\n1\n")
    assert read_matrix(tmp_path / "l.npy", "labels").shape == (3, 1)
    assert read_matrix(tmp_path / "l.pt", "labels").shape == (3, 1)
    assert read_matrix(tmp_path / "l.csv", "labels").shape == (3,)


@pytest.mark.parametrize("ext", ["npy", "pt"])
def test_cli_one_column_01_labels_are_multi_label(tmp_path, capsys, ext):
    qc, dc, ql, dl = one_column_case(5)
    np.save(tmp_path / "q.npy", qc.astype(np.int8))
    np.save(tmp_path / "d.npy", dc.astype(np.int8))
    for name, arr in (("ql", ql), ("dl", dl)):
        if ext == "npy":
            np.save(tmp_path / f"{name}.npy", arr)
        else:
            torch.save(torch.tensor(arr), tmp_path / f"{name}.pt")
    code = main(
        [
            "hash",
            "--query-codes",
            str(tmp_path / "q.npy"),
            "--db-codes",
            str(tmp_path / "d.npy"),
            "--query-labels",
            str(tmp_path / f"ql.{ext}"),
            "--db-labels",
            str(tmp_path / f"dl.{ext}"),
            "--ties",
            "stable",
            "-k",
            "5",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["map"] == pytest.approx(float(brute_ap(qc, dc, (ql @ dl.T) > 0).mean()), abs=1e-12)
    assert data["zero_relevant_queries"] == int((ql[:, 0] == 0).sum())
    # the same labels one per line in text files are class ids (0 matches 0)
    np.savetxt(tmp_path / "ql.csv", ql[:, 0], fmt="%d")
    np.savetxt(tmp_path / "dl.csv", dl[:, 0], fmt="%d")
    code = main(
        [
            "hash",
            "--query-codes",
            str(tmp_path / "q.npy"),
            "--db-codes",
            str(tmp_path / "d.npy"),
            "--query-labels",
            str(tmp_path / "ql.csv"),
            "--db-labels",
            str(tmp_path / "dl.csv"),
            "--ties",
            "stable",
            "-k",
            "5",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    want = brute_ap(qc, dc, ql[:, 0][:, None] == dl[:, 0][None, :]).mean()
    assert json.loads(captured.out)["map"] == pytest.approx(float(want), abs=1e-12)
