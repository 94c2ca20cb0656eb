"""Widget keys and labels of the Fusion page; the work is the library's (``mc.fuse``,
``mc.tune_fusion``, ``mc.compare``)."""

from __future__ import annotations

from metrics_core.fusion.catalog import METHOD_LABELS, METHODS, NORM_LABELS
from ui.common.i18n import gettext as _

PREFIX = "ranklab.w.fusion."
SAMPLE = PREFIX + "sample"
RUNS = PREFIX + "runs"
METHOD = PREFIX + "method"
NORM = PREFIX + "norm"
TUNE = PREFIX + "tune"
MEASURE = PREFIX + "measure"
FOLDS = PREFIX + "folds"
#: measures offered for tuning and the board
MEASURES = ("nDCG@10", "AP", "RR", "P@10", "R@100", "nDCG")
#: the parameters a person sets by hand, with (min, max, default, step)
PARAM_RANGES = {
    "k": (1, 1000, 60, 1),
    "gamma": (0.0, 2.0, 0.5, 0.05),
    "phi": (0.01, 0.99, 0.8, 0.01),
    "sigma": (0.0, 1.0, 0.01, 0.01),
    "w": (0, 100, 2, 1),
}


def method_label(method: str) -> str:
    return METHOD_LABELS.get(method, method)


def norm_label(norm: str) -> str:
    return _(NORM_LABELS.get(norm, norm))


def default_runs(names: list[str]) -> list[str]:
    """The sample's natural pair (bm25 and dense) when loaded, else the first two runs."""
    wanted = [n for n in ("bm25", "dense") if n in names]
    return wanted if len(wanted) == 2 else names[:2]


def is_weighted(method: str) -> bool:
    return bool(METHODS[method].get("weights"))


def is_supervised(method: str) -> bool:
    return bool(METHODS[method].get("supervised"))


def fold_headers(runs: list[str]) -> dict[str, str]:
    """Headings of the columns of :attr:`metrics_core.fusion.Tuning.folds`, in the page's
    language (``score <run>``: the input run's mean on the fold's held-out queries)."""
    return {
        "fold": _("Fold"),
        "params": _("Chosen parameters"),
        "n_train": _("Training queries"),
        "n_test": _("Held-out queries"),
        "train_score": _("Training score"),
        "test_score": _("Held-out score"),
    } | {f"score {r}": _("Held-out score of {run}").format(run=r) for r in runs}


__all__ = [
    "SAMPLE",
    "RUNS",
    "METHOD",
    "NORM",
    "TUNE",
    "MEASURE",
    "FOLDS",
    "MEASURES",
    "PARAM_RANGES",
    "method_label",
    "norm_label",
    "default_runs",
    "is_weighted",
    "is_supervised",
    "fold_headers",
]
