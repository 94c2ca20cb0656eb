"""Widgets shared by the ranking pages: the "no data yet" hint, the measure chooser and
the summary table."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from metrics_core.ranking.registry import COMMON_MEASURES as REGISTRY_COMMON
from metrics_core.ranking.registry import parse_measure
from ui.common import state
from ui.common.i18n import count
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import md_text, say
from ui.common.thresholds import label
from ui.ranking.data import cached_bootstrap, has_data
from ui.ranking.state import CUSTOM_MEASURE as _W_CUSTOM
from ui.ranking.state import LOAD_SAMPLE_INLINE
from ui.ranking.state import MEASURES_WIDGET as _W_MEASURES
from ui.ranking.upload import upload_box

# the picker offers every family's common instances, from the measure registry
COMMON_MEASURES = list(REGISTRY_COMMON)


def column_label(name: str) -> str:
    """A query-metadata column's name on screen: the sample's category, difficulty, criterion,
    fold, ... in the page's language; another column as written, its underscores as spaces
    (the Breakdown's and Compare's pickers, tables and charts name it the same way)."""
    return _(str(name).replace("_", " ").capitalize())


def require_data(sample: Callable[[], None], runs_upload: str | None = None) -> bool:
    """The ranking pages' prologue (:func:`ui.common.prologue.needs`): a hint and the sample
    (False) when no qrels/runs are loaded. With ``runs_upload`` (the page's name) and qrels
    loaded, the hint comes with a box to drop runs right here. ``sample``: the sample button's
    loader (the page passes it: :func:`ui.samples.load_every_sample`)."""
    qrels = st.session_state.get(state.QRELS)
    if runs_upload and qrels is not None and not has_data():
        n = len(qrels.unique_query_ids())
        return needs(
            False,
            say(
                _(
                    "Qrels loaded ({n} queries judged). Drop one or more runs here, or on the Data page."
                ),
                n=count(n),
            ),
            key=LOAD_SAMPLE_INLINE,
            upload=lambda: upload_box("run", _("Runs"), multiple=True, page=runs_upload),
        )
    return needs(
        has_data(),
        _(
            "No data loaded yet. Open **Data** to upload a qrels file and runs, "
            "or load the bundled sample."
        ),
        key=LOAD_SAMPLE_INLINE,
        sample=sample,
    )


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
    from ui.ranking.data import measure_options

    chosen = list(st.session_state[state.MEASURES])
    options = list(dict.fromkeys(measure_options() + chosen))
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


def summary_table(
    evaluations: dict,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Long table: one row per (run, measure) with aggregate, mean, median, CI and label (the
    session's interpretation thresholds, :func:`ui.common.thresholds.label`)."""
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
                    "interpretation": label(m, agg),
                }
            )
    return pd.DataFrame(rows)
