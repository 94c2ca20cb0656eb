"""RankLab's library: exact, fast evaluation of rankings, detection gates, calibration
and hash-code retrieval. Pure Python + numpy (torch only for hash codes); no UI imports.

The names below are the public API. They are imported on first use, so
``import metrics_core`` loads neither pandas nor torch nor anything a script does not
touch. ``metrics_core/README.md`` maps the package for newcomers.

>>> import metrics_core as mc
>>> ev = mc.evaluate({"q1": {"d2": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["RR", "P@1"])
>>> ev.aggregate
{'RR': 0.5, 'P@1': 0.0}
>>> ranking = mc.rank({"q1": {"d2": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}})
>>> ranking.evaluate(["RR"]).aggregate
{'RR': 0.5}
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the real names and signatures, for type checkers (loaded lazily at run time)
    from metrics_core import calibration, detection, dynamic_k, fusion, hashing, io, stats
    from metrics_core.calibration import calibration_report
    from metrics_core.conventions import Conventions
    from metrics_core.data import Qrels, Run, SubtopicQrels
    from metrics_core.detection import average_precision_score, roc_auc_score, tpr_at_fpr
    from metrics_core.dynamic_k import dynamic_k_scores
    from metrics_core.errors import InputError
    from metrics_core.evaluation import Evaluation
    from metrics_core.front_door import evaluate, evaluate_many
    from metrics_core.fusion.core import fuse
    from metrics_core.fusion.tuning import tune as tune_fusion
    from metrics_core.hashing import evaluate_hashing
    from metrics_core.io import from_lists, from_relevance_vectors, read_qrels, read_run
    from metrics_core.io.limits import Limits, using_limits
    from metrics_core.io.writers import write_run
    from metrics_core.ranking import registry as measures
    from metrics_core.ranking.ranked import Ranking, rank
    from metrics_core.ranking.registry import parse_measure
    from metrics_core.report.comparison import Comparison, compare

from metrics_core._version import __version__

#: public name -> (module, attribute); attribute None: the module itself
_PUBLIC: dict[str, tuple[str, str | None]] = {
    # rankings
    "evaluate": ("metrics_core.front_door", "evaluate"),
    "evaluate_many": ("metrics_core.front_door", "evaluate_many"),
    "rank": ("metrics_core.ranking.ranked", "rank"),
    "Ranking": ("metrics_core.ranking.ranked", "Ranking"),
    "Evaluation": ("metrics_core.evaluation", "Evaluation"),
    "compare": ("metrics_core.report.comparison", "compare"),
    "fuse": ("metrics_core.fusion.core", "fuse"),
    "tune_fusion": ("metrics_core.fusion.tuning", "tune"),
    "write_run": ("metrics_core.io.writers", "write_run"),
    "Comparison": ("metrics_core.report.comparison", "Comparison"),
    "read_run": ("metrics_core.io", "read_run"),
    "read_qrels": ("metrics_core.io", "read_qrels"),
    "from_lists": ("metrics_core.io", "from_lists"),
    "from_relevance_vectors": ("metrics_core.io", "from_relevance_vectors"),
    "Run": ("metrics_core.data", "Run"),
    "Qrels": ("metrics_core.data", "Qrels"),
    "SubtopicQrels": ("metrics_core.data", "SubtopicQrels"),
    "Conventions": ("metrics_core.conventions", "Conventions"),
    "InputError": ("metrics_core.errors", "InputError"),
    "Limits": ("metrics_core.io.limits", "Limits"),
    "using_limits": ("metrics_core.io.limits", "using_limits"),
    "parse_measure": ("metrics_core.ranking.registry", "parse_measure"),
    # detection gates, calibration, dynamic K, hash codes
    "roc_auc_score": ("metrics_core.detection", "roc_auc_score"),
    "average_precision_score": ("metrics_core.detection", "average_precision_score"),
    "tpr_at_fpr": ("metrics_core.detection", "tpr_at_fpr"),
    "calibration_report": ("metrics_core.calibration", "calibration_report"),
    "dynamic_k_scores": ("metrics_core.dynamic_k", "dynamic_k_scores"),
    "evaluate_hashing": ("metrics_core.hashing", "evaluate_hashing"),
    # modules
    "io": ("metrics_core.io", None),
    "measures": ("metrics_core.ranking.registry", None),
    "detection": ("metrics_core.detection", None),
    "calibration": ("metrics_core.calibration", None),
    "dynamic_k": ("metrics_core.dynamic_k", None),
    "hashing": ("metrics_core.hashing", None),
    "stats": ("metrics_core.stats", None),
    "fusion": ("metrics_core.fusion", None),
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    try:
        module_name, attribute = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'metrics_core' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
