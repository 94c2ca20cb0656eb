"""RankLab's library: exact, fast evaluation of rankings, detection gates, calibration
and hash-code retrieval. Pure Python + numpy (torch for hash codes); no UI imports.

>>> import metrics_core as mc
>>> ev = mc.evaluate({"q1": {"d2": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["RR", "P@1"])
>>> ev.aggregate
{'RR': 0.5, 'P@1': 0.0}
"""

__version__ = "0.1.0"

from metrics_core import io, measures  # noqa: E402
from metrics_core.conventions import Conventions  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402
from metrics_core.io import from_lists, from_relevance_vectors, read_qrels, read_run  # noqa: E402
from metrics_core.ranking.data import Qrels, Run  # noqa: E402
from metrics_core.ranking.evaluate import Evaluation, evaluate, evaluate_many  # noqa: E402

__all__ = ["__version__", "Conventions", "InputError", "io", "measures", "read_run", "read_qrels",
           "from_lists", "from_relevance_vectors", "Run", "Qrels", "Evaluation", "evaluate",
           "evaluate_many"]
