"""Cached loaders of the Detection & calibration pages (their keys: :mod:`ui.detection.state`).

Uploads are parsed once per content digest; the sorted counts of a score set are computed once
per digest. Every result is kept by the app's one cache (:func:`ui.common.cache.remember`):
bounded and private to the session, so a hosted app's memory grows with its visitors' data
only while they are there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from metrics_core import calibration as cal
from metrics_core import detection as det
from metrics_core import dynamic_k as dk
from metrics_core import validation
from metrics_core.errors import InputError
from metrics_core.io.scores import read_candidates, read_scores
from metrics_core.report.catalogs import N_
from metrics_core.report.ranges import default_ranges
from ui.common import budget
from ui.common import upload as common_upload
from ui.common.cache import remember
from ui.common.i18n import count, current_language
from ui.common.i18n import gettext as _
from ui.common.state import digest, in_app
from ui.common.style import plain, say
from ui.detection.state import CANDIDATES, RANGES, SCORES

# the library's words the pages show (pages import only ui.*)
SINGLE_CLASS_RULES = det.SINGLE_CLASS_RULES
DEFAULT_FPR_TARGETS = det.DEFAULT_FPR_TARGETS
STRATEGIES = cal.STRATEGIES
CI_STATISTICS = cal.CI_STATISTICS
DYNAMIC_K_DEFAULTS = dk.DEFAULTS
ONE_CLASS_TITLE = validation.ONE_CLASS_TITLE
one_class = validation.one_class  # two counts: whether the labels have one class only
one_class_words = validation.one_class_words  # a one-class rule in words

#: Bytes per row of a score set (or candidate table) that each computation takes at its peak
#: beside its input, measured by ``bench/app_gate_needs.py`` on 200,000 and 2,000,000 rows
#: (under ``flock /work/bench.lock``): the sorted counts 19.4 a row, the bootstrap (200
#: resamples) 43.3, the per-criterion scores 95.5 at most, the calibration report 26.5, its
#: bootstrap 156, dynamic K (the table, the curve, one setting) 128 at most; rounded up. The
#: sorted counts' readings (the scores at a threshold, the table of TPR at each FPR budget, the
#: areas) take at most what the counts took.
CURVE_BYTES_PER_ROW = 24
BOOTSTRAP_BYTES_PER_ROW = 48
PER_GROUP_BYTES_PER_ROW = 100
CALIBRATION_BYTES_PER_ROW = 32
CALIBRATION_BOOTSTRAP_BYTES_PER_ROW = 160
DYNAMIC_K_BYTES_PER_ROW = 130
#: Bytes reading a table of scores or candidates takes per byte of the file (measured as
#: above, case read_scores: 14.1 a byte at most); rounded up.
READ_BYTES_PER_BYTE = 16

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_SCORES = ROOT / "sample_data" / "detection_scores.csv"
SAMPLE_CANDIDATES = ROOT / "sample_data" / "dynamic_k_candidates.csv"


def ensure_defaults() -> None:
    """The reference ranges, and the bundled scores and candidates until something is loaded."""
    if RANGES not in st.session_state:
        st.session_state[RANGES] = default_ranges()
    if SCORES not in st.session_state:
        st.session_state[SCORES] = sample_scores()
    if CANDIDATES not in st.session_state:
        st.session_state[CANDIDATES] = sample_candidates()


def sample_scores() -> dict:
    """The bundled scores and labels (:data:`SAMPLE_SCORES`), marked as the sample."""
    data = SAMPLE_SCORES.read_bytes()
    return {**load_scores(data, SAMPLE_SCORES.name, sample=True), "sample": True}


def sample_candidates() -> dict:
    """The bundled dynamic-K candidates (:data:`SAMPLE_CANDIDATES`), marked as the sample."""
    return {
        **load_candidates(SAMPLE_CANDIDATES.read_bytes(), SAMPLE_CANDIDATES.name, sample=True),
        "sample": True,
    }


def scores_summary() -> list[str]:
    """The sidebar's lines on Detection and Calibration: the scores they share."""
    data = st.session_state.get(SCORES)
    if not data:
        return [_("scores: none")]
    return [
        plain(
            _("scores: {source}, {n} rows"), source=source_label(data), n=count(len(data["y_true"]))
        ),
        _("The same scores and threshold serve Detection and Calibration."),
    ]


