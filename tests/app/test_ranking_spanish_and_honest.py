"""The ranking pages in Spanish (from ``?lang=es`` and from a Spanish browser), and boards that
stay honest: a run that shares no query, or no judged document, with the qrels is named and
kept out of the comparison while the other runs keep their numbers; nothing shows "nan" or
"None"; a failed upload changes no setting."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc
from metrics_core.io.coverage import coverage_report
from metrics_core.report.diagnostics import common_queries
from ui.ranking.data import load_sample

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
#: a run of another collection: its query ids are not the qrels' ones
STRANGER = b"zz1 Q0 D01195 1 3.5 x\nzz2 Q0 D00364 1 1.0 x\n"
#: the sample's queries, none of the documents judged
UNJUDGED = b"q01 Q0 nowhere1 1 3.5 x\nq02 Q0 nowhere2 1 2.0 x\n"


def _page(name: str, lang: str | None = None, sample=None, meta: bool = False) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if lang:
        at.query_params["lang"] = lang
    if sample is not None:
        qrels, runs, metadata = sample
        at.session_state["ranklab.qrels"] = qrels
        at.session_state["ranklab.runs"] = dict(runs)
        if meta:
            at.session_state["ranklab.meta"] = metadata
    return at.run()


def _ok(at) -> None:
    assert not at.exception, at.exception


def _texts(at, frames: bool = True) -> str:
    """Every text the page shows (titles, headers, captions, messages, labels, table cells)."""
    parts = []
    for kind in (
        "title",
        "header",
        "subheader",
        "caption",
        "markdown",
        "info",
        "warning",
        "error",
        "success",
        "metric",
        "expander",
    ):
        for el in at.get(kind):
            for attr in ("value", "label", "proto"):
                value = getattr(el, attr, None)
                if isinstance(value, str):
                    parts.append(value)
            if kind == "metric":
                parts += [str(el.value), str(el.delta or "")]
    for kind in (
        "selectbox",
        "multiselect",
        "number_input",
        "text_input",
        "button",
        "radio",
        "toggle",
        "checkbox",
        "slider",
        "select_slider",
        "date_input",
    ):
        parts += [str(getattr(el, "label", "")) for el in at.get(kind)]
    for frame in at.dataframe if frames else ():
        # the Details table shows its deltas and p-values as text ("–" where missing): the numbers,
        # NaN for the baseline, are hidden columns of its data
        value = frame.value.drop(columns=["delta", "p_corrected"], errors="ignore")
        parts += [str(c) for c in value.columns]
        parts += [str(v) for v in np.asarray(value.astype(str)).ravel()]
    return "\n".join(parts)


def _assert_no_missing_words(text: str) -> None:
    for bad in ("nan", "NaN", "None", "+nan"):
        assert not any(bad == token.strip(" ,;:()") for token in text.split()), (bad, text[:2000])


@pytest.fixture(scope="module")
def sample():
    return load_sample()


# --- Spanish -------------------------------------------------------------------------------

SPANISH = {
    "overview": ("Resumen", ("Línea base", "Medida destacada", "Detalles")),
    "data": ("Datos", ("Formato de los qrels", "Diagnóstico", "Quitar una ejecución cargada")),
    "per_query": (
        "Por consulta",
        (
            "Una consulta",
            "Mostrar los primeros",
            "Filtro: el identificador o el texto de la consulta contiene",
        ),
    ),
    "breakdown": (
        "Desglose",
        ("Agrupar por", "Bueno, Regular o Mejorable"),
    ),  # labels: the table's (linked)
    "learn": ("Las medidas explicadas", ("Ejemplo resuelto", "Todas las medidas", "Convenciones")),
    "clicks": ("Clics de los usuarios", ("MRR (a partir de clics)", "Impresiones", "Por consulta")),
}


@pytest.mark.parametrize("name", list(SPANISH))
def test_each_ranking_page_speaks_spanish_from_the_url(name, sample):
    at = _page(name, "es", sample, meta=True)
    if name == "clicks":
        at.button(key="ranklab.clicks.sample").click().run()
    _ok(at)
    title, words = SPANISH[name]
    assert at.title[0].value == title
    text = _texts(at)
    for word in words:
        assert word in text, (word, name)
    if name != "learn":  # the measures' definitions there speak of NaN as a value
        # (a styled ranking shows its missing labels as "sin juicio": only its raw data has NaN)
        _assert_no_missing_words(_texts(at, frames=name in ("overview", "data", "breakdown")))


def test_a_spanish_browser_gets_the_overview_in_spanish(monkeypatch, sample):
    from streamlit.runtime.context import ContextProxy

    monkeypatch.setattr(ContextProxy, "locale", property(lambda self: "es-ES"))
    at = _page("overview", None, sample)
    _ok(at)
    assert at.title[0].value == "Resumen"
    text = _texts(at)
    assert "Línea base" in text and "mejor media de la medida" in text
    assert "IC" in text and "(línea base)" in text
    english = _page("overview", "en", sample)  # the URL wins over the browser
    assert english.title[0].value == "Overview"


def test_the_data_page_speaks_spanish_from_the_browser(monkeypatch, sample):
    from streamlit.runtime.context import ContextProxy

    monkeypatch.setattr(ContextProxy, "locale", property(lambda self: "es-MX"))
    at = _page("data", None, sample)
    _ok(at)
    assert at.title[0].value == "Datos"
    assert "Diagnóstico" in _texts(at)


# --- honest boards -------------------------------------------------------------------------


def _with_run(sample, name: str, data: bytes):
    qrels, runs, meta = sample
    bad = mc.read_run(data)
    bad.name = name
    return qrels, dict(runs) | {name: bad}, meta


@pytest.mark.parametrize(
    "bad, reason", [(STRANGER, "shares no query with the qrels"), (UNJUDGED, "retrieved is judged")]
)
def test_an_unusable_run_is_named_and_left_out_of_the_overview(bad, reason, sample):
    honest = _page("overview", None, sample)
    _ok(honest)
    at = _page("overview", None, _with_run(sample, "wrong", bad))
    _ok(at)
    warnings = [w.value for w in at.warning]
    assert any("wrong" in w and reason in w for w in warnings), warnings
    grid = next(d.value for d in at.dataframe if "Run" in d.value.columns)
    assert not any(str(r).startswith("wrong") for r in grid["Run"])
    # the other runs keep their numbers: the same grid as without the wrong run
    before = next(d.value for d in honest.dataframe if "Run" in d.value.columns)
    assert grid.equals(before)
    cards = {m.label: m.value for m in at.metric}
    assert len(cards) == 3 and all(v != "–" for v in cards.values())
    _assert_no_missing_words(_texts(at))
    details = next(d.value for d in at.dataframe if "p_shown" in d.value.columns)
    base = details[details["run"] == "bm25"]
    assert set(base["delta_shown"]) == {"–"} and set(base["p_shown"]) == {"–"}
    assert base["delta"].isna().all()


@pytest.mark.parametrize("name", ["per_query", "breakdown"])
def test_per_query_and_breakdown_leave_an_unusable_run_out(name, sample):
    qrels, runs, meta = _with_run(sample, "wrong", STRANGER)
    at = _page(name, None, (qrels, runs, meta), meta=True)
    _ok(at)
    assert any("wrong" in w.value and "shares no query" in w.value for w in at.warning)
    assert all("wrong" not in (s.options or []) for s in at.selectbox)
    _assert_no_missing_words(_texts(at, frames=name == "breakdown"))


def test_the_spanish_overview_names_a_run_without_common_queries(sample):
    at = _page("overview", "es", _with_run(sample, "ajena", STRANGER))
    _ok(at)
    assert any("ajena no comparte ninguna consulta con los qrels" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "bad, reason", [(STRANGER, "shares no query with the qrels"), (UNJUDGED, "retrieved is judged")]
)
def test_the_data_page_names_an_unusable_run_under_the_runs_box(bad, reason, sample):
    qrels, runs, _ = sample
    at = _page("data", None, (qrels, runs, None))
    _ok(at)
    uploader = next(u for u in at.get("file_uploader") if u.key.startswith("ranklab.data.run_file"))
    uploader.set_value([("wrong.txt", bad, "text/plain")]).run()
    _ok(at)
    assert "wrong" in at.session_state["ranklab.runs"]
    assert any("wrong" in w.value and reason in w.value for w in at.warning)
    _assert_no_missing_words(_texts(at))


def test_a_failed_upload_on_the_overview_changes_no_setting(sample):
    at = _page("overview", None, sample)
    _ok(at)
    at.selectbox(key="ranklab.overview.baseline").set_value("dense").run()
    at.selectbox(key="ranklab.overview.headline").set_value(
        at.selectbox(key="ranklab.overview.headline").options[1]
    ).run()
    before = {
        k: at.session_state[k]
        for k in ("ranklab.overview.baseline", "ranklab.overview.headline", "ranklab.measures")
    }
    uploader = next(
        u for u in at.get("file_uploader") if u.key.startswith("ranklab.overview.run_file")
    )
    uploader.set_value([("broken.txt", b"this is not a run\n", "text/plain")]).run()
    _ok(at)
    assert len(at.error) == 1
    assert {k: at.session_state[k] for k in before} == before
    assert set(at.session_state["ranklab.runs"]) == {"bm25", "dense", "hybrid"}


# --- the library helpers the pages use -------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coverage_and_common_queries_against_a_direct_count(seed):
    rng = np.random.default_rng(seed)
    judged = {(f"q{rng.integers(8)}", f"d{rng.integers(30)}") for _ in range(60)}
    qrels = mc.read_qrels(
        {
            q: {d: int(rng.integers(0, 3)) for (qq, d) in judged if qq == q}
            for q in {q for q, _ in judged}
        }
    )
    rows = {(f"q{rng.integers(12)}", f"d{rng.integers(40)}") for _ in range(150)}
    nested = {}
    for q, d in rows:
        nested.setdefault(q, {})[d] = float(rng.integers(0, 5))  # ties on purpose
    run = mc.read_run(nested)
    ranking = mc.rank(qrels, run)
    on_judged_queries = [(q, d) for q, d in rows if q in {qq for qq, _ in judged}]
    want = sum((q, d) in judged for q, d in on_judged_queries) / len(on_judged_queries)
    assert coverage_report(qrels, run)["judged_share"] == pytest.approx(want)
    ev = ranking.evaluate(["P@5"])
    assert common_queries(ev) == len({q for q, _ in rows} & {q for q, _ in judged})


def test_a_thinly_judged_run_is_kept_with_a_note_naming_its_document_id_column():
    """A run read by PyTerrier's integer ``docid`` beside its ``docno``, on a qrels of 20
    queries where only one ranking holds a judged document: kept on the board (its numbers
    are real), with a note that names the column read as the document id and the other one."""
    import pandas as pd

    qrels = mc.read_qrels({f"q{i}": {f"d{i}": 1} for i in range(20)})
    frame = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(20)],
            "docid": list(range(20)),
            "docno": ["d0"] + [f"x{i}" for i in range(1, 20)],
            "score": [1.0] * 20,
        }
    )
    thin = mc.read_run(frame, name="terrier")
    good = mc.read_run({f"q{i}": {f"d{i}": 1.0} for i in range(20)}, name="good")
    report = coverage_report(qrels, thin)
    assert report["problem"] == "few_judged" and report["doc_id_column"] == "docno"
    assert report["other_doc_id_columns"] == ["docid"]
    at = _page("overview", sample=(qrels, {"terrier": thin, "good": good}, None))
    _ok(at)
    notes = [i.value for i in at.info if "terrier" in i.value]
    assert (
        notes
        and "1 of the 20 queries" in notes[0]
        and "«docno»" in notes[0]
        and "«docid»" in notes[0]
    ), notes
    assert not [
        w.value for w in at.warning if "terrier" in w.value
    ]  # kept on the board, not left out
    assert any("terrier" in m.label for m in at.metric)
    es = _page("overview", lang="es", sample=(qrels, {"terrier": thin, "good": good}, None))
    _ok(es)
    assert any("1 de las 20 consultas" in i.value for i in es.info)
