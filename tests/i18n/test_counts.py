"""Counts on screen are grouped the way the visitor's language reads them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ui.common.i18n import group_digits

ROOT = Path(__file__).resolve().parents[2]
NNBSP = "\u202f"


@pytest.mark.parametrize(
    ("n", "lang", "expected"),
    [
        (999, "en", "999"),
        (3600, "en", "3,600"),
        (1_234_567, "en", "1,234,567"),
        (999, "es", "999"),
        (3600, "es", "3600"),
        (36_000, "es", f"36{NNBSP}000"),
        (1_234_567, "es", f"1{NNBSP}234{NNBSP}567"),
        (-12_345, "es", f"-12{NNBSP}345"),
        (0, "es", "0"),
    ],
)
def test_group_digits(n, lang, expected):
    assert group_digits(n, lang) == expected


def test_spanish_counts_never_use_a_comma_or_a_point():
    """In Spanish a comma (or a point) between digits reads as a decimal mark."""
    for n in (10_000, 3_600_000, 2**40):
        text = group_digits(n, "es")
        assert "," not in text and "." not in text
        assert int(text.replace(NNBSP, "")) == n


def test_pages_group_counts_through_the_translation_layer():
    """No page formats a count with Python's English grouping (``f"{n:,}"``) itself."""
    found = []
    for path in [
        ROOT / "app.py",
        *sorted((ROOT / "pages").glob("*.py")),
        *sorted((ROOT / "ui").rglob("*.py")),
    ]:
        if path.name == "i18n.py":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?<!%)\{[^{}]*:,[^{}]*\}", line):
                found.append(f"{path.relative_to(ROOT)}:{i}")
    assert found == []


def test_table_formats_keep_the_decimal_point_in_spanish():
    """Streamlit's "percent" and "localized" formats follow the browser (es-ES: "64,92 %",
    "36.000"); the pages use printf formats with a decimal point and no grouping in Spanish."""
    from unittest import mock

    from ui.common import i18n

    with mock.patch.object(i18n, "current_language", return_value="es"):
        assert i18n.count_format() == "%d" and i18n.percent_format() == "%.2f %%"
    with mock.patch.object(i18n, "current_language", return_value="en"):
        assert i18n.count_format() == "localized" and i18n.percent_format() == "%.2f%%"
    pages = "".join(
        p.read_text(encoding="utf-8")
        for p in [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py")]
    )
    assert 'format="percent"' not in pages and 'format="localized"' not in pages
