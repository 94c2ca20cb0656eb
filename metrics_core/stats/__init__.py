"""Statistics over per-query values: aggregation, bootstrap intervals, significance tests,
folds and criteria, and the comparison of systems against a baseline."""
