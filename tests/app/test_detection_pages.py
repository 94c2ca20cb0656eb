"""AppTest: each page loads the sample, a slider moves, the numbers change and equal
metrics_core's."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from metrics_core import calibration as cal
from metrics_core import detection as det
from metrics_core import dynamic_k as dk
from metrics_core.report.catalogs import translations
from metrics_core.validation import ONE_CLASS_TITLE, one_class_words
from tests.app.text import shown
from ui.detection import figures as fig

ROOT = Path(__file__).resolve().parents[2]
SCORES = pd.read_csv(ROOT / "sample_data" / "detection_scores.csv")
CANDS = pd.read_csv(ROOT / "sample_data" / "dynamic_k_candidates.csv")


def _app(page):
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame_with(at, column):
    """The displayed DataFrame that has ``column`` (AppTest does not expose frame keys)."""
    for d in at.dataframe:
        v = d.value
        if column in v.columns:
            return v
    raise AssertionError(f"no table with column {column!r}")


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_detection_page_slider_moves_operating_point():
    at = _app("detection.py")
    y, s = SCORES["label"].to_numpy(), SCORES["score"].to_numpy()
    shown = _metrics(at)
    assert shown["AUROC"] == f"{det.roc_auc_score(y, s):.4f}"
    assert shown["AUPRC"] == f"{det.average_precision_score(y, s):.4f}"
    curve = det.binary_curve(y, s)
    before = _metrics(at)["TPR"]
    slider = at.slider(key="ranklab.detection.threshold")
    target = float(curve.thresholds[60])  # the threshold is in score units
    slider.set_value(target).run()
    assert not at.exception
    cm = det.confusion_matrix_at(y, s, target)
    after = _metrics(at)
    assert after["TPR"] != before
    assert after["TPR"] == f"{cm['tpr']:.4f}" and after["FPR"] == f"{cm['fpr']:.4f}"
    conf = _frame_with(at, "Predicted positive")
    assert conf.loc["Actual positive", "Predicted positive"] == cm["tp"]
    assert conf.loc["Actual negative", "Predicted positive"] == cm["fp"]
    assert conf.loc["Actual negative", "Predicted negative"] == cm["tn"]
    tpr_table = _frame_with(at, "target FPR")
    ref = det.tpr_at_fpr(y, s, 0.05)
    row = tpr_table[tpr_table["target FPR"] == 0.05].iloc[0]
    assert (row["TPR"], row["achieved FPR"], row["threshold"]) == (
        ref["tpr"],
        ref["fpr"],
        ref["threshold"],
    )


def test_calibration_page_bins_slider():
    at = _app("calibration.py")
    y, p = SCORES["label"].to_numpy(), SCORES["score"].to_numpy()
    rep = cal.calibration_report(y, p, 10)
    assert _metrics(at)["ECE (plug-in)"] == f"{rep['ece']:.4f}"
    assert _metrics(at)["Brier score"] == f"{rep['brier']:.4f}"
    at.slider(key="ranklab.detection.cal_bins").set_value(4).run()
    rep4 = cal.calibration_report(y, p, 4)
    assert _metrics(at)["ECE (plug-in)"] == f"{rep4['ece']:.4f}" != f"{rep['ece']:.4f}"
    bins = _frame_with(at, "Frequency")
    assert bins["Items"].tolist() == rep4["bins"]["count"].tolist()
    at.radio(key="ranklab.detection.cal_strategy").set_value("quantile").run()
    repq = cal.calibration_report(y, p, 4, "quantile")
    assert _metrics(at)["ECE (plug-in)"] == f"{repq['ece']:.4f}"


def test_dynamic_k_page_sliders():
    at = _app("dynamic_k.py")
    t = dk.prepare(
        CANDS["query"].astype(str),
        CANDS["probability"],
        CANDS["is_gold"],
        CANDS["criterion"].astype(str),
    )
    r = dk.dynamic_k_scores(t)
    assert _metrics(at)["Evidence recall"] == f"{r['recall']:.4f}"
    at.slider(key="ranklab.detection.dk_tau").set_value(0.8).run()
    at.slider(key="ranklab.detection.dk_kmin").set_value(1).run()
    r2 = dk.dynamic_k_scores(t, 0.8, 1, 10, 0.5)
    shown = _metrics(at)
    assert shown["Evidence recall"] == f"{r2['recall']:.4f}" != f"{r['recall']:.4f}"
    assert shown["Evidence precision"] == f"{r2['precision']:.4f}"
    assert shown["Average K"] == f"{r2['avg_k']:.3f}"


def test_upload_loader_reports_file_and_line():
    from metrics_core.errors import InputError
    from ui.detection import data as ds

    with pytest.raises(InputError, match=r"bad.csv, line 3: label value 3 is not 0 or 1"):
        ds.load_scores(b"score,label\n0.5,1\n0.5,3\n", "bad.csv")
    with pytest.raises(InputError, match=r"c.csv, line 2: probability value 2.0 is outside"):
        ds.load_candidates(b"query,candidate,probability,is_gold\nq,a,2.0,1\n", "c.csv")


def test_figures_pure_and_thinned():
    rng = np.random.default_rng(0)
    n = 200_000
    y = rng.integers(0, 2, n)
    s = rng.random(n) + 0.3 * y
    c = det.binary_curve(y, s)
    f = fig.roc_figure(c.fpr, c.tpr, marker=10)
    drawn = f.data[1]
    assert len(drawn.x) < 5000 and drawn.x[0] == 0 and drawn.x[-1] == 1
    assert f.data[2].x[0] == c.fpr[10] and f.data[2].y[0] == c.tpr[10]
    # thinning never moves a point: every drawn point is a real operating point
    idx = fig.thin_indices(c.fpr, c.tpr)
    np.testing.assert_array_equal(drawn.x, c.fpr[idx])
    rep = cal.calibration_report(y, np.clip(s / 1.3, 0, 1), 10)
    rf = fig.reliability_figure(rep["bins"])
    assert list(rf.data[2].y) == rep["bins"]["count"].tolist()
    marked = fig.reliability_figure(rep["bins"], threshold=0.6555823)
    assert marked.layout.shapes[0].x0 == 0.6555823
    assert (
        marked.layout.annotations[0].text == "threshold 0.6555823"
    )  # the line's own value, unrounded


def test_the_dynamic_k_figure_gives_the_average_k_axis_one_number_of_decimals():
    curve = pd.DataFrame(
        {
            "tau": [0.1, 0.5, 0.9],
            "recall": [0.9, 0.6, 0.3],
            "precision": [0.4, 0.5, 0.7],
            "avg_k": [6.41, 4.54, 3.6],
        }
    )
    f = fig.dynamic_k_figure(curve, tau=0.5)
    assert f.data[2].yaxis == "y2" and list(f.data[2].y) == [6.41, 4.54, 3.6]
    # average K (right axis): two decimals on every tick (3.60, not 3.6 beside 4.54)
    assert f.layout.yaxis2.tickformat == ".2f"
    assert f.layout.yaxis.range == (0, 1.02)


def _threshold_box(at):
    """The typed-threshold box (its key changes each time the slider moves)."""
    return next(n for n in at.number_input if n.label == "Threshold, typed")


def test_detection_threshold_number_and_slider_stay_in_step():
    at = _app("detection.py")
    y, s = SCORES["label"].to_numpy(), SCORES["score"].to_numpy()
    # typed in score units: the slider follows, the confusion matrix is at that threshold
    _threshold_box(at).set_value(0.42).run()
    assert not at.exception
    assert at.slider(key="ranklab.detection.threshold").value == pytest.approx(0.42)
    cm = det.confusion_matrix_at(y, s, 0.42)
    conf = _frame_with(at, "Predicted positive")
    assert conf.loc["Actual positive", "Predicted positive"] == cm["tp"]
    assert conf.loc["Actual negative", "Predicted negative"] == cm["tn"]
    assert _metrics(at)["TPR"] == f"{cm['tpr']:.4f}"
    assert _metrics(at)["Predicted positive"] == f"{cm['tp'] + cm['fp']:,}"
    # moved on the slider: the number box follows
    at.slider(key="ranklab.detection.threshold").set_value(0.7).run()
    assert _threshold_box(at).value == pytest.approx(0.7)
    lo, hi = (
        at.slider(key="ranklab.detection.threshold").min,
        at.slider(key="ranklab.detection.threshold").max,
    )
    assert (lo, hi) == (
        pytest.approx(s.min()),
        pytest.approx(s.max()),
    )  # the score range, not step numbers


def _upload(at, name, data):
    at.get("file_uploader")[0].set_value((name, data, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_detection_label_column_by_common_name_and_message_points_at_the_box():
    at = _app("detection.py")
    _upload(at, "gate.csv", b"score,is_pos\n0.9,1\n0.2,0\n0.7,1\n0.4,0\n")
    assert "gate.csv: 4 rows" in " ".join(c.value for c in at.caption)
    assert _metrics(at)["AUROC"] == "1.0000"

    at = _app("detection.py")
    _upload(at, "odd.csv", b"score,verdict\n0.9,1\n0.2,0\n")
    message = at.error[0].value
    assert "odd.csv" in message and "labels" in message
    assert "Label column" in message and "--label-col" not in message and "--" not in message
    # the box it names is on the page, offering the file's columns; choosing reads it again
    box = at.selectbox(key="ranklab.detection.label_col")
    assert "verdict" in box.options
    box.set_value("verdict").run()
    assert not at.exception and len(at.error) == 0
    assert "odd.csv: 2 rows" in " ".join(c.value for c in at.caption)


def test_calibration_debiased_ece_intervals_threshold_and_bins_table():
    at = _app("calibration.py")
    y, p = SCORES["label"].to_numpy(), SCORES["score"].to_numpy()
    rep = cal.calibration_report(y, p, 10)
    shown = _metrics(at)
    assert shown["ECE (debiased)"] == f"{rep['ece_debiased']:.4f}"
    ci = cal.bootstrap_calibration_ci(y, p, 10, n_resamples=200, seed=0)
    captions = " ".join(c.value for c in at.caption)
    for name in cal.CI_STATISTICS:
        c = ci[name]
        assert c["reliable"] and c["low"] <= c["value"] <= c["high"]
        assert f"95% BCa CI [{c['low']:.4f}, {c['high']:.4f}]" in captions
    # 50 equal-mass bins: the plug-in ECE's resamples all lie above it -- no interval shown
    at.slider(key="ranklab.detection.cal_bins").set_value(50).run()
    at.radio(key="ranklab.detection.cal_strategy").set_value("quantile").run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "no reliable interval" in captions
    # the decision threshold: confusion counts at that probability
    at.slider(key="ranklab.detection.cal_threshold").set_value(0.3).run()
    cm = det.confusion_matrix_at(y, p, 0.3)
    conf = _frame_with(at, "Predicted positive")
    assert conf.loc["Actual positive", "Predicted positive"] == cm["tp"]
    assert conf.loc["Actual negative", "Predicted positive"] == cm["fp"]
    # bins: 4 decimals, counts as integers, never 0.00000000000000005
    bins = _frame_with(at, "Frequency")
    assert bins["Items"].dtype.kind == "i" and bins["Positives"].dtype.kind == "i"
    for col in (
        "From",
        "To",
        "Mean probability",
        "Frequency",
        "Frequency 95% low",
        "Frequency 95% high",
    ):
        v = bins[col].to_numpy(float)
        np.testing.assert_array_equal(v, np.round(v, 4))
    fig_json = at.get("plotly_chart")[0].proto.spec
    assert '"error_y"' in fig_json and "0.3" in fig_json


def test_detection_reruns_read_the_upload_columns_and_group_scores_once(monkeypatch):
    """Review (issue 12): the mapping boxes' columns and the per-criterion scores are cached
    (bounded, per session), not recomputed on every rerun; the table is the library's."""
    import ui.common.upload

    calls = {"columns": 0, "groups": 0}
    real_columns, real_groups = ui.common.upload.table_columns, det.per_group_scores

    def columns(*a, **k):
        calls["columns"] += 1
        return real_columns(*a, **k)

    def groups(*a, **k):
        calls["groups"] += 1
        return real_groups(*a, **k)

    monkeypatch.setattr(ui.common.upload, "table_columns", columns)
    monkeypatch.setattr(det, "per_group_scores", groups)
    at = _app("detection.py")
    shown = _frame_with(at, "AUROC")
    want = real_groups(
        SCORES["label"].to_numpy(), SCORES["score"].to_numpy(), SCORES["criterion"].to_numpy()
    )
    for crit in want["table"].index:
        assert shown.loc[crit, "AUROC"] == pytest.approx(
            want["table"].loc[crit, "auroc"], abs=1e-12
        )
    at.run()
    assert calls["columns"] == 0 and calls["groups"] <= 1  # the sample's (it may be cached already)
    before = calls["groups"]
    _upload(
        at, "gate.csv", b"score,is_pos,criterion\n0.9,1,a\n0.2,0,a\n0.7,1,b\n0.4,0,b\n0.6,0,b\n"
    )
    assert calls["columns"] == 1 and calls["groups"] == before + 1  # the upload's, once
    at.run()
    at.run()
    assert not at.exception
    assert calls["columns"] == 1 and calls["groups"] == before + 1  # reruns: nothing again


