"""The gettext catalogs: every text the code marks is translated into Spanish, nothing is
stale or fuzzy, placeholders survive, and the specifications' vocabulary is used."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from metrics_core.errors import InputError
from metrics_core.report import catalogs
from metrics_core.report.thesis import LEVEL_NAMES, VERDICT_NAMES
from metrics_core.report.thesis_export import DEFAULT_WORDS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_catalogs  # noqa: E402


@pytest.fixture(scope="module")
def template():
    return i18n_catalogs.template()


@pytest.fixture(scope="module", params=["es", "en"])
def po(request):
    return request.param, i18n_catalogs.read_catalog(request.param)


def _ids(catalog) -> set:
    return {m.id for m in catalog if m.id}


def test_every_marked_text_is_in_each_catalog_and_nothing_else(template, po):
    lang, cat = po
    code, catalog = _ids(template), _ids(cat)
    assert code - catalog == set(), (
        f"{lang}: texts missing from the catalog (run tools/i18n_catalogs.py)"
    )
    assert catalog - code == set(), f"{lang}: stale texts no code uses"
    assert not cat.obsolete, f"{lang}: obsolete (#~) entries"
    assert [m.id for m in cat if m.id and m.fuzzy] == [], f"{lang}: fuzzy entries"


def test_every_spanish_entry_is_translated(template):
    cat = i18n_catalogs.read_catalog("es")
    empty = [
        m.id
        for m in cat
        if m.id and not (all(m.string) if isinstance(m.string, tuple) else m.string)
    ]
    assert empty == []
    tr = catalogs.translations("es")
    for m in template:
        if m.id and not isinstance(m.id, tuple):
            assert tr.gettext(m.id) == cat[m.id].string != ""


def test_placeholders_survive_translation():
    cat = i18n_catalogs.read_catalog("es")
    for m in cat:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        wanted = set(re.findall(r"{(\w*)}", ids[-1]))
        for s in strings:
            assert set(re.findall(r"{(\w*)}", s)) == wanted, (m.id, s)


def test_the_library_words_are_all_marked(template):
    marked = _ids(template)
    assert set(DEFAULT_WORDS.values()) | set(LEVEL_NAMES) | set(VERDICT_NAMES) <= marked
    assert ("{n} run", "{n} runs") in marked


def test_the_specifications_vocabulary():
    tr = catalogs.translations("es")
    assert [tr.gettext(n) for n in LEVEL_NAMES] == ["Bueno", "Regular", "Mejorable"]
    assert [tr.gettext(n) for n in VERDICT_NAMES] == ["Eficiente", "Aceptable", "Mejorable"]
    assert tr.gettext("Controlled tests") == "Pruebas controladas"
    assert tr.gettext("Comparative report") == "Reporte comparativo"
    assert tr.gettext("Comparative table") == "Tabla comparativa"
    assert [tr.ngettext("{n} run", "{n} runs", n).format(n=n) for n in (1, 2, 0)] == [
        "1 ejecución",
        "2 ejecuciones",
        "0 ejecuciones",
    ]
    assert tr.ngettext("{n} evaluation", "{n} evaluations", 3).format(n=3) == "3 evaluaciones"


def test_catalogs_compile_in_memory_once_per_process():
    assert catalogs.translations("es") is catalogs.translations("es")
    assert catalogs.translations("en").gettext("Good") == "Good"
    assert catalogs.translations("es").gettext("a text nobody marked") == "a text nobody marked"
    with pytest.raises(InputError, match="no translation for language 'fr'"):
        catalogs.translations("fr")


def test_no_compiled_catalog_is_tracked():
    tracked = subprocess.run(
        ["git", "ls-files", "*.mo", "*.pot"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked == []


def test_the_update_command_reports_up_to_date_catalogs():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "i18n_catalogs.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_the_update_command_adds_new_texts_and_drops_stale_ones(tmp_path, template):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    locales = tmp_path / "locales"
    (locales / "es" / "LC_MESSAGES").mkdir(parents=True)
    old = Catalog(locale="es")
    old.add("Good", "Bueno")
    old.add("A text no code uses", "Un texto")
    with open(locales / "es" / "LC_MESSAGES" / "messages.po", "wb") as fh:
        from babel.messages.pofile import write_po

        write_po(fh, old)
    text = i18n_catalogs.updated("es", template, locales)
    new = read_po(__import__("io").BytesIO(text), locale="es")
    assert new["Good"].string == "Bueno"
    assert "A text no code uses" not in _ids(new) and not new.obsolete
    assert new["Summary"].string == "" and not new["Summary"].fuzzy


def test_a_missing_catalog_is_a_clear_error_and_english_needs_none(tmp_path):
    with pytest.raises(InputError, match="the 'es' catalog is missing"):
        catalogs.translations("es", directory=tmp_path)
    assert catalogs.translations("en", directory=tmp_path).gettext("Good") == "Good"


def test_a_fuzzy_translation_is_never_shown(tmp_path):
    folder = tmp_path / "es" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        '#, fuzzy\nmsgid "Good"\nmsgstr "Guessed"\n\nmsgid "Fair"\nmsgstr "Regular"\n',
        encoding="utf-8",
    )
    tr = catalogs.translations("es", directory=tmp_path)
    assert (tr.gettext("Good"), tr.gettext("Fair")) == ("Good", "Regular")


def test_every_module_that_marks_texts_is_read_by_the_catalog_tool():
    """A module whose ``N_()``/``_()`` texts the tool does not read loses them from both
    catalogs on the next update (moving the comparison's columns to ``stats/columns.py`` took
    their Spanish away): every library and app module that marks a text is in its list."""
    root = Path(__file__).resolve().parents[2]
    read = {p.resolve() for p in i18n_catalogs.source_files(root)}
    marks = re.compile(r"(?<![\w.])(N_|_|ngettext|pgettext)\(\s*[\"']")
    missed = sorted(
        str(p.relative_to(root))
        for folder in ("metrics_core", "ui", "pages")
        for p in (root / folder).rglob("*.py")
        if "__pycache__" not in p.parts
        and p.resolve() not in read
        and marks.search(p.read_text(encoding="utf-8"))
    )
    assert missed == [], missed
