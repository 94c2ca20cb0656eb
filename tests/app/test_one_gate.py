"""One gate, by construction (the rule in ``ui/__init__.py``): every computation of the library
on a visitor's data is reached through a section's data module (``ui/<section>/data.py``) or
the common data layer, inside the memory gate (``ui.common.cache.remember`` or
``ui.common.budget.work``); pages import only ``ui`` and, of the library, its errors.

Two checks, each shown to fail on a page that calls the library directly (the Fusion page
called fusion, tuning, evaluation and comparison on every rerun, outside the cache and the
gate):

- static (AST): a page imports nothing of the library but ``metrics_core.errors``; a ``ui``
  module outside the data layer imports from the library only its words (:data:`WORDS`,
  constants and the error types);
- at run time: every page runs on the sample data with the library's functions and methods
  wrapped (all but :data:`WORDS` and :data:`READINGS`); a call made on a script thread that
  holds no reservation of the gate (``ui.common.budget.gated``) fails.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import pkgutil
import sys
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import metrics_core

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300

#: The common data layer: with the sections' data modules, the only callers of the library's
#: computations (the cache, the gate, the upload slot, the downloads, the kept sessions).
COMMON_DATA_LAYER = {"cache", "budget", "upload", "downloads", "keep", "store", "reclaim"}

#: The library's words: functions of names, settings and single numbers (labels, escapers,
#: measure and run names, conventions, the catalogs), which any part of the app may call
#: outside the gate; a module listed with None: all of it. Constants (UPPER_CASE names) and
#: the error types are words too.
WORDS: dict[str, set[str] | None] = {
    "metrics_core.errors": None,
    "metrics_core.report.catalogs": None,
    "metrics_core.conventions": {"Conventions"},
    "metrics_core.report.cells": {"markdown_escape", "is_missing", "threshold_text"},
    "metrics_core.report.thesis": {"display_measure", "canonical_measure", "Grading"},
    "metrics_core.report.thesis_export": {"localized_words", "caption", "legend"},
    "metrics_core.report.labels": {"bounds", "interpret"},
    "metrics_core.report.legends": {"leaderboard_legend", "family_sentence"},
    "metrics_core.report.leaderboard_grid": {"leaderboard_grid"},
    "metrics_core.report.ranges": {"default_ranges"},
    "metrics_core.report.diagnostics": {"diagnostic_measures"},
    "metrics_core.validation": {"one_class", "one_class_words", "check_float"},
    "metrics_core.dynamic_k": {"field_words"},
    "metrics_core.io.run_names": {"unique_run_names", "base_run_name", "RunFile"},
    "metrics_core.hashing.tables": {"radius_note", "radius_precision"},
    # the server's own set-up and the store's bookkeeping, of no visitor's input's size: where
    # its folders lie, whether data already lies in its files, which files a stem has
    # (and release_pages: the store gives a mapped object's pages back to the page cache at
    # the end of a script run; madvise allocates nothing, a reservation could only make it wait)
    "metrics_core.io.disk": {"disk_folder"},
    "metrics_core.scale.spill": {"disk_folder", "spilled", "files_of", "release_pages"},
    # the readers' limits for a reading (a setting: its reading is the data module's, gated)
    "metrics_core.io.limits": {"using_limits", "current_limits", "Limits"},
    "metrics_core.ranking.registry": {"parse_measure", "parse_measures", "rank_cutoffs"},
    "metrics_core.stats.systems": {"parse_system", "check_systems"},  # systems' names
}
#: Methods that read a result already computed inside the gate (its legend, its paper table,
#: its frame: the size of the result, not of the input), or the words of a setting; the
#: loaded data's accessors kept on the object (its query ids, counted while it was read).
READINGS: dict[str, set[str] | None] = {
    "metrics_core.conventions.Conventions": None,
    "metrics_core.io.limits.Limits": None,  # the readers' limits: a setting (with_input_bytes)
    "metrics_core.ranking.definition.MeasureDef": None,
    "metrics_core.ranking.definition.Param": None,
    "metrics_core.ranking.definition.Example": None,
    "metrics_core.report.thesis.Grading": None,
    "metrics_core.report.comparison.Comparison": {
        "legend",
        "paper",
        "to_frame",
        "wide",
        "queries",
        "parameters",
        "provenance",
        "columns",
        "power",
        "power_sentence",
    },
    "metrics_core.report.all_pairs.AllPairsComparison": {"legend", "paper", "to_frame"},
    "metrics_core.fusion.tuning.Tuning": {"describe"},
    "metrics_core.fusion.declaration.FusionMethod": None,
    "metrics_core.fusion.declaration.FusionParam": None,
    "metrics_core.data._Columns": {"unique_query_ids", "line_of"},
}
#: Library modules the app never runs (the command line, the peers' interfaces) or that need
#: a device this machine may lack.
NOT_THE_APPS = ("metrics_core.cli", "metrics_core.compat", "metrics_core.__main__")


# --- static: what pages and ui modules import -------------------------------------------------
def is_data_layer(path: Path) -> bool:
    rel = path.relative_to(ROOT / "ui")
    return rel.name == "data.py" or (rel.parts[0] == "common" and rel.stem in COMMON_DATA_LAYER)


def _type_checking(tree: ast.AST) -> set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _is_word(module: str, name: str) -> bool:
    if name.isupper():  # a constant (N_, the catalogs' marker, too)
        return True
    if module in WORDS:
        allowed = WORDS[module]
        return allowed is None or name in allowed
    return False


def library_uses(source: str, *, page: bool) -> list[str]:
    """Each import of the library in ``source`` (a page's or a ui module's), and each
    attribute of ``import metrics_core as mc`` used, that the rule does not allow, as
    "line: what"."""
    tree = ast.parse(source)
    skip = _type_checking(tree)
    bad, aliases = [], {}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("metrics_core"):
            module = node.module or ""
            for alias in node.names:
                if page and module != "metrics_core.errors":
                    bad.append(f"{node.lineno}: from {module} import {alias.name}")
                elif not page and not _is_word(module, alias.name):
                    kind = " (a module)" if _is_module(f"{module}.{alias.name}") else ""
                    bad.append(f"{node.lineno}: from {module} import {alias.name}{kind}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("metrics_core"):
                    if page:
                        bad.append(f"{node.lineno}: import {alias.name}")
                    aliases[alias.asname or alias.name] = alias.name
    if aliases and not page:
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                if not _is_word_attribute(aliases[node.value.id], node.attr):
                    bad.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return bad


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a name inside a module, not a module
        return False


def _is_word_attribute(package: str, attr: str) -> bool:
    """``mc.X``: X a constant, or a word of the module that defines it."""
    if attr.isupper():
        return True
    obj = getattr(importlib.import_module(package), attr, None)
    module = getattr(obj, "__module__", None) or package
    return _is_word(module, attr)


PAGES = sorted(p for p in (ROOT / "pages").glob("*.py"))
UI_MODULES = sorted(p for p in (ROOT / "ui").rglob("*.py") if not is_data_layer(p))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_a_page_imports_of_the_library_only_its_errors(path):
    assert library_uses(path.read_text(), page=True) == []


@pytest.mark.parametrize("path", UI_MODULES, ids=lambda p: str(p.relative_to(ROOT / "ui")))
def test_outside_the_data_layer_ui_modules_use_only_the_librarys_words(path):
    assert library_uses(path.read_text(), page=False) == []


OLD_FUSION_PAGE = """
import metrics_core as mc
from metrics_core.fusion.catalog import EXPLAINED, METHODS, NORMS
from metrics_core.io.writers import run_text
fused = mc.fuse(chosen, method=method)
evaluations = [mc.evaluate(qrels, r, [measure]) for r in chosen.values()]
"""


def test_the_static_rule_fails_on_the_old_fusion_page_and_on_a_widget_that_computes():
    assert library_uses(OLD_FUSION_PAGE, page=True) == [
        "2: import metrics_core",
        "3: from metrics_core.fusion.catalog import EXPLAINED",
        "3: from metrics_core.fusion.catalog import METHODS",
        "3: from metrics_core.fusion.catalog import NORMS",
        "4: from metrics_core.io.writers import run_text",
    ]
    assert library_uses(OLD_FUSION_PAGE, page=False) == [
        "4: from metrics_core.io.writers import run_text",
        "5: mc.fuse",
        "6: mc.evaluate",
    ]
    widget = "from metrics_core.stats.bootstrap import bootstrap_table\nfrom metrics_core import detection as det\n"
    assert library_uses(widget, page=False) == [
        "1: from metrics_core.stats.bootstrap import bootstrap_table",
        "2: from metrics_core import detection (a module)",
    ]
    words = "from metrics_core.report.cells import MISSING, markdown_escape\nimport metrics_core as mc\nc = mc.Conventions()\n"
    assert library_uses(words, page=False) == []


# --- at run time: every library computation of every page inside a reservation ---------------
class OutsideTheGate(AssertionError):
    """A library computation called on a script thread that holds no reservation."""


def _library_modules():
    modules = [metrics_core]
    for info in pkgutil.walk_packages(metrics_core.__path__, "metrics_core."):
        if info.name.startswith(NOT_THE_APPS):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError:  # an optional dependency (Dask, Triton) this machine lacks
            continue
    return modules


def _is_reading(cls: type, method: str) -> bool:
    for klass in cls.__mro__:
        allowed = READINGS.get(f"{klass.__module__}.{klass.__qualname__}", ())
        if allowed is None or method in (allowed or ()):
            return True
    return False


class Guard:
    """The library's computations wrapped: a call from a script run that holds no reservation
    of the gate is recorded (where it came from) and fails."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self.local = threading.local()
        self.undo: list = []

    def wrap(self, fn, name: str, word: bool = False):
        """``fn`` that fails when called from a script run outside the gate (unless it is a
        ``word``); what it calls in turn is the library's own business (not checked)."""
        from ui.common import budget
        from ui.common.state import in_app

        guard = self

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            depth = getattr(guard.local, "depth", 0)
            if depth == 0 and not word and in_app() and not budget.gated():
                where = _caller()
                guard.calls.append((name, where))
                raise OutsideTheGate(f"{name} called outside the memory gate from {where}")
            guard.local.depth = depth + 1
            try:
                return fn(*args, **kwargs)
            finally:
                guard.local.depth = depth

        return guarded

    def install(self) -> None:
        originals: dict[int, tuple] = {}
        for module in _library_modules():
            for attr, obj in list(vars(module).items()):
                if attr.startswith("_") and attr != "_Columns":
                    continue
                if inspect.isfunction(obj) and obj.__module__.startswith("metrics_core"):
                    if id(obj) not in originals:
                        word = _is_word(obj.__module__, obj.__name__)
                        wrapped = self.wrap(obj, f"{obj.__module__}.{obj.__name__}", word)
                        originals[id(obj)] = (obj, wrapped)
                elif (
                    inspect.isclass(obj)
                    and obj.__module__ == module.__name__
                    and not issubclass(obj, BaseException)
                ):
                    self._wrap_methods(obj)
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith(("metrics_core", "ui")):
                continue
            for attr, obj in list(vars(module).items()):
                hit = originals.get(id(obj))
                if hit is not None and hit[0] is obj:
                    setattr(module, attr, hit[1])
                    self.undo.append((module, attr, obj))

    def _wrap_methods(self, cls: type) -> None:
        for name, member in list(vars(cls).items()):
            if name.startswith("_"):
                continue
            label, word = f"{cls.__module__}.{cls.__qualname__}.{name}", _is_reading(cls, name)
            if isinstance(member, staticmethod | classmethod):
                wrapped = type(member)(self.wrap(member.__func__, label, word))
            elif inspect.isfunction(member):
                wrapped = self.wrap(member, label, word)
            else:
                continue
            setattr(cls, name, wrapped)
            self.undo.append((cls, name, member))

    def uninstall(self) -> None:
        for owner, attr, original in reversed(self.undo):
            setattr(owner, attr, original)
        self.undo.clear()


