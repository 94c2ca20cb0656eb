"""Hashing: mAP with its tie band, P@k, precision/recall by Hamming radius, per-class mAP."""

import streamlit as st

from metrics_core.errors import InputError
from ui.common.downloads import download_table
from ui.common.frame import page
from ui.common.i18n import count
from ui.common.i18n import gettext as _
from ui.common.prologue import needs
from ui.common.style import MEASURE_FORMAT, MISSING, heading, md_text, say
from ui.hashing import state as hs
from ui.hashing.data import (
    RADIUS_RULE,
    TIE_RULES,
    codes_summary,
    device_label,
    evaluate,
    p_at_k_cutoffs,
    radius_note,
    radius_precision,
    settings_of,
)
from ui.hashing.figures import map_band_figure, pr_by_radius_figure, precision_at_k_figure
from ui.hashing.widgets import data_panel, ensure_defaults

with page(
    _("Hash-code retrieval"),
    sidebar=False,
    summary=codes_summary,
    caption=_(
        "Hamming ranking of binary codes (±1 or 0/1). At 12-64 bits most "
        "distances tie, so mAP is given as the expected value over random "
        "tie order, with the band from relevant-last to relevant-first."
    ),
) as p:
    ensure_defaults()
    data_panel()

    data = st.session_state[hs.DATA]
    if not needs(data is not None, _("Load the sample or upload codes and labels to begin.")):
        p.stop()

    n_db = len(data["db_codes"])
    # two settings per row: four in a row cut their labels and choices on a narrow window
    c1, c2 = st.columns(2)
    c3, c4 = st.columns(2, vertical_alignment="bottom")
    topk = c1.number_input(
        _("mAP@K (0 = whole ranking)"), min_value=0, max_value=n_db, value=0, step=1, key=hs.TOPK
    )
    ties = c2.selectbox(
        _("Ties"), list(TIE_RULES), key=hs.TIES, format_func=lambda t: _(TIE_RULES[t])
    )
    normalizer = c3.selectbox(
        _("AP@K normalizer"),
        ["retrieved", "min_r_k"],
        key=hs.NORMALIZER,
        format_func=lambda n: {
            "retrieved": _("relevant retrieved in the top K"),
            "min_r_k": _("min(R, K)"),
        }[n],
        help=_("relevant retrieved in the top K (DeepHash), or min(R, K)"),
    )
    exclude = c4.checkbox(_("Leave out queries without relevant items"), key=hs.EXCLUDE)

    try:
        result = evaluate(
            data["query_codes"],
            data["db_codes"],
            data["query_labels"],
            data["db_labels"],
            int(topk) or None,
            ties,
            normalizer,
            "exclude" if exclude else "zero",
            p_at_k_cutoffs(n_db),
            None,  # the device torch sees (ui.hashing.data.device_name)
        )
    except InputError as exc:
        st.error(md_text(exc.plain(_)))
        p.stop()

    st.caption(
        say(
            _(
                "Data: {source} · {q} queries × {db} database codes × {bits} bits · device: {device}"
            ),
            source=data["source"],
            q=result["n_queries"],
            db=result["n_db"],
            bits=result["bits"],
            device=device_label(),
        )
    )
    lo, hi = result["map_band"]
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen: no label is cut
    map_label = "mAP" + (f"@{int(topk)}" if topk else "")
    row.metric(
        map_label,
        f"{result['map']:.4f}",
        help=say(_("ties: {rule}"), rule=_(TIE_RULES[ties])),
        width="content",
    )
    row.metric(
        _("Tie band"),
        f"{lo:.4f} .. {hi:.4f}",
        width="content",
        help=_("pessimistic (relevant last) .. optimistic (relevant first)"),
    )
    # one rule for precision within the radius (RADIUS_RULE): here, in the tables, in the exports
    empty, nq = result.get("empty_radius_queries", 0), result["n_queries"]
    precision_radius = radius_precision(result["precision_radius"], empty, nq)
    radius_words = radius_note(empty, nq, _, count)
    row.metric(
        say(_("Precision within radius {r}"), r=result["radius"]),
        "–" if precision_radius != precision_radius else f"{precision_radius:.4f}",
        width="content",
        help=say(heading(radius_words)) if radius_words else None,
    )
    row.metric(
        say(_("Recall within radius {r}"), r=result["radius"]),
        f"{result['recall_radius']:.4f}",
        width="content",
    )
    if precision_radius != precision_radius:
        st.caption(say(_("“–”: {note}."), note=radius_words))
    # P@k on the first screen, beside mAP: the customary cut-offs that the database holds
    at_k = result["precision_at_k"]
    first = [k for k in (1, 5, 10, 100, 1000) if k in at_k] or list(at_k)[:4]
    row_k = st.container(horizontal=True, gap="medium")
    for k in first:
        row_k.metric(
            say("P@{k}", k=k), f"{at_k[k]:.4f}", width="content"
        )  # i18n: ignore (canonical names)

    tables = result["tables"]
    settings = settings_of(result, data["source"], normalizer)
    headers = {
        "class": _("Class"),
        "query": _("Query"),
        "precision": _("Precision"),
        "recall": _("Recall"),
        "radius": _("Hamming radius"),
        "measure": _("Measure"),
        "value": _("Value"),
        "note": _("Note"),
    }
    # the summary's measures and notes are sentences: sized to them (auto-sized, the notes were
    # cut at 1280 px; "small"/"large" left the measures cut), 720 px in all: an 800 px window
    WIDTHS = {"measure": 300, "value": 80, "note": 340}

    def table_with_export(name: str, title: str, key: str, table_key: str) -> None:
        """One of the evaluation's tables (:func:`metrics_core.hashing.tables.hashing_tables`)
        on screen and in the four export formats."""
        shown = tables[name]
        st.dataframe(
            shown,
            hide_index=True,
            key=table_key,
            column_config={
                c: st.column_config.NumberColumn(
                    headers.get(c, c), format=MEASURE_FORMAT, width=WIDTHS.get(c)
                )
                if shown[c].dtype.kind == "f"
                else st.column_config.Column(headers.get(c, c), width=WIDTHS.get(c))
                for c in shown.columns
            },
            placeholder=MISSING,
        )
        download_table(
            shown.rename(columns=headers),
            f"hashing_{name}",
            title=title,
            key=key,
            index=False,
            **settings,
        )

    st.subheader(_("mAP per class"))
    table_with_export("per_class", _("mAP per class"), "hash_per_class", hs.PER_CLASS)
    st.subheader(_("Summary and curves"))
    table_with_export("summary", _("Hash-code retrieval summary"), "hash_summary", hs.SUMMARY)
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Precision at k**"))
        table_with_export(
            "precision_at_k", _("Precision at k (Hamming ranking)"), "hash_p_at_k", hs.P_AT_K
        )
    with right:
        st.markdown(_("**Precision and recall by Hamming radius**"))
        table_with_export(
            "by_radius",
            _("Precision and recall within Hamming radius"),
            "hash_by_radius",
            hs.BY_RADIUS,
        )
        st.caption(_(RADIUS_RULE))
    st.subheader(_("Charts"))
    st.plotly_chart(
        map_band_figure(result["map"], result["map_band"], _(TIE_RULES[ties])), width="stretch"
    )
    # one chart per row: side by side their titles were cut on a narrow window
    st.plotly_chart(precision_at_k_figure(result["precision_at_k"]), width="stretch")
    # the curve's points are the radius table's (an undefined precision is no point)
    st.plotly_chart(
        pr_by_radius_figure(tables["by_radius"].to_dict("list"), result["radius"]), width="stretch"
    )
    st.subheader(_("AP per query"))
    table_with_export("per_query", _("AP per query"), "hash_per_query", hs.PER_QUERY)