def _spanish(page):
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120)
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_failed_upload_changes_no_setting():
    """The threshold, the metrics and the scores stay as they were when an upload fails,
    and also when the browser dropped the slider's widget state on that run."""
    at = _app("detection.py")
    at.slider(key="ranklab.detection.threshold").set_value(0.42).run()
    before = _metrics(at)
    digest = at.session_state["ranklab.detection.scores"]["digest"]
    _upload_bad = b"score,label\n0.5,1\n0.5,3\n"
    at.get("file_uploader")[0].set_value(("bad.csv", _upload_bad, "text/csv")).run()
    assert not at.exception
    assert "bad.csv, line 3" in at.error[0].value
    assert at.session_state["ranklab.detection.threshold"] == pytest.approx(0.42)
    assert at.session_state["ranklab.detection.scores"]["digest"] == digest
    assert _metrics(at) == before
    assert before["TPR"] != "1.0000" and before["FPR"] != "1.0000"
    # a run that lost the widget's state (a navigation, a failed run) starts from the shared threshold
    again = AppTest.from_file(str(ROOT / "pages" / "detection.py"), default_timeout=120)
    for key in (
        "ranklab.detection.scores",
        "ranklab.detection.threshold_for",
        "ranklab.detection.shared_threshold",
    ):
        again.session_state[key] = at.session_state[key]
    again.run()
    assert again.session_state["ranklab.detection.threshold"] == pytest.approx(0.42)
    assert _metrics(again) == before


