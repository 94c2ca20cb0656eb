"""Issue 41 (the explorer, word for word) under AppTest: what a careful visitor tripped on,
each in English and Spanish where it has words. The browser's side (what lies on the first
screen, the slider's thumb, what fits) is tests/e2e/test_explorer_41_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.hashing import state as hs

ROOT = Path(__file__).resolve().parents[2]
HASH_SAMPLE = ROOT / "sample_data" / "hashing"
HASH_FILES = ("query_codes.npy", "db_codes.npy", "query_labels.csv", "db_labels.csv")
TIMEOUT = 120


def _page(name: str, lang: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if lang:
        at.query_params["lang"] = lang
    return at


def _hash_uploaders(at) -> list:
    return [u for u in at.get("file_uploader") if u.key.startswith("hash_upload_")]


@pytest.mark.parametrize("lang", [None, "es"])
def test_hash_codes_data_panel_closes_once_the_four_uploads_are_read(lang):
    """Item 1: after the fourth upload the Data panel stayed open and pushed mAP below the
    first screen; it closes once the codes are read (and opens again at the visitor's wish)."""
    at = _page("hashing", lang).run()
    panel = at.get("expander")[0]
    assert panel.proto.expanded  # nothing loaded: open, with the uploads
    for i, name in enumerate(HASH_FILES):
        data = (HASH_SAMPLE / name).read_bytes()
        _hash_uploaders(at)[i].set_value((name, data, "application/octet-stream")).run()
        assert not at.exception, at.exception
    assert at.session_state[hs.DATA] is not None
    assert not at.get("expander")[0].proto.expanded, "the Data panel is still open"
    assert at.metric[0].label == "mAP"


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            None,
            "Still to upload: database codes, query labels, database labels. Upload the four "
            "files, or load the sample.",
        ),
        (
            "es",
            "Falta subir: códigos de la base, etiquetas de consulta, etiquetas de la base. "
            "Sube los cuatro archivos o carga el ejemplo.",
        ),
    ],
)
def test_hash_codes_one_upload_of_four_is_said_in_a_sentence(lang, said):
    """Item 3: "missing database codes, query labels, database labels. upload all four files,
    or load the sample" began lower case (an error box for a box not filled yet)."""
    at = _page("hashing", lang).run()
    name = HASH_FILES[0]
    data = (HASH_SAMPLE / name).read_bytes()
    _hash_uploaders(at)[0].set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == []
    assert said in [i.value for i in at.info]
    for text in [i.value for i in at.info]:
        assert text[0].isupper(), text
        for sentence in text.split(". ")[1:]:
            assert sentence[0].isupper(), text


def _far_codes(close: int = 0) -> dict:
    """4 queries of 8 bits; every database code at distance 6 from them, but for ``close``
    queries whose own code is in the database (distance 0)."""
    import numpy as np

    queries = np.zeros((4, 8), dtype=np.uint8)
    queries[:close] = 1
    db = np.ones((6, 8), dtype=np.uint8) * np.array([1, 1, 1, 1, 1, 1, 0, 0], dtype=np.uint8)
    db[:close] = 1
    return {
        "query_codes": queries,
        "db_codes": db,
        "query_labels": np.array([0, 1, 0, 1]),
        "db_labels": np.array([0, 1, 0, 1, 0, 1]),
        "source": "far.npy",
    }


