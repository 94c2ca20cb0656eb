"""Finds user-visible texts that bypass the translation layer (an AST scan of the app).

A *finding* is a string literal (or an f-string, a concatenation or ``"...".format(...)``
built from one) given to a Streamlit display call (``st.title``, ``col.button``,
``st.sidebar.header`` ...) as its text or label, in ``tabs([...])``, ``captions=[...]``,
the keywords ``label=``, ``help=``, ``placeholder=``, ``caption=`` or ``title=``, the
labels of ``st.column_config`` columns, and plotly titles and annotations
(``update_layout(title=..., xaxis_title=...)``, ``add_annotation(text=...)``,
``add_vline(annotation_text=...)``), without going through ``_()`` / ``ngettext()``. Not findings: texts without a
word of two letters or more ("—", "**", "Δ", "W / T / L"), canonical measure names ("MRR", "nDCG@10"), CSS or script blocks,
and lines that end with ``# i18n: ignore`` (e.g. a language named in itself).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

#: Streamlit calls whose first positional argument is shown to the visitor.
DISPLAY_CALLS = frozenset(
    {
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "write",
        "text",
        "button",
        "download_button",
        "link_button",
        "page_link",
        "checkbox",
        "toggle",
        "radio",
        "selectbox",
        "multiselect",
        "slider",
        "select_slider",
        "text_input",
        "text_area",
        "number_input",
        "date_input",
        "time_input",
        "datetime_input",
        "file_uploader",
        "color_picker",
        "error",
        "warning",
        "info",
        "success",
        "toast",
        "expander",
        "metric",
        "form_submit_button",
        "popover",
        "status",
        "segmented_control",
        "pills",
        "chat_input",
        "spinner",
        "audio_input",
        "camera_input",
        "feedback",
        "menu_button",
        "Page",
        "download_table",
    }
)
#: Display calls whose visible text is not their first positional argument (``st.page_link``
#: and the frame's ``page_link`` take the page first and the label second; ``st.Page`` takes a
#: script path, its title is the ``title=`` keyword; the app's ``download_table`` takes the
#: table, its file name and the conventions first, then the title written into every export).
TEXT_POSITION = {"page_link": 1, "Page": None, "download_table": 3}
#: Plotly calls and the keywords of theirs that the visitor reads (titles, annotations).
PLOT_KEYWORDS = {
    "update_layout": frozenset(
        {"title", "title_text", "xaxis_title", "yaxis_title", "legend_title_text", "legend_title"}
    ),
    "update_xaxes": frozenset({"title", "title_text"}),
    "update_yaxes": frozenset({"title", "title_text"}),
    "add_annotation": frozenset({"text"}),
    "add_vline": frozenset({"annotation_text"}),
    "add_hline": frozenset({"annotation_text"}),
    "add_vrect": frozenset({"annotation_text"}),
    "add_hrect": frozenset({"annotation_text"}),
}
#: Keywords whose value is shown to the visitor.
VISIBLE_KEYWORDS = frozenset({"label", "help", "placeholder", "caption", "title"})
#: Keywords holding lists of visible texts.
VISIBLE_LIST_KEYWORDS = frozenset({"captions"})
#: Calls that translate.
TRANSLATORS = frozenset({"_", "gettext", "ngettext", "pgettext", "npgettext"})
#: Receivers that are not Streamlit (their info/warning/error are logs).
NOT_STREAMLIT = frozenset({"log", "logger", "logging", "warnings", "LOG", "LOGGER"})

_STYLE = re.compile(r"<(style|script)\b.*?</\1>", re.S | re.I)
_ICON = re.compile(r":material/[a-z0-9_]+:|:[a-z0-9_+-]+:")  # icon shortcodes: not words
_TAG = re.compile(r"<[^>]+>")
_IGNORE = "# i18n: ignore"


@dataclass(frozen=True)
class Finding:
    """One visible text that is not translated."""

    path: str
    line: int
    call: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.call}(...) shows {self.text!r} without _()"


def _is_measure(text: str) -> bool:
    from metrics_core.ranking.registry import parse_measure

    try:
        parse_measure(text.strip())
        return True
    except Exception:
        return False


def needs_translation(text: str) -> bool:
    """True when ``text`` holds words a visitor reads (see the module's rules).

    >>> needs_translation("Upload a run"), needs_translation("—"), needs_translation("nDCG@10")
    (True, False, False)
    >>> needs_translation("Δ"), needs_translation("Δ CI")
    (False, True)
    >>> needs_translation("<style>.x {color: red}</style>")
    False
    >>> needs_translation(":material/info: "), needs_translation(":material/info: Loaded")
    (False, True)
    """
    visible = _ICON.sub(" ", _TAG.sub(" ", _STYLE.sub(" ", text)))
    if not re.search(r"[^\W\d_]{2}", visible):
        return False
    return not _is_measure(visible)


def _call_name(node: ast.Call) -> tuple[str | None, str | None]:
    """(method or function name, root receiver name)."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id, None
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.func if isinstance(root, ast.Call) else root.value
        return func.attr, root.id if isinstance(root, ast.Name) else None
    return None, None


def _literal_texts(node) -> list[str]:
    """The literal text parts of an expression that is shown as is (not translated)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value for v in node.values if isinstance(v, ast.Constant))]
    if isinstance(node, ast.BinOp):
        return _literal_texts(node.left) + _literal_texts(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_texts(node.body) + _literal_texts(node.orelse)
    if isinstance(node, ast.Call):
        name, _root = _call_name(node)
        if name in TRANSLATORS:
            return []
        if name == "format" and isinstance(node.func, ast.Attribute):
            return _literal_texts(node.func.value)
    return []


def _is_column(name: str) -> bool:
    """st.column_config.NumberColumn, TextColumn, Column ...: the first argument is a label."""
    return name == "Column" or (name.endswith("Column") and name[:1].isupper())


def _visible_args(node: ast.Call, name: str):
    position = TEXT_POSITION.get(name, 0)
    if (
        (name in DISPLAY_CALLS or _is_column(name))
        and position is not None
        and len(node.args) > position
    ):
        yield node.args[position]
    for kw in node.keywords:
        if kw.arg in PLOT_KEYWORDS.get(name, ()):
            yield kw.value
    if name == "tabs" and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
        yield from node.args[0].elts
    for kw in node.keywords:
        if kw.arg in VISIBLE_KEYWORDS and (
            name in DISPLAY_CALLS or name == "tabs" or _is_column(name)
        ):
            yield kw.value
        elif kw.arg in VISIBLE_LIST_KEYWORDS and isinstance(kw.value, (ast.List, ast.Tuple)):
            yield from kw.value.elts


def scan_source(source: str, path: str = "<source>") -> list[Finding]:
    """Findings in one Python source."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name, root = _call_name(node)
        if name is None or root in NOT_STREAMLIT:
            continue
        if (
            name not in DISPLAY_CALLS
            and name != "tabs"
            and name not in PLOT_KEYWORDS
            and not _is_column(name)
            and not any(kw.arg in VISIBLE_LIST_KEYWORDS for kw in node.keywords)
        ):
            continue
        if _IGNORE in lines[node.lineno - 1]:
            continue
        for arg in _visible_args(node, name):
            for text in _literal_texts(arg):
                if needs_translation(text):
                    found.append(Finding(path, getattr(arg, "lineno", node.lineno), name, text))
    return found


def scan_paths(root: Path, names=("app.py", "pages", "ui")) -> list[Finding]:
    """Findings in every Python file of ``names`` under ``root``: folders (every file in them)
    or single files, so a subset of the app can be checked on its own (a name that does not
    exist is an error, so a moved file cannot pass unnoticed)."""
    missing = [n for n in names if not (root / n).exists()]
    if missing:
        raise FileNotFoundError(f"nothing to scan at {', '.join(missing)} under {root}")
    files = []
    for name in names:
        path = root / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    out = []
    for f in files:
        out += scan_source(f.read_text(encoding="utf-8"), f.relative_to(root).as_posix())
    return out