def test_detection_and_calibration_share_one_threshold():
    det_page = _app("detection.py")
    det_page.slider(key="ranklab.detection.threshold").set_value(0.42).run()
    cal_page = AppTest.from_file(str(ROOT / "pages" / "calibration.py"), default_timeout=120)
    for key in ("ranklab.detection.scores", "ranklab.detection.shared_threshold"):
        cal_page.session_state[key] = det_page.session_state[key]
    cal_page.run()
    assert not cal_page.exception
    assert cal_page.slider(key="ranklab.detection.cal_threshold").value == pytest.approx(0.42)
    assert any("Detection page" in c.value for c in cal_page.caption)
    cal_page.slider(key="ranklab.detection.cal_threshold").set_value(0.6).run()
    det_page.session_state["ranklab.detection.shared_threshold"] = cal_page.session_state[
        "ranklab.detection.shared_threshold"
    ]
    det_page.run()
    assert det_page.slider(key="ranklab.detection.threshold").value == pytest.approx(0.6)
    y, s = SCORES["label"].to_numpy(), SCORES["score"].to_numpy()
    cm = det.confusion_matrix_at(y, s, 0.6)
    assert _metrics(det_page)["TPR"] == f"{cm['tpr']:.4f}"


def test_one_class_labels_in_words_and_no_nan_on_screen():
    at = _app("detection.py")
    at.get("file_uploader")[0].set_value(
        ("pos.csv", b"score,label\n0.9,1\n0.2,1\n0.7,1\n", "text/csv")
    ).run()
    assert not at.exception
    shown = _metrics(at)
    assert shown["AUROC"] == "–" and shown["AUPRC"] == "–"
    assert "every label is positive" in at.warning[0].value
    assert (
        at.radio(key="ranklab.detection.single_class").label
        == "When the labels hold one class only"
    )
    assert at.radio(key="ranklab.detection.single_class").options == [
        "Leave undefined",
        "Audit rule",
    ]
    texts = " ".join(
        [
            *(m.value for m in at.metric),
            *(w.value for w in at.warning),
            *(c.value for c in at.caption),
        ]
    )
    assert "nan" not in texts.lower().split() and "None" not in texts


