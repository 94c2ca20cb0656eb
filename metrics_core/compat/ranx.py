"""ranx on RankLab's engine: change the import.

>>> from metrics_core.compat import ranx
>>> qrels = ranx.Qrels({"q1": {"d1": 2, "d3": 1}, "q2": {"d2": 1}})
>>> run = ranx.Run({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}, "q2": {"d1": 0.5, "d2": 0.4}}, name="bm25")
>>> round(ranx.evaluate(qrels, run, "ndcg@5"), 4)
0.7906
>>> {m: round(v, 4) for m, v in ranx.evaluate(qrels, run, ["mrr", "precision@1-l2"]).items()}
{'mrr': 0.75, 'precision@1-l2': 0.5}
>>> {q: round(v, 4) for q, v in run.scores["mrr"].items()}
{'q1': 1.0, 'q2': 0.5}
>>> dense = ranx.Run({"q1": {"d3": 0.9, "d1": 0.2}, "q2": {"d2": 0.7}}, name="dense")
>>> fused = ranx.fuse([run, dense], norm="min-max", method="rrf")
>>> {q: [d for d in docs] for q, docs in fused.to_dict().items()}
{'q1': ['d1', 'd3', 'd2'], 'q2': ['d2', 'd1']}

Offered, with ranx's names, arguments, defaults and numbers: :class:`Qrels` and
:class:`Run` (from dicts, TREC/gzipped TREC/JSON/Parquet files and DataFrames; ``save``,
``to_dict``, ``to_dataframe``, ``add``, ``make_comparable`` ...), :func:`evaluate`,
:func:`fuse` and :func:`normalize` (every method and normalisation,
:mod:`metrics_core.compat.ranx_fusion`), :func:`optimize_fusion` (ranx's grids, metric
and choice, with its ``OptimizationReport``), :func:`compare` (ranx's Student, Fisher and
Tukey tests and its ``Report``: table, ``to_latex``, ``to_dict``, ``to_dataframe``,
``save``; :mod:`metrics_core.compat.ranx_report`). Not offered, each with one line:
``plot``, ``Run.from_ranxhub``, ``Qrels.from_ir_datasets``, lz4 files, ``to_typed_list``.

ranx's conventions, reproduced: metric names as ranx writes them (``ndcg@10``,
``map@100``, ``hit_rate@5``, ``ndcg@10-l2``, ``rbp.90``; see
:mod:`metrics_core.ranking.ranx_names`); the qrels and the run must hold the same queries
(``make_comparable=True`` scores the run's missing queries 0 and drops its extra ones);
one metric gives a float, several a dict; ``return_mean=False`` gives each query's values
(queries in sorted order); the values are saved in the run (``run.scores``,
``run.mean_scores``). A ``Run`` holds each query's documents as ranx does: sorted by score
with numba's quicksort from the order they were given, which moves equal scores in a list
of 16 documents or more (:mod:`metrics_core.ranking.quicksort` reproduces it), and a run
changed afterwards (``add_score``, :func:`normalize`) is sorted again before it is evaluated,
as ranx does. For a run given to :func:`evaluate` as a plain dict ranx ranks hashes of the
document ids that change from one Python process to the next: with equal scores a warning
says so. ranx's ``bpref`` is 0 for every query of a collection holding a query without a
relevant document; RankLab gives trec_eval's bpref, with a warning.
"""

from __future__ import annotations

from metrics_core.compat.ranx_data import Qrels, Run, evaluate, plot
from metrics_core.compat.ranx_fusion import (
    OptimizationReport,  # noqa: F401  (ranx's class, for isinstance checks)
    fuse,
    normalize,
    optimize_fusion,
)
from metrics_core.compat.ranx_report import Report, compare  # noqa: F401  (ranx's class)

__all__ = ["Qrels", "Run", "evaluate", "compare", "fuse", "normalize", "optimize_fusion", "plot"]
