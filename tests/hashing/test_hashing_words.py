"""The words of a hash-code evaluation's summary table (its measure descriptions and
notes) in English and through a translation (Spanish catalogs): the page passes ``_``."""

from __future__ import annotations

import numpy as np
import pytest

from metrics_core.hashing.tables import TIE_RULE_NAMES, hashing_settings, hashing_tables
from metrics_core.report.catalogs import translations

ES = translations("es").gettext


def _result(ties="expected", topk=None):
    # the shape evaluate_hashing returns (only what the tables read)
    return {
        "map": 0.5,
        "map_band": (0.4, 0.6),
        "ties": ties,
        "topk": topk,
        "precision_at_k": {1: 1.0, 5: 0.4},
        "radius": 2,
        "precision_radius": 0.3,
        "recall_radius": 0.7,
        "ap": [0.5, 0.5],
        "pr_by_radius": {"radius": [0, 1], "precision": [1.0, 0.5], "recall": [0.2, 0.4]},
        "per_class_map": {},
        "n_queries": 2,
        "n_db": 10,
        "bits": 16,
        "zero_relevant_queries": 0,
    }


@pytest.mark.parametrize("rule", list(TIE_RULE_NAMES))
def test_summary_words_in_english_and_spanish(rule):
    en = hashing_tables(_result(rule, topk=5))["summary"]
    es = hashing_tables(_result(rule, topk=5), gettext=ES)["summary"]
    assert en["measure"].tolist() == [
        "mAP@5",
        "mAP@5, relevant items last among ties",
        "mAP@5, relevant items first among ties",
        "P@1",
        "P@5",
        "Precision within Hamming radius 2",
        "Recall within Hamming radius 2",
    ]
    assert es["measure"].tolist() == [
        "mAP@5",
        "mAP@5, relevantes al final entre los empates",
        "mAP@5, relevantes al principio entre los empates",
        "P@1",
        "P@5",
        "Precisión dentro del radio de Hamming 2",
        "Exhaustividad dentro del radio de Hamming 2",
    ]
    assert en["note"][0] == f"ties: {TIE_RULE_NAMES[rule]}"
    assert (
        es["note"][0] == f"empates: {ES(TIE_RULE_NAMES[rule])}"
        and ES(TIE_RULE_NAMES[rule]) != TIE_RULE_NAMES[rule]
    )
    assert es["note"].tolist()[1:3] == [
        "el mínimo que da cualquier orden de los empates",
        "el máximo que da cualquier orden de los empates",
    ]
    # numbers and column names never change
    assert es["value"].equals(en["value"]) and list(es.columns) == ["measure", "value", "note"]


def test_settings_word_in_spanish():
    assert hashing_settings(_result())["topk"] == "whole ranking"
    assert hashing_settings(_result(), gettext=ES, source="x")["topk"] == "ranking completo"
    assert hashing_settings(_result(topk=5), gettext=ES)["topk"] == 5


def test_precision_within_a_radius_follows_one_rule_in_every_table():
    """Precision within a radius (radius_precision): where no query has a code within it, the
    summary and the radius table both leave it undefined (NaN: "–" on screen, an empty CSV
    cell) with the same note; where some have one, both give the mean counting the others 0."""
    from metrics_core.hashing import evaluate_hashing
    from metrics_core.hashing.tables import radius_note

    far = evaluate_hashing(
        np.zeros((4, 8)), np.ones((6, 8)) * [1, 1, 1, 1, 1, 1, 0, 0], [0, 1, 0, 1], [0, 1] * 3
    )
    tables = hashing_tables(far, gettext=ES)
    summary, by_radius = tables["summary"], tables["by_radius"]
    row = summary[summary["measure"] == "Precisión dentro del radio de Hamming 2"].iloc[0]
    assert np.isnan(row["value"]) and np.isnan(by_radius["precision"][2])
    assert row["note"] == radius_note(4, 4, ES) and row["note"].startswith("ninguna consulta")
    assert np.isnan(by_radius["precision"][:6]).all() and by_radius["precision"][6] == 0.5
    assert (by_radius["recall"][:6] == 0).all()  # recall has no such question: 0 of R found
    # the first query has both codes at distance 0; the three others have none within 7
    queries = np.vstack([np.zeros((1, 8)), np.ones((3, 8))])
    near = evaluate_hashing(queries, np.zeros((2, 8)), [0, 1, 0, 1], [0, 1])
    summary, by_radius = (hashing_tables(near)[t] for t in ("summary", "by_radius"))
    row = summary[summary["measure"] == "Precision within Hamming radius 2"].iloc[0]
    assert row["value"] == by_radius["precision"][2] == near["precision_radius"] == 0.5 / 4
    assert row["note"] == "3 of 4 queries have no code within the radius (counted as 0)"
    assert by_radius["precision"][7] == 0.5 / 4 and by_radius["precision"][8] == 0.5
