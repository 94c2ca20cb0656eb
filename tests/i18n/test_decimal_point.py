"""Numbers on screen keep their decimal point in Spanish, as the measures' values do (the
Spanish CSV exports write decimal commas for spreadsheets: tests/report). A translation that
wrote "0,05" beside values written 0.3543 read as another kind of number (issue 41 item 7)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_catalogs  # noqa: E402

DECIMAL_COMMA = re.compile(r"\d,\d")


def test_no_translation_writes_a_decimal_comma_the_english_does_not():
    found = []
    for m in i18n_catalogs.read_catalog("es"):
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        for text in strings:
            for hit in DECIMAL_COMMA.finditer(text):
                # "1:3.5,2:9" is a list in both languages; "0,05" is a Spanish decimal
                around = text[max(hit.start() - 3, 0) : hit.end() + 3]
                if not any(around in source for source in ids):
                    found.append((ids[0][:60], around))
    assert found == []