def candidates_summary() -> list[str]:
    """The sidebar's lines on Dynamic K: its candidates."""
    data = st.session_state.get(CANDIDATES)
    if not data:
        return [_("candidates: none")]
    return [
        plain(
            _("candidates: {source}, {n} rows"),
            source=source_label(data),
            n=count(len(data["query"])),
        )
    ]


def source_label(data: dict) -> str:
    """What the page's numbers are made of, in words: the file's name, or "Sample data
    (file)" for the bundled sample, so a visitor never takes the sample's numbers for theirs."""
    if data.get("sample"):
        return plain(_("Sample data ({name})"), name=data["source"])
    return str(data["source"])


def load_scores(
    data: bytes,
    name: str,
    score_col: str | None = None,
    label_col: str | None = None,
    *,
    sample: bool = False,
) -> dict:
    """Scores and labels of a table (cached per session inside the app, read inside the gate
    with :data:`READ_BYTES_PER_BYTE` a byte; ``sample``: the bundled sample, the app's own
    data, which reserves nothing)."""
    if in_app():
        need = 0 if sample else len(data) * READ_BYTES_PER_BYTE
        with st.spinner(_("Reading scores ...")):
            return _load_scores_cached(data, name, score_col, label_col, need)
    return _load_scores(data, name, score_col, label_col)


def load_candidates(data: bytes, name: str, *, sample: bool = False) -> dict:
    """A dynamic-K candidate table (cached per session inside the app, as :func:`load_scores`)."""
    if in_app():
        need = 0 if sample else len(data) * READ_BYTES_PER_BYTE
        with st.spinner(_("Reading candidates ...")):
            return _load_candidates_cached(data, name, need)
    return _load_candidates(data, name)


def _load_scores(
    data: bytes, name: str, score_col: str | None = None, label_col: str | None = None
) -> dict:
    t = read_scores(data, name=name, score_col=score_col, label_col=label_col)
    return {
        "digest": digest(data) + f":{t.score_col}:{t.label_col}",
        "source": t.source,
        "y_true": t.y_true,
        "y_score": t.y_score,
        "criterion": t.criterion,
        "score_col": t.score_col,
        "label_col": t.label_col,
        "columns": [str(c) for c in t.frame.columns],
    }


def _load_candidates(data: bytes, name: str) -> dict:
    t = read_candidates(data, name=name)
    return {
        "digest": digest(data),
        "source": t.source,
        "query": t.query,
        "probability": t.probability,
        "is_gold": t.is_gold,
        "criterion": t.criterion,
    }


def _load_scores_cached(
    data: bytes, name: str, score_col: str | None, label_col: str | None, need: int
) -> dict:
    return remember(
        "detection.scores",
        (digest(data), name, score_col, label_col),
        lambda: _load_scores(data, name, score_col, label_col),
        size=4,
        need=need,
    )


def _load_candidates_cached(data: bytes, name: str, need: int) -> dict:
    return remember(
        "detection.candidates",
        (digest(data), name),
        lambda: _load_candidates(data, name),
        size=4,
        need=need,
    )


def curve_of(key: str, _y_true: np.ndarray, _y_score: np.ndarray) -> det.BinaryCurve:
    """Sorted counts of a score set, once per digest (shared, read-only)."""
    return remember(
        "detection.curves",
        key,
        lambda: det.binary_curve(_y_true, _y_score),
        size=4,
        need=len(_y_score) * CURVE_BYTES_PER_ROW,
    )


def _curve_need(curve: det.BinaryCurve) -> int:
    """A reading of the sorted counts takes at most what they took (one row a threshold)."""
    return int(curve.thresholds.size) * CURVE_BYTES_PER_ROW


def curve_scores_of(key: str, curve: det.BinaryCurve, single_class: str) -> tuple:
    """AUROC and AUPRC of the sorted counts (:func:`metrics_core.detection.curve_scores`)."""
    return remember(
        "detection.curve_scores",
        (key, single_class),
        lambda: det.curve_scores(curve, single_class),
        size=8,
        need=_curve_need(curve),
    )


