"""One validation layer: the checks every module applies to what a user hands it.

Readers (:mod:`metrics_core.io`), detection, calibration, dynamic K and hashing validate
through these functions, so a rule is written once and its message reads the same
everywhere:

* :func:`parse_number` / :func:`number_mask` -- numbers as trec_eval reads them (ASCII
  decimal digits, optional sign, fraction and exponent; no ``1_000``, no hexadecimal, no
  non-ASCII digits);
* :func:`check_binary` -- the one input check of every binary-gate metric (labels and
  scores, or probabilities in [0, 1]), built from the two below;
* :func:`finite_scores` -- finite float scores;
* :func:`binary_labels` -- 0/1 labels (booleans, 0/1 numbers, or yes/no, true/false,
  t/f, y/n in text columns, whatever pandas' string dtype);
* :func:`check_choice`, :func:`check_lengths`, :func:`check_int`, :func:`check_float` --
  choices, equal lengths and bounded options;
* :data:`ONE_CLASS_RULES` / :func:`one_class_value` -- the one-class rule: with no
  positives or no negatives AUROC and AUPRC are undefined; rule ``"nan"`` returns NaN
  (callers warn), rule ``"audit"`` returns AUROC 0.5 and AUPRC = the positive rate;
* :data:`LIMITS` -- the documented bounds of the options that size memory.

Positions in messages are 1-based. Every problem is an :class:`InputError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np

from metrics_core.errors import N_, InputError, Phrase, prefixed  # N_: the marker of catalog texts

#: Input formats the readers take (``format=`` of :func:`metrics_core.io.read_run`, the command
#: line's ``--qrels-format`` / ``--run-format``); "auto" recognises the file.
INPUT_FORMATS = ("auto", "trec", "msmarco", "csv", "tsv", "parquet", "json", "jsonl")

#: Bounds of the options that size memory or work (README "Limits").
LIMITS = {
    "bins": 10_000,  # calibration bins
    "resamples": 100_000,  # bootstrap resamples
    "permutations": 1_000_000,  # sign flips of the permutation test
    "cutoff": 10_000_000,  # a rank cutoff or depth (-M, --topk, -k)
    "radius": 65_536,  # Hamming radius
}

#: trec_eval's numbers (C ``atof`` on a whole field, finite, ASCII only).
NUMBER_PATTERN = r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))"
_NUMBER = re.compile(NUMBER_PATTERN, re.ASCII)

TRUE_WORDS = ("1", "true", "yes", "t", "y")
FALSE_WORDS = ("0", "false", "no", "f", "n")

#: The one-class rule's names: "nan" (undefined, NaN) or "audit" (0.5 / positive rate).
ONE_CLASS_RULES = ("nan", "audit")

Locate = Callable[[int], dict]


PLURAL_WORDS = (
    N_("scores"),
    N_("labels"),
    N_("probabilities"),
)  # what plural() writes, for the catalogs


def _at(i: int) -> dict:
    return {"problem_prefix": Phrase(N_("position {position}: "), {"position": i + 1})}


def raise_at(
    problem: Phrase, i: int, locate: Locate | None, source: str | None, hint: str | None = None
):
    """Raise ``problem`` at 0-based position ``i``: ``locate(i)`` gives the fields (``line``,
    ``source``) and a ``problem_prefix`` Phrase ("row 3: "; default "position i+1: ")."""
    where = (locate or _at)(i)
    prefix = where.pop("problem_prefix", "")
    raise InputError(
        prefixed(prefix, problem) if prefix else problem,
        source=where.pop("source", source),
        hint=hint,
        **where,
    )


def _valued(template: str, what: str, value) -> Phrase:
    return Phrase(template, {"what": what, "value": value})


def show(value) -> str:
    """A value as the user wrote it: numpy scalars unwrapped, strings quoted.

    >>> show(np.float64("nan")), show("x"), show(np.int64(3))
    ('nan', "'x'", '3')
    """
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    return repr(value) if isinstance(value, str) else str(value)


# ----------------------------------------------------------------------------------
# numbers


def parse_number(text: str) -> float | None:
    """The float of ``text`` when it is a trec_eval number, else None.

    >>> parse_number("3.5"), parse_number(" -1e3 "), parse_number("1_000"), parse_number("١٢")
    (3.5, -1000.0, None, None)
    """
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    return float(text)


def number_mask(texts) -> np.ndarray:
    """For a sequence of strings, which are trec_eval numbers (vectorised over pandas)."""
    import pandas as pd

    s = pd.Series(texts, dtype=object).map(str).str.strip()  # None -> "None": not a number
    return s.str.fullmatch(NUMBER_PATTERN).fillna(False).to_numpy(dtype=bool) & s.map(
        str.isascii
    ).to_numpy(dtype=bool)


def to_numbers(
    values,
    *,
    what: str,
    source: str | None = None,
    locate: Locate | None = None,
    allow_nan: bool = False,
    hint: str | None = None,
) -> np.ndarray:
    """A column (pandas Series, array or list) as float64, refusing anything that is not a
    number (text is parsed as trec_eval parses it) and, unless ``allow_nan``, NaN/inf."""
    import pandas as pd

    series = (
        values
        if isinstance(values, pd.Series)
        else pd.Series(list(values) if not isinstance(values, np.ndarray) else values)
    )
    if pd.api.types.is_bool_dtype(series):
        num = series.to_numpy(dtype=np.float64)
        ok = np.ones(len(series), dtype=bool)
    elif pd.api.types.is_numeric_dtype(series):
        num = series.to_numpy(dtype=np.float64, na_value=np.nan)
        ok = np.ones(len(series), dtype=bool)
    elif pd.api.types.infer_dtype(series, skipna=False) == "string":
        # all text (a CSV column): pandas' C parser, which refuses what trec_eval refuses
        # (1_000, hexadecimal, non-ASCII digits); only the rows it leaves NaN are looked at
        # again, to tell a spelled NaN/inf from a word
        num = pd.to_numeric(series.astype(object), errors="coerce").to_numpy(dtype=np.float64)
        ok = ~np.isnan(num)
        if not ok.all():
            idx = np.flatnonzero(~ok)
            ok[idx] = number_mask(series.iloc[idx].to_numpy(dtype=object))
    else:
        obj = series.astype(object)
        is_text = obj.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
        is_num = obj.map(
            lambda v: (
                isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            )
        ).to_numpy(dtype=bool)
        ok = is_num.copy()
        num = np.full(len(obj), np.nan)
        if is_num.any():
            num[is_num] = np.asarray(obj[is_num].tolist(), dtype=np.float64)
        if is_text.any():
            texts = obj[is_text]
            good = number_mask(texts.to_numpy())
            vals = np.full(len(texts), np.nan)
            if good.any():
                vals[good] = texts[good].astype(str).str.strip().astype(float).to_numpy()
            idx = np.flatnonzero(is_text)
            num[idx] = vals
            ok[idx] = good
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise_at(
            _valued(N_("{what} {value} is not a number"), what, show(series.iloc[i])),
            i,
            locate,
            source,
            hint or N_("Write numbers with ASCII digits, e.g. 3, 0.25 or 1e-3"),
        )
    if not allow_nan:
        bad = ~np.isfinite(num)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise_at(
                _valued(N_("{what} {value} is not a finite number"), what, show(series.iloc[i])),
                i,
                locate,
                source,
                hint or N_("Remove or fix NaN/inf values"),
            )
    return num


def plural(word: str) -> str:
    """``score`` -> ``scores`` (for messages); a :class:`Phrase` gives a Phrase (translated
    when the plural is in :data:`PLURAL_WORDS`).
    >>> plural("probability"), plural(Phrase(N_("score"))).template
    ('probabilities', 'scores')
    """
    if isinstance(word, Phrase):
        return Phrase(plural(str(word)))
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def finite_scores(
    values,
    *,
    what: str = Phrase(N_("score")),
    source: str | None = None,
    locate: Locate | None = None,
    hint: str | None = None,
) -> np.ndarray:
    """One-dimensional finite float64 scores (numeric arrays; float32 widened exactly).

    >>> finite_scores([1, 0.5]).tolist()
    [1.0, 0.5]
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(
            N_("{what} must be one-dimensional"), source=source, params={"what": plural(what)}
        )
    if arr.dtype.kind not in "biuf":
        raise InputError(
            N_("{what} must be numbers, got values of type {dtype}"),
            source=source,
            params={"what": plural(what), "dtype": str(arr.dtype)},
        )
    scores = arr.astype(np.float64, copy=False)
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise_at(
            _valued(N_("{what} {value} is not a finite number"), what, show(scores[i])),
            i,
            locate,
            source,
            hint or N_("Remove or fix NaN/inf scores"),
        )
    return scores


