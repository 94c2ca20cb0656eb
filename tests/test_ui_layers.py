"""The app's code (``ui``) has two floors and imports only run down (the rule is in
``ui/__init__.py``): ``ui.common`` imports no section; a section (``ui.ranking``,
``ui.compare`` ...) imports ``ui.common`` and its own modules, never another section; what
composes sections (``ui.samples``, the pages) stands above them, and nothing in ``ui.common``
or a section imports it. Imports inside functions are counted (a deferred import hides an
arrow from Python, not from a reader); those under ``if TYPE_CHECKING:`` are not."""

from __future__ import annotations

from tests.test_foundation import ROOT, _import_graph, _module_map


def floor(module: str) -> str:
    """``common``, a section's name, or ``top`` (a module of ``ui`` itself: it composes)."""
    parts = module.split(".")
    if len(parts) == 2 and (ROOT / "ui" / parts[1]).is_dir():
        return parts[1]  # a section's package initialiser
    return parts[1] if len(parts) > 2 else "top"


def arrows_back_up(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for a, targets in graph.items():
        for b in targets:
            fa, fb = floor(a), floor(b)
            if fa == "top" or fa == fb or fb == "common" and fa != "top":
                continue
            bad.append(f"{a} ({fa}) imports {b} ({fb})")
    return sorted(bad)


def test_ui_imports_only_run_down():
    graph = _import_graph(_module_map("ui"))
    assert graph, "no ui module read"
    assert arrows_back_up(graph) == []


def test_the_rule_catches_each_kind_of_arrow():
    """The three arrows the structure drawing showed (issue 38), and the others of their kinds."""
    graph = {
        "ui.common.frame": {"ui.hashing.state", "ui.common.state"},
        "ui.ranking.widgets": {"ui.compare.thresholds", "ui.history.actions", "ui.common.i18n"},
        "ui.compare.table": {"ui.ranking.prologue"},
        "ui.common.cache": {"ui.samples"},
        "ui.samples": {"ui.ranking.data", "ui.hashing.data"},
    }
    assert arrows_back_up(graph) == [
        "ui.common.cache (common) imports ui.samples (top)",
        "ui.common.frame (common) imports ui.hashing.state (hashing)",
        "ui.compare.table (compare) imports ui.ranking.prologue (ranking)",
        "ui.ranking.widgets (ranking) imports ui.compare.thresholds (compare)",
        "ui.ranking.widgets (ranking) imports ui.history.actions (history)",
    ]


def test_the_rule_is_written_where_a_contributor_reads_it():
    import ui

    assert "never another section" in " ".join(ui.__doc__.split())
