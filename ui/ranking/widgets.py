"""Widgets shared by the ranking pages: the "no data yet" hint, the measure chooser, the
thresholds editor, the summary table and the save form of the History section."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from metrics_core.ranking import registry
from metrics_core.ranking.registry import parse_measure
from metrics_core.report import interpret
from metrics_core.stats.bootstrap import bootstrap_table
from ui.common import state
from ui.common.cache import remember
from ui.common.i18n import count
from ui.common.i18n import gettext as _
from ui.common.style import md_text
from ui.history.actions import save_evaluation_form
from ui.ranking.data import has_data, load_sample_into_state
from ui.ranking.state import CUSTOM_MEASURE as _W_CUSTOM
from ui.ranking.state import FAIR_RATIO, LOAD_SAMPLE_INLINE, THRESHOLDS_EDITOR
from ui.ranking.state import MEASURES_WIDGET as _W_MEASURES
from ui.ranking.upload import upload_box

# the picker offers every family's common instances, from the measure registry
COMMON_MEASURES = list(registry.COMMON_MEASURES)


def require_data(runs_upload: str | None = None) -> bool:
    """Show a hint (and return False) when no qrels/runs are loaded. With ``runs_upload`` (the
    page's name) and qrels loaded, the hint comes with a box to drop runs right here."""
    if has_data():
        return True
    qrels = st.session_state.get(state.QRELS)
    if runs_upload and qrels is not None:
        n = len(qrels.unique_query_ids())
        st.info(
            _(
                "Qrels loaded ({n} queries judged). Drop one or more runs here, or on the Data page."
            ).format(n=count(n))
        )
        if upload_box("run", _("Runs"), multiple=True, page=runs_upload):
            st.rerun()
        return False
    st.info(
        _(
            "No data loaded yet. Open **Data** to upload a qrels file and runs, "
            "or load the bundled sample."
        )
    )
    st.button(
        _("Load sample data"),
        key=LOAD_SAMPLE_INLINE,
        type="primary",
        on_click=load_sample_into_state,
    )
    return False


def _on_measures() -> None:
    chosen = st.session_state.get(_W_MEASURES) or []
    st.session_state[state.MEASURES] = list(chosen) or list(state.DEFAULT_MEASURES)


def _on_custom() -> None:
    text = (st.session_state.get(_W_CUSTOM) or "").strip()
    if not text:
        return
    try:
        name = parse_measure(text).name
    except InputError as exc:
        st.session_state[state.MESSAGES].append(("error", md_text(exc.plain(_))))
        return
    measures = list(st.session_state[state.MEASURES])
    if name not in measures:
        measures.append(name)
    st.session_state[state.MEASURES] = measures
    st.session_state[_W_CUSTOM] = ""


def measure_chooser(label: str | None = None) -> list[str]:
    """Multiselect bound to ``ranklab.measures`` plus a box to add any measure by name."""
    chosen = list(st.session_state[state.MEASURES])
    options = list(dict.fromkeys(COMMON_MEASURES + chosen))
    st.session_state[_W_MEASURES] = chosen
    c1, c2 = st.columns([3, 1])
    c1.multiselect(
        label or _("Measures"),
        options,
        key=_W_MEASURES,
        on_change=_on_measures,
        placeholder=_("Choose options"),
    )
    c2.text_input(
        _("Add a measure by name"),
        key=_W_CUSTOM,
        on_change=_on_custom,
        placeholder=_("e.g. nDCG(gain=exp)@5"),
        help=_("ir_measures syntax; see Learn"),
    )
    messages = st.session_state[state.MESSAGES]
    while messages:
        level, text = messages.pop(0)
        getattr(st, level, st.info)(text)
    return list(st.session_state[state.MEASURES])


def thresholds_editor(key: str) -> tuple[dict, float]:
    """Editable "Good" thresholds and the Fair ratio; returns (thresholds, ratio)."""
    # The editor keeps its edits as a delta against the frame it was first given, so that
    # frame must stay fixed while the editor lives: snapshot the thresholds at that moment.
    editor_key, base_key = f"{THRESHOLDS_EDITOR}.{key}", f"{THRESHOLDS_EDITOR}.{key}.base"
    if editor_key not in st.session_state or base_key not in st.session_state:
        st.session_state[base_key] = dict(st.session_state[state.THRESHOLDS])
    base = st.session_state[base_key]
    frame = pd.DataFrame(
        {"measure": list(base), "good at or above": [float(v) for v in base.values()]}
    )
    with st.expander(
        _("Interpretation thresholds (Good at or above: MRR 0.7, nDCG@10 0.6, P@5 0.5)")
    ):
        edited = st.data_editor(
            frame,
            num_rows="dynamic",
            key=editor_key,
            hide_index=True,
            column_config={
                "measure": st.column_config.TextColumn(_("Measure")),
                "good at or above": st.column_config.NumberColumn(
                    _("Good at or above"), min_value=0.0, step=0.05, format="%.4f"
                ),
            },
        )
        if FAIR_RATIO not in st.session_state:
            st.session_state[FAIR_RATIO] = 0.5
        st.number_input(
            _("Fair when at or above this fraction of the Good threshold"),
            min_value=0.0,
            max_value=1.0,
            step=0.05,
            key=FAIR_RATIO,
        )
        if st.button(_("Reset thresholds"), key=f"{THRESHOLDS_EDITOR}.{key}.reset"):
            st.session_state[state.THRESHOLDS] = dict(state.DEFAULT_THRESHOLDS)
            st.session_state.pop(editor_key, None)
            st.session_state.pop(base_key, None)
            st.rerun()
    thresholds = {}
    for row in edited.to_dict(orient="records"):
        name, value = row.get("measure"), row.get("good at or above")
        if name is None or value is None or pd.isna(value) or not str(name).strip():
            continue
        try:
            thresholds[parse_measure(str(name)).name] = float(value)
        except InputError as exc:
            st.warning(md_text(exc.plain(_)))
    st.session_state[state.THRESHOLDS] = thresholds
    return thresholds, float(st.session_state[FAIR_RATIO])


def label_for(measure: str, value: float, thresholds: dict, ratio: float) -> str:
    """The Good / Fair / Needs improvement label of a value, or "" when the measure has no threshold."""
    if measure not in thresholds:
        return ""
    label = interpret(float(value), thresholds[measure], ratio)
    return _(label) if label else ""


def cached_bootstrap(
    per_query: pd.DataFrame, n_resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """:func:`bootstrap_table` of one evaluation's per-query values, kept in the session next
    to them (:func:`ui.common.cache.remember`)."""
    return remember(
        "ranking.bootstrap",
        (n_resamples, confidence, seed),
        lambda: bootstrap_table(
            per_query, n_resamples=n_resamples, confidence=confidence, seed=seed
        ),
        held=(per_query,),
        size=64,
    )


def summary_table(
    evaluations: dict,
    thresholds: dict,
    ratio: float,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Long table: one row per (run, measure) with aggregate, mean, median, CI and label."""
    rows = []
    for name, ev in evaluations.items():
        boot = cached_bootstrap(ev.per_query, n_resamples, confidence, seed)
        for m in ev.measures:
            b = boot.loc[m] if m in boot.index else None
            agg = float(ev.aggregate[m])
            rows.append(
                {
                    "run": name,
                    "measure": m,
                    "aggregate": agg,
                    "mean": float(b["mean"]) if b is not None else float("nan"),
                    "median": float(b["median"]) if b is not None else float("nan"),
                    "ci_low": float(b["ci_low"]) if b is not None else float("nan"),
                    "ci_high": float(b["ci_high"]) if b is not None else float("nan"),
                    "queries": int(b["queries"]) if b is not None else 0,
                    "interpretation": label_for(m, agg, thresholds, ratio),
                }
            )
    return pd.DataFrame(rows)


def history_save_hook(evaluations: dict, conventions) -> None:
    """The "Save this evaluation" form of the History feature, under the overview."""
    st.subheader(_("Save this evaluation"))
    save_evaluation_form(
        list(evaluations.values()),
        st.session_state.get(state.QRELS),
        st.session_state.get(state.META),
        key="overview",
    )
