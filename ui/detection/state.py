"""Session-state keys of the Detection, Calibration and Dynamic K pages (``ranklab.detection.*``).

What is loaded: :data:`SCORES` (scores and labels, shared by Detection and Calibration) and
:data:`CANDIDATES` (Dynamic K). Then each page's widgets, one class per page.
"""

from __future__ import annotations

import streamlit as st

from ui.common.keep import keep_keys

SCORES = "ranklab.detection.scores"  # dict: digest, source, y_true, y_score, criterion
CANDIDATES = (
    "ranklab.detection.candidates"  # dict: digest, source, query, probability, is_gold, criterion
)
keep_keys(SCORES, CANDIDATES)  # a reload brings them back (ui.common.keep)
RANGES = "ranklab.detection.ranges"  # editable copy of the reference ranges
THRESHOLD = "ranklab.detection.threshold"  # Detection's threshold slider (score units)
THRESHOLD_NUM = (
    "ranklab.detection.threshold_num"  # the number box kept in step with it (key prefix)
)
THRESHOLD_NUM_VERSION = (
    "ranklab.detection.threshold_num_version"  # its key's suffix: new on each slider move
)
THRESHOLD_FOR = "ranklab.detection.threshold_for"  # digest the threshold belongs to
SCORE_COL = "ranklab.detection.score_col"  # mapping box: score column ("" = auto)
LABEL_COL = "ranklab.detection.label_col"  # mapping box: label column ("" = auto)
CAL_THRESHOLD = "ranklab.detection.cal_threshold"  # decision threshold on the reliability diagram
CAL_THRESHOLD_FOR = (
    "ranklab.detection.cal_threshold_for"  # digest the calibration slider was set for
)
#: (digest, threshold): the one decision threshold of the loaded scores, shared by the Detection and
#: Calibration pages (each page's widget starts from it and writes it back when moved)
SHARED_THRESHOLD = "ranklab.detection.shared_threshold"
CAL_BINS = "ranklab.detection.cal_bins"
CAL_STRATEGY = "ranklab.detection.cal_strategy"
DK_TAU = "ranklab.detection.dk_tau"
DK_KMIN = "ranklab.detection.dk_kmin"
DK_CAP = "ranklab.detection.dk_cap"
DK_RATIO = "ranklab.detection.dk_ratio"


class Detection:
    UPLOAD = "ranklab.detection.upload"  # upload slot (its ".seen": the last upload read)
    USE_SAMPLE = "ranklab.detection.use_sample"
    SINGLE_CLASS = "ranklab.detection.single_class"
    CONFUSION = "ranklab.detection.confusion"
    ROC = "ranklab.detection.roc"
    PR = "ranklab.detection.pr"
    EXTRA_TARGET = "ranklab.detection.extra_target"
    TPR_TABLE = "ranklab.detection.tpr_table"
    CI_ON = "ranklab.detection.ci_on"
    N_RESAMPLES = "ranklab.detection.n_resamples"
    CI = "ranklab.detection.ci"
    PER_CRITERION = "ranklab.detection.per_criterion"
    RANGES_EDITOR = "ranklab.detection.ranges_editor"
    BANDS = "ranklab.detection.bands"


class Calibration:
    UPLOAD = "ranklab.detection.cal_upload"
    USE_SAMPLE = "ranklab.detection.cal_sample"
    BINS_TABLE = "ranklab.detection.bins"
    CONFUSION = "ranklab.detection.cal_confusion"
    RELIABILITY = "ranklab.detection.reliability"


class DynamicK:
    UPLOAD = "ranklab.detection.dk_upload"
    USE_SAMPLE = "ranklab.detection.dk_sample"
    CURVE = "ranklab.detection.dk_curve"
    PER_CRITERION = "ranklab.detection.dk_per_criterion"
    SUMMARY = "ranklab.detection.dk_summary"


def shared_threshold(digest: str) -> float | None:
    """The threshold last chosen on either page for the scores ``digest`` (None: not chosen)."""
    shared = st.session_state.get(SHARED_THRESHOLD)
    return shared[1] if shared is not None and shared[0] == digest else None


def share_threshold(digest: str, value: float) -> None:
    """Make ``value`` the threshold of both pages for the scores ``digest``."""
    st.session_state[SHARED_THRESHOLD] = (digest, float(value))


def sync_calibration_threshold(digest: str) -> None:
    """Before the Calibration slider is drawn: its value follows the threshold shared with the
    Detection page for the scores ``digest`` (0.5 when none was chosen), and is reset when
    other scores are loaded."""
    shared = shared_threshold(digest)
    if (
        st.session_state.get(CAL_THRESHOLD_FOR) != digest
        or CAL_THRESHOLD not in st.session_state
        or (shared is not None and shared != st.session_state[CAL_THRESHOLD])
    ):
        st.session_state[CAL_THRESHOLD] = min(max(0.5 if shared is None else shared, 0.0), 1.0)
        st.session_state[CAL_THRESHOLD_FOR] = digest
