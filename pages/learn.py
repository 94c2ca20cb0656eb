"""Learn: every measure's definition first, then a worked example on an editable ranking, then the
conventions."""

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.common.i18n import gettext as _
from ui.common.sidebar import CHOICES, choice_words, convention_heading, convention_label
from ui.common.style import MISSING, md_join, md_text, plain, say
from ui.fusion.data import EXPLAINED, METHODS
from ui.fusion.widgets import METHOD_LABELS
from ui.ranking.data import example_evaluation
from ui.ranking.figures import gain_contributions
from ui.ranking.learn import (
    LOCAL,
    PARAMS,
    REGISTRY,
    ensure_defaults,
    load_example,
    load_picked_example,
    shown_example,
)
from ui.ranking.learn_examples import (
    FOUR_RESULTS,
    GRADED,
    PRESETS,
    seed_comparison,
)
from ui.ranking.state import Learn

with page(_("Measures explained")) as p:
    ensure_defaults()

    # the definitions first (the page's answer); the worked example and the conventions after
    # --- every measure ----------------------------------------------------------------------
    st.header(_("Every measure"))
    st.caption(
        _(
            "Every definition below comes from the measure registry, the same one the engine, "
            "the command line and the measure picker use."
        )
    )

    for d in REGISTRY.values():
        with st.expander(say("{name}: {description}", name=d.name, description=_(d.description))):
            if d.formula:
                st.latex(d.formula)
            written = d.usage().replace("[@k]", " " + _("or") + " " + d.name + "@k")
            params = ", ".join(f"{p}={_(PARAMS[p].accepted())}" for p in d.params)
            parts = [say(_("written {usage}"), usage=written)]
            if params:
                parts.append(say(_("parameters: {params}"), params=params))
            if d.trec:
                names = ", ".join(t.replace("{k}", "k") for t in d.trec)
                parts.append(say(_("trec_eval: {names}"), names=names))
            st.caption(md_join(parts, " · "))
            for case in d.edge_cases:
                st.markdown(say("- {case}", case=_(case)))
            if d.example is not None:
                st.markdown(
                    say(
                        _("**Example.** {explanation} {measure} = {value}."),
                        explanation=d.example.explained(_),
                        measure=d.example.measure,
                        value=f"{d.example.value:.4f}",
                    )
                )
            st.caption(say(_("Reference: {reference}"), reference=d.referenced(_)))

    st.subheader(_("Diversity: judgements per subtopic"))
    st.write(
        _(
            "An ambiguous query has several intents (subtopics). The diversity measures above "
            "(alpha-nDCG, alpha-DCG, ERR-IA, nERR-IA, NRBP, nNRBP, P-IA, MAP-IA, strec) read qrels "
            "that judge each document per subtopic: ndeval's lines qid subtopic docid relevance, "
            "the second column naming the subtopic. A document covering a subtopic already seen "
            "gains less (alpha). The Data page recognises such a file (or load its Diversity "
            "sample); every value equals ndeval's, the TREC Web track's tool."
        )
    )
    st.subheader(_("The unjudged band"))
    st.write(
        _(
            "A run retrieves documents nobody judged; they count as non-relevant. The unjudged "
            "band is the lowest and the highest value a measure can take over every labelling of "
            "those documents, with labels from 0 to the qrels' highest. Labelling one relevant "
            "also adds it to R and to the ideal ranking, so the extremes are computed exactly, "
            "measure by measure. The Overview shows it under the tie band and names the pairs of "
            "runs whose order it could reverse."
        )
    )
    st.subheader(_("How many queries"))
    st.write(
        _(
            "Is the test collection big enough? For each comparison, the Compare page gives the "
            "number of queries a two-sided paired t-test needs to detect the observed difference "
            "(and one you choose) with the power you ask, and the smallest difference the current "
            "queries detect: topic set size design (T. Sakai, Information Retrieval Journal "
            "2016; W. Webber, A. Moffat, J. Zobel, CIKM 2008), the power from the noncentral t "
            "distribution."
        )
    )

    st.subheader(_("Rank fusion"))
    st.write(
        _(
            "Fusion combines several runs into one (Fusion page, ranklab fuse). Symbols: s_i(d) the normalised "
            "score of document d in run i, r_i(d) its rank there, n(d) the number of runs that retrieved it, "
            "w_i the weight of run i, N the number of candidates, L_i the length of run i's list. The catalogue "
            "is ranx's (Bassani and Romelli 2022, ranx.fuse and ranx.optimize_fusion, CIKM); the Comb family "
            "is Fox and Shaw 1994 (Combination of multiple searches, TREC-2); RRF is Cormack, Clarke and "
            "Buettcher 2009 (SIGIR)."
        )
    )
    for name, (latex, sentence) in EXPLAINED.items():
        with st.expander(
            say("{method}: {sentence}", method=_(METHOD_LABELS[name]), sentence=_(sentence))
        ):
            st.latex(latex)
            params = METHODS[name].signature()
            if params:
                st.caption(say(_("parameters: {params}"), params=params))
            st.caption(say(_("Reference: {reference}"), reference=_(METHODS[name].ref)))

    st.header(_("Worked example"))
    st.write(
        _(
            "Edit the relevance labels of a ranking (top row = rank 1), or load an example. "
            "The numbers below are computed by the same engine as every other page."
        )
    )
    # the two examples one above the other, each as wide as its column: side by side the longer
    # name wrapped to two lines and its button stood taller than the other
    b1, b3 = st.columns(2)
    for name, key in ((GRADED, Learn.GRADED), (FOUR_RESULTS, Learn.FOUR_RESULTS)):
        b1.button(_(name), on_click=load_example, args=(name,), key=key, width="stretch")
    others = [n for n in PRESETS if n not in (GRADED, FOUR_RESULTS)]
    with b3:
        st.selectbox(_("More examples"), others, key=Learn.OTHER, format_func=_)
        st.button(_("Load"), on_click=load_picked_example, key=Learn.LOAD)

    left, right = st.columns([1, 2])
    with left:
        frame = pd.DataFrame({"relevance": st.session_state[Learn.LABELS]})
        edited = st.data_editor(
            frame,
            num_rows="dynamic",
            key=Learn.editor(st.session_state[Learn.VERSION]),
            column_config={
                "relevance": st.column_config.NumberColumn(
                    _("Relevance label"), min_value=-1, max_value=10, step=1
                )
            },
        )
        labels = [float(x) for x in edited["relevance"].dropna()]
    with right:
        c1, c2 = st.columns(2)
        k = int(c1.number_input(_("Cutoff k"), 1, 1000, key=Learn.K))
        numrel = int(
            c2.number_input(
                _("Relevant documents in the collection (0 = only those listed)"),
                0,
                100000,
                key=Learn.NUM_RELEVANT,
            )
        )
        c3, c4, c5, c6 = st.columns(4)
        local = {}
        for col, f in zip((c3, c4, c5, c6), LOCAL, strict=True):
            local[f] = col.selectbox(
                convention_heading(f),  # the sidebar's words and capitals
                CHOICES[f],
                key=Learn.convention(f),
                format_func=lambda v, f=f: choice_words(f, v),  # "linear: the label", not linear
            )

    if not labels:
        st.info(_("Add at least one row to the ranking."))
        p.stop()
    conv = conventions().replace(**local)
    try:
        ev, steps = example_evaluation(labels, k, numrel or None, conv)
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()

    name = shown_example(labels)
    if name is not None:
        st.markdown(say("**{name}.** {note}", name=_(name), note=_(PRESETS[name]["note"])))
        st.dataframe(
            seed_comparison(ev, PRESETS[name]["expected"]),
            hide_index=True,
            key=Learn.STATED,
            column_config={
                "measure": _("Measure"),
                "the seed says": _("Stated value"),
                "RankLab": st.column_config.NumberColumn(_("RankLab"), format="%.4f"),
                "agrees to the seed's decimals": _("Agrees to the stated decimals"),
            },
            placeholder=MISSING,
        )
    values = pd.DataFrame({"value": pd.Series(ev.aggregate)})
    values.index.name = "measure"
    st.dataframe(
        values,
        column_config={
            "value": st.column_config.NumberColumn(_("Value"), format="%.4f"),
            "measure": st.column_config.TextColumn(_("Measure")),
        },
        key=Learn.VALUES,
        placeholder=MISSING,
    )
    download_table(
        values,
        "worked_example",
        conv,
        title=_("Worked example"),
        key="learn",
        labels=" ".join(f"{x:g}" for x in labels),
        k=k,
    )

    dcg = steps["DCG so far"].iloc[-1] if len(steps) else 0.0
    ndcg = ev.aggregate[f"nDCG@{k}"]
    st.markdown(
        say(
            _(
                "**DCG@{k} rank by rank** (gain = {gain}, discount = {discount}): DCG@{k} = {dcg}, "
                "nDCG@{k} = DCG / IDCG = {ndcg} (ideal from {ideal})."
            ),
            k=k,
            gain=conv.gain,
            discount=conv.discount,
            dcg=f"{dcg:.4f}",
            ndcg="–" if ndcg != ndcg else f"{ndcg:.4f}",
            ideal=conv.ideal,
        )
    )
    st.dataframe(
        steps,
        hide_index=True,
        key=Learn.STEPS,
        column_config={
            c: st.column_config.NumberColumn(head, format="%.4f")
            for c, head in (
                ("gain", _("Gain")),
                ("discount", _("Discount")),
                ("gain × discount", _("Gain × discount")),
                ("DCG so far", _("DCG so far")),
            )
        }
        | {
            "rank": st.column_config.NumberColumn(_("Rank")),
            "label": st.column_config.NumberColumn(_("Label")),
        },
        placeholder=MISSING,
    )
    download_table(
        steps.set_index("rank"),
        "dcg_steps",
        conv,
        title=plain(_("DCG@{k} rank by rank"), k=k),
        key="learn_steps",
    )
    st.plotly_chart(
        gain_contributions(steps["label"], steps["discount"], steps["gain"]), key=Learn.CHART
    )

    st.header(_("Conventions"))
    st.write(
        _(
            "Where specifications disagree, every choice exists under a name; the defaults are trec_eval's. "
            "Change them in the sidebar; every table and export states the ones used."
        )
    )
    rows = [
        {
            "convention": f.replace("_", " "),
            "meaning": convention_label(f),
            "default (trec_eval)": str(v[0]),
            "alternatives": ", ".join(map(str, v[1:])),
        }
        for f, v in CHOICES.items()
    ]
    rows += [
        {
            "convention": _("relevance threshold"),
            "meaning": convention_label("relevance_threshold"),
            "default (trec_eval)": "1",
            "alternatives": _("any number (trec_eval -l)"),
        },
        {
            "convention": _("depth"),
            "meaning": convention_label("depth"),
            "default (trec_eval)": _("all"),
            "alternatives": _("any positive integer (trec_eval -M)"),
        },
    ]
    conventions_table = pd.DataFrame(rows).set_index("convention")
    st.dataframe(
        conventions_table,
        key=Learn.CONVENTIONS,
        column_config={
            "convention": _("Convention"),
            "meaning": _("Meaning"),
            "default (trec_eval)": _("Default (trec_eval)"),
            "alternatives": _("Alternatives"),
        },
        placeholder=MISSING,
    )
    download_table(conventions_table, "conventions", conv, title=_("Conventions"), key="learn_conv")
