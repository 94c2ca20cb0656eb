"""AppTest of the Fusion page: the sample one click away, the fused run equal to mc.fuse, the
board beside its inputs, tuning's held-out report, Spanish."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "fusion.py")


def _app(sample, lang=None):
    qrels, runs, meta = sample
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = runs
    at.session_state["ranklab.conventions"] = mc.Conventions()
    at.session_state["ranklab.meta"] = meta
    if lang:
        at.query_params["lang"] = lang
    return at


def test_empty_page_offers_the_sample():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert any("sample" in b.label.lower() for b in at.button)


def test_rrf_of_bm25_and_dense_is_the_library_run(sample):
    qrels, runs, _ = sample
    at = _app(sample).run()
    assert not at.exception, at.exception
    assert at.multiselect[0].value == ["bm25", "dense"]
    board = at.dataframe[0].value
    assert "c RRF (bm25 + dense)" in list(board.index) and any(
        "bm25" in str(i) for i in board.index
    )
    # every name in full under the board (a grid cell cuts a long one)
    assert any("c RRF (bm25 + dense)" in c.value for c in at.caption)
    fused = mc.fuse({"bm25": runs["bm25"], "dense": runs["dense"]}, method="rrf")
    evs = [
        mc.evaluate(qrels, r, ["AP"], mc.Conventions())
        for r in (runs["bm25"], runs["dense"], fused)
    ]
    common = set.intersection(*(set(ev.per_query.index) for ev in evs))  # the board's query set
    ap = evs[2].per_query.loc[sorted(common), "AP"].mean()
    assert board["AP"].iloc[2].startswith(f"{ap:.4f}")
    against = at.dataframe[1].value
    assert set(against.iloc[:, 1]) == {"bm25", "dense"}


@pytest.mark.parametrize(
    ("lang", "board_head", "heads"),
    [
        (None, "Run", ["Measure", "Input", "Input mean", "Fused mean", "Corrected p"]),
        ("es", "Ejecución", ["Medida", "Entrada", "Media de la entrada", "Media fusionada"]),
    ],
)
def test_tables_have_proper_headings_in_both_languages(sample, lang, board_head, heads):
    at = _app(sample, lang).run()
    assert not at.exception, at.exception
    assert at.dataframe[0].value.index.name == board_head
    columns = list(at.dataframe[1].value.columns)
    assert all(h in columns for h in heads), columns


def test_tuning_folds_have_proper_headings(sample):
    qrels, runs, _ = sample
    at = _app(sample).run()
    at.toggle[0].set_value(True).run()
    assert not at.exception, at.exception
    # two narrow tables (one of eight long headings was wider than the page at 1280 px):
    # the chosen parameters per fold, then each run's held-out score per fold
    settings, held = at.dataframe[2].value, at.dataframe[3].value
    assert "Chosen parameters" in settings.columns and "Held-out queries" in settings.columns
    # the held-out score of bm25: the column headed bm25 in the table of held-out scores
    assert "Held-out nDCG@10 on each fold" in [s.value for s in at.subheader]
    assert list(held.columns) == ["Fold", "RRF, cross-validated (bm25 + dense)", "bm25", "dense"]
    tuned = mc.tune_fusion(
        qrels, {"bm25": runs["bm25"], "dense": runs["dense"]}, method="rrf", n_permutations=10
    )
    assert list(held["bm25"]) == pytest.approx(list(tuned.folds["score bm25"]))
    assert list(held["RRF, cross-validated (bm25 + dense)"]) == pytest.approx(
        list(tuned.folds["test_score"])
    )
    for c in [*settings.columns, *held.columns]:
        assert not c.startswith(("score ", "n_", "train_", "test_")), c


def test_fold_headings_in_spanish(monkeypatch):
    import pandas as pd

    from ui.common import i18n
    from ui.fusion import widgets

    monkeypatch.setattr(widgets, "_", i18n.translations("es").gettext)
    heads = widgets.fold_headers()
    assert heads["n_test"] == "Consultas reservadas"
    # the held-out score of bm25 in Spanish: the bm25 column under a Spanish title
    assert (
        widgets.held_out_title("nDCG@10") == "nDCG@10 en las consultas reservadas de cada partición"
    )
    folds = pd.DataFrame(
        {
            "fold": [1],
            "params": [{"k": 40}],
            "n_train": [40],
            "n_test": [10],
            "train_score": [0.5],
            "test_score": [0.6],
            "score bm25": [0.4],
        }
    )
    settings, held = widgets.fold_tables(folds, ["bm25"], widgets.fused_label("rrf", False))
    assert list(held.columns) == ["Partición", "rrf (validación cruzada)", "bm25"]
    assert list(settings.columns) == [
        "Partición",
        "Parámetros elegidos",
        "Consultas de entrenamiento",
        "Consultas reservadas",
        "Puntuación de entrenamiento",
    ]


def test_chosen_parameters_read_as_text():
    from ui.fusion.widgets import params_text

    assert params_text({"k": 40}, ["bm25", "dense"]) == "k = 40"
    assert (
        params_text({"weights": ["0.3", "0.7"]}, ["bm25", "dense"])
        == "weights: bm25 0.3, dense 0.7"
    )
    assert params_text({"phi": 0.8500000001}, ["bm25"]) == "phi = 0.85"
    assert params_text({}, ["bm25"]) == "-"


def test_tuning_reports_held_out_folds(sample):
    at = _app(sample).run()
    at.toggle[0].set_value(True).run()
    assert not at.exception, at.exception
    assert any("held-out" in i.value for i in at.info)
    # the folds' report: five folds, as rows of both tables
    assert len(at.dataframe) == 4 and len(at.dataframe[2].value) == 5
    assert len(at.dataframe[3].value) == 5


@pytest.mark.parametrize("method", ["wsum", "posfuse", "condorcet"])
def test_other_methods_run(sample, method):
    at = _app(sample).run()
    at.selectbox[0].set_value(method).run()
    assert not at.exception, at.exception
    if method == "posfuse":
        assert at.warning and "in-sample" in at.warning[0].value


COMPARE = str(Path(__file__).resolve().parents[2] / "pages" / "compare.py")


def test_compare_page_offers_all_pairs(sample):
    qrels, runs, meta = sample
    at = AppTest.from_file(COMPARE, default_timeout=180)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = runs
    at.session_state["ranklab.conventions"] = mc.Conventions()
    at.session_state["ranklab.meta"] = meta
    at.run()
    at.toggle(key="ranklab.w.compare.all_pairs").set_value(True).run()
    assert not at.exception, at.exception
    at.selectbox(key="ranklab.w.compare.pair_test").set_value("t")
    at.run()
    assert not at.exception, at.exception
    board = at.dataframe[0].value
    assert [str(i) for i in board.index] == ["a bm25", "b dense", "c hybrid"]
    assert any("Holm" in c.value for c in at.caption)


def test_learn_explains_every_fusion_method_with_its_reference():
    from metrics_core.fusion.catalog import METHOD_LABELS, METHODS

    at = AppTest.from_file(str(Path(PAGE).parent / "learn.py"), default_timeout=120).run()
    assert not at.exception
    labels = [e.label for e in at.expander]
    for name in METHODS:
        assert any(label.startswith(METHOD_LABELS[name] + ":") for label in labels), name
    captions = " ".join(c.value for c in at.caption)
    assert "Cormack" in captions and "Fox and Shaw 1994" in captions
    assert "Bassani and Romelli 2022" in " ".join(m.value for m in at.markdown)


def test_the_fused_run_joins_the_loaded_runs_and_every_ranking_page_shows_it(sample):
    """One button, named by the method and the inputs in full, loads the fused run beside
    the uploads; the Overview's board then holds it, with the library's numbers."""
    qrels, runs, _ = sample
    at = _app(sample).run()
    button = next(b for b in at.button if b.label.startswith("Add RRF (bm25 + dense)"))
    button.click().run()
    assert not at.exception, at.exception
    loaded = at.session_state["ranklab.runs"]
    assert "RRF (bm25 + dense)" in loaded and set(runs) < set(loaded)
    fused = mc.fuse({"bm25": runs["bm25"], "dense": runs["dense"]}, method="rrf")
    assert list(loaded["RRF (bm25 + dense)"].doc_ids) == list(fused.doc_ids)
    assert any("is a loaded run" in s.value for s in at.success)
    assert not [b for b in at.button if b.label.startswith("Add RRF")]  # added once
    overview = AppTest.from_file(str(Path(PAGE).with_name("overview.py")), default_timeout=120)
    for key in ("ranklab.qrels", "ranklab.runs", "ranklab.conventions", "ranklab.meta"):
        overview.session_state[key] = at.session_state[key]
    overview.run()
    assert not overview.exception, overview.exception
    shown = " ".join(
        str(v) for d in overview.dataframe for v in [*d.value.index, *d.value.iloc[:, 0]]
    )
    assert "RRF (bm25 + dense)" in shown
    # in Spanish, the button and the name
    es = _app(sample)
    es.query_params["lang"] = "es"
    es.run()
    assert any(b.label.startswith("Añadir RRF (bm25 + dense)") for b in es.button)


def test_the_fusion_is_computed_once_not_on_every_rerun(sample, monkeypatch):
    """The page called fusion, evaluation and the tests on every rerun, outside the cache and
    the gate: now one build of the session's cache (ui.fusion.data.fused)."""
    import metrics_core.fusion.core as core

    calls = []
    real = core.fuse

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(mc, "fuse", counting)
    at = _app(sample).run()
    assert not at.exception, at.exception
    at.run()
    at.run()
    assert len(calls) == 1
    at.selectbox(key="ranklab.w.fusion.method").set_value("combsum").run()
    assert not at.exception and len(calls) == 2  # a new choice: computed once more


def test_a_fusion_that_could_never_fit_is_refused_at_once_in_one_line(monkeypatch):
    from ui.common import budget
    from ui.fusion import data as fd

    class Rows:
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def unique_query_ids(self):
            return [f"q{i}" for i in range(6980)]

    monkeypatch.setenv("RANKLAB_SERVER_MB", "900")  # the hosted default
    big = {"a": Rows(2_500_000), "b": Rows(2_500_000)}
    need = fd.work_need(Rows(0), big, tune=False)
    assert need > budget.server_budget()  # two 2.5 M-line runs: over the whole server
    with pytest.raises(mc.InputError) as refused:
        fd.refuse_what_never_fits(need)
    line = str(refused.value)
    assert "\n" not in line and "ranklab fuse" in line and "MB" in line
    small = {"a": Rows(20_000), "b": Rows(20_000)}
    fd.refuse_what_never_fits(fd.work_need(Rows(0), small, tune=True))  # fits: no error
