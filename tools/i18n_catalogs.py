"""Extract the translatable texts of RankLab and bring the gettext catalogs up to date.

    python tools/i18n_catalogs.py            # update metrics_core/locales/*/LC_MESSAGES/messages.po
    python tools/i18n_catalogs.py --pot FILE # also write the template (.pot) to FILE
    python tools/i18n_catalogs.py --check    # exit 1 when a catalog is out of date

Texts are what the code passes to ``_()``, ``gettext()``, ``ngettext()`` or ``N_()`` in
``app.py``, ``pages/``, ``ui/`` and the library modules listed in :data:`LIBRARY_SOURCES`
(Babel's Python extractor). Updating adds the new texts with an empty translation, drops
the texts no code uses any more, and never guesses (no fuzzy matching). Then translate the
empty ``msgstr`` entries of ``metrics_core/locales/es/LC_MESSAGES/messages.po``; the English catalog
keeps empty translations (the text is the English).
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_file
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "metrics_core" / "locales"
LANGUAGES = ("en", "es")
#: Folders of the app whose Python files are scanned.
APP_SOURCES = ("app.py", "pages", "ui")
#: Library modules whose words are shown to people (marked with ``N_``) or that translate.
LIBRARY_SOURCES = (
    "metrics_core/calibration.py",
    "metrics_core/cli/hash.py",
    "metrics_core/cli/report.py",
    "metrics_core/cli/thesis.py",
    "metrics_core/clicks.py",
    "metrics_core/conventions.py",
    "metrics_core/data.py",
    "metrics_core/detection.py",
    "metrics_core/dynamic_k.py",
    "metrics_core/errors.py",
    "metrics_core/front_door.py",
    "metrics_core/fusion",
    "metrics_core/gates/resample.py",
    "metrics_core/hashing",
    "metrics_core/history/queries.py",
    "metrics_core/history/records.py",
    "metrics_core/history/comparative_report.py",
    "metrics_core/history/store.py",
    "metrics_core/io",
    "metrics_core/ranking/definition.py",
    "metrics_core/ranking/kernels.py",
    "metrics_core/ranking/keys.py",
    "metrics_core/ranking/measures",
    "metrics_core/ranking/ranked.py",
    "metrics_core/ranking/registry.py",
    "metrics_core/ranking/subtopics.py",
    "metrics_core/report/all_pairs.py",
    "metrics_core/report/catalogs.py",
    "metrics_core/report/comparison.py",
    "metrics_core/report/evaluations.py",
    "metrics_core/report/exports.py",
    "metrics_core/report/html.py",
    "metrics_core/report/leaderboard_grid.py",
    "metrics_core/report/legends.py",
    "metrics_core/report/thesis.py",
    "metrics_core/report/thesis_export.py",
    "metrics_core/scale",
    "metrics_core/stats/aggregate.py",
    "metrics_core/stats/allpairs.py",
    "metrics_core/stats/bootstrap.py",
    "metrics_core/stats/columns.py",
    "metrics_core/stats/comparison.py",
    "metrics_core/stats/folds.py",
    "metrics_core/stats/significance.py",
    "metrics_core/stats/systems.py",
    "metrics_core/validation.py",
)


def source_files(root: Path = ROOT) -> list[Path]:
    """Every Python file whose texts go into the catalogs, in a stable order."""
    files = []
    for name in (*APP_SOURCES, *LIBRARY_SOURCES):
        path = root / name
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
        elif path.is_file():
            files.append(path)
    return files


def template(root: Path = ROOT) -> Catalog:
    """The catalog of every text the code marks (no translations)."""
    cat = Catalog(project="RankLab", domain="messages", fuzzy=False)
    for path in source_files(root):
        rel = path.relative_to(root).as_posix()
        for lineno, message, comments, context in extract_from_file(
            "python", str(path), keywords=DEFAULT_KEYWORDS, comment_tags=("Translators:",)
        ):
            cat.add(message, locations=[(rel, lineno)], auto_comments=comments, context=context)
    return cat


def read_catalog(lang: str, locales: Path = LOCALES) -> Catalog:
    """The ``.po`` catalog of ``lang``."""
    with open(locales / lang / "LC_MESSAGES" / "messages.po", "rb") as fh:
        return read_po(fh, locale=lang)


def updated(lang: str, tmpl: Catalog, locales: Path = LOCALES) -> bytes:
    """The ``.po`` text of ``lang`` brought up to date with ``tmpl``."""
    path = locales / lang / "LC_MESSAGES" / "messages.po"
    if path.is_file():
        cat = read_catalog(lang, locales)
    else:
        cat = Catalog(locale=lang, project="RankLab", domain="messages", fuzzy=False)
    cat.update(tmpl, no_fuzzy_matching=True, update_header_comment=False)
    cat.obsolete.clear()
    cat.fuzzy = False
    buf = io.BytesIO()
    write_po(
        buf,
        cat,
        width=100,
        omit_header=False,
        sort_output=True,
        include_previous=False,
        ignore_obsolete=True,
        no_location=True,
    )
    return _without_tool_lines(buf.getvalue())


#: Header lines that depend on the day or on the installed Babel, not on the texts.
_TOOL_LINES = (b'"POT-Creation-Date', b'"PO-Revision-Date', b'"Generated-By')


def _without_tool_lines(text: bytes) -> bytes:
    """The catalog without the header lines that name a date or Babel's version: a fresh
    install of another Babel release writes the same file."""
    return b"\n".join(line for line in text.split(b"\n") if not line.startswith(_TOOL_LINES))


def messages(text: bytes, lang: str) -> list[tuple]:
    """What a catalog says, independent of its layout: each text's id, context, translation
    and flags, in a stable order (the catalogs keep no source locations, so moving a line
    in the code changes nothing)."""
    cat = read_po(io.BytesIO(text), locale=lang)
    return sorted(
        (str(m.id), m.context or "", str(m.string), tuple(sorted(m.flags)), tuple(m.auto_comments))
        for m in cat
        if m.id
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pot", help="also write the template to this file")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if out of date"
    )
    args = parser.parse_args(argv)
    tmpl = template()
    if args.pot:
        with open(args.pot, "wb") as fh:
            write_po(fh, tmpl, width=100)
    stale = []
    for lang in LANGUAGES:
        path = LOCALES / lang / "LC_MESSAGES" / "messages.po"
        new = updated(lang, tmpl)
        old = path.read_bytes() if path.is_file() else b""
        same = messages(new, lang) == messages(old, lang) if args.check else new == old
        if not same:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(new)
    if args.check and stale:
        print(
            "out of date: " + ", ".join(stale) + " (run python tools/i18n_catalogs.py)",
            file=sys.stderr,
        )
        return 1
    print(
        f"{len(tmpl)} texts; "
        + ("updated: " + ", ".join(stale) if stale else "catalogs up to date")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