def binary_labels(
    values,
    *,
    what: str = Phrase(N_("label")),
    source: str | None = None,
    locate: Locate | None = None,
    dtype=np.int8,
) -> np.ndarray:
    """0/1 labels from booleans, 0/1 numbers, or yes/no and true/false words in text.

    Text is matched case-insensitively after stripping, in object columns and in
    pandas' string dtypes alike.

    >>> binary_labels([True, False]).tolist(), binary_labels(["yes", "No", "1"]).tolist()
    ([1, 0], [1, 0, 1])
    """
    import pandas as pd

    hint = N_("Labels must be 0/1: 1 = positive, 0 = negative (yes/no, true/false accepted)")
    series = (
        values
        if isinstance(values, pd.Series)
        else pd.Series(values if isinstance(values, np.ndarray) else list(values))
    )
    if series.ndim != 1:
        whats = plural(what) if not str(what).endswith("y") else str(what) + "s"  # the words of old
        raise InputError(
            N_("{what} must be one-dimensional"), source=source, params={"what": whats}
        )
    if pd.api.types.is_bool_dtype(series) and not series.isna().any():
        return series.to_numpy(dtype=bool).astype(dtype)
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        num = series.to_numpy(dtype=np.float64, na_value=np.nan)
    elif pd.api.types.infer_dtype(series, skipna=False) == "string":
        text = series.astype(object).str.strip().str.lower()
        num = np.where(
            text.isin(TRUE_WORDS),
            1.0,
            np.where(
                text.isin(FALSE_WORDS),
                0.0,
                pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64),
            ),
        )
    else:
        obj = series.astype(object)

        def one(v):
            if isinstance(v, (bool, np.bool_)):
                return float(v)
            if isinstance(v, (int, float, np.integer, np.floating)):
                return float(v)
            if isinstance(v, str):
                t = v.strip().lower()
                if t in TRUE_WORDS:
                    return 1.0
                if t in FALSE_WORDS:
                    return 0.0
                n = parse_number(t)
                return np.nan if n is None else n
            return np.nan

        num = np.fromiter((one(v) for v in obj), dtype=np.float64, count=len(obj))
    bad = ~((num == 0) | (num == 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise_at(
            _valued(N_("{what} {value} is not 0 or 1"), what, show(series.iloc[i])),
            i,
            locate,
            source,
            hint,
        )
    return num.astype(dtype)


def check_binary(
    y_true,
    y_score,
    *,
    what: str = Phrase(N_("score")),
    probabilities: bool = False,
    label_what: str = Phrase(N_("label")),
    source: str | None = None,
    locate: Locate | None = None,
    label_dtype=np.int8,
):
    """The one input check of the binary-gate metrics (detection, calibration, dynamic K).

    Validate first, compute after: every gate metric calls this once and then works on
    the arrays it returns. Steps: both one-dimensional, of equal length, not empty;
    scores finite numbers (:func:`finite_scores`; float32 widened exactly); labels 0/1
    (:func:`binary_labels`: booleans, 0/1 numbers, yes/no words); with
    ``probabilities=True`` every score in [0, 1] (nothing is squashed through a sigmoid
    silently).

    Returns
    -------
    labels : ndarray of ``label_dtype`` (0/1)
    scores : ndarray of float64

    Examples
    --------
    >>> y, s = check_binary(["yes", "no"], [0.25, 1])
    >>> y.tolist(), s.tolist()
    ([1, 0], [0.25, 1.0])
    >>> check_binary([1, 0], [0.5, 1.5], what="probability", probabilities=True)
    Traceback (most recent call last):
    ...
    metrics_core.errors.InputError: position 2: probability 1.5 is outside [0, 1]. Probabilities must be finite numbers in [0, 1]; values not in [0, 1] (e.g. logits) must be converted by you (e.g. a sigmoid), so the choice is explicit
    """
    y_true, y_score = np.asarray(y_true), np.asarray(y_score)
    if y_true.ndim != 1 or y_score.ndim != 1:
        raise InputError(
            N_("{labels} and {scores} must be one-dimensional"),
            source=source,
            params={"labels": plural(label_what), "scores": plural(what)},
        )
    check_lengths(
        source=source,
        hint=Phrase(N_("Give one {label} per {score}"), {"label": label_what, "score": what}),
        **{plural(label_what).replace(" ", "_"): y_true, plural(what): y_score},
    )
    if y_true.shape[0] == 0:
        raise InputError(N_("no {what} given"), source=source, params={"what": plural(what)})
    hint = None
    if probabilities:
        hint = N_(
            "Probabilities must be finite numbers in [0, 1]; values not in [0, 1] (e.g. logits) "
            "must be converted by you (e.g. a sigmoid), so the choice is explicit"
        )
    scores = finite_scores(y_score, what=what, source=source, locate=locate, hint=hint)
    labels = binary_labels(y_true, what=label_what, source=source, locate=locate, dtype=label_dtype)
    if probabilities:
        bad = (scores < 0) | (scores > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise_at(
                _valued(N_("{what} {value} is outside [0, 1]"), what, show(scores[i])),
                i,
                locate,
                source,
                hint,
            )
    return labels, scores


def check_choice(value, choices: Sequence, what: str, source: str | None = None):
    """``value`` when it is one of ``choices``, else an :class:`InputError` listing them."""
    try:
        ok = value in choices
    except TypeError:
        ok = False
    if not ok:
        raise InputError(
            N_("unknown {what} {value}"),
            source=source,
            hint=N_("Accepted: {choices}"),
            params={
                "what": what,
                "value": show(value),
                "choices": ", ".join(str(c) for c in choices),
            },
        )
    return value


def check_lengths(source: str | None = None, hint: str | None = None, **arrays) -> int:
    """The common length of ``arrays`` (keyword = name), or an error naming them.

    >>> check_lengths(labels=[1, 0], scores=[0.1, 0.2])
    2
    """
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        parts = [
            Phrase(
                N_("{count} {name}"), {"count": n, "name": Phrase(k) if k in PLURAL_WORDS else k}
            )
            for k, n in lengths.items()
        ]
        problem = parts[0]
        for part in parts[1:]:
            problem = Phrase(N_("{first} but {second}"), {"first": problem, "second": part})
        raise InputError(problem, source=source, hint=hint or N_("Give one value of each per row"))
    return next(iter(lengths.values()), 0)


def check_int(value, what: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number within [minimum, maximum] (bools and floats with a fraction refused).

    >>> check_int(3, "bins", minimum=1)
    3
    """
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise InputError(
            _valued(N_("{what} must be a whole number, got {value}"), what, show(value))
        )
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?[0-9]+", text, re.ASCII):
            raise InputError(
                _valued(N_("{what} must be a whole number, got {value}"), what, repr(value))
            )
        value = int(text)
    try:
        as_int = int(value)
        ok = as_int == value
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InputError(
            _valued(N_("{what} must be a whole number, got {value}"), what, show(value))
        )
    if minimum is not None and as_int < minimum:
        raise InputError(
            N_("{what} must be at least {minimum}, got {value}"),
            params={"what": what, "minimum": minimum, "value": as_int},
        )
    if maximum is not None and as_int > maximum:
        raise InputError(
            N_("{what} must be at most {maximum}, got {value}"),
            hint=N_("See the Limits section of the README"),
            params={"what": what, "maximum": f"{maximum:,}", "value": f"{as_int:,}"},
        )
    return as_int


def check_float(
    value,
    what: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
) -> float:
    """A finite number within its bounds (NaN and infinities refused).

    >>> check_float("0.5", "tau", minimum=0, maximum=1)
    0.5
    """
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise InputError(_valued(N_("{what} must be a number, got {value}"), what, show(value)))
    if isinstance(value, str):
        number = parse_number(value)
        if number is None:
            raise InputError(_valued(N_("{what} must be a number, got {value}"), what, repr(value)))
        value = number
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(
            _valued(N_("{what} must be a number, got {value}"), what, show(value))
        ) from None
    if not math.isfinite(f):
        raise InputError(
            _valued(N_("{what} must be a finite number, got {value}"), what, show(value))
        )
    if minimum is not None and (f < minimum or (open_low and f == minimum)):
        raise InputError(
            N_("{what} must be above {bound}, got {value}")
            if open_low
            else N_("{what} must be at least {bound}, got {value}"),
            params={"what": what, "bound": f"{minimum:g}", "value": f"{f:g}"},
        )
    if maximum is not None and (f > maximum or (open_high and f == maximum)):
        raise InputError(
            N_("{what} must be below {bound}, got {value}")
            if open_high
            else N_("{what} must be at most {bound}, got {value}"),
            params={"what": what, "bound": f"{maximum:g}", "value": f"{f:g}"},
        )
    return f


def as_fraction(value, what: str = Phrase(N_("target rate"))) -> Fraction:
    """A rate as the exact fraction of its decimal spelling.

    A float is read as the shortest decimal that prints as it (``repr``): 0.07 is 7/100
    exactly, not the binary 0.0700000000000000066...; so floor(0.29 * 100) is 29, where
    float arithmetic gives 28.999999999999996 -> 28.

    >>> as_fraction(0.07), as_fraction("0.29")
    (Fraction(7, 100), Fraction(29, 100))
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (bool, np.bool_)):
        raise InputError(_valued(N_("{what} {value} is not a number"), what, show(value)))
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InputError(_valued(N_("{what} {value} is not a finite number"), what, str(value)))
        return Fraction(value)
    if isinstance(value, str):
        if parse_number(value) is None:
            raise InputError(_valued(N_("{what} {value} is not a number"), what, repr(value)))
        try:
            return Fraction(Decimal(value.strip()))
        except (InvalidOperation, ValueError):
            raise InputError(
                _valued(N_("{what} {value} is not a number"), what, repr(value))
            ) from None
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InputError(_valued(N_("{what} {value} is not a number"), what, show(value))) from None
    if not math.isfinite(f):
        raise InputError(_valued(N_("{what} {value} is not a finite number"), what, show(value)))
    return Fraction(Decimal(repr(f)))


# ----------------------------------------------------------------------------------
# the one-class rule


def check_one_class_rule(rule: str) -> str:
    """``rule`` when it names a one-class rule (see :data:`ONE_CLASS_RULES`)."""
    return check_choice(rule, ONE_CLASS_RULES, Phrase(N_("one-class (single_class) rule")))


def one_class(n_pos: int, n_neg: int) -> bool:
    """Whether only one class is present (no positives or no negatives)."""
    return n_pos == 0 or n_neg == 0


def one_class_value(metric: str, n_pos: int, n_neg: int, rule: str) -> float:
    """AUROC / AUPRC when one class only is present, under ``rule``.

    "nan": undefined (NaN). "audit" (the audit rule): AUROC 0.5 (a constant
    ranking), AUPRC the positive rate. Other metrics are NaN under both rules.

    >>> one_class_value("auroc", 3, 0, "audit"), one_class_value("auprc", 0, 4, "audit")
    (0.5, 0.0)
    """
    if rule == "audit" and metric == "auroc":
        return 0.5
    if rule == "audit" and metric == "auprc":
        return n_pos / (n_pos + n_neg) if n_pos + n_neg else math.nan
    return math.nan


#: The one-class rule in plain words: rule -> (name, one-sentence explanation), in English
#: (the catalogs' msgids: show them through ``translations(lang).gettext``).
#: ONE_CLASS_TITLE names the choice itself.
ONE_CLASS_TITLE = N_("When the labels hold one class only")
ONE_CLASS_WORDS = {
    "nan": (
        N_("Leave undefined"),
        N_(
            "With no positive or no negative labels, AUROC and AUPRC cannot be computed and show "
            "as a dash."
        ),
    ),
    "audit": (
        N_("Audit rule"),
        N_(
            "With no positive or no negative labels, AUROC counts as 0.5 (a score that cannot "
            "separate) and AUPRC as the share of positive labels."
        ),
    ),
}


def one_class_words(rule: str, gettext: Callable[[str], str] | None = None) -> tuple[str, str]:
    """The plain name and the one-sentence explanation of a one-class rule
    (:data:`ONE_CLASS_RULES`, :data:`ONE_CLASS_WORDS`), in English or through ``gettext``
    (e.g. ``metrics_core.report.catalogs.translations("es").gettext``).

    Raises
    ------
    InputError
        An unknown rule (the hint lists them).

    Examples
    --------
    >>> one_class_words("audit")[0]
    'Audit rule'
    >>> from metrics_core.report.catalogs import translations
    >>> one_class_words("nan", translations("es").gettext)[0]
    'Dejar sin definir'
    """
    rule = check_one_class_rule(rule)
    tr = gettext or (lambda text: text)
    name, sentence = ONE_CLASS_WORDS[rule]
    return tr(name), tr(sentence)