def _caller() -> str:
    import traceback

    for frame in reversed(traceback.extract_stack()[:-2]):
        path = Path(frame.filename)
        if "metrics_core" in path.parts or path.name in ("test_one_gate.py", "functools.py"):
            continue
        if "streamlit" in path.parts or "pandas" in path.parts:
            continue
        return f"{path.parent.name}/{path.name}:{frame.lineno}"
    return "?"


@pytest.fixture(scope="module")
def guard():
    for info in pkgutil.walk_packages([str(ROOT / "ui")], "ui."):
        importlib.import_module(info.name)  # their names bound to the library's, wrapped too
    g = Guard()
    g.install()
    yield g
    g.uninstall()


def _app(page: str, sample, **state) -> AppTest:
    qrels, runs, meta = sample
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.session_state["ranklab.meta"] = meta
    for key, value in state.items():
        at.session_state[key] = value
    return at


def _click(at: AppTest, words: str) -> None:
    for button in at.button:
        if words in button.label:
            button.click().run()
            return
    raise AssertionError(f"no button {words!r}: {[b.label for b in at.button]}")


def _outside(guard, at: AppTest) -> list:
    """The calls made outside the gate in this page's runs, and any exception the page
    showed (a guarded call raises)."""
    calls, guard.calls[:] = list(guard.calls), []
    return calls + [e.value for e in at.exception]


