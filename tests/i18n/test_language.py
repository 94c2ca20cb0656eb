"""The visitor's language: URL first, then the session's choice, the browser, English;
the switch writes ``?lang=`` and each session keeps its own choice."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ui.common import i18n

TIMEOUT = 30


def _page():
    import streamlit as st

    from ui.common.i18n import _, current_language, language_switch, ngettext

    language_switch()
    st.title(_("Comparative table"))
    st.caption(ngettext("{n} run", "{n} runs", 2).format(n=2))
    st.write(current_language())


def _app(**params) -> AppTest:
    at = AppTest.from_function(_page, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _lang(at):
    value = at.query_params.get("lang")
    return value[-1] if isinstance(value, list) else value


def test_english_without_a_url_choice_or_a_browser_language():
    at = _app()
    assert not at.exception
    assert at.title[0].value == "Comparative table"
    assert at.caption[0].value == "2 runs"
    assert at.sidebar.radio[0].value == "en" and at.sidebar.radio[0].label == "Language"


def test_the_url_chooses_spanish():
    at = _app(lang="es")
    assert at.title[0].value == "Tabla comparativa"
    assert at.caption[0].value == "2 ejecuciones"
    assert at.sidebar.radio[0].label == "Idioma" and at.sidebar.radio[0].value == "es"


def test_an_unknown_url_language_falls_back():
    at = _app(lang="xx")
    assert at.title[0].value == "Comparative table"


def test_the_switch_writes_the_url_and_the_choice_survives_a_dropped_query_string():
    at = _app()
    at.sidebar.radio[0].set_value("es").run()
    assert at.title[0].value == "Tabla comparativa"
    assert _lang(at) == "es"
    at.query_params.pop("lang")  # navigating to another page drops the query string
    at.run()
    assert at.title[0].value == "Tabla comparativa"
    assert _lang(at) == "es"  # and the frame writes it back


def test_the_switch_overrides_a_url_language():
    at = _app(lang="es")
    at.sidebar.radio[0].set_value("en").run()
    assert at.title[0].value == "Comparative table" and _lang(at) == "en"


def test_two_sessions_keep_their_own_language():
    es, en = _app(lang="es"), _app()
    en.run()
    es.run()
    assert es.title[0].value == "Tabla comparativa" and en.title[0].value == "Comparative table"


def test_a_spanish_browser_gets_spanish_without_touching_the_switch(monkeypatch):
    from streamlit.runtime.context import ContextProxy

    monkeypatch.setattr(ContextProxy, "locale", property(lambda self: "es-ES"))
    at = _app()
    assert at.title[0].value == "Tabla comparativa"
    assert _lang(at) is None  # a detected language is not a choice
    at = _app(lang="en")  # the URL wins over the browser
    assert at.title[0].value == "Comparative table"


def test_the_accept_language_header_when_the_locale_is_unknown(monkeypatch):
    from streamlit.runtime.context import ContextProxy

    monkeypatch.setattr(ContextProxy, "locale", property(lambda self: None))
    monkeypatch.setattr(
        ContextProxy,
        "headers",
        property(lambda self: {"Accept-Language": "de-DE,es;q=0.8,en;q=0.5"}),
    )
    assert _app().title[0].value == "Tabla comparativa"


@pytest.mark.parametrize(
    "tag, expected", [("es", "es"), ("es-419", "es"), ("en_GB", "en"), ("pt-BR", None), ("", None)]
)
def test_language_of(tag, expected):
    assert i18n.language_of(tag) == expected


@pytest.mark.parametrize(
    "header, expected",
    [
        ("es-ES,es;q=0.9,en;q=0.8", "es"),
        ("en-US,en;q=0.9,es;q=0.8", "en"),
        ("fr;q=0.9, en;q=0.4, es;q=0.5", "es"),
        ("es;q=0, en", "en"),
        ("de", None),
        ("es;q=abc, en;q=0.1", "en"),
        (None, None),
    ],
)
def test_accept_language(header, expected):
    assert i18n.accept_language(header) == expected


def test_outside_a_session_the_layer_speaks_english():
    assert i18n.current_language() == "en"
    assert i18n._("Good") == "Good"
    assert i18n.browser_language() is None
