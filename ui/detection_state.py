"""State and cached loaders of the Detection & calibration pages.

Keys are namespaced ``ranklab.detection.*``. Uploads are parsed once per content
digest; the sorted counts of a score set are computed once per digest. Every cache is
bounded (``max_entries``) and private to the session (``scope="session"``), so a hosted
app's memory grows with its visitors' data only while they are there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from metrics_core import detection as det
from metrics_core import dynamic_k as dk
from metrics_core.errors import InputError
from metrics_core.io.scores import read_candidates, read_scores
from metrics_core.report.ranges import default_ranges
from ui.state import digest, in_app

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SCORES = ROOT / "sample_data" / "detection_scores.csv"
SAMPLE_CANDIDATES = ROOT / "sample_data" / "dynamic_k_candidates.csv"

SCORES = "ranklab.detection.scores"          # dict: digest, source, y_true, y_score, criterion
CANDIDATES = "ranklab.detection.candidates"  # dict: digest, source, query, probability, is_gold, criterion
RANGES = "ranklab.detection.ranges"          # editable copy of the reference ranges
THRESHOLD = "ranklab.detection.threshold"    # Detection's threshold slider (score units)
THRESHOLD_NUM = "ranklab.detection.threshold_num"  # the number box kept in step with it (key prefix)
THRESHOLD_NUM_VERSION = "ranklab.detection.threshold_num_version"  # its key's suffix: new on each slider move
THRESHOLD_FOR = "ranklab.detection.threshold_for"  # digest the threshold belongs to
SCORE_COL = "ranklab.detection.score_col"    # mapping box: score column ("" = auto)
LABEL_COL = "ranklab.detection.label_col"    # mapping box: label column ("" = auto)
CAL_THRESHOLD = "ranklab.detection.cal_threshold"  # decision threshold on the reliability diagram
CAL_BINS = "ranklab.detection.cal_bins"
CAL_STRATEGY = "ranklab.detection.cal_strategy"
DK_TAU = "ranklab.detection.dk_tau"
DK_KMIN = "ranklab.detection.dk_kmin"
DK_CAP = "ranklab.detection.dk_cap"
DK_RATIO = "ranklab.detection.dk_ratio"


def ensure_defaults() -> None:
    if RANGES not in st.session_state:
        st.session_state[RANGES] = default_ranges()
    if SCORES not in st.session_state:
        st.session_state[SCORES] = load_scores(SAMPLE_SCORES.read_bytes(), SAMPLE_SCORES.name)
    if CANDIDATES not in st.session_state:
        st.session_state[CANDIDATES] = load_candidates(SAMPLE_CANDIDATES.read_bytes(),
                                                       SAMPLE_CANDIDATES.name)


def load_scores(data: bytes, name: str, score_col: str | None = None,
                label_col: str | None = None) -> dict:
    """Scores and labels of a table (cached per session inside the app)."""
    if in_app():
        return _load_scores_cached(data, name, score_col, label_col)
    return _load_scores(data, name, score_col, label_col)


def load_candidates(data: bytes, name: str) -> dict:
    """A dynamic-K candidate table (cached per session inside the app)."""
    if in_app():
        return _load_candidates_cached(data, name)
    return _load_candidates(data, name)


def _load_scores(data: bytes, name: str, score_col: str | None = None,
                 label_col: str | None = None) -> dict:
    t = read_scores(data, name=name, score_col=score_col, label_col=label_col)
    return {"digest": digest(data) + f":{t.score_col}:{t.label_col}", "source": t.source,
            "y_true": t.y_true, "y_score": t.y_score, "criterion": t.criterion,
            "score_col": t.score_col, "label_col": t.label_col,
            "columns": [str(c) for c in t.frame.columns]}


def _load_candidates(data: bytes, name: str) -> dict:
    t = read_candidates(data, name=name)
    return {"digest": digest(data), "source": t.source, "query": t.query,
            "probability": t.probability, "is_gold": t.is_gold, "criterion": t.criterion}


_load_scores_cached = st.cache_data(max_entries=4, show_spinner="Reading scores ...",
                                    scope="session")(_load_scores)
_load_candidates_cached = st.cache_data(max_entries=4, show_spinner="Reading candidates ...",
                                        scope="session")(_load_candidates)


@st.cache_resource(max_entries=4, show_spinner=False, scope="session")
def curve_of(key: str, _y_true: np.ndarray, _y_score: np.ndarray) -> det.BinaryCurve:
    """Sorted counts of a score set, once per digest (shared, read-only)."""
    return det.binary_curve(_y_true, _y_score)


@st.cache_resource(max_entries=4, show_spinner=False, scope="session")
def candidate_table_of(key: str, _data: dict) -> dk.CandidateTable:
    return dk.prepare(_data["query"], _data["probability"], _data["is_gold"], _data["criterion"])


@st.cache_data(max_entries=4, show_spinner=False, scope="session")
def columns_of(file_id: str, _data: bytes, name: str) -> list[str]:
    """Column names of an uploaded table (for the mapping boxes), once per upload."""
    from ui.upload import table_columns

    return table_columns(_data, name) or []


@st.cache_data(max_entries=8, show_spinner=False, scope="session")
def per_group_of(key: str, _y_true, _y_score, _criterion, single_class: str) -> dict:
    """:func:`metrics_core.detection.per_group_scores` once per score set and one-class rule."""
    return det.per_group_scores(_y_true, _y_score, _criterion, single_class=single_class)


@st.cache_data(max_entries=16, show_spinner=False, scope="session")
def bootstrap_of(key: str, _y_true, _y_score, metrics: tuple, n_resamples: int, seed: int) -> dict:
    return det.bootstrap_ci(_y_true, _y_score, list(metrics), n_resamples=n_resamples, seed=seed)


#: The command-line options of the readers' hints and the page's boxes that do the same.
PAGE_BOXES = {"--score-col": "Score column", "--label-col": "Label column", "--prob-col": "Score column",
              "--gold-col": "Label column"}


def for_the_page(exc: InputError) -> InputError:
    """The reader's error with its hint in the page's words: a command-line option such as
    ``--label-col`` becomes the mapping box of the page that does the same."""
    hint = exc.hint or ""
    for option, box in PAGE_BOXES.items():
        if option in hint:
            hint = (f"Choose it in the “{box}” box under “Data: scores and labels”, then the file is "
                    "read again.")
            break
    return InputError(exc.problem, source=exc.source, line=exc.line, hint=hint or None)


def load_scores_for_page(data: bytes, name: str, score_col: str | None = None,
                         label_col: str | None = None) -> dict:
    """:func:`load_scores` with the page's words in its error message."""
    try:
        return load_scores(data, name, score_col, label_col)
    except InputError as exc:
        raise for_the_page(exc) from None
