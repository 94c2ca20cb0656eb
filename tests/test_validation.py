"""metrics_core.validation: the one place the input rules live."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from metrics_core import calibration, detection, dynamic_k
from metrics_core.errors import InputError
from metrics_core.validation import (
    ONE_CLASS_RULES,
    as_fraction,
    binary_labels,
    check_binary,
    check_choice,
    check_float,
    check_int,
    check_lengths,
    finite_scores,
    number_mask,
    one_class_value,
    parse_number,
    to_numbers,
)


@pytest.mark.parametrize(
    "text,value",
    [
        ("3", 3.0),
        ("-2.5", -2.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("+1E-2", 0.01),
        (" 7 ", 7.0),
    ],
)
def test_numbers_trec_eval_accepts(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text", ["1_000", "\u0661", "\uff11", "0x10", "1e", "", "e5", "1.2.3", "--1", "1,5"]
)
def test_numbers_trec_eval_rejects(text):
    assert parse_number(text) is None
    assert not number_mask([text])[0]


def test_nan_and_inf_are_numbers_but_not_finite():
    assert math.isnan(parse_number("nan")) and parse_number("-Infinity") == -math.inf
    with pytest.raises(InputError, match="not a finite number"):
        to_numbers(pd.Series(["1", "nan"], dtype=object), what="score")
    assert np.isnan(to_numbers(["1", "nan"], what="score", allow_nan=True)[1])


def test_to_numbers_names_the_row_through_locate():
    with pytest.raises(InputError, match=r"f.csv, line 3: score '1_0' is not a number"):
        to_numbers(
            pd.Series(["1", "1_0"], dtype="string"),
            what="score",
            source="f.csv",
            locate=lambda i: {"line": i + 2},
        )


@pytest.mark.parametrize("dtype", [object, "string", "str"])
def test_binary_labels_words_in_every_string_dtype(dtype):
    s = pd.Series(["yes", "NO", " true ", "False", "1", "0", "t", "n"], dtype=dtype)
    assert binary_labels(s).tolist() == [1, 0, 1, 0, 1, 0, 1, 0]


@pytest.mark.parametrize("values", [[0, 2], [0.5, 1], ["maybe", "yes"], [None, 1], [np.nan, 0]])
def test_binary_labels_reject(values):
    with pytest.raises(InputError, match="not 0 or 1"):
        binary_labels(values)


def test_binary_labels_bools_and_numbers():
    assert binary_labels(np.array([True, False])).tolist() == [1, 0]
    assert binary_labels(np.array([1.0, 0.0])).dtype == np.int8


def test_finite_scores():
    assert finite_scores(np.array([1, 2], dtype=np.float32)).dtype == np.float64
    with pytest.raises(InputError, match="position 2: score inf is not a finite number"):
        finite_scores([1.0, np.inf])
    with pytest.raises(InputError, match="must be numbers"):
        finite_scores(["a"])


def test_choices_lengths_ints_floats():
    assert check_choice("a", ("a", "b"), "rule") == "a"
    with pytest.raises(InputError, match="unknown rule 'c'. Accepted: a, b"):
        check_choice("c", ("a", "b"), "rule")
    with pytest.raises(InputError, match="2 labels but 3 scores"):
        check_lengths(labels=[1, 0], scores=[1, 2, 3])
    assert check_int("12", "bins", minimum=1) == 12
    for bad in ("1.5", "nan", "1e3", True, 2.5, None):
        with pytest.raises(InputError, match="whole number"):
            check_int(bad, "bins")
    with pytest.raises(InputError, match="at most 10"):
        check_int(11, "bins", maximum=10)
    for bad in ("nan", "inf", float("nan"), "x", None):
        with pytest.raises(InputError):
            check_float(bad, "tau")
    with pytest.raises(InputError, match="above 0"):
        check_float(0, "confidence", minimum=0, open_low=True)


def test_as_fraction_is_exact_and_refuses_non_numbers():
    assert as_fraction(0.29) == Fraction(29, 100)
    assert as_fraction("0.07") == Fraction(7, 100)
    for bad in ("nan", "1_0", float("inf"), True, "abc"):
        with pytest.raises(InputError):
            as_fraction(bad)


def test_one_class_rule_is_one_policy():
    assert ONE_CLASS_RULES == detection.SINGLE_CLASS_RULES
    y, s = [1, 1, 1], [0.2, 0.5, 0.9]
    for rule in ONE_CLASS_RULES:
        with pytest.warns(detection.SingleClassWarning) if rule == "nan" else _no_warning():
            auroc = detection.roc_auc_score(y, s, single_class=rule)
        expected = one_class_value("auroc", 3, 0, rule)
        assert (math.isnan(auroc) and math.isnan(expected)) or auroc == expected
        c = detection.binary_curve(y, s)
        got = detection.curve_scores(c, rule)
        want = (one_class_value("auroc", 3, 0, rule), one_class_value("auprc", 3, 0, rule))
        assert all(
            (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, want, strict=True)
        )
    with pytest.raises(InputError, match="one-class"):
        detection.roc_auc_score(y, s, single_class="both")


class _no_warning:
    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", detection.SingleClassWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_modules_share_the_validation():
    """detection, calibration and dynamic K give the same message for the same bad label."""
    msgs = []
    for call in (
        lambda: detection.roc_auc_score([0, 2], [0.1, 0.2]),
        lambda: calibration.brier_score([0, 2], [0.1, 0.2]),
        lambda: dynamic_k.prepare(["q", "q"], [0.1, 0.2], [0, 2]),
    ):
        with pytest.raises(InputError) as err:
            call()
        msgs.append(str(err.value))
    assert all("2 is not 0 or 1" in m for m in msgs), msgs
    # yes/no labels are accepted by the library as by the readers
    assert detection.roc_auc_score(["no", "yes"], [0.1, 0.9]) == 1.0


@pytest.mark.parametrize(
    "y,s,kwargs,match",
    [
        ([[1, 0]], [0.1, 0.2], {}, "labels and scores must be one-dimensional"),
        ([1, 0, 1], [0.1, 0.2], {}, "3 labels but 2 scores. Give one label per score"),
        ([], [], {}, "no scores given"),
        ([], [], {"what": "probability"}, "no probabilities given"),
        ([1, 0], [0.1, np.nan], {}, "position 2: score nan is not a finite number. Remove or fix"),
        ([1, 0], ["a", "b"], {}, "scores must be numbers"),
        ([1, 3], [0.1, 0.2], {}, "position 2: label 3 is not 0 or 1"),
        (
            [1, 0],
            [0.1, 1.2],
            {"what": "probability", "probabilities": True},
            "position 2: probability 1.2 is outside \\[0, 1\\]. Probabilities must be finite",
        ),
        (
            [1, 0],
            [np.inf, 0.5],
            {"what": "probability", "probabilities": True},
            "probability inf is not a finite",
        ),
        (
            [1, 0],
            [0.5, -0.1],
            {
                "what": "probability",
                "probabilities": True,
                "locate": lambda i: {"problem_prefix": f"row {i + 1}: "},
            },
            "row 2: probability -0.1",
        ),
    ],
)
def test_check_binary_refuses_each_problem_with_its_message(y, s, kwargs, match):
    with pytest.raises(InputError, match=match):
        check_binary(y, s, **kwargs)


def test_check_binary_is_the_check_of_every_gate_module():
    y, s = check_binary(
        np.array(["Yes", "no", "TRUE"], dtype=object), np.array([3, 2, 1], dtype=np.int32)
    )
    assert y.dtype == np.int8 and y.tolist() == [1, 0, 1] and s.dtype == np.float64
    # the same refusals reach detection, calibration and dynamic K
    for call in (
        lambda: detection.roc_auc_score([0, 2], [0.1, 0.2]),
        lambda: calibration.brier_score([0, 2], [0.1, 0.2]),
        lambda: dynamic_k.prepare(["q", "q"], [0.1, 0.2], [0, 2]),
    ):
        with pytest.raises(InputError, match="2 is not 0 or 1"):
            call()
    with pytest.raises(InputError, match="scores must be numbers"):
        detection.roc_auc_score([0, 1], ["0.1", "0.2"])
