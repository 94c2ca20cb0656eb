"""State and cached loaders of the Detection & calibration pages.

Keys are namespaced ``ranklab.detection.*``. Uploads are parsed once per content
digest; the sorted counts of a score set are computed once per digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import streamlit as st

from metrics_core import detection as det
from metrics_core import dynamic_k as dk
from metrics_core.io.scores import read_candidates, read_scores
from metrics_core.reference_ranges import default_ranges

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SCORES = ROOT / "sample_data" / "detection_scores.csv"
SAMPLE_CANDIDATES = ROOT / "sample_data" / "dynamic_k_candidates.csv"

SCORES = "ranklab.detection.scores"          # dict: digest, source, y_true, y_score, criterion
CANDIDATES = "ranklab.detection.candidates"  # dict: digest, source, query, probability, is_gold, criterion
RANGES = "ranklab.detection.ranges"          # editable copy of seed 002's reference ranges
OP_INDEX = "ranklab.detection.op_index"      # operating point index on the Detection page
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


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@st.cache_data(max_entries=8, show_spinner="Reading scores ...")
def load_scores(data: bytes, name: str, score_col: str | None = None,
                label_col: str | None = None) -> dict:
    t = read_scores(data, name=name, score_col=score_col, label_col=label_col)
    return {"digest": digest(data) + f":{t.score_col}:{t.label_col}", "source": t.source,
            "y_true": t.y_true, "y_score": t.y_score, "criterion": t.criterion,
            "score_col": t.score_col, "label_col": t.label_col,
            "columns": [str(c) for c in t.frame.columns]}


@st.cache_data(max_entries=8, show_spinner="Reading candidates ...")
def load_candidates(data: bytes, name: str) -> dict:
    t = read_candidates(data, name=name)
    return {"digest": digest(data), "source": t.source, "query": t.query,
            "probability": t.probability, "is_gold": t.is_gold, "criterion": t.criterion}


@st.cache_resource(max_entries=8, show_spinner=False)
def curve_of(key: str, _y_true: np.ndarray, _y_score: np.ndarray) -> det.BinaryCurve:
    """Sorted counts of a score set, once per digest (shared, read-only)."""
    return det.binary_curve(_y_true, _y_score)


@st.cache_resource(max_entries=8, show_spinner=False)
def candidate_table_of(key: str, _data: dict) -> dk.CandidateTable:
    return dk.prepare(_data["query"], _data["probability"], _data["is_gold"], _data["criterion"])


@st.cache_data(max_entries=32, show_spinner=False)
def bootstrap_of(key: str, _y_true, _y_score, metrics: tuple, n_boot: int, seed: int) -> dict:
    return det.bootstrap_ci(_y_true, _y_score, list(metrics), n_boot=n_boot, seed=seed)
