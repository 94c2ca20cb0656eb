"""Streamlit's own words in its file uploader, in the visitor's language.

Streamlit draws the uploader's button ("Upload"), the line under it ("1GB per file • CSV,
TXT") and the hint shown while a file is dragged over it ("Drag and drop a file here") in
English, and no option of ``st.file_uploader`` or of the server changes them (an open
request: streamlit/streamlit#13500). In another language the page frame adds, once per run,
a fixed style sheet (:func:`uploader_css`) that hides those words and shows the catalog's in
their place as generated content; an uploader that accepts only some file types adds the
line with its types (:func:`types_css`), scoped to its own widget. What the style sheets
write is the catalog's text, the server's upload limit and the app's type lists: never a
visitor's text. In English nothing is added (Streamlit's words are the English).

Streamlit's words leave the page (``display: none``) and their block shows ours as generated
content (``::after``), which screen readers read too (the button keeps a name); the hint
shown while dragging is hidden in place (``visibility: hidden``) with ours over it.
"""

from __future__ import annotations

import re
from functools import cache

import streamlit as st

from metrics_core.report.catalogs import translations
from ui.common.i18n import SOURCE_LANGUAGE, _
from ui.common.style import plain

#: The parts of Streamlit's uploader whose words are replaced (its ``data-testid`` names).
DROPZONE = '[data-testid="stFileUploaderDropzone"]'
#: the button's label: Streamlit's words are the paragraph of this block
BUTTON_LABEL = DROPZONE + ' > span button [data-testid="stMarkdownContainer"]'
#: the line under the button: Streamlit's words are the span of this block
LIMIT_LINE = DROPZONE + ' [data-testid="stFileUploaderDropzoneInstructions"] > div'
# the hint drawn over the box while a file is dragged over it: the only span child of the
# box's first block after its file input (the list of files is a block of blocks)
DRAG_TEXT = DROPZONE + " > input + div > span:only-child"
#: Streamlit's size of the uploader's words (its "small" text).
TEXT_SIZE = "0.875rem"
#: The limit line's look: Streamlit's small text, at its faded colour (the text colour at 70 %).
LIMIT_STYLE = f" font-size: {TEXT_SIZE}; opacity: 0.7;"


def css_string(text: str) -> str:
    """``text`` as a CSS string literal (quotes, backslashes, line ends and ``<`` escaped,
    so that the text can never end the style sheet).

    >>> css_string('Hasta 1 GB por "archivo"')
    '"Hasta 1 GB por \\\\"archivo\\\\""'
    >>> css_string("a</style>b")
    '"a\\\\3C /style>b"'
    """
    escaped = (
        str(text)
        .replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\A ")
        .replace("<", "\\3C ")
    )
    return f'"{escaped}"'


def size_words(megabytes: int) -> str:
    """An upload limit given in megabytes, as people read it: ``1 GB``, ``200 MB``.

    >>> size_words(1024), size_words(200), size_words(3072), size_words(1500)
    ('1 GB', '200 MB', '3 GB', '1500 MB')
    """
    megabytes = int(megabytes)
    if megabytes >= 1024 and megabytes % 1024 == 0:
        return f"{megabytes // 1024} GB"
    return f"{megabytes} MB"


def upload_limit_mb() -> int:
    """The server's per-file upload limit in megabytes (``server.maxUploadSize``: our
    ``.streamlit/config.toml`` sets it, a command-line flag may change it)."""
    return int(st.get_option("server.maxUploadSize"))


def types_words(types) -> str:
    """The accepted file types as the uploader lists them: upper case, without the dot.

    >>> types_words(["csv", ".tsv", "json"])
    'CSV, TSV, JSON'
    """
    return ", ".join(str(t).lstrip(".").upper() for t in types)


def limit_line(types=None, megabytes: int | None = None, gettext=_) -> str:
    """The line under the uploader's button: the per-file limit (default the server's), and
    the types it takes; ``gettext`` translates (default: into the visitor's language).

    >>> limit_line(["csv", "txt"], 1024)
    'Up to 1 GB per file • CSV, TXT'
    """
    mb = upload_limit_mb() if megabytes is None else megabytes
    line = plain(gettext("Up to {size} per file"), size=size_words(mb))
    return line + (" • " + types_words(types) if types else "")


def _replace(selector: str, text: str) -> str:
    """Rules that hide the words of ``selector`` and show ``text`` instead (a text that only
    shows: out of screen readers, as the drag hint)."""
    return (
        f"{selector} {{visibility: hidden; font-size: 0;}}\n"
        f"{selector}::after {{content: {css_string(text)}; visibility: visible; "
        f"font-size: {TEXT_SIZE};}}\n"
    )


def _replace_child(block: str, child: str, text: str, style: str = "") -> str:
    """Rules that take Streamlit's words (``child`` of ``block``) out and give ``block`` the
    text instead: generated content that screen readers read (a button's name)."""
    return (
        f"{block} > {child} {{display: none;}}\n"
        f"{block}::after {{content: {css_string(text)};{style}}}\n"
    )


@cache
def uploader_css(lang: str) -> str | None:
    """The style sheet of the uploaders' words in ``lang`` (None in English): the button,
    the limit line (without types), the hint while a file is dragged over a box. Made once
    per language and process (the catalogs and the server's upload limit do not change
    while it runs)."""
    if lang == SOURCE_LANGUAGE:
        return None
    _ = translations(lang).gettext
    multiple = DROPZONE.replace(
        "]", "]:has(> input[multiple])", 1
    )  # a box that takes several files
    return (
        "<style>\n"
        + "".join(
            (
                _replace_child(BUTTON_LABEL, "p", _("Upload")),
                _replace_child(BUTTON_LABEL.replace(DROPZONE, multiple, 1), "p", _("Upload files")),
                _replace_child(LIMIT_LINE, "span", limit_line(gettext=_), LIMIT_STYLE),
                _replace(DRAG_TEXT, _("Drop the file here")),
                _replace(DRAG_TEXT.replace(DROPZONE, multiple, 1), _("Drop the files here")),
            )
        )
        + "</style>"
    )


def widget_class(key: str) -> str:
    """The CSS class Streamlit gives the box of the widget with ``key``.

    >>> widget_class("ranklab.detection.cal_upload.0")
    'st-key-ranklab-detection-cal_upload-0'
    """
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def types_css(key: str, types, lang: str) -> str | None:
    """The limit line of the uploader with widget ``key`` when it takes only ``types``
    (None in English, or when it takes any file)."""
    if lang == SOURCE_LANGUAGE or not types:
        return None
    selector = f".{widget_class(key)} {LIMIT_LINE}"
    line = limit_line(types, gettext=translations(lang).gettext)
    return f"<style>\n{selector}::after {{content: {css_string(line)};}}\n</style>"


def show_uploader_words(lang: str) -> None:
    """Add the uploaders' style sheet of ``lang`` to the page (the page frame, once per run;
    a style-only ``st.html`` takes no room on the page)."""
    css = uploader_css(lang)
    if css:
        st.html(css)


__all__ = [
    "uploader_css",
    "types_css",
    "show_uploader_words",
    "limit_line",
    "size_words",
    "types_words",
    "upload_limit_mb",
    "css_string",
    "widget_class",
]
