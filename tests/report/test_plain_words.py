"""Dynamic K's settings and results and the one-class rule in plain words, in English and in
Spanish (the gettext catalogs), for every field the library returns."""

from __future__ import annotations

import re

import pytest

from metrics_core import dynamic_k as dk
from metrics_core.errors import InputError
from metrics_core.report.catalogs import translations
from metrics_core.validation import (
    ONE_CLASS_RULES,
    ONE_CLASS_TITLE,
    ONE_CLASS_WORDS,
    one_class_words,
)

IDENTIFIER = re.compile(r"\b[a-z]+_[a-z_]+\b")  # tau is a word; k_min, avg_k are identifiers


def _scores():
    t = dk.prepare(["a", "a", "a", "b", "b"], [0.9, 0.6, 0.3, 0.4, 0.2], [1, 0, 1, 0, 0])
    return dk.dynamic_k_scores(t, **dk.DEFAULTS)


def test_every_setting_and_result_has_words():
    r = _scores()
    shown = {k for k in r if k != "params"} | set(r["params"])
    assert shown <= set(dk.FIELD_WORDS), shown - set(dk.FIELD_WORDS)
    assert set(dk.DEFAULTS) <= set(dk.FIELD_WORDS)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_words_are_plain_sentences_in_both_languages(lang):
    for field in dk.FIELD_WORDS:
        name, sentence = dk.field_words(field, translations(lang).gettext)
        assert name and sentence.endswith(".") and sentence[0].isupper()
        assert not IDENTIFIER.search(name + " " + sentence), (field, name, sentence)
    for rule in ONE_CLASS_RULES:
        name, sentence = one_class_words(rule, translations(lang).gettext)
        assert name and sentence.endswith(".") and "nan" not in (name + sentence).lower().split()


def test_spanish_is_translated_not_copied():
    es = translations("es")
    for name, sentence in [*dk.FIELD_WORDS.values(), *ONE_CLASS_WORDS.values()]:
        for text in (name, sentence):
            assert es.gettext(text) != text, text
    assert es.gettext(ONE_CLASS_TITLE) != ONE_CLASS_TITLE
    assert dk.field_words("tau", es.gettext) == (
        "Umbral de probabilidad",
        "Se elige un candidato cuando su probabilidad es al menos este valor.",
    )
    assert one_class_words("audit", es.gettext)[0] == "Regla de auditoría"
    assert dk.field_words("tau") == dk.FIELD_WORDS["tau"]  # English without a translator


def test_unknown_field_or_rule_is_a_clear_error():
    with pytest.raises(InputError, match="unknown Dynamic K field 'k_max'") as exc:
        dk.field_words("k_max")
    assert "tau" in str(exc.value)
    with pytest.raises(InputError):
        one_class_words("zero")