def test_detection_in_spanish():
    at = _spanish("detection.py")
    assert at.title[0].value == "Detección"
    assert "Umbral" in at.slider(key="ranklab.detection.threshold").label
    assert at.subheader[0].value == "TPR a una FPR objetivo"
    assert "FPR objetivo" in _frame_with(at, "FPR objetivo").columns
    assert {"Positivos", "Negativos", "Precisión"} <= set(_metrics(at))
    es = translations("es").gettext
    assert (
        at.radio(key="ranklab.detection.single_class").label
        == es(ONE_CLASS_TITLE)
        != ONE_CLASS_TITLE
    )
    assert at.radio(key="ranklab.detection.single_class").options == [
        one_class_words(r, es)[0] for r in det.SINGLE_CLASS_RULES
    ]


def test_calibration_and_dynamic_k_in_spanish():
    at = _spanish("calibration.py")
    assert at.title[0].value == "Calibración"
    assert "Umbral de decisión" in at.slider(key="ranklab.detection.cal_threshold").label
    assert "ECE (sin sesgo)" in _metrics(at)
    at = _spanish("dynamic_k.py")
    assert at.title[0].value == "K dinámico"
    es = translations("es").gettext
    assert (
        shown(at.slider(key="ranklab.detection.dk_tau").label)
        == f"{dk.field_words('tau', es)[0]} (tau)"
    )
    assert (
        shown(at.slider(key="ranklab.detection.dk_cap").label)
        == f"{dk.field_words('hard_cap', es)[0]} (hard_cap)"
    )
    assert at.slider(key="ranklab.detection.dk_cap").help == dk.field_words("hard_cap", es)[1]
    assert {"Exhaustividad de la evidencia", "Precisión de la evidencia", "K medio"} <= set(
        _metrics(at)
    )


