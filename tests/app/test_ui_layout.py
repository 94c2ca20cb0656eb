"""The app's layout rules, read from the source: ``ui/`` by section without import cycles
(imports inside functions included), thin pages on one skeleton, pure style."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "ui"
PAGES = sorted((ROOT / "pages").glob("*.py"))
SECTIONS = ("common", "ranking", "compare", "detection", "fusion", "hashing", "history")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """Every import of a file, at any depth: (module, names, line)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names], node.lineno))
    return out


def _ui_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in UI.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        edges = set()
        for module, names, _ in _imports(path):
            if module in modules:
                edges.add(module)
            for n in names:  # "from ui.detection import data" imports ui.detection.data
                if f"{module}.{n}" in modules:
                    edges.add(f"{module}.{n}")
        graph[name] = edges - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    colour, stack = {}, []

    def visit(node):
        colour[node] = "grey"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == "grey":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in colour and (found := visit(nxt)):
                return found
        stack.pop()
        colour[node] = "black"
        return None

    for node in sorted(graph):
        if node not in colour and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_ui_has_no_import_cycle_even_through_imports_inside_functions():
    graph = _ui_graph()
    assert "ui.ranking.upload" in graph and "ui.common.frame" in graph  # the scan sees the package
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_ui_is_grouped_by_section():
    flat = sorted(p.name for p in UI.glob("*.py") if p.name != "__init__.py")
    # beside the sections, only what composes them for the pages (every sample at once)
    assert flat == ["samples.py"], f"modules outside a section: {flat}"
    assert sorted(p.name for p in UI.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(
        SECTIONS
    )
    for section in SECTIONS:
        init = UI / section / "__init__.py"
        assert init.exists()
        assert _imports(init) == [], (
            f"{init} imports something: importing one module would load others"
        )
    # common depends on no section (tests/test_ui_layers.py: imports only run down)
    for path in (UI / "common").glob("*.py"):
        for module, _names, line in _imports(path):
            if module.startswith("ui."):
                assert module.startswith("ui.common"), f"{path.name}:{line} imports {module}"


def test_style_is_pure():
    source = (UI / "common" / "style.py").read_text(encoding="utf-8")
    assert not [m for m, _, _ in _imports(UI / "common" / "style.py") if m.startswith("streamlit")]
    assert "session_state" not in source


def test_palette_is_the_reports():
    from metrics_core.report import PALETTE as REPORT_PALETTE
    from ui.common.style import PALETTE

    assert PALETTE is REPORT_PALETTE


def test_thresholds_are_the_librarys():
    from metrics_core.report import DEFAULT_GOOD_THRESHOLDS
    from ui.common.state import DEFAULT_THRESHOLDS

    assert DEFAULT_THRESHOLDS == DEFAULT_GOOD_THRESHOLDS


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_page_is_one_skeleton_with_its_imports_at_the_top(path):
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert "noqa: E402" not in source
    assert '"ranklab.' not in source and "'ranklab." not in source, "a state key spelled in a page"
    assert "file_uploader" not in source, "uploads go through ui.common.upload"
    assert "format_table" not in source, "tables download through ui.common.downloads"
    body = [
        n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    first_other = next(
        i for i, n in enumerate(body) if not isinstance(n, (ast.Import, ast.ImportFrom))
    )
    assert all(not isinstance(n, (ast.Import, ast.ImportFrom)) for n in body[first_other:]), (
        "an import after the page started"
    )
    withs = [n for n in body if isinstance(n, ast.With)]
    assert len(withs) == 1, "one 'with page(...)' block"
    call = withs[0].items[0].context_expr
    assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "page"
    assert "st.download_button" not in source and ".download_button(" not in source, (
        "downloads go through ui.common.downloads"
    )


def test_no_private_name_is_imported_across_app_modules():
    for path in [*UI.rglob("*.py"), *PAGES, ROOT / "app.py"]:
        for module, names, line in _imports(path):
            if module.startswith("ui") or module.startswith("metrics_core"):
                # ``_`` is gettext's conventional name for the translation function, not private
                private = [n for n in names if n.startswith("_") and n != "_"]
                assert not private, (
                    f"{path.relative_to(ROOT)}:{line} imports {private} from {module}"
                )


def test_sidebar_last_pages_still_draw_it_last():
    """The Overview and the Data page draw the sidebar and the status line after their answer."""
    for name in ("overview.py", "data.py"):
        source = (ROOT / "pages" / name).read_text(encoding="utf-8")
        assert "sidebar=False" in source, name


def test_every_table_shows_a_missing_value_as_a_dash():
    """A grid draws a missing number as "None" unless told otherwise (Per query's unjudged
    documents, Dynamic K's micro row): every st.dataframe of the app passes the one
    placeholder (the exports' en dash, or the word for what is missing, as "unjudged" for a
    document's missing label)."""
    import ast

    from metrics_core.report.cells import MISSING

    missing = []
    for path in [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "dataframe"
            ):
                kw = {k.arg: k.value for k in node.keywords}
                if "placeholder" not in kw:
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert missing == []
    assert MISSING == "\u2013"
