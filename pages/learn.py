"""Learn: a worked example on an editable ranking, every measure's formula, the conventions."""

import pandas as pd
import streamlit as st

from metrics_core.conventions import CHOICES, DESCRIPTIONS
from metrics_core.errors import InputError
from metrics_core.ranking.registry import PARAMS, REGISTRY
from ui.common.downloads import download_table
from ui.common.frame import conventions, page
from ui.ranking.figures import gain_contributions
from ui.ranking.learn import (
    LOCAL,
    ensure_defaults,
    load_example,
    load_picked_example,
    shown_example,
)
from ui.ranking.learn_examples import (
    FOUR_RESULTS,
    GRADED,
    PRESETS,
    dcg_table,
    evaluate_example,
    seed_comparison,
)
from ui.ranking.state import Learn

with page("Measures explained") as p:
    ensure_defaults()

    st.header("Worked example")
    st.write("Edit the relevance labels of a ranking (top row = rank 1), or load an example. "
             "The numbers below are computed by the same engine as every other page.")
    b1, b2, b3 = st.columns([1, 1, 2])
    b1.button(GRADED, on_click=load_example, args=(GRADED,), key=Learn.GRADED)
    b2.button(FOUR_RESULTS, on_click=load_example, args=(FOUR_RESULTS,), key=Learn.FOUR_RESULTS)
    others = [n for n in PRESETS if n not in (GRADED, FOUR_RESULTS)]
    with b3:
        st.selectbox("More examples", others, key=Learn.OTHER)
        st.button("Load", on_click=load_picked_example, key=Learn.LOAD)

    left, right = st.columns([1, 2])
    with left:
        frame = pd.DataFrame({"relevance": st.session_state[Learn.LABELS]})
        edited = st.data_editor(frame, num_rows="dynamic", key=Learn.editor(st.session_state[Learn.VERSION]),
                                column_config={"relevance": st.column_config.NumberColumn(
                                    "relevance label", min_value=-1, max_value=10, step=1)})
        labels = [float(x) for x in edited["relevance"].dropna()]
    with right:
        c1, c2 = st.columns(2)
        k = int(c1.number_input("Cutoff k", 1, 1000, key=Learn.K))
        numrel = int(c2.number_input("Relevant documents in the collection (0 = only those listed)",
                                     0, 100000, key=Learn.NUM_RELEVANT))
        c3, c4, c5, c6 = st.columns(4)
        local = {}
        for col, f in zip((c3, c4, c5, c6), LOCAL, strict=True):
            local[f] = col.selectbox(DESCRIPTIONS[f], CHOICES[f], key=Learn.convention(f))

    if not labels:
        st.info("Add at least one row to the ranking.")
        p.stop()
    conv = conventions().replace(**local)
    try:
        ev = evaluate_example(labels, k, numrel or None, conv)
    except InputError as exc:
        st.error(str(exc))
        p.stop()

    name = shown_example(labels)
    if name is not None:
        st.markdown(f"**{name}.** {PRESETS[name]['note']}")
        st.dataframe(seed_comparison(ev, PRESETS[name]["expected"]), hide_index=True,
                     key=Learn.STATED,
                     column_config={"measure": "Measure", "the seed says": "Stated value",
                                    "RankLab": st.column_config.NumberColumn("RankLab", format="%.4f"),
                                    "agrees to the seed's decimals": "Agrees to the stated decimals"})
    values = pd.DataFrame({"value": pd.Series(ev.aggregate)})
    values.index.name = "measure"
    st.dataframe(values, column_config={"value": st.column_config.NumberColumn("Value", format="%.4f")},
                 key=Learn.VALUES)
    download_table(values, "worked_example", conv, title="Worked example", key="learn",
                   labels=" ".join(f"{x:g}" for x in labels), k=k)

    steps = dcg_table(labels, k, conv)
    st.markdown(f"**DCG@{k} rank by rank** (gain = {conv.gain}, discount = {conv.discount}): "
                f"DCG@{k} = {steps['DCG so far'].iloc[-1] if len(steps) else 0.0:.4f}, "
                f"nDCG@{k} = DCG / IDCG = {ev.aggregate[f'nDCG@{k}']:.4f} (ideal from {conv.ideal}).")
    st.dataframe(steps, hide_index=True, key=Learn.STEPS,
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("gain", "discount", "gain × discount", "DCG so far")})
    download_table(steps.set_index("rank"), "dcg_steps", conv, title=f"DCG@{k} rank by rank", key="learn_steps")
    st.plotly_chart(gain_contributions(steps["label"], steps["discount"], steps["gain"]), key=Learn.CHART)

    # --- every measure ----------------------------------------------------------------------
    st.header("Every measure")
    st.caption("Every definition below comes from the measure registry, the same one the engine, "
               "the command line and the measure picker use.")

    for d in REGISTRY.values():
        with st.expander(f"{d.name}: {d.description}"):
            if d.formula:
                st.latex(d.formula)
            written = d.usage().replace("[@k]", " or " + d.name + "@k")
            params = ", ".join(f"{p}={PARAMS[p].accepted()}" for p in d.params)
            st.caption(f"written {written}" + (f" · parameters: {params}" if params else "")
                       + (f" · trec_eval: {', '.join(t.replace('{k}', 'k') for t in d.trec)}" if d.trec else ""))
            for case in d.edge_cases:
                st.markdown(f"- {case}")
            if d.example is not None:
                st.markdown(f"**Example.** {d.example.explanation} {d.example.measure} = {d.example.value:.4f}.")
            st.caption(f"Reference: {d.reference}")

    st.header("Conventions")
    st.write("Where specifications disagree, every choice exists under a name; the defaults are trec_eval's. "
             "Change them in the sidebar; every table and export states the ones used.")
    rows = [{"convention": f.replace("_", " "), "meaning": DESCRIPTIONS.get(f, ""), "default (trec_eval)": str(v[0]),
             "alternatives": ", ".join(map(str, v[1:]))} for f, v in CHOICES.items()]
    rows += [{"convention": "relevance threshold", "meaning": DESCRIPTIONS["relevance_threshold"],
              "default (trec_eval)": "1", "alternatives": "any number (trec_eval -l)"},
             {"convention": "depth", "meaning": DESCRIPTIONS["depth"], "default (trec_eval)": "all",
              "alternatives": "any positive integer (trec_eval -M)"}]
    conventions_table = pd.DataFrame(rows).set_index("convention")
    st.dataframe(conventions_table, key=Learn.CONVENTIONS)
    download_table(conventions_table, "conventions", conv, title="Conventions", key="learn_conv")
