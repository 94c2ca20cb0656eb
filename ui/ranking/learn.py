"""The Learn page's state: the worked example's ranking, cutoff and conventions, and loading a
preset (:data:`ui.ranking.learn_examples.PRESETS`) into them."""

from __future__ import annotations

import streamlit as st

import metrics_core as mc
from metrics_core.ranking.registry import PARAMS, REGISTRY  # every measure's words (Learn)
from ui.common.sidebar import conventions
from ui.ranking.learn_examples import PRESETS
from ui.ranking.state import Learn

#: The conventions the example sets for itself (the rest are the sidebar's).
LOCAL = ("gain", "discount", "ideal", "p_denominator")
START_LABELS = [3, 2, 0, 1, 0, 0, 2, 0, 1, 0]
START_K = 5


def ensure_defaults() -> None:
    """The first visit's example: ten labels, k = 5, the sidebar's conventions."""
    if Learn.VERSION in st.session_state:
        return
    st.session_state[Learn.VERSION] = 0
    st.session_state[Learn.EXAMPLE] = None
    st.session_state[Learn.LABELS] = list(START_LABELS)
    st.session_state[Learn.K] = START_K
    st.session_state[Learn.NUM_RELEVANT] = 0
    base = conventions()
    for f in LOCAL:
        st.session_state[Learn.convention(f)] = getattr(base, f)


def load_example(name: str) -> None:
    """Put the preset ``name`` in the editor (a new editor key resets its edits)."""
    preset = PRESETS[name]
    st.session_state[Learn.EXAMPLE] = name
    st.session_state[Learn.VERSION] += 1
    st.session_state[Learn.LABELS] = list(preset["labels"])
    st.session_state[Learn.K] = int(preset["k"])
    st.session_state[Learn.NUM_RELEVANT] = int(preset["num_relevant"] or 0)
    conv = mc.Conventions().replace(**preset["conventions"])
    for f in LOCAL:
        st.session_state[Learn.convention(f)] = getattr(conv, f)


def load_picked_example() -> None:
    """Load the preset chosen in the "More examples" box."""
    load_example(st.session_state[Learn.OTHER])


def shown_example(labels) -> str | None:
    """The loaded preset's name while the editor still holds its labels, else None."""
    name = st.session_state.get(Learn.EXAMPLE)
    if name is None:
        return None
    same = list(PRESETS[name]["labels"]) == [int(x) if float(x).is_integer() else x for x in labels]
    return name if same else None


__all__ = [
    "LOCAL",
    "PARAMS",
    "REGISTRY",
    "ensure_defaults",
    "load_example",
    "load_picked_example",
    "shown_example",
]
