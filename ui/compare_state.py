"""Session-state keys of the Compare page (namespaced ``ranklab.*``)."""

# The query picked on the per-query delta chart goes to ui.state.SELECTED_QUERY (shared
# with the Per query page).
#: Last comparison settings (baseline, measures, permutations, seed, correction, confidence).
COMPARE_SETTINGS = "ranklab.compare.settings"
