"""Fusion: fuse loaded runs (ranx's catalogue), or tune a fusion with cross-validation; the fused
run on a board beside its inputs with significance against each, downloadable as a TREC run."""

import streamlit as st

from metrics_core.errors import InputError
from ui.common import state
from ui.common.downloads import download_buttons
from ui.common.frame import page
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import COUNT_FORMAT, MEASURE_FORMAT, MISSING, md_text, say
from ui.fusion import data as fd
from ui.fusion import widgets as fw
from ui.fusion.data import EXPLAINED, METHODS, NORMS
from ui.ranking.data import add_run, has_runs
from ui.samples import load_every_sample

with page(_("Fusion")) as p:
    if not needs(
        has_runs(2),
        _(
            "Load qrels and at least two runs first (Data page, or the sample below); this page "
            "fuses runs into one, e.g. a lexical run with a dense one."
        ),
        key=fw.SAMPLE,
        sample=load_every_sample,
    ):
        p.stop()
    qrels = st.session_state[state.QRELS]
    runs = st.session_state[state.RUNS]

    names = list(runs)
    conventions = st.session_state[state.CONVENTIONS]
    c1, c2, c3 = st.columns([2, 1, 1])
    picked = c1.multiselect(
        _("Runs to fuse"),
        names,
        default=fw.default_runs(names),
        key=fw.RUNS,
        placeholder=_("Choose options"),
    )
    methods = list(METHODS)
    method = c2.selectbox(
        _("Method"), methods, index=methods.index("rrf"), key=fw.METHOD, format_func=fw.method_label
    )
    norms = list(NORMS)
    norm = c3.selectbox(
        _("Normalisation"),
        norms,
        index=norms.index("min-max"),
        key=fw.NORM,
        format_func=fw.norm_label,
        help=_(
            "Applied to each run's scores per query before fusing; rank-based methods "
            "use the ranks."
        ),
    )
    formula, sentence = EXPLAINED[method]
    st.latex(formula)
    st.caption(
        say(
            "{sentence} {reference}",
            sentence=say(_(sentence)),
            reference=say(_("Reference: {reference}"), reference=fw.reference(method)),
        )
    )
    tune = st.toggle(
        _("Tune the parameters (cross-validated by query)"),
        key=fw.TUNE,
        help=_("Grid search on training queries; scores on the held-out queries of each fold."),
    )
    c4, c5 = st.columns(2)
    measure = c4.selectbox(_("Measure"), fw.MEASURES, key=fw.MEASURE)
    if len(picked) < 2:
        st.warning(_("Pick at least two runs."))
        p.stop()

    params, weights = {}, None
    if tune:
        k = c5.number_input(_("Folds"), min_value=2, max_value=20, value=5, step=1, key=fw.FOLDS)
    else:
        for name in fw.hand_params(method):
            if name in fw.PARAM_RANGES:
                lo, hi, default, step = fw.PARAM_RANGES[name]
                params[name] = c5.number_input(
                    name,
                    min_value=lo,
                    max_value=hi,
                    value=default,
                    step=step,
                    key=f"{fw.PREFIX}param.{name}",
                )
        if fw.is_weighted(method):
            cols = st.columns(len(picked))
            weights = [
                col.number_input(
                    say(_("Weight of {run}"), run=r),
                    min_value=0.0,
                    max_value=1.0,
                    value=round(1 / len(picked), 2),
                    step=0.05,
                    key=f"{fw.PREFIX}w.{r}",
                )
                for col, r in zip(cols, picked, strict=True)
            ]

    chosen = {r: runs[r] for r in picked}
    try:
        with st.spinner(_("Fusing...")):
            got = fd.fused(
                qrels,
                chosen,
                method,
                norm,
                weights,
                params,
                tune,
                int(k) if tune else 0,
                measure,
                conventions,
                lambda tuning: fw.fused_run_name(
                    method,
                    picked,
                    tuned=tuning is not None,
                    in_sample=getattr(tuning, "in_sample", False),
                ),
            )
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()
    fused, fused_name, comparison, tuning = got.run, got.name, got.comparison, got.tuning

    if tuning is not None:
        st.info(md_text(tuning.describe(_)))
    elif fw.is_supervised(method):
        st.warning(
            _(
                "Trained on the judgements it is scored on (in-sample): the score is optimistic; "
                "tune it to score it on held-out queries."
            )
        )

    st.subheader(_("The fused run beside its inputs"))
    board = comparison.paper()
    board.index.name = _("Run")
    st.dataframe(
        board,
        width="stretch",
        placeholder=MISSING,
        column_config={"_index": st.column_config.TextColumn(width="large")},
    )
    # every run's name in full, wrapped (a long fused name would be cut in a grid cell)
    st.caption(fw.board_names(list(board.index)))
    st.caption(md_text(comparison.legend(gettext=_)))  # it names the inputs: as text
    pairs = comparison.to_frame()
    against = pairs[pairs["run_b"] == fused_name][
        ["measure", "run_a", "mean_a", "mean_b", "delta", "p_corrected", "significant"]
    ]
    st.subheader(_("Significance against each input"))
    st.dataframe(
        against.rename(
            columns={
                "measure": _("Measure"),
                "run_a": _("Input"),
                "mean_a": _("Input mean"),
                "mean_b": _("Fused mean"),
                "delta": "Δ",
                "p_corrected": _("Corrected p"),
                "significant": _("Significant"),
            }
        ),
        hide_index=True,
        width="stretch",
        column_config={
            c: st.column_config.NumberColumn(format=MEASURE_FORMAT)
            for c in (_("Input mean"), _("Fused mean"), "Δ", _("Corrected p"))
        },
        placeholder=MISSING,
    )
    if tuning is not None:
        settings, held = fw.fold_tables(tuning.folds, list(chosen), fused_name)
        heads = fw.fold_headers()
        fold_column = st.column_config.NumberColumn(format=COUNT_FORMAT, pinned=True)
        st.subheader(_("Parameters chosen on each fold"))
        st.dataframe(
            settings,
            hide_index=True,
            width="stretch",
            column_config={
                heads["fold"]: fold_column,
                heads["n_train"]: st.column_config.NumberColumn(format=COUNT_FORMAT),
                heads["n_test"]: st.column_config.NumberColumn(format=COUNT_FORMAT),
                heads["train_score"]: st.column_config.NumberColumn(format=MEASURE_FORMAT),
            },
            placeholder=MISSING,
        )
        st.subheader(fw.held_out_title(measure))
        st.dataframe(
            held,
            hide_index=True,
            width="stretch",
            column_config={heads["fold"]: fold_column}
            | {c: st.column_config.NumberColumn(format=MEASURE_FORMAT) for c in held.columns[1:]},
            placeholder=MISSING,
        )
        st.caption(
            _(
                "Each fold's queries were held out while its parameters were chosen on the "
                "other folds; the inputs are scored on the same queries."
            )
        )
    join_slot = st.container()  # the button that loads the fused run, above its download
    st.caption(_("Download the fused run (TREC)"))
    download_buttons(
        {"trec": lambda: fd.fused_text(fused)}, f"{method}_fused", key=f"{fw.PREFIX}download"
    )
    with join_slot:
        fw.join_button(fused, fused_name, add_run)
