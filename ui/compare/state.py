"""Session-state keys of the Compare page (namespaced ``ranklab.*``).

The query picked on the per-query delta chart goes to :data:`ui.common.state.SELECTED_QUERY`
(shared with the Per query page).
"""

import streamlit as st

#: Last comparison settings (baseline, measures, permutations, seed, correction, confidence).
COMPARE_SETTINGS = "ranklab.compare.settings"
SAMPLE = "ranklab.compare.sample"
QUERY_SET = "ranklab.w.compare.query_set"
ALL_PAIRS = "ranklab.w.compare.all_pairs"
PAIR_TEST = "ranklab.w.compare.pair_test"
PAIR_MEASURES = "ranklab.w.compare.pair_measures"
TABLE = "ranklab.compare.table"
POWER_TABLE = "ranklab.compare.power_table"
#: Systems of several runs, one per line ``NAME=run,run`` (the Compare page's input; the
#: Comparative table groups its rows by them too)
SYSTEMS = "ranklab.w.compare.systems"
SETTINGS_FORM = "compare-settings"
CI_CHART = "compare-ci"
DELTAS_CHART = "compare-deltas"
FOLDS_CHART = "compare-folds"
CRITERIA_CHART = "compare-criteria"


def remember_settings(comparison) -> None:
    """Keep the last comparison's settings (:attr:`metrics_core.report.comparison.Comparison.settings`)."""
    st.session_state[COMPARE_SETTINGS] = dict(comparison.settings)
