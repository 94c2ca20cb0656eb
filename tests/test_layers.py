"""Imports only run down: every module of ``metrics_core`` stands on one layer of the list
in ``metrics_core/README.md`` ("Layers"), and imports only from its own layer or below
(imports inside functions counted, those under ``if TYPE_CHECKING:`` not)."""

from __future__ import annotations

import re

from tests.test_foundation import ROOT, _import_graph, _module_map


def readme_layers() -> list[set[str]]:
    """The layers as ``metrics_core/README.md`` lists them, bottom first: the numbered
    lines of its "Layers" section, each a list of back-quoted names."""
    text = (ROOT / "metrics_core" / "README.md").read_text()
    section = text.split("### Layers", 1)[1].split("\n#", 1)[0]
    layers = []
    for line in section.splitlines():
        match = re.match(r"(\d+)\. (.*)", line)
        if match:
            assert int(match.group(1)) == len(layers) + 1, line
            names = re.findall(r"`([\w.]+)`", match.group(2).split(" -- ")[0])
            layers.append(set(names))
    return layers


def unit(module: str) -> str:
    """The layer's unit of a module: ``metrics_core.io.trec`` -> ``io``, the package root
    ``metrics_core`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_readme_lists_layers():
    layers = readme_layers()
    assert len(layers) >= 10
    names = [n for layer in layers for n in layer]
    assert len(names) == len(set(names)), "a name on two layers"


def test_every_module_stands_on_a_layer():
    placed = set().union(*readme_layers())
    units = {unit(m) for m in _module_map("metrics_core")}
    missing = sorted(units - placed)
    assert not missing, f"not on any layer of metrics_core/README.md: {missing}"
    gone = sorted(placed - units)
    assert not gone, f"layers of metrics_core/README.md name no module: {gone}"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import in ``graph`` (module -> modules it imports) from a lower layer to a
    higher one, in words."""
    layer_of = {name: i for i, layer in enumerate(readme_layers()) for name in layer}
    return sorted(
        f"{a} (layer {layer_of[unit(a)] + 1}) imports {b} (layer {layer_of[unit(b)] + 1})"
        for a, targets in graph.items()
        for b in targets
        if layer_of[unit(b)] > layer_of[unit(a)]
    )


def test_imports_only_run_down():
    upward = upward_imports(_import_graph(_module_map("metrics_core")))
    assert not upward, "imports that run back up:\n" + "\n".join(upward)


def test_an_import_back_up_inside_a_function_is_caught(tmp_path):
    """The way ``evaluation`` once reached ``compat/shapes.py``: an import inside a method."""
    (tmp_path / "compat").mkdir()
    (tmp_path / "compat" / "__init__.py").write_text("")
    (tmp_path / "compat" / "shapes.py").write_text("def long_frame(ev):\n    return ev\n")
    (tmp_path / "evaluation.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from metrics_core.front_door import evaluate\n"  # never run: not an arrow
        "class Evaluation:\n"
        "    def to_frame(self):\n"
        "        from metrics_core.compat.shapes import long_frame\n"
        "        return long_frame(self)\n"
    )
    modules = {
        "metrics_core.evaluation": tmp_path / "evaluation.py",
        "metrics_core.compat": tmp_path / "compat" / "__init__.py",
        "metrics_core.compat.shapes": tmp_path / "compat" / "shapes.py",
        "metrics_core.front_door": tmp_path / "compat" / "shapes.py",
    }
    assert upward_imports(_import_graph(modules)) == [
        "metrics_core.evaluation (layer 3) imports metrics_core.compat.shapes (layer 10)"
    ]
