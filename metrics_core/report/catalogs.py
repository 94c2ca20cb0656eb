"""Translation catalogs of RankLab's words (gettext ``.po`` files), read without any UI.

The catalogs live in ``metrics_core/locales/<lang>/LC_MESSAGES/messages.po``, inside the
package (installed with it as package data; one per language; English is the source
language, its ``msgid`` is the text).
No compiled ``.mo`` file is kept: a catalog is read with Babel and compiled in memory the
first time a language is asked for, then shared by every caller of the process (the
translation object holds no per-visitor state; which language a visitor sees is chosen by
the caller).

Fuzzy entries are never used (gettext would show a guessed translation); an untranslated
entry falls back to the English text.

Examples
--------
>>> translations("es").gettext("Good")
'Bueno'
>>> translations("en").gettext("Good")
'Good'
>>> translations("es").ngettext("{n} run", "{n} runs", 2).format(n=2)
'2 ejecuciones'
"""

from __future__ import annotations

import gettext
import io
from functools import cache
from pathlib import Path

from metrics_core.errors import N_, InputError  # N_: the one marker of texts for the catalogs

#: Languages with a catalog, the source language (English) first.
LANGUAGES = ("en", "es")
SOURCE_LANGUAGE = "en"
DOMAIN = "messages"


@cache
def locales_dir() -> Path:
    """The folder of the catalogs: ``locales/`` inside the ``metrics_core`` package."""
    return Path(__file__).resolve().parents[1] / "locales"


def catalog_path(lang: str, directory: Path | None = None) -> Path:
    """``<directory>/<lang>/LC_MESSAGES/messages.po``."""
    return Path(directory or locales_dir()) / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def check_language(lang: str) -> str:
    """``lang`` when a catalog exists for it, else an :class:`InputError` listing the choices.

    >>> check_language("es")
    'es'
    """
    if lang not in LANGUAGES:
        raise InputError(
            N_("no translation for language {lang!r}"),
            hint=N_("choose one of: {choices}"),
            params={"lang": lang, "choices": ", ".join(LANGUAGES)},
        )
    return lang


@cache
def _compiled(lang: str, directory: str) -> gettext.NullTranslations:
    path = catalog_path(lang, Path(directory))
    if lang == SOURCE_LANGUAGE and not path.is_file():
        return gettext.NullTranslations()
    if not path.is_file():
        raise InputError(
            N_("the {lang!r} catalog is missing"),
            source=str(path),
            hint=N_("reinstall RankLab: its package data metrics_core/locales/ holds the catalogs"),
            params={"lang": lang},
        )
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(path, "rb") as fh:
        catalog = read_po(fh, locale=lang, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def translations(lang: str, directory: Path | None = None) -> gettext.NullTranslations:
    """The compiled catalog of ``lang`` (compiled once per process and folder).

    Parameters
    ----------
    lang : str
        One of :data:`LANGUAGES`.
    directory : path, optional
        The ``locales`` folder (default :func:`locales_dir`).

    Returns
    -------
    gettext.GNUTranslations
        Use its ``gettext`` / ``ngettext``; a text without a translation comes back
        unchanged (English).
    """
    folder = locales_dir() if directory is None else Path(directory).resolve()
    return _compiled(check_language(lang), str(folder))


__all__ = [
    "LANGUAGES",
    "SOURCE_LANGUAGE",
    "DOMAIN",
    "N_",
    "locales_dir",
    "catalog_path",
    "check_language",
    "translations",
]