@pytest.mark.parametrize("page", [p.stem for p in PAGES])
def test_every_page_calls_the_library_only_inside_the_gate(page, sample, guard):
    at = _app(page, sample).run()
    if page == "hashing":
        _click(at, "Load the sample")
    elif page == "clicks":
        _click(at, "Load sample click log")
    elif page == "home":
        _click(at, "Load sample data")
    assert _outside(guard, at) == []
    assert at.main.children, "the page drew nothing"


@pytest.mark.parametrize(
    ("page", "action"),
    [
        ("fusion", "tune"),
        ("fusion", "weighted"),
        ("compare", "all pairs"),
        ("table", "queries"),
        ("table", "saved"),
        ("data", "sample"),
        ("per_query", "query"),
        ("detection", "bootstrap"),
        ("overview", "details"),
        ("compare", "systems"),
        ("compare", "power"),
        ("table", "systems"),
        ("fusion", "join"),
    ],
)
def test_the_pages_work_on_every_setting_inside_the_gate(page, action, sample, guard):
    systems = {"ranklab.w.compare.systems": "lexical=bm25\nneural=dense,hybrid"}
    at = _app(page, sample, **(systems if action == "systems" else {})).run()
    if action == "tune":
        at.toggle(key="ranklab.w.fusion.tune").set_value(True).run()
    elif action == "weighted":
        at.selectbox(key="ranklab.w.fusion.method").set_value("wsum").run()
    elif action == "all pairs":
        next(t for t in at.toggle if "All pairs" in t.label).set_value(True).run()
    elif action in ("queries", "saved"):
        at.radio(key="ranklab.table.source").set_value(action).run()
    elif action == "sample":
        _click(at, "Load sample data")
    elif action == "query":
        at.selectbox(key="ranklab.pq.query").set_value("q02").run()
    elif action == "bootstrap":
        at.toggle(key="ranklab.detection.ci_on").set_value(True).run()
    elif action == "details":
        for expander_key in ("ranklab.overview.own_queries", "ranklab.overview.chart_open"):
            at.session_state[expander_key] = True
        at.run()
    elif action == "power":  # a difference to detect: the topic-set size for it
        next(n for n in at.number_input if "Difference" in n.label).set_value(0.05)
        _click(at, "Compare")
    elif action == "join":
        _click(at, "to the loaded runs")
    assert _outside(guard, at) == []
    if action == "systems":  # the systems were compared (not refused): rows of their own
        shown = " ".join(
            str(v) for d in at.dataframe for v in [*d.value.index, *d.value.iloc[:, 0]]
        )
        assert "neural" in shown, shown
    if action == "join":  # the fused run, loaded beside the others, on every ranking page
        assert len(at.session_state["ranklab.runs"]) == 4
        for then in ("overview", "compare", "per_query"):
            after = _app(then, (sample[0], at.session_state["ranklab.runs"], sample[2])).run()
            assert _outside(guard, after) == []


