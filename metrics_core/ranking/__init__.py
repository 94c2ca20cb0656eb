"""Rankings: the measure registry (:mod:`.registry`), the ranked-list engine
(:mod:`.engine`, :mod:`.strings`), every ranking measure (:mod:`.measures`) and the
evaluation entry points (:mod:`.evaluate`). The data model lives in
:mod:`metrics_core.data`, the readers in :mod:`metrics_core.io`."""