def test_dynamic_k_names_its_settings_in_words():
    at = _app("dynamic_k.py")
    labels = [
        shown(at.slider(key=k).label)
        for k in (
            "ranklab.detection.dk_tau",
            "ranklab.detection.dk_kmin",
            "ranklab.detection.dk_cap",
            "ranklab.detection.dk_ratio",
        )
    ]
    assert labels == [
        "Probability threshold (tau)",
        "Minimum items per query (k_min)",
        "Maximum items per query (hard_cap)",
        "Maximum share of the candidates (k_max_ratio)",
    ]
    assert all(
        at.slider(key=k).help for k in ("ranklab.detection.dk_tau", "ranklab.detection.dk_cap")
    )
    # the per-criterion table in two (means; pooled counts), joined by criterion
    table = at.dataframe[0].value.join(at.dataframe[1].value)
    assert "avg_k" not in table.columns and "micro_recall" not in table.columns
    assert {"Average K", "Pooled recall", "Pooled precision"} <= set(table.columns)


def test_calibration_states_the_shared_threshold_exactly_with_its_own_counts():
    """Detection's 0.6556 was stated as "At threshold 0.66" beside the counts at 0.6556."""
    det_page = _app("detection.py")
    det_page.slider(key="ranklab.detection.threshold").set_value(0.6556).run()
    cal_page = AppTest.from_file(str(ROOT / "pages" / "calibration.py"), default_timeout=120)
    for key in ("ranklab.detection.scores", "ranklab.detection.shared_threshold"):
        cal_page.session_state[key] = det_page.session_state[key]
    cal_page.run()
    assert not cal_page.exception
    said = [m.value for m in cal_page.markdown if "At threshold" in m.value]
    assert said == ["**At threshold 0.6556**: probability ≥ 0.6556 is predicted positive"]
    assert "0.66**" not in " ".join(m.value for m in cal_page.markdown)
    assert any("score ≥ 0.6556" in m.value for m in det_page.markdown)


def _shown_cells(element) -> pd.DataFrame:
    """The texts a dataframe element shows (its Styler's display values, as sent to the browser)."""
    import pyarrow as pa

    styler = element.proto.arrow_data.styler
    return pa.ipc.open_stream(styler.display_values).read_all().to_pandas()


