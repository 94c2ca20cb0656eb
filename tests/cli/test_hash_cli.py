"""The ``hash`` subcommand: JSON keys, same numbers as the library, safe file reading."""

import json

import numpy as np
import pytest
import torch

from metrics_core.cli import main
from metrics_core.hashing import evaluate_hashing


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    qc, dc = rng.choice([-1, 1], (15, 12)), rng.choice([0, 1], (120, 12))
    ql, dl = rng.integers(0, 3, 15), rng.integers(0, 3, 120)
    np.save(tmp_path / "q.npy", qc.astype(np.int8))
    torch.save(torch.tensor(dc, dtype=torch.int8), tmp_path / "d.pt")
    np.savetxt(tmp_path / "ql.csv", ql, fmt="%d", header="label", comments="")
    np.savetxt(tmp_path / "dl.csv", dl, fmt="%d")
    return tmp_path, (qc, dc, ql, dl)


def run_cli(capsys, args):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_has_the_contract_keys_and_library_numbers(files, capsys):
    path, (qc, dc, ql, dl) = files
    code, out, err = run_cli(
        capsys,
        [
            "hash",
            "--query-codes",
            str(path / "q.npy"),
            "--db-codes",
            str(path / "d.pt"),
            "--query-labels",
            str(path / "ql.csv"),
            "--db-labels",
            str(path / "dl.csv"),
            "--topk",
            "50",
            "-k",
            "5",
        ],
    )
    assert code == 0, err
    data = json.loads(out)
    assert {
        "map",
        "map_band",
        "precision_at_k",
        "precision_radius_2",
        "n_queries",
        "n_db",
        "bits",
    } <= set(data)
    lib = evaluate_hashing(qc, dc, ql, dl, topk=50, ks=(5,))
    assert data["map"] == pytest.approx(lib["map"])
    assert data["precision_at_k"]["5"] == pytest.approx(lib["precision_at_k"][5])
    assert (data["n_queries"], data["n_db"], data["bits"]) == (15, 120, 12)


def test_pickled_npy_is_refused(files, capsys, tmp_path):
    path, _ = files
    np.save(tmp_path / "evil.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    code, out, err = run_cli(
        capsys,
        [
            "hash",
            "--query-codes",
            str(tmp_path / "evil.npy"),
            "--db-codes",
            str(path / "d.pt"),
            "--query-labels",
            str(path / "ql.csv"),
            "--db-labels",
            str(path / "dl.csv"),
        ],
    )
    assert code == 2 and "allow_pickle=False" in err and err.count("\n") == 1


def test_bad_code_values_and_label_count(files, capsys, tmp_path):
    path, _ = files
    np.save(tmp_path / "bad.npy", np.array([[1, 2], [1, -1]]))
    code, _, err = run_cli(
        capsys,
        [
            "hash",
            "--query-codes",
            str(tmp_path / "bad.npy"),
            "--db-codes",
            str(tmp_path / "bad.npy"),
            "--query-labels",
            str(path / "ql.csv"),
            "--db-labels",
            str(path / "dl.csv"),
        ],
    )
    assert code == 2 and "not a code bit" in err
    code, _, err = run_cli(
        capsys,
        [
            "hash",
            "--query-codes",
            str(path / "q.npy"),
            "--db-codes",
            str(path / "d.pt"),
            "--query-labels",
            str(path / "dl.csv"),
            "--db-labels",
            str(path / "dl.csv"),
        ],
    )
    assert code == 2 and "labels for 15 codes" in err
