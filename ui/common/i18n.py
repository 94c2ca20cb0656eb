"""The app's one translation layer: gettext catalogs, a language per visitor, a switch.

Every text a page shows goes through :func:`_` (or :func:`ngettext` for counts)::

    from ui.common.i18n import _, ngettext

    st.header(_("Comparative table"))
    st.caption(ngettext("{n} run", "{n} runs", len(runs)).format(n=len(runs)))
    st.button(_("Export"), help=_("Download the table as CSV"))

Texts defined at import time (module constants) are marked with :func:`N_` and translated
where they are shown: ``TITLE = N_("Overview")`` ... ``st.title(_(TITLE))``.

The language is chosen per visitor, in this order: ``?lang=es|en`` in the URL; the
visitor's earlier choice in this session (kept even when navigation drops the query
string, and written back to the URL); the browser's language (``st.context.locale``, then
the ``Accept-Language`` header); English. :func:`language_switch` shows the choice and
writes it to the URL, so a link keeps the language. Nothing about the choice is process
state: two visitors in two languages never see each other's choice. The compiled catalogs
(translation objects without state) are shared by the process
(:func:`metrics_core.report.catalogs.translations`).

Catalogs: ``metrics_core/locales/<lang>/LC_MESSAGES/messages.po``; ``python tools/i18n_catalogs.py``
brings them up to date after texts change.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import parse_qs

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from metrics_core.report.catalogs import LANGUAGES, N_, SOURCE_LANGUAGE, translations

#: Each language named in itself (not translated: a reader finds their own language).
LANGUAGE_NAMES = {"en": "English", "es": "Español"}
QUERY_PARAM = "lang"
#: session_state key of the visitor's explicit choice
CHOICE_KEY = "ranklab_language"
SWITCH_KEY = "ranklab_language_switch"
BROWSER_KEY = "ranklab_browser_language"

#: The specifications' terms that the frame and the comparative table use.
GLOSSARY = (
    N_("Language"),
    N_("Controlled tests"),
    N_("Comparative report"),
    N_("Comparative table"),
    N_("MRR (mean reciprocal rank)"),
)


def _context():
    return get_script_run_ctx(suppress_warning=True)


def _in_session() -> bool:
    return _context() is not None


def language_of(tag) -> str | None:
    """The supported language of a BCP 47 tag (``es-ES`` -> ``es``), else None.

    >>> language_of("es-MX"), language_of("EN"), language_of("fr-FR"), language_of(None)
    ('es', 'en', None, None)
    """
    if not tag or not isinstance(tag, str):
        return None
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in LANGUAGES else None


def accept_language(header) -> str | None:
    """The preferred supported language of an ``Accept-Language`` header (by q-value).

    >>> accept_language("fr-FR,fr;q=0.9,es;q=0.8,en;q=0.5")
    'es'
    >>> accept_language("de, *;q=0.1") is None
    True
    """
    if not header or not isinstance(header, str):
        return None
    ranked = []
    for position, part in enumerate(header.split(",")):
        tag, _sep, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _eq, value = param.strip().partition("=")
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if language_of(tag) and q > 0:
            ranked.append((-q, position, language_of(tag)))
    return min(ranked)[2] if ranked else None


def _browser_language() -> str | None:
    try:
        found = language_of(st.context.locale)
    except Exception:  # an older Streamlit, or no browser connected (AppTest)
        found = None
    if found:
        return found
    try:
        return accept_language(st.context.headers.get("Accept-Language"))
    except Exception:
        return None


def browser_language() -> str | None:
    """The visitor's browser language if supported: ``st.context.locale`` (the browser's
    ``navigator.language``), else the ``Accept-Language`` header of the first request.

    Looked up once per script run (the browser sends it with every rerun request).
    """
    ctx = _context()
    if ctx is None:
        return None
    run = id(ctx.context_info)
    cached = st.session_state.get(BROWSER_KEY)
    if cached is None or cached[0] != run:
        cached = (run, _browser_language())
        st.session_state[BROWSER_KEY] = cached
    return cached[1]


@lru_cache(maxsize=256)
def url_language(query_string: str) -> str | None:
    """The supported ``lang`` of a query string (the last one given), else None.

    >>> url_language("lang=es"), url_language("a=1&lang=EN"), url_language("lang=fr")
    ('es', 'en', None)
    """
    values = parse_qs(query_string or "").get(QUERY_PARAM)
    value = values[-1].strip().lower() if values else ""
    return value if value in LANGUAGES else None


def current_language() -> str:
    """The visitor's language: the URL's, their choice in this session, their browser's,
    else English. Outside a Streamlit session (a plain import): English."""
    ctx = _context()
    if ctx is None:
        return SOURCE_LANGUAGE
    url = url_language(ctx.query_string)
    if url:
        if st.session_state.get(CHOICE_KEY) != url:
            st.session_state[CHOICE_KEY] = url
        return url
    chosen = st.session_state.get(CHOICE_KEY)
    if chosen in LANGUAGES:
        return chosen
    return browser_language() or SOURCE_LANGUAGE


def _(text: str) -> str:
    """``text`` in the visitor's language (unchanged when it has no translation)."""
    return translations(current_language()).gettext(text)