def test_dynamic_k_per_criterion_counts_are_integers_and_nothing_reads_none():
    """Counts were printed "34.0000", the micro row's label was cut to "micro (poo" (the grid's
    index column) and its empty cells promised "–"."""
    at = _app("dynamic_k.py")
    # two tables (the means, then the pooled counts): seven columns in one were 965 px wide in
    # Spanish on an 818 px page
    element, pooled = at.dataframe[0], at.dataframe[1]
    shown = _shown_cells(element)
    table = element.value
    assert list(table.index[-2:]) == ["micro (pooled)", "macro (mean)"]
    assert list(pooled.value.index) == list(table.index)
    import json

    for frame in (element, pooled):
        index_column = json.loads(frame.proto.columns)["_index"]  # widened: the default cut it
        # 140 px: "micro (pooled)" / "micro (agrupado)" with the cell's padding
        assert index_column["width"] >= 140 and index_column["label"] == "Criterion"
    queries = shown["Queries"].tolist()
    assert all(q == "–" or q.isdigit() for q in queries) and queries[0] == str(
        int(table["Queries"].iloc[0])
    )
    pooled_shown = _shown_cells(pooled)
    texts = {str(v) for v in [*shown.to_numpy().ravel(), *pooled_shown.to_numpy().ravel()]}
    assert not texts & {"None", "nan", "NaN", "<NA>"}
    assert pooled_shown["Pooled recall"].tolist()[-2:] == ["–", "–"]
    for frame in (element, pooled):
        assert (
            frame.proto.placeholder == "–"
        )  # what the grid draws for a missing number (default "None")


@pytest.mark.parametrize(
    "page_file, expected",
    [
        ("detection.py", "scores: Sample data (detection_scores.csv), 3,600 rows"),
        ("calibration.py", "scores: Sample data (detection_scores.csv), 3,600 rows"),
        ("dynamic_k.py", "candidates: Sample data (dynamic_k_candidates.csv)"),
        ("hashing.py", "hash codes: none"),
    ],
)
def test_the_sidebar_shows_the_sections_own_state_in_plain_words(page_file, expected):
    """The sidebar of these pages showed the ranking state ("runs: none" right after a
    detection CSV loaded) and the ranking conventions' raw option names."""
    at = AppTest.from_file(str(ROOT / "pages" / page_file), default_timeout=120).run()
    assert not at.exception
    texts = [t.value for t in at.sidebar.text]
    assert any(t.startswith(expected) for t in texts), texts
    sidebar_words = " ".join([*texts, *(c.value for c in at.sidebar.caption)])
    assert "runs: none" not in sidebar_words and "qrels" not in sidebar_words
    assert not at.sidebar.selectbox  # no ranking conventions here


def test_ranking_conventions_are_offered_in_words_in_both_languages():
    from ui.common.sidebar import CHOICE_WORDS

    for lang, first in (
        (None, "score, then doc id descending (trec_eval)"),
        ("es", "puntuación, luego id de documento descendente (trec_eval)"),
    ):
        at = AppTest.from_file(str(ROOT / "pages" / "overview.py"), default_timeout=120)
        if lang:
            at.query_params["lang"] = lang
        at.run()
        ties = at.sidebar.selectbox(key="ranklab.w.conv.ties")
        assert ties.options[0] == first and ties.value == "trec"
    assert all(isinstance(v, str) and v for v in CHOICE_WORDS.values())


def test_reliability_bins_headings_fit_in_spanish(monkeypatch):
    """The bins table's last two headings ("Frecuencia, límite inferior/superior 95 %") made it
    870 px wide on a 766 px page and cut the last one: the interval's ends are headed short."""
    from ui.common import i18n
    from ui.detection import data as ds

    monkeypatch.setattr(ds, "_", i18n.translations("es").gettext)
    bins = {
        k: np.array([0.5])
        for k in ("lower", "upper", "confidence", "frequency", "freq_low", "freq_high")
    } | {"count": np.array([4]), "positives": np.array([2])}
    heads = list(ds.bins_table(bins).columns)
    assert heads[-3:] == ["Frecuencia", "IC 95 % inferior", "IC 95 % superior"]
    assert sum(len(h) for h in heads) <= 90, heads  # about 7 px a character: 766 px with padding


def test_tpr_at_fpr_headings_capitalised_in_both_languages():
    """The TPR-at-target-FPR table was headed "umbral", "umbral siguiente" ("threshold",
    "allowed FP") in lower case beside "TPR" and "FPR objetivo"."""
    import json

    for lang, want in ((None, "Threshold"), ("es", "Umbral")):
        at = AppTest.from_file(str(ROOT / "pages" / "detection.py"), default_timeout=120)
        if lang:
            at.query_params["lang"] = lang
        at.run()
        assert not at.exception
        frame = next(d for d in at.dataframe if "TPR" in d.value.columns)
        labels = {
            c: v["label"]
            for c, v in json.loads(frame.proto.columns).items()
            if c != "_index" and v.get("label")
        }
        assert want in labels.values(), labels
        assert all(label[:1].isupper() for label in labels.values()), labels
