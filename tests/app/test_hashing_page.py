"""The Hashing page under AppTest with the sample: the numbers shown equal metrics_core's;
its pure figure builders and upload parsing."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from metrics_core.errors import InputError
from metrics_core.hashing import evaluate_hashing
from ui.hashing import state as hs
from ui.hashing.data import load_sample, p_at_k_cutoffs, parse_upload
from ui.hashing.figures import map_band_figure, pr_by_radius_figure, precision_at_k_figure

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "hashing.py")


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def expected(sample):
    return evaluate_hashing(
        sample["query_codes"],
        sample["db_codes"],
        sample["query_labels"],
        sample["db_labels"],
        ks=p_at_k_cutoffs(2000),
    )


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_page_cold_start_asks_for_data():
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("sample" in i.value for i in at.info)


def test_page_with_sample_shows_metrics_core_values(expected):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.button(key="hash_load_sample").click().run()
    assert not at.exception and not at.error
    shown = _metrics(at)
    assert shown["mAP"] == f"{expected['map']:.4f}"
    lo, hi = expected["map_band"]
    assert shown["Tie band"] == f"{lo:.4f} .. {hi:.4f}"
    assert lo < expected["map"] < hi  # 16 bits: the band is wide on the sample
    assert shown["Precision within radius 2"] == f"{expected['precision_radius']:.4f}"
    table = at.dataframe[0].value
    assert list(table["class"]) == [str(c) for c in range(10)]
    np.testing.assert_allclose(table["mAP"], list(expected["per_class_map"].values()))
    assert any("device: CPU" in c.value or "device: GPU" in c.value for c in at.caption)
    data = next(c.value for c in at.caption if c.value.startswith("Data: "))
    assert data.count("queries") == 1 and data.count("bits") == 1  # the counts said once


def test_page_options_change_the_numbers(sample):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[hs.DATA] = sample
    at.run()
    at.selectbox(key="hash_ties").select("stable").run()
    at.number_input(key="hash_topk").set_value(100).run()
    want = evaluate_hashing(
        sample["query_codes"],
        sample["db_codes"],
        sample["query_labels"],
        sample["db_labels"],
        topk=100,
        ties="stable",
        ks=(1,),
    )
    assert not at.exception
    assert _metrics(at)["mAP@100"] == f"{want['map']:.4f}"


def test_page_bad_codes_show_an_error_not_a_traceback(sample):
    bad = dict(sample)
    bad["query_codes"] = sample["query_codes"].copy()
    bad["query_codes"][3, 5] = 2
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[hs.DATA] = bad
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "row 3" in at.error[0].value


def test_parse_upload_formats_and_errors():
    codes = np.array([[1, -1], [-1, 1]], dtype=np.int8)
    buf = io.BytesIO()
    np.save(buf, codes)
    np.testing.assert_array_equal(parse_upload(buf.getvalue(), "q.npy", "codes"), codes)
    buf = io.BytesIO()
    torch.save(torch.tensor(codes), buf)
    np.testing.assert_array_equal(parse_upload(buf.getvalue(), "q.pt", "codes"), codes)
    labels = parse_upload(b"label\n3\n1\n", "l.csv", "labels")
    assert labels.tolist() == [3, 1] and labels.dtype == np.int64
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError):
        parse_upload(buf.getvalue(), "evil.npy", "codes")
    with pytest.raises(InputError):
        parse_upload(b"1,0\nx,1\n", "q.csv", "codes")


def test_figures_are_pure(expected):
    fig = precision_at_k_figure(expected["precision_at_k"])
    assert list(fig.data[0].x) == sorted(expected["precision_at_k"])
    fig = pr_by_radius_figure(expected["pr_by_radius"], 2)
    assert list(fig.data[0].y) == expected["pr_by_radius"]["precision"]
    assert fig.data[1].x[0] == expected["pr_by_radius"]["recall"][2]
    fig = map_band_figure(0.5, [0.4, 0.6], "expected")
    assert list(fig.data[0].x) == [0.4, 0.6] and fig.data[1].x[0] == 0.5


def test_opening_the_page_does_not_import_torch():
    """torch (~180 MB resident) loads when codes are evaluated, not when the page opens.
    A fresh interpreter: this test module itself imports torch."""
    import subprocess
    import sys

    script = f"""
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({PAGE!r}, default_timeout=120).run()
assert not at.exception, at.exception
print("after open", "torch" in sys.modules)
at.button(key="hash_load_sample").click().run()
assert not at.exception, at.exception
print("after evaluating", "torch" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "after open False" in out.stdout
    assert "after evaluating True" in out.stdout


def test_every_table_exports_and_the_page_speaks_spanish(sample):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[hs.DATA] = sample
    at.run()
    assert not at.exception
    # five tables (per class, summary, P@k, by radius, AP per query: the library's hashing_tables),
    # each with its export buttons
    assert len(at.dataframe) == 5
    from ui.common.downloads import DOWNLOAD_FORMATS

    assert len(at.get("download_button")) == 5 * len(DOWNLOAD_FORMATS)
    shown = [d.value for d in at.dataframe]
    assert list(shown[4].columns) == ["query", "AP"] and len(shown[4]) == len(sample["query_codes"])
    es = AppTest.from_file(PAGE, default_timeout=60)
    es.query_params["lang"] = "es"
    es.session_state[hs.DATA] = sample
    es.run()
    assert not es.exception
    assert es.title[0].value == "Recuperación con códigos hash"
    assert {
        "Banda de empates",
        "Precisión dentro del radio 2",
        "Exhaustividad dentro del radio 2",
    } <= set(_metrics(es))
    assert es.selectbox(key="hash_ties").label == "Empates"
    assert "esperado (orden aleatorio de empates)" in es.selectbox(key="hash_ties").options
    assert es.subheader[0].value == "mAP por clase"


def test_p_at_k_on_the_first_screen_and_an_empty_radius_is_a_dash(sample, expected):
    """P@k sat three screens down; precision within radius 2 read 0.0000 when no code lay
    within radius 2 (the same as "all wrong")."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.button(key="hash_load_sample").click().run()
    shown = _metrics(at)
    for k in (1, 5, 10, 100, 1000):
        assert shown[f"P@{k}"] == f"{expected['precision_at_k'][k]:.4f}"
    labels = [m.label for m in at.metric]
    assert labels.index("P@1") < 10  # with the headline numbers, before any table or chart
    # 4 queries of 8 bits, every database code at distance >= 6 from every query
    far = {
        "query_codes": np.zeros((4, 8), dtype=np.uint8),
        "db_codes": np.ones((6, 8), dtype=np.uint8)
        * np.array([1, 1, 1, 1, 1, 1, 0, 0], dtype=np.uint8),
        "query_labels": np.array([0, 1, 0, 1]),
        "db_labels": np.array([0, 1, 0, 1, 0, 1]),
        "source": "far.npy",
    }
    empty = AppTest.from_file(PAGE, default_timeout=60)
    empty.session_state[hs.DATA] = far
    empty.run()
    assert not empty.exception, empty.exception
    shown = _metrics(empty)
    assert shown["Precision within radius 2"] == "–"
    assert shown["Recall within radius 2"] == "0.0000"
    assert any("no query has a code within the radius" in c.value for c in empty.caption)
    result = evaluate_hashing(
        far["query_codes"], far["db_codes"], far["query_labels"], far["db_labels"]
    )
    assert result["empty_radius_queries"] == 4
    summary = empty.dataframe[1].value
    row = summary[summary.iloc[:, 0].str.startswith("Precision within Hamming radius")].iloc[0]
    assert np.isnan(row.iloc[1]) and row.iloc[2].startswith("no query has a code within")


@pytest.mark.parametrize(
    ("lang", "heads"),
    [
        (None, {"class": "Class", "query": "Query", "precision": "Precision", "recall": "Recall"}),
        ("es", {"class": "Clase", "query": "Consulta", "precision": "Precisión"}),
    ],
)
def test_table_headings_are_capitalised_words(sample, lang, heads):
    """The tables' headings as people write them ("class" headed the mAP per class), in the
    page's language; measure names (mAP, AP) and the cut-off k keep their own spelling."""
    import json

    at = AppTest.from_file(PAGE, default_timeout=60)
    if lang:
        at.query_params["lang"] = lang
    at.session_state[hs.DATA] = sample
    at.run()
    assert not at.exception
    labels = {}
    for frame in at.dataframe:
        for column, config in json.loads(frame.proto.columns).items():
            if column != "_index":
                labels.setdefault(column, config["label"])
    for column, label in heads.items():
        assert labels[column] == label, labels
    assert all(label[0].isupper() or label in ("mAP", "AP", "k") for label in labels.values()), (
        labels
    )
