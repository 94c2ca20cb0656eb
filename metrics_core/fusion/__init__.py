"""Rank fusion: ranx's catalogue of methods and normalisations on columnar runs, the
supervised methods' training, and honest (cross-validated) tuning.

>>> import metrics_core as mc
>>> fused = mc.fuse({"bm25": {"q1": {"d1": 2.0, "d2": 1.0}}, "dense": {"q1": {"d2": 0.9}}})
>>> fused.doc_ids.tolist()
['d2', 'd1']

* :func:`fuse` -- runs in, one :class:`~metrics_core.data.Run` out (every method of
  :data:`~metrics_core.fusion.catalog.METHODS`, every normalisation of
  :data:`~metrics_core.fusion.catalog.NORMS`).
* :func:`train` -- the supervised methods' estimates (MAPFuse, PosFuse, ProbFuse, SegFuse,
  SlideFuse, BayesFuse) from training judgements.
* :func:`tune` -- grid search of weights and parameters, chosen on training queries and
  reported on held-out ones (k-fold cross-validation by query), as a :class:`Tuning`.
* :func:`write_run` -- a run as TREC, CSV or Parquet.
"""

from metrics_core.fusion.accidents import FusionOrderWarning
from metrics_core.fusion.catalog import METHOD_LABELS, METHODS, NORMS, method_name, norm_name
from metrics_core.fusion.core import fuse
from metrics_core.fusion.training import train
from metrics_core.fusion.tuning import GRIDS, Tuning, tune
from metrics_core.io.writers import RUN_FORMATS, run_text, write_run

__all__ = [
    "fuse",
    "train",
    "tune",
    "Tuning",
    "FusionOrderWarning",
    "GRIDS",
    "METHODS",
    "NORMS",
    "METHOD_LABELS",
    "method_name",
    "norm_name",
    "write_run",
    "run_text",
    "RUN_FORMATS",
]
