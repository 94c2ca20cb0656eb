"""Widgets of the Detection and Calibration pages: the scores box, the threshold (a slider
and a number box kept in step) and the editable reference ranges."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from metrics_core.io.scores import LABEL_NAMES
from ui.common.i18n import N_
from ui.common.i18n import gettext as _
from ui.common.style import THRESHOLD_FORMAT, say
from ui.common.upload import TABLE_TYPES, UploadSlot, read_error, read_once
from ui.detection import data as ds
from ui.detection import state as dst
from ui.detection.state import Detection

if TYPE_CHECKING:
    from metrics_core import detection as det


def scores_loader() -> None:
    """The Detection page's scores box: a table upload, its score and label columns (detected
    unless chosen), or the sample. The upload is read again when a column choice changes."""
    seen_key = f"{Detection.UPLOAD}.seen"
    failed = bool(read_error(seen_key))
    with st.expander(_("Data: scores and labels"), expanded=failed):
        slot = UploadSlot(
            Detection.UPLOAD,
            _("CSV, TSV, Parquet or JSON with a score and a 0/1 label column"),
            types=TABLE_TYPES,
        )
        files = slot.files()
        up = files[0] if files else None
        columns = ds.columns_of(up.file_id, up.getvalue(), up.name) if up is not None else []
        c1, c2 = st.columns(2)
        auto = {"": _("detect from the column names")}
        score_col = c1.selectbox(
            _("Score column"),
            ["", *columns],
            key=dst.SCORE_COL,
            format_func=lambda c: auto.get(c, c),
        )
        label_col = c2.selectbox(
            _("Label column"),
            ["", *columns],
            key=dst.LABEL_COL,
            format_func=lambda c: auto.get(c, c),
            help=say(_("Recognised names: {names}"), names=", ".join(LABEL_NAMES)),
        )
        if up is not None:
            error = read_once(
                seen_key,
                (up.file_id, score_col, label_col),
                lambda: ds.use_scores(
                    ds.load_scores_for_page(
                        up.getvalue(), up.name, score_col or None, label_col or None
                    )
                ),
            )[1]
            if error:
                st.error(error)
        st.button(_("Use the sample data"), key=Detection.USE_SAMPLE, on_click=ds.use_sample_scores)


def _threshold_from_slider() -> None:
    # a new number box (a new key) drawn at the slider's value: a box that follows by having
    # its value set lags behind fast key presses on the slider (the browser sends back the
    # box's stale value with the next rerun, which moved the slider back)
    st.session_state[dst.THRESHOLD_NUM_VERSION] = (
        st.session_state.get(dst.THRESHOLD_NUM_VERSION, 0) + 1
    )
    if dst.THRESHOLD in st.session_state:
        dst.share_threshold(st.session_state[dst.THRESHOLD_FOR], st.session_state[dst.THRESHOLD])


def _threshold_from_number(key: str, lo: float, hi: float) -> None:
    st.session_state[dst.THRESHOLD] = min(max(float(st.session_state[key]), lo), hi)
    dst.share_threshold(st.session_state[dst.THRESHOLD_FOR], st.session_state[dst.THRESHOLD])


def threshold_control(digest: str, scores, curve: det.BinaryCurve) -> float:
    """The decision threshold of the Detection page (score units): a slider and a number box
    kept in step. It is the threshold the Calibration page uses on the same scores
    (:func:`ui.detection.state.shared_threshold`); for a new score set it starts at the
    TPR@5%FPR operating point."""
    lo, hi = float(scores.min()), float(scores.max())
    shared = dst.shared_threshold(digest)
    if (
        st.session_state.get(dst.THRESHOLD_FOR) != digest
        or dst.THRESHOLD not in st.session_state
        or (shared is not None and shared != st.session_state[dst.THRESHOLD])
    ):
        start = (
            shared
            if shared is not None
            else float(ds.tpr_at_fpr_of(digest, curve, 0.05)["threshold"])
        )
        st.session_state[dst.THRESHOLD] = min(max(start, lo), hi)
        st.session_state[dst.THRESHOLD_FOR] = digest
        _threshold_from_slider()
    step = (hi - lo) / 1000 if hi > lo else 1.0
    c1, c2 = st.columns([3, 1])
    c1.slider(
        _("Threshold (predict positive when score ≥ threshold)"),
        lo,
        hi,
        step=step,
        key=dst.THRESHOLD,
        on_change=_threshold_from_slider,
        format=THRESHOLD_FORMAT,  # the threshold itself, as the captions write it
    )
    box = f"{dst.THRESHOLD_NUM}.{st.session_state.get(dst.THRESHOLD_NUM_VERSION, 0)}"
    c2.number_input(
        _("Threshold, typed"),
        min_value=lo,
        max_value=hi,
        step=step,
        format=THRESHOLD_FORMAT,
        value=float(st.session_state[dst.THRESHOLD]),
        key=box,
        on_change=_threshold_from_number,
        args=(box, lo, hi),
    )
    value = float(st.session_state[dst.THRESHOLD])
    dst.share_threshold(digest, value)
    st.caption(
        _(
            "The same threshold is used on the Calibration page for these scores: moving it on either "
            "page moves it on both."
        )
    )
    return value


#: The reference bands' names on screen.
BAND_WORDS = {"baseline": N_("baseline"), "good": N_("good")}


def ranges_editor(metrics: tuple[str, ...]) -> dict:
    """The reference ranges of the page's own ``metrics`` as an editable table (metric and
    band fixed); returns them edited. The ranges of other pages' measures are kept in the
    session untouched, never shown here."""
    ranges = st.session_state[dst.RANGES]
    edit = pd.DataFrame(
        [
            {"metric": k, "band": _(BAND_WORDS.get(b, b)), "key": b, "low": lo, "high": hi}
            for k in metrics
            if k in ranges
            for b, (lo, hi) in ranges[k].items()
        ]
    )
    edited = st.data_editor(
        edit,
        key=Detection.RANGES_EDITOR,
        hide_index=True,
        disabled=["metric", "band"],
        column_order=["metric", "band", "low", "high"],
        column_config={
            "metric": st.column_config.TextColumn(_("Metric")),
            "band": st.column_config.TextColumn(_("Band")),
            "low": st.column_config.NumberColumn(_("Low")),
            "high": st.column_config.NumberColumn(_("High")),
        },
    )
    shown: dict = {}
    for r in edited.itertuples():
        shown.setdefault(r.metric, {})[r.key] = (float(r.low), float(r.high))
    st.session_state[dst.RANGES] = {**ranges, **shown}
    return shown


__all__ = ["scores_loader", "threshold_control", "ranges_editor"]
