"""Session-state keys of the Compare page (namespaced ``ranklab.*``)."""

#: Query id picked on the Compare page's per-query delta chart; the per-query page shows it.
SELECTED_QUERY = "ranklab.selected_query"
#: Last comparison settings (baseline, measures, permutations, seed, correction, confidence).
COMPARE_SETTINGS = "ranklab.compare.settings"