def _frame(at, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


@pytest.mark.parametrize("lang", [None, "es"])
def test_hash_codes_precision_within_the_radius_is_one_rule_everywhere(lang):
    """Item 2: the headline said "–", the radius table 0.0000 at radius 2 and the summary CSV
    an empty cell with a note. One rule (metrics_core.hashing.tables.RADIUS_RULE): undefined
    where no query has a code within the radius, in the headline, the radius table, the
    summary (and their exports, made from those tables), said in the same words."""
    import numpy as np

    from metrics_core.hashing.tables import RADIUS_RULE, radius_note
    from metrics_core.report.catalogs import translations

    tr = translations(lang or "en").gettext
    at = _page("hashing", lang)
    at.session_state[hs.DATA] = _far_codes()
    at.run()
    assert not at.exception, at.exception
    headline = next(
        m for m in at.metric if m.label == tr("Precision within radius {r}").format(r=2)
    )
    assert headline.value == "–"
    by_radius = _frame(at, "radius")
    assert np.isnan(by_radius["precision"][:6]).all(), by_radius  # 0.0000 before
    summary = _frame(at, "note")
    row = summary[
        summary["measure"] == tr("Precision within Hamming radius {radius}").format(radius=2)
    ].iloc[0]
    assert np.isnan(row["value"])
    note = radius_note(4, 4, tr)
    assert row["note"] == note
    captions = [c.value for c in at.caption]
    assert tr("“–”: {note}.").format(note=note) in captions
    assert tr(RADIUS_RULE) in captions  # under the radius table
    # some queries with a code within the radius: the same number in the three places
    at = _page("hashing", lang)
    at.session_state[hs.DATA] = _far_codes(close=1)
    at.run()
    headline = next(
        m for m in at.metric if m.label == tr("Precision within radius {r}").format(r=2)
    )
    by_radius, summary = _frame(at, "radius"), _frame(at, "note")
    row = summary[
        summary["measure"] == tr("Precision within Hamming radius {radius}").format(radius=2)
    ].iloc[0]
    assert headline.value == f"{row['value']:.4f}" == f"{by_radius['precision'][2]:.4f}" == "0.1250"
    assert row["note"] == radius_note(3, 4, tr)


def _ranking_page(name: str, runs: dict, lang: str | None = None) -> AppTest:
    """Page ``name`` with the sample's qrels and ``runs`` (name -> run) loaded."""
    from ui.ranking.data import load_sample

    qrels, _runs, meta = load_sample()
    at = _page(name, lang)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    at.run()
    assert not at.exception, at.exception
    return at


def _sample_runs() -> dict:
    from ui.ranking.data import load_sample

    return load_sample()[1]


def _run_sharing_no_query():
    """The sample's bm25 run with every query id changed: it shares no query with the qrels."""
    from ui.ranking.data import parse_run, sample_files

    text = sample_files()["bm25"].read_text()
    run = parse_run(
        "".join("zz" + line for line in text.splitlines(keepends=True)).encode(), "noshare.txt"
    )
    run.name = "noshare"
    return run


@pytest.mark.parametrize(
    ("lang", "page", "said"),
    [
        (
            None,
            "overview",
            "This page needs 1 run that shares queries with the qrels. Usable now: 0 of 1 "
            "loaded run. Load another run on the Data page.",
        ),
        (
            "es",
            "overview",
            "Esta página necesita 1 ejecución que comparta consultas con los qrels. Utilizables "
            "ahora: 0 de 1 ejecución cargada. Carga otra ejecución en la página Datos.",
        ),
        (
            None,
            "compare",
            "This page needs 2 runs that share queries with the qrels. Usable now: 1 of 2 "
            "loaded runs. Load another run on the Data page.",
        ),
    ],
)
def test_a_page_short_of_usable_runs_counts_them_in_words(lang, page, said):
    """Item 5: "This page needs 1 runs that share queries with the qrels; 0 loaded" with one
    run loaded (a plural after 1, and "loaded" counted the usable runs)."""
    runs = {"noshare": _run_sharing_no_query()}
    if page == "compare":  # it asks for two runs loaded first
        runs["bm25"] = _sample_runs()["bm25"]
    at = _ranking_page(page, runs, lang)
    assert said in [i.value for i in at.info], [i.value for i in at.info]


@pytest.mark.parametrize("lang", [None, "es"])
def test_overview_baseline_box_offers_only_the_runs_on_the_board(lang):
    """Item 4: with a run that shares no query loaded first, the Baseline box showed it while
    the table said "bm25 (baseline)"."""
    at = _ranking_page(
        "overview", {"noshare": _run_sharing_no_query(), "bm25": _sample_runs()["bm25"]}, lang
    )
    box = at.selectbox(key="ranklab.overview.baseline")
    assert box.options == ["bm25"] and box.value == "bm25"
    grid = at.dataframe[0].value
    assert [r for r in grid.iloc[:, 0] if "(" in str(r)][0].startswith("bm25 (")
    assert not any("noshare" in str(r) for r in grid.iloc[:, 0])


@pytest.mark.parametrize("lang", [None, "es"])
def test_detection_threshold_is_shown_exactly_wherever_it_is(lang):
    """Item 6: with the threshold typed as 0.655105 the slider read "0.6551" (a score of 0.6551
    is below the threshold) while the captions were exact. The slider, the typed box, the TPR
    table's thresholds and Calibration's slider format a threshold as the captions write it
    (metrics_core.report.cells.threshold_text); the browser's side is in
    tests/e2e/test_explorer_41_browser.py."""
    import json

    from metrics_core.report.cells import threshold_text
    from ui.detection import state as dst

    digest = _page("detection").run().session_state[dst.SCORES]["digest"]  # the sample's
    at = _page("detection", lang)
    # the threshold typed on either page (a Spanish page's radios cannot be set by AppTest)
    at.session_state[dst.SHARED_THRESHOLD] = (digest, 0.655105)
    at.run()
    assert not at.exception, at.exception
    slider = at.slider(key=dst.THRESHOLD)
    assert slider.value == 0.655105
    for widget in (slider, next(n for n in at.number_input if n.key.startswith(dst.THRESHOLD_NUM))):
        assert widget.proto.format % widget.value == threshold_text(0.655105) == "0.655105"
    table = at.dataframe[0]  # TPR at target FPR: the first table
    columns = json.loads(table.proto.columns)
    thresholds = [c for c in columns.values() if c.get("label") in ("Threshold", "Umbral")]
    assert thresholds and all(
        c["type_config"]["format"] % 0.78234 == "0.78234" for c in thresholds
    ), thresholds
    cal = _page("calibration", lang).run()
    assert not cal.exception, cal.exception
    assert cal.slider(key=dst.CAL_THRESHOLD).proto.format % 0.655105 == "0.655105"


def _texts(at) -> list[str]:
    """Every text a page shows under AppTest: markdown, captions, metrics, table cells,
    headings and row names."""
    out = [e.value for e in [*at.markdown, *at.caption, *at.subheader, *at.info, *at.warning]]
    out += [f"{m.label} {m.value}" for m in at.metric]
    for df in at.dataframe:
        frame = df.value
        out += [str(c) for c in frame.columns] + [str(i) for i in frame.index]
        out += [str(v) for v in frame.to_numpy().ravel() if isinstance(v, str)]
    return out


def test_spanish_detection_numbers_keep_their_decimal_point():
    """Item 7: the bootstrap table said "TPR a FPR 0,05" while every other number on the page
    used a point."""
    import re

    at = _page("detection", "es").run()
    assert not at.exception, at.exception
    texts = _texts(at)
    assert "TPR a FPR 0.05" in texts  # the bootstrap table's row
    assert "TPR a FPR 0.03" in texts  # a per-criterion column
    assert [t for t in texts if re.search(r"\d,\d", t)] == []


@pytest.mark.parametrize(
    ("lang", "macro"),
    [(None, "The macro row is the mean over the criteria."), ("es", "La fila macro es la media")],
)
def test_dynamic_k_without_criteria_has_no_macro_row_to_explain(lang, macro):
    """Item 9: "The macro row is the mean over the criteria" under a one-row table."""
    from ui.detection import state as dst
    from ui.detection.data import load_candidates

    sample = (ROOT / "sample_data" / "dynamic_k_candidates.csv").read_text().splitlines()
    no_criterion = "\n".join(line.rsplit(",", 1)[0] for line in sample).encode()
    at = _page("dynamic_k", lang)
    at.session_state[dst.CANDIDATES] = load_candidates(no_criterion, "candidates.csv")
    at.run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 1  # one row, no macro row
    legend = at.caption[-1].value
    assert "micro" in legend and macro not in legend
    with_criteria = _page("dynamic_k", lang).run()  # the sample: a row per criterion, macro too
    assert any(macro in c.value for c in with_criteria.caption)


@pytest.mark.parametrize(
    ("lang", "levels", "verdicts"),
    [
        (None, ("Good", "Fair", "Needs improvement"), ("Efficient", "Acceptable")),
        ("es", ("Bueno", "Regular", "Mejorable"), ("Eficiente", "Aceptable")),
    ],
)
def test_comparative_table_says_the_summary_words_it_uses(lang, levels, verdicts):
    """Item 12: the description promised the labels "Bueno, Regular o Mejorable" while the
    summary row said "Eficiente / Aceptable / Mejorable", explained only inside a closed
    panel. The description names both scales; under the table a caption says what each
    word means, with the names in use (renamed ones too)."""
    from ui.compare.table import Table

    at = _ranking_page("table", _sample_runs(), lang)
    description = at.caption[0].value if at.caption else ""
    descriptions = [c.value for c in at.caption if all(w in c.value for w in levels)]
    assert descriptions and all(v in descriptions[0] for v in verdicts), description
    table = at.dataframe[0].value
    verdict = table.iloc[-1, -1]  # the summary row's interpretation
    assert verdict in verdicts
    legend = next(c.value for c in at.caption if f"**{verdict}**" in c.value)
    assert all(f"**{w}**" in legend for w in (*levels, *verdicts))
    if lang:  # AppTest cannot rerun a page whose radios' words are translated
        return
    # renamed in the settings: the legend follows
    at.session_state[Table.name("en", "verdict", 1)] = "Passable"
    at.session_state[Table.name("en", "level", 0)] = "Great"
    at.run()
    assert not at.exception, at.exception
    legend = next(c.value for c in at.caption if "**Passable**" in c.value)
    assert "**Great**" in legend and f"**{levels[0]}**" not in legend