def test_hash_code_uploads_are_read_and_evaluated_inside_the_gate(sample, guard):
    """The four uploads of the Hash codes page (the sample's files: two .npy, two CSV)."""
    at = _app("hashing", sample).run()
    assert len(at.get("file_uploader")) == 4
    files = ["query_codes.npy", "db_codes.npy", "query_labels.csv", "db_labels.csv"]
    for i, name in enumerate(files):  # the page is drawn again after each: its boxes anew
        data = (ROOT / "sample_data" / "hashing" / name).read_bytes()
        at.get("file_uploader")[i].set_value((name, data, "application/octet-stream")).run()
    assert _outside(guard, at) == []
    assert at.session_state["ranklab.hashing.data"]["query_codes"].shape[0] == 200
    assert [m.label for m in at.metric], "no numbers on the codes"


def test_history_imports_inside_the_gate(sample, guard, tmp_path):
    """The History page's sample loaded into the session's history, then a saved history
    uploaded (imported) in its place and drawn."""
    import metrics_core as mc
    from ui.history.data import save_current_evaluations

    qrels, runs, _meta = sample
    path = tmp_path / "saved.sqlite3"
    evaluations = [mc.evaluate(qrels, run, ["AP", "nDCG@10"]) for run in runs.values()]
    save_current_evaluations(evaluations, "suite", qrels, store_path=str(path))
    at = _app("history", sample).run()
    _click(at, "Load sample history")
    assert _outside(guard, at) == []
    box = at.get("file_uploader")[0]
    box.set_value(("saved.sqlite3", path.read_bytes(), "application/vnd.sqlite3")).run()
    assert _outside(guard, at) == []
    assert any("Loaded 3 saved evaluations" in t.value for t in at.toast), at.toast