def tpr_table_of(key: str, curve: det.BinaryCurve, targets) -> pd.DataFrame:
    """TPR at each target FPR (:func:`metrics_core.detection.tpr_table`), headed for the
    screen and the download (translated)."""
    return remember(
        "detection.tpr_tables",
        (key, tuple(targets), current_language()),
        lambda: det.tpr_table(curve, list(targets), headers=True).rename(columns=_),
        size=8,
        need=_curve_need(curve),
    )


def tpr_at_fpr_of(key: str, curve: det.BinaryCurve, target: float) -> dict:
    """The operating point at a false-positive budget
    (:func:`metrics_core.detection.tpr_at_fpr`)."""
    return remember(
        "detection.tpr_at_fpr",
        (key, float(target)),
        lambda: det.tpr_at_fpr(None, None, float(target), curve=curve),
        size=8,
        need=_curve_need(curve),
    )


def confusion_at(curve: det.BinaryCurve, threshold: float) -> dict:
    """The confusion counts at ``threshold`` (:func:`metrics_core.detection.confusion_matrix_at`
    on the sorted counts: a search, it holds nothing)."""
    with budget.work(0):
        return det.confusion_matrix_at(None, None, threshold, curve=curve)


def index_at(curve: det.BinaryCurve, threshold: float) -> int:
    """The operating point of the sorted counts at ``threshold`` (a search)."""
    with budget.work(0):
        return int(curve.index_at(threshold))


def candidate_table_of(key: str, _data: dict) -> dk.CandidateTable:
    return remember(
        "detection.candidate_tables",
        key,
        lambda: dk.prepare(
            _data["query"], _data["probability"], _data["is_gold"], _data["criterion"]
        ),
        size=4,
        need=len(_data["query"]) * DYNAMIC_K_BYTES_PER_ROW,
    )


def columns_of(file_id: str, _data: bytes, name: str) -> list[str]:
    """Column names of an uploaded table (for the mapping boxes), once per upload (the table is
    read to find them)."""
    return remember(
        "detection.columns",
        (file_id, name),
        lambda: common_upload.table_columns(_data, name) or [],
        size=4,
        need=len(_data) * READ_BYTES_PER_BYTE,
    )


def per_group_of(key: str, _y_true, _y_score, _criterion, single_class: str) -> dict:
    """:func:`metrics_core.detection.per_group_scores` once per score set and one-class rule."""
    return remember(
        "detection.per_group",
        (key, single_class),
        lambda: det.per_group_scores(_y_true, _y_score, _criterion, single_class=single_class),
        size=8,
        need=len(_y_score) * PER_GROUP_BYTES_PER_ROW,
    )


def bootstrap_of(key: str, _y_true, _y_score, metrics: tuple, n_resamples: int, seed: int) -> dict:
    return remember(
        "detection.bootstrap",
        (key, metrics, n_resamples, seed),
        lambda: det.bootstrap_ci(
            _y_true, _y_score, list(metrics), n_resamples=n_resamples, seed=seed
        ),
        size=16,
        need=len(_y_score) * BOOTSTRAP_BYTES_PER_ROW,
    )


#: The TPR table's headers (:data:`metrics_core.detection.TPR_TABLE_COLUMNS`), marked for the catalogs.
TPR_TABLE_WORDS = (
    N_("target FPR"),
    N_("TPR"),
    N_("achieved FPR"),
    N_("threshold"),
    N_("allowed FP"),
    N_("next TPR"),
    N_("next FPR"),
    N_("next threshold"),
)


def metric_name(key: str) -> str:
    """A detection measure's name on screen from the library's key: ``auroc`` -> AUROC,
    ``tpr@0.05`` -> "TPR at FPR 0.05", ``n_pos`` -> Positives. The FPR target is the key's own
    text, so it keeps its decimal point in Spanish too, as every number on the page does (the
    Spanish CSV export writes decimal commas for spreadsheets)."""
    if key.startswith("tpr@"):
        return plain(_("TPR at FPR {fpr}"), fpr=key.removeprefix("tpr@"))
    return {
        "auroc": "AUROC",
        "auprc": "AUPRC",
        "n_pos": _("Positives"),
        "n_neg": _("Negatives"),
    }.get(key, key)