gettext = _


def group_digits(n: int, lang: str) -> str:
    """A count with its thousands grouped the way ``lang`` reads them: English with commas
    (``36,000``); Spanish with a narrow no-break space and only from five digits
    (``3600``, ``36 000``), as the Real Academia Española and the SI write them (a comma
    or a point would read as the decimal mark beside the measures' values, which keep their
    decimal point).

    >>> group_digits(36000, "en"), group_digits(3600, "es"), group_digits(-1234567, "es").split()
    ('36,000', '3600', ['-1', '234', '567'])
    """
    n = int(n)
    if lang != "es":
        return f"{n:,}"
    if abs(n) < 10_000:
        return str(n)
    return f"{n:,}".replace(",", "\u202f")


def plotly_grouping() -> str:
    """The d3-format grouping flag for counts in a chart's hover text: ``","`` in English,
    none in Spanish (where a comma is the decimal mark; the counts there are small)."""
    return "" if current_language() == "es" else ","


def count_format() -> str:
    """A table column's number format for counts (``st.column_config.NumberColumn``): the
    browser's grouping in English; none in Spanish, where the browser would group with a
    point, which beside the measures' decimal points reads as a decimal mark."""
    return "%d" if current_language() == "es" else "localized"


def percent_format() -> str:
    """A table column's format for a percentage given in percent units (0-100), with a
    decimal point in both languages (the browser's ``"percent"`` would write "64,92 %" in
    Spanish beside measures written 0.6492); Spanish puts a space before the sign."""
    return "%.2f %%" if current_language() == "es" else "%.2f%%"


def count(n: int) -> str:
    """``n`` with its digits grouped in the visitor's language (:func:`group_digits`)."""
    return group_digits(n, current_language())


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n`` in the visitor's language (format ``{n}`` after)."""
    return translations(current_language()).ngettext(singular, plural, n)


def thesis_words(rows: str = "runs") -> tuple[dict, tuple, tuple]:
    """``(words, level names, verdict names)`` of the comparative table in the visitor's
    language, for :mod:`metrics_core.report.thesis_export` and its ``Grading``
    (``rows="evaluations"`` when the rows are saved evaluations)."""
    from metrics_core.report.thesis_export import localized_words

    return localized_words(current_language(), rows)


def _switched() -> None:
    choice = st.session_state.get(SWITCH_KEY)
    if choice in LANGUAGES:
        st.session_state[CHOICE_KEY] = choice
        st.query_params[QUERY_PARAM] = choice


def language_switch(container=None) -> str:
    """Show the language switch (in ``container``, default the sidebar) and keep the
    visitor's choice in the URL (``?lang=``). Call it once per run, in the shared frame.

    Returns the language of this run.
    """
    lang = current_language()
    if (
        _in_session()
        and st.session_state.get(CHOICE_KEY) in LANGUAGES
        and url_language(_context().query_string) != lang
    ):
        st.query_params[QUERY_PARAM] = lang  # navigation dropped it: the URL keeps the choice
    st.session_state[SWITCH_KEY] = lang
    where = container if container is not None else st.sidebar
    where.radio(
        _("Language"),
        list(LANGUAGES),
        format_func=LANGUAGE_NAMES.__getitem__,
        key=SWITCH_KEY,
        on_change=_switched,
        horizontal=True,
    )
    return lang


__all__ = [
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "QUERY_PARAM",
    "GLOSSARY",
    "N_",
    "_",
    "gettext",
    "ngettext",
    "current_language",
    "browser_language",
    "url_language",
    "accept_language",
    "language_of",
    "language_switch",
    "thesis_words",
    "count",
    "group_digits",
    "plotly_grouping",
    "count_format",
    "percent_format",
]
