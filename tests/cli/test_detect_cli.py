"""detect / calibrate / dynamic-k on the command line: JSON keys, values, exit code 2."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from metrics_core import detection as det
from metrics_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCORES = ROOT / "sample_data" / "detection_scores.csv"
CANDIDATES = ROOT / "sample_data" / "dynamic_k_candidates.csv"


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_detect_json(capsys):
    code, out, err = _run(capsys, "detect", SCORES)
    assert code == 0, err
    obj = json.loads(out)
    for key in ("version", "auroc", "auprc", "tpr_at_fpr", "n_pos", "n_neg"):
        assert key in obj
    assert set(obj["tpr_at_fpr"]) == {"0.03", "0.05", "0.1"}
    df = pd.read_csv(SCORES)
    assert obj["auroc"] == pytest.approx(roc_auc_score(df.label, df.score), rel=1e-12)
    assert obj["auprc"] == pytest.approx(average_precision_score(df.label, df.score), rel=1e-12)
    ref = det.tpr_at_fpr(df.label, df.score, 0.05)
    assert {k: obj["tpr_at_fpr"]["0.05"][k] for k in ("tpr", "fpr", "threshold")} == {
        k: ref[k] for k in ("tpr", "fpr", "threshold")
    }
    assert obj["n_pos"] == int(df.label.sum()) and obj["n_neg"] == int((df.label == 0).sum())
    assert set(obj["per_criterion"]) == set(df.criterion.unique())
    assert "micro" in obj and "macro" in obj


def test_detect_bootstrap_and_table(capsys):
    code, out, _ = _run(capsys, "detect", SCORES, "--bootstrap", "50", "--seed", "3")
    ci = json.loads(out)["ci"]
    assert ci["auroc"]["low"] < ci["auroc"]["value"] < ci["auroc"]["high"]
    code, out, _ = _run(capsys, "detect", SCORES, "--format", "table")
    assert code == 0 and "AUROC" in out and "RankLab" in out


def test_calibrate_json(capsys):
    code, out, err = _run(capsys, "calibrate", SCORES, "--bins", "5", "--strategy", "quantile")
    assert code == 0, err
    obj = json.loads(out)
    assert {"version", "ece", "mce", "brier", "bins"} <= set(obj)
    assert len(obj["bins"]) <= 5
    assert {"lower", "upper", "count", "confidence", "frequency"} <= set(obj["bins"][0])
    assert sum(b["count"] for b in obj["bins"]) == len(pd.read_csv(SCORES))


def test_dynamic_k_json(capsys):
    code, out, err = _run(capsys, "dynamic-k", CANDIDATES, "--tau", "0.4", "--curve")
    assert code == 0, err
    obj = json.loads(out)
    assert {
        "version",
        "recall",
        "precision",
        "avg_k",
        "per_criterion",
        "micro",
        "macro",
        "curve",
    } <= set(obj)
    assert obj["params"]["tau"] == 0.4


def test_autodetect_and_explicit_columns(tmp_path, capsys):
    p = tmp_path / "s.csv"
    p.write_text("y_prob,has_evidence,other\n0.9,1,3\n0.2,0,4\n0.4,1,5\n")
    code, out, _ = _run(capsys, "detect", p)
    assert code == 0 and json.loads(out)["auroc"] == 1.0
    p2 = tmp_path / "s2.parquet"
    pd.DataFrame({"a": [0.9, 0.2, 0.4], "b": [0, 0, 1]}).to_parquet(p2)
    code, out, _ = _run(capsys, "detect", p2, "--score-col", "a", "--label-col", "b")
    assert code == 0 and json.loads(out)["auroc"] == 0.5
    p3 = tmp_path / "s.jsonl"
    p3.write_text('{"score": 0.1, "label": 0}\n{"score": 0.7, "label": 1}\n')
    code, out, _ = _run(capsys, "detect", p3)
    assert code == 0 and json.loads(out)["auroc"] == 1.0


@pytest.mark.parametrize(
    "content,match",
    [
        (b"score,label\n0.5,1\nnan,0\n", "line 3"),
        (b"score,label\n0.5,1\n0.2,2\n", "line 3: label value 2 is not 0 or 1"),
        (b"score,label\n0.5,1\n0.2,yes please\n", "not 0 or 1"),
        (b"score,foo\n0.5,1\n", "labels"),
        (b"", "empty"),
        (b"score,label\n", "no rows"),
        (b"\x00\x01\x02binary\xff", "binary"),
        (b"score,label\n0.5,1\n0.2,\xe9\n", "line 3: not UTF-8"),
    ],
)
def test_bad_files_exit_2(tmp_path, capsys, content, match):
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    code, out, err = _run(capsys, "detect", p)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "bad.csv" in err and match in err, err


def test_calibrate_rejects_logits(tmp_path, capsys):
    p = tmp_path / "logits.csv"
    p.write_text("score,label\n2.5,1\n-1.0,0\n")
    code, _, err = _run(capsys, "calibrate", p)
    assert code == 2 and "outside [0, 1]" in err and "logits.csv" in err
    code, out, _ = _run(capsys, "detect", p)  # detection accepts any scale
    assert code == 0 and json.loads(out)["auroc"] == 1.0


def test_single_class_cli(tmp_path, capsys):
    p = tmp_path / "one.csv"
    p.write_text("score,label\n0.5,1\n0.7,1\n")
    code, out, _ = _run(capsys, "detect", p)
    obj = json.loads(out)
    assert code == 0 and obj["auroc"] is None and obj["warnings"]
    code, out, _ = _run(capsys, "detect", p, "--single-class", "audit")
    obj = json.loads(out)
    assert obj["auroc"] == 0.5 and obj["auprc"] == 1.0


def test_missing_file_and_bad_fpr(tmp_path, capsys):
    code, _, err = _run(capsys, "detect", tmp_path / "nope.csv")
    assert code == 2 and "not found" in err
    code, _, err = _run(capsys, "detect", SCORES, "--fpr", "1.5")
    assert code == 2 and "outside" in err


def test_dynamic_k_bad_probability(tmp_path, capsys):
    p = tmp_path / "c.csv"
    p.write_text("query,candidate,probability,is_gold\nq,a,0.5,1\nq,b,1.5,0\n")
    code, _, err = _run(capsys, "dynamic-k", p)
    assert code == 2 and "line 3" in err and "outside [0, 1]" in err
    np.testing.assert_equal(code, 2)


def test_reader_formats_and_junk(tmp_path, capsys):
    from metrics_core.errors import InputError
    from metrics_core.io.scores import read_scores

    t = read_scores(b'[{"prob": 0.2, "target": 0}, {"prob": 0.8, "target": 1}]', name="a.json")
    assert t.y_score.tolist() == [0.2, 0.8] and t.label_col == "target"
    t = read_scores(b"y_score\ty_true\n0.3\ttrue\n0.1\tfalse\n", name="a.tsv")
    assert t.y_true.tolist() == [1, 0]
    buf = tmp_path / "x.parquet"
    pd.DataFrame({"score": [0.1], "label": [1]}).to_parquet(buf)
    with pytest.raises(InputError, match="Parquet file with a text-file name"):
        read_scores(buf.read_bytes(), name="x.csv")
    with pytest.raises(InputError, match="not a readable Parquet"):
        read_scores(b"score,label\n0.1,1\n", name="x.parquet")
    with pytest.raises(InputError, match="no column 'nope'"):
        read_scores(b"score,label\n0.1,1\n", name="x.csv", score_col="nope")
    with pytest.raises(InputError, match="cannot tell which column holds the scores"):
        read_scores(b"a,label\n0.1,1\n", name="x.csv")
    p = tmp_path / "bad.parquet"
    p.write_bytes(b"PAR1garbage")
    code, _, err = _run(capsys, "calibrate", p)
    assert code == 2 and "bad.parquet" in err and err.count("\n") == 1


def test_blank_lines():
    from metrics_core.errors import InputError
    from metrics_core.io.scores import read_scores

    t = read_scores(b"score,label\n0.5,1\n0.2,0\n\n\n", name="t.csv")  # trailing: ignored
    assert t.y_true.tolist() == [1, 0]
    with pytest.raises(InputError, match="line 3"):  # interior blank line: named
        read_scores(b"score,label\n0.5,1\n\n0.2,0\n", name="t.csv")


def test_calibrate_reports_the_debiased_ece_and_bca_intervals(capsys):
    from metrics_core import calibration as cal

    code, out, err = _run(capsys, "calibrate", SCORES, "--bins", "10", "--bootstrap", "100")
    assert code == 0, err
    obj = json.loads(out)
    frame = pd.read_csv(SCORES)
    rep = cal.calibration_report(frame["label"], frame["score"], 10)
    assert obj["ece_debiased"] == pytest.approx(rep["ece_debiased"], rel=1e-12)
    assert obj["ci"]["ece_debiased"]["method"] == "BCa"
    assert "Kumar" in obj["conventions"]["ece_debiased"]