def one_class_warning(n_pos: int) -> str:
    """Why AUROC, AUPRC and TPR at FPR are missing when the labels have one class only."""
    if n_pos == 0:
        return _(
            "AUROC, AUPRC and TPR at FPR are undefined: every label is negative (no positive item). "
            "Load labels with both classes, or choose the audit rule above."
        )
    return _(
        "AUROC, AUPRC and TPR at FPR are undefined: every label is positive (no negative item). "
        "Load labels with both classes, or choose the audit rule above."
    )


def number_or_dash(value: float, digits: int = 4) -> str:
    """A value with ``digits`` decimals, or "–" when it is missing (NaN or None).

    >>> number_or_dash(0.5), number_or_dash(float("nan")), number_or_dash(None)
    ('0.5000', '–', '–')
    """
    if value is None or value != value:
        return "–"
    return f"{value:.{digits}f}"


def dynamic_k_header(field: str) -> str:
    """A dynamic-K table's column in the visitor's language: the library's plain name
    (:func:`metrics_core.dynamic_k.field_words`); the average K keeps the page's name for it."""
    if field == "avg_k":
        return _("Average K")
    return dk.field_words(field, _)[0] if field in dk.FIELD_WORDS else field


def dynamic_k_legend(has_empty: bool, per_criterion: bool) -> str:
    """The sentence under a dynamic-K table: what the pooled columns mean, the macro row when
    the table has one (``per_criterion``: one row per criterion, then micro and macro; else
    the one row of every query), and the empty cells when there are some."""
    text = _(
        "Recall and precision are means over the queries; the pooled columns count every gold and kept "
        "item of all queries together (micro average)."
    )
    if per_criterion:
        text += " " + _("The macro row is the mean over the criteria.")
    if has_empty:
        text += " " + _("“–”: the micro and macro rows have no pooled columns of their own.")
    return text


#: The reader's fields (:attr:`metrics_core.errors.InputError.field`) and the page's mapping
#: boxes that choose the same column.
FIELD_BOXES = {
    "score_col": N_("Score column"),
    "label_col": N_("Label column"),
    "prob_col": N_("Score column"),
    "gold_col": N_("Label column"),
}


def for_the_page(exc: InputError) -> InputError:
    """The reader's error in the page's words: a column the reader could not find names the
    page's mapping box for it (:data:`FIELD_BOXES`, by the error's ``field``); any other
    error keeps its plain wording (:meth:`~metrics_core.errors.InputError.plain`)."""
    box = FIELD_BOXES.get(exc.field or "")
    if box is None:  # the advice in the application's words; the texts stay translatable
        return exc.replace(hint=exc.phrase("plain_hint") or exc.phrase("hint"), plain_hint=None)
    hint = plain(
        _("Choose it in the “{box}” box under “{section}”, then the file is read again."),
        box=_(box),
        section=_("Data: scores and labels"),
    )
    return exc.replace(hint=hint, option=None, plain_hint=None)


def load_scores_for_page(
    data: bytes, name: str, score_col: str | None = None, label_col: str | None = None
) -> dict:
    """:func:`load_scores` with the page's words in its error message."""
    try:
        return load_scores(data, name, score_col, label_col)
    except InputError as exc:
        raise for_the_page(exc) from None


def calibration_report_of(key, _y, _p, n_bins, strategy):
    """:func:`metrics_core.calibration.calibration_report`, once per score set and binning."""
    return remember(
        "calibration.reports",
        (key, n_bins, strategy),
        lambda: cal.calibration_report(_y, _p, n_bins, strategy),
        size=16,
        need=len(_p) * CALIBRATION_BYTES_PER_ROW,
    )


def calibration_ci_of(key, _y, _p, n_bins, strategy, n_resamples):
    """:func:`metrics_core.calibration.bootstrap_calibration_ci` (seed 0), once per score set,
    binning and replicate count."""
    return remember(
        "calibration.intervals",
        (key, n_bins, strategy, n_resamples),
        lambda: cal.bootstrap_calibration_ci(
            _y, _p, n_bins, strategy, n_resamples=n_resamples, seed=0
        ),
        size=16,
        need=len(_p) * CALIBRATION_BOOTSTRAP_BYTES_PER_ROW,
    )


