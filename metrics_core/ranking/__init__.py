"""Rankings: the measure registry (:mod:`.registry`, :mod:`.definition`), every ranking
measure (:mod:`.measures`, one module per family) on the shared arithmetic
(:mod:`.kernels`), the ranked-list engine (:mod:`.engine` on :mod:`.keys`,
:mod:`.strings`, producing :mod:`.ranked_lists`), the reusable ranking of a run
(:mod:`.ranked`: ``rank`` -> ``Ranking``), the evaluation front door (:mod:`.evaluate`)
and its other paths (:mod:`.streaming`, :mod:`.distributed`, both on :mod:`.parts`).
The data model lives in :mod:`metrics_core.data`, the readers in :mod:`metrics_core.io`,
the result in :mod:`metrics_core.evaluation`."""