def test_the_diversity_sample_is_loaded_and_evaluated_inside_the_gate(sample, guard):
    """The Data page's "Diversity sample" (subtopic qrels) and the Overview's diversity
    measures on it (alpha-nDCG, ERR-IA, subtopic recall)."""
    at = _app("data", sample).run()
    _click(at, "Diversity sample")
    assert _outside(guard, at) == []
    qrels, runs = at.session_state["ranklab.qrels"], at.session_state["ranklab.runs"]
    assert set(runs) == {"relevance", "diverse"}
    overview = _app("overview", (qrels, runs, None))
    overview.session_state["ranklab.measures"] = at.session_state["ranklab.measures"]
    overview.run()
    assert _outside(guard, overview) == []
    shown = " ".join(str(c) for d in overview.dataframe for c in d.value.columns)
    assert "alpha-nDCG@10" in shown, shown


def test_the_runtime_guard_fails_on_a_page_that_calls_the_library_directly(sample, guard):
    """The old Fusion page's way: the library called on the page, outside the gate."""

    def page():
        import streamlit as st

        import metrics_core as mc
        from ui.common.frame import page_setup

        page_setup()
        runs = st.session_state["ranklab.runs"]
        mc.fuse({n: runs[n] for n in ("bm25", "dense")}, method="rrf")

    qrels, runs, meta = sample
    at = AppTest.from_function(page, default_timeout=TIMEOUT)
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    calls, guard.calls[:] = list(guard.calls), []
    assert [name for name, _where in calls] == ["metrics_core.fusion.core.fuse"]
    assert at.exception and "outside the memory gate" in at.exception[0].value


def test_a_download_is_made_inside_the_gate():
    from ui.common import budget
    from ui.common.downloads import gated

    seen = []
    made = gated(lambda: seen.append(budget.gated()) or "text", 1000)
    assert not budget.gated() and made() == "text" and seen == [True]


def test_the_gates_marker_holds_inside_every_kind_of_reservation_and_only_there():
    """``budget.gated`` (what the runtime guard above asks): true inside a computation's
    reservation of any size (0, nested) and an upload's; false before, after, and after a
    refusal (a need no server could give)."""
    from metrics_core.errors import InputError
    from ui.common import budget

    seen = []
    assert not budget.gated()
    with budget.work(0):
        seen.append(budget.gated())
    with budget.work(1000):
        seen.append(budget.gated())
        with budget.work(10**6):  # part of the outer reservation
            seen.append(budget.gated())
        seen.append(budget.gated())
    with budget.reserve(b"q1 Q0 d1 1 1.0 r\n", "run", "r.txt"):
        seen.append(budget.gated())
    assert seen == [True] * 5 and not budget.gated()
    with pytest.raises(InputError), budget.work(10**15):
        seen.append("admitted")
    assert seen == [True] * 5 and not budget.gated()