def dynamic_k_curve_of(key, _table, k_min, hard_cap, ratio):
    """:func:`metrics_core.dynamic_k.dynamic_k_curve` of a candidate table (``key``: its digest)."""
    return remember(
        "dynamic_k.curves",
        (key, k_min, hard_cap, ratio),
        lambda: dk.dynamic_k_curve(_table, None, k_min, hard_cap, ratio),
        size=32,
        need=_table.prob.size * DYNAMIC_K_BYTES_PER_ROW,
    )


def dynamic_k_scores_of(key, _table, tau, k_min, hard_cap, ratio) -> dict:
    """:func:`metrics_core.dynamic_k.dynamic_k_scores` at one setting of the sliders."""
    return remember(
        "dynamic_k.scores",
        (key, tau, k_min, hard_cap, ratio),
        lambda: dk.dynamic_k_scores(_table, tau, k_min, hard_cap, ratio),
        size=32,
        need=_table.prob.size * DYNAMIC_K_BYTES_PER_ROW,
    )


def dynamic_k_per_criterion_of(key, _table, tau, k_min, hard_cap, ratio) -> dict:
    """:func:`metrics_core.dynamic_k.per_criterion` at one setting of the sliders."""
    return remember(
        "dynamic_k.per_criterion",
        (key, tau, k_min, hard_cap, ratio),
        lambda: dk.per_criterion(_table, tau, k_min, hard_cap, ratio),
        size=32,
        need=_table.prob.size * DYNAMIC_K_BYTES_PER_ROW,
    )


def dynamic_k_words(field: str) -> tuple[str, str]:
    """A dynamic-K setting's or result's plain name and one-sentence explanation, in the
    visitor's language (:func:`metrics_core.dynamic_k.field_words`)."""
    return dk.field_words(field, _)


def use_scores(data: dict) -> None:
    """Score and label arrays (:func:`load_scores`) as the pages' scores, unless the same are
    loaded already (the threshold then stays where it is)."""
    if data["digest"] != st.session_state[SCORES]["digest"]:
        st.session_state[SCORES] = data


def use_sample_scores() -> None:
    st.session_state[SCORES] = sample_scores()


def use_sample_candidates() -> None:
    st.session_state[CANDIDATES] = sample_candidates()


#: The calibration statistics' names on screen.
CALIBRATION_LABELS = {
    "ece": N_("ECE (plug-in)"),
    "ece_debiased": N_("ECE (debiased)"),
    "mce": "MCE",
    "brier": N_("Brier score"),
}


def interval_text(ci: dict) -> str:
    """One calibration statistic's interval in words (or why there is none)."""
    if ci["reliable"]:
        return say(
            _("95% {method} CI [{low}, {high}]"),
            method=ci["method"],
            low=f"{ci['low']:.4f}",
            high=f"{ci['high']:.4f}",
        )
    return _(
        "no reliable interval: resampling shifts this value more than it spreads it (use fewer bins)"
    )


def bins_table(b: dict) -> pd.DataFrame:
    """The reliability bins for the screen and the exports: 4 decimals, counts as integers."""
    return pd.DataFrame(
        {
            _("From"): np.round(b["lower"], 4),
            _("To"): np.round(b["upper"], 4),
            _("Items"): b["count"].astype(np.int64),
            _("Positives"): b["positives"].astype(np.int64),
            _("Mean probability"): np.round(b["confidence"], 4),
            _("Frequency"): np.round(b["frequency"], 4),
            _("Frequency 95% low"): np.round(b["freq_low"], 4),
            _("Frequency 95% high"): np.round(b["freq_high"], 4),
        }
    )


def confusion_table(cm: dict) -> pd.DataFrame:
    """A confusion matrix (``metrics_core.detection.confusion_matrix_at``) as a 2 x 2 table."""
    return pd.DataFrame(
        {
            _("Predicted positive"): [cm["tp"], cm["fp"]],
            _("Predicted negative"): [cm["fn"], cm["tn"]],
        },
        index=[_("Actual positive"), _("Actual negative")],
    )


def use_candidates(data: bytes, name: str) -> None:
    """A dynamic-K candidate table (:func:`load_candidates`) as the Dynamic K page's data."""
    st.session_state[CANDIDATES] = load_candidates(data, name)
