"""Widget keys and labels of the Fusion page; the work is the library's (``mc.fuse``,
``mc.tune_fusion``, ``mc.compare``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from metrics_core.fusion.catalog import METHOD_LABELS, METHODS, NORM_LABELS
from ui.common.i18n import gettext as _
from ui.common.style import Said, md_join, plain, say

if TYPE_CHECKING:
    import pandas as pd

PREFIX = "ranklab.w.fusion."
SAMPLE = PREFIX + "sample"
RUNS = PREFIX + "runs"
METHOD = PREFIX + "method"
NORM = PREFIX + "norm"
TUNE = PREFIX + "tune"
MEASURE = PREFIX + "measure"
FOLDS = PREFIX + "folds"
JOIN = PREFIX + "join"
#: measures offered for tuning and the board
MEASURES = ("nDCG@10", "AP", "RR", "P@10", "R@100", "nDCG")
#: the parameters a person sets by hand, with (min, max, default, step): each method's
#: declaration gives them (:class:`metrics_core.fusion.declaration.FusionParam`)
PARAM_RANGES = {
    p.name: p.app for spec in METHODS.values() for p in spec.params if p.app is not None
}


def method_label(method: str) -> str:
    return _(METHOD_LABELS.get(method, method))  # "Weighted Condorcet" is translated


def norm_label(norm: str) -> str:
    return _(NORM_LABELS.get(norm, norm))


def default_runs(names: list[str]) -> list[str]:
    """The sample's natural pair (bm25 and dense) when loaded, else the first two runs."""
    wanted = [n for n in ("bm25", "dense") if n in names]
    return wanted if len(wanted) == 2 else names[:2]


def is_weighted(method: str) -> bool:
    return METHODS[method].weighted


def is_supervised(method: str) -> bool:
    return METHODS[method].supervised


def hand_params(method: str) -> list[str]:
    """The method's parameters a person sets on the page (the others are trained)."""
    return [p.name for p in METHODS[method].params if p.app is not None]


def reference(method: str) -> str:
    """The method's literature reference, in the page's language (authors joined by its word
    for "and"; titles as published)."""
    return _(METHODS[method].ref)


def fused_run_name(method: str, inputs: list[str], tuned: bool, in_sample: bool = False) -> str:
    """The fused run's name, in full: the method's label (tuned: and how) and its inputs,
    ``RRF (bm25 + dense)``, ``WSUM, cross-validated (bm25 + dense)``."""
    label = method_label(method)
    if tuned:
        how = _("{method}, in-sample") if in_sample else _("{method}, cross-validated")
        label = plain(how, method=label)
    return f"{label} ({' + '.join(inputs)})"


def board_names(labels: list[str]) -> Said:
    """The board's runs named in full under it, as text in Markdown (a caption):
    ``a bm25 · b dense · c RRF (bm25 + dense)``."""
    return say(_("Runs: {names}"), names=md_join(labels, " · "))


def join_button(run, name: str, add_run: Callable[[object, str], str]) -> None:
    """The button that loads the fused run beside the uploads by ``add_run`` (the one loading
    path, :func:`ui.ranking.data.add_run`, which the page passes: a section imports no other):
    named in full on the button (as text, wrapped, not cut); once loaded, a line says where
    it is."""
    import streamlit as st

    from ui.common import state

    joined = st.session_state.get(JOIN + ".done") or {}
    loaded = st.session_state.get(state.RUNS) or {}
    if joined.get(name) in loaded:
        st.success(
            say(
                _(
                    "{name} is a loaded run: Overview, Per query, Compare and every ranking "
                    "page show it."
                ),
                name=joined[name],
            )
        )
        return

    def add() -> None:
        final = add_run(run, name)
        st.session_state[JOIN + ".done"] = {**joined, name: final}

    st.button(
        say(_("Add {name} to the loaded runs"), name=name),
        key=JOIN,
        on_click=add,
        help=_("It joins the uploaded runs, as if uploaded: every ranking page shows it."),
    )


def fused_label(method: str, in_sample: bool) -> str:
    """The tuned fused run's name on screen, in the page's language (the library names it
    ``<method> (cross-validated)`` or ``<method> (in-sample)`` in English)."""
    if in_sample:
        return plain(_("{method} (in-sample)"), method=method)
    return plain(_("{method} (cross-validated)"), method=method)


def _param_name(name: str) -> str:
    # k, gamma, phi, sigma and w are the symbols of the formulas shown above the tables
    return _("segments") if name == "n_segments" else name


def _number(value) -> str:
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


def params_text(params: dict, runs: list[str]) -> str:
    """One fold's chosen parameters as a person reads them: ``k = 40``; weights named by
    their run (``weights: bm25 0.3, dense 0.7``); ``-`` when the method has none."""
    parts = []
    for name, value in params.items():
        if name == "weights" and len(value) == len(runs):
            pairs = ", ".join(f"{r} {_number(w)}" for r, w in zip(runs, value, strict=True))
            parts.append(plain(_("weights: {pairs}"), pairs=pairs))
        elif isinstance(value, list | tuple):
            parts.append(f"{_param_name(name)} = " + ", ".join(_number(v) for v in value))
        else:
            parts.append(f"{_param_name(name)} = {_number(value)}")
    return "; ".join(parts) or "-"


def fold_headers() -> dict[str, str]:
    """Headings of the per-fold settings taken from :attr:`metrics_core.fusion.Tuning.folds`,
    in the page's language."""
    return {
        "fold": _("Fold"),
        "params": _("Chosen parameters"),
        "n_train": _("Training queries"),
        "n_test": _("Held-out queries"),
        "train_score": _("Training score"),
    }


def held_out_title(measure: str) -> str:
    """The heading of the held-out scores' table (its columns are named by the runs)."""
    return say(_("Held-out {measure} on each fold"), measure=measure)


def fold_tables(folds: pd.DataFrame, runs: list[str], fused: str) -> tuple[pd.DataFrame, ...]:
    """:attr:`metrics_core.fusion.Tuning.folds` as two narrow tables (one wide table of
    ``3 + 2 + len(runs)`` long headings scrolled sideways at 1280 px): per fold, the chosen
    parameters with the training side; and the held-out score of the fused run (headed
    ``fused``) and of each input run (headed by its name), fold by fold."""
    heads = fold_headers()
    settings = folds[list(heads)].copy()
    settings["params"] = [params_text(p, runs) for p in settings["params"]]
    held = folds[["fold", "test_score", *(f"score {r}" for r in runs)]]
    held = held.set_axis([heads["fold"], fused, *runs], axis=1)
    return settings.rename(columns=heads), held


__all__ = [
    "METHOD_LABELS",
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
    "hand_params",
    "reference",
    "fused_label",
    "fused_run_name",
    "board_names",
    "join_button",
    "JOIN",
    "params_text",
    "fold_headers",
    "held_out_title",
    "fold_tables",
]
