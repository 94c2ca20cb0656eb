"""Widgets shared by the ranking pages: measure chooser, thresholds editor, summary tables."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from metrics_core.errors import InputError
from metrics_core.ranking import registry
from metrics_core.ranking.registry import parse_measure
from metrics_core.report import interpret
from metrics_core.report.leaderboard import BEST, TIE_ROW, leaderboard_grid, tie_band  # noqa: F401  (pages use them)
from metrics_core.stats.bootstrap import bootstrap_table
from ui import state

# the picker offers every family's common instances, from the measure registry
COMMON_MEASURES = list(registry.COMMON_MEASURES)
_W_MEASURES = "ranklab.w.measures"
_W_CUSTOM = "ranklab.w.custom_measure"
FAIR_RATIO = "ranklab.fair_ratio"
_BAND_MEMO = "ranklab.overview.band_memo"  # (key, evaluations and bounds, band) last drawn


def _on_measures() -> None:
    chosen = st.session_state.get(_W_MEASURES) or []
    st.session_state[state.MEASURES] = list(chosen) or list(state.DEFAULT_MEASURES)


def _on_custom() -> None:
    text = (st.session_state.get(_W_CUSTOM) or "").strip()
    if not text:
        return
    try:
        name = parse_measure(text).name
    except InputError as exc:
        st.session_state[state.MESSAGES].append(("error", str(exc)))
        return
    measures = list(st.session_state[state.MEASURES])
    if name not in measures:
        measures.append(name)
    st.session_state[state.MEASURES] = measures
    st.session_state[_W_CUSTOM] = ""


def measure_chooser(label: str = "Measures") -> list[str]:
    """Multiselect bound to ``ranklab.measures`` plus a box to add any measure by name."""
    chosen = list(st.session_state[state.MEASURES])
    options = list(dict.fromkeys(COMMON_MEASURES + chosen))
    st.session_state[_W_MEASURES] = chosen
    c1, c2 = st.columns([3, 1])
    c1.multiselect(label, options, key=_W_MEASURES, on_change=_on_measures)
    c2.text_input("Add a measure by name", key=_W_CUSTOM, on_change=_on_custom,
                  placeholder="e.g. nDCG(gain=exp)@5", help="ir_measures syntax; see Learn")
    messages = st.session_state[state.MESSAGES]
    while messages:
        level, text = messages.pop(0)
        getattr(st, level, st.info)(text)
    return list(st.session_state[state.MEASURES])


def thresholds_editor(key: str) -> tuple[dict, float]:
    """Editable "Good" thresholds and the Fair ratio; returns (thresholds, ratio)."""
    # The editor keeps its edits as a delta against the frame it was first given, so that
    # frame must stay fixed while the editor lives: snapshot the thresholds at that moment.
    editor_key, base_key = f"ranklab.thr.{key}", f"ranklab.thr.{key}.base"
    if editor_key not in st.session_state or base_key not in st.session_state:
        st.session_state[base_key] = dict(st.session_state[state.THRESHOLDS])
    base = st.session_state[base_key]
    frame = pd.DataFrame({"measure": list(base), "good at or above": [float(v) for v in base.values()]})
    with st.expander("Interpretation thresholds (Good at or above: RR 0.7, nDCG@10 0.6, P@5 0.5)"):
        edited = st.data_editor(frame, num_rows="dynamic", key=editor_key, hide_index=True,
                                column_config={"good at or above": st.column_config.NumberColumn(
                                    min_value=0.0, step=0.05, format="%.4f")})
        if FAIR_RATIO not in st.session_state:
            st.session_state[FAIR_RATIO] = 0.5
        st.number_input("Fair when at or above this fraction of the Good threshold", min_value=0.0,
                        max_value=1.0, step=0.05, key=FAIR_RATIO)
        if st.button("Reset thresholds", key=f"ranklab.thr.{key}.reset"):
            st.session_state[state.THRESHOLDS] = dict(state.DEFAULT_THRESHOLDS)
            st.session_state.pop(editor_key, None)
            st.session_state.pop(base_key, None)
            st.rerun()
    thresholds = {}
    for row in edited.to_dict(orient="records"):
        name, value = row.get("measure"), row.get("good at or above")
        if name is None or value is None or pd.isna(value) or not str(name).strip():
            continue
        try:
            thresholds[parse_measure(str(name)).name] = float(value)
        except InputError as exc:
            st.warning(str(exc))
    st.session_state[state.THRESHOLDS] = thresholds
    return thresholds, float(st.session_state[FAIR_RATIO])


def label_for(measure: str, value: float, thresholds: dict, ratio: float) -> str:
    """The Good / Fair / Needs improvement label of a value, or "" when the measure has no threshold."""
    if measure not in thresholds:
        return ""
    return interpret(float(value), thresholds[measure], ratio)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_bootstrap(per_query: pd.DataFrame, n_resamples: int, confidence: float, seed: int) -> pd.DataFrame:
    return bootstrap_table(per_query, n_resamples=n_resamples, confidence=confidence, seed=seed)


def summary_table(evaluations: dict, thresholds: dict, ratio: float, n_resamples: int = 1000,
                  confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Long table: one row per (run, measure) with aggregate, mean, median, CI and label."""
    rows = []
    for name, ev in evaluations.items():
        boot = cached_bootstrap(ev.per_query, n_resamples, confidence, seed)
        for m in ev.measures:
            b = boot.loc[m] if m in boot.index else None
            agg = float(ev.aggregate[m])
            rows.append({
                "run": name, "measure": m, "aggregate": agg,
                "mean": float(b["mean"]) if b is not None else float("nan"),
                "median": float(b["median"]) if b is not None else float("nan"),
                "ci_low": float(b["ci_low"]) if b is not None else float("nan"),
                "ci_high": float(b["ci_high"]) if b is not None else float("nan"),
                "queries": int(b["queries"]) if b is not None else 0,
                "interpretation": label_for(m, agg, thresholds, ratio),
            })
    return pd.DataFrame(rows)


def history_save_hook(evaluations: dict, conventions) -> None:
    """The "Save this evaluation" form of the History feature, under the overview."""
    import streamlit as st

    from ui import state
    from ui.history_actions import save_evaluation_form

    st.subheader("Save this evaluation")
    save_evaluation_form(list(evaluations.values()), st.session_state.get(state.QRELS),
                         st.session_state.get(state.META), key="overview")




#: The Overview's board settings: their widget keys and defaults (the page reads the settings
#: before it draws their widgets, after the leaderboard).
BOARD_KEYS = {"baseline": "ranklab.overview.baseline", "n_resamples": "ranklab.overview.resamples",
              "confidence": "ranklab.overview.confidence", "seed": "ranklab.overview.seed",
              "test": "ranklab.overview.test", "correction": "ranklab.overview.correction"}
BOARD_DEFAULTS = {"n_resamples": 1000, "confidence": 0.95, "seed": 0, "test": "permutation",
                  "correction": "holm"}
#: Permutations of the permutation test on the Overview.
BOARD_PERMUTATIONS = 10_000
_BOARD_MEMO = "ranklab.overview.boards"  # dict: board key -> (evaluations, leaderboard), this session
_BOARD_MEMO_SIZE = 4


def board_setting(name: str):
    """The current value of one of the Overview's board settings (its default until set)."""
    return st.session_state.get(BOARD_KEYS[name], BOARD_DEFAULTS.get(name))


def _settings(baseline: str, query_set: str, n_resamples, confidence, seed, correction: str, test: str) -> dict:
    return {"baseline": baseline, "query_set": query_set, "n_resamples": int(n_resamples),
            "confidence": float(confidence), "seed": int(seed), "correction": correction, "test": test,
            "permutations": BOARD_PERMUTATIONS}


def overview_board(evaluations: dict, baseline: str, measures, query_set: str, n_resamples: int,
                   confidence: float, seed: int, correction: str, test: str) -> pd.DataFrame:
    """The Overview's leaderboard of ``evaluations`` (metrics_core's leaderboard: one query set,
    bootstrap CI, corrected tests), kept in the session for these evaluations and settings
    (a rerun neither recomputes it nor hashes the per-query values to find it).

    Keyed by the loaded data (object ids), the conventions, the measures and the settings,
    and checked against the very evaluations it was computed from; leaderboards of data no
    longer loaded are dropped (with the evaluations they hold)."""
    from metrics_core.stats.comparison import leaderboard

    settings = _settings(baseline, query_set, n_resamples, confidence, seed, correction, test)
    data = (id(st.session_state.get(state.QRELS)),
            tuple((name, id(run)) for name, run in (st.session_state.get(state.RUNS) or {}).items()))
    key = data + (next(iter(evaluations.values())).conventions, tuple(measures), tuple(sorted(settings.items())))
    held = tuple(evaluations.values())
    memo = st.session_state.setdefault(_BOARD_MEMO, {})
    for stale in [k for k in memo if k[:2] != data]:
        del memo[stale]
    hit = memo.get(key)
    if hit is not None and len(hit[0]) == len(held) and all(a is b for a, b in zip(hit[0], held, strict=True)):
        return hit[1]
    board = leaderboard(list(held), baseline, list(measures), query_set=query_set, n_resamples=settings["n_resamples"],
                        confidence=settings["confidence"], seed=settings["seed"],
                        n_permutations=BOARD_PERMUTATIONS, correction=correction, test=test)
    entry = (held, board)
    memo.pop(key, None)
    while len(memo) >= _BOARD_MEMO_SIZE:
        memo.pop(next(iter(memo)))
    memo[key] = entry
    return entry[1]


TIE_LEGEND = ("Tie band: range of the mean over every order of tied scores (shown where that "
              "order changes the mean).")


def cached_tie_band(board: pd.DataFrame, evaluations: dict, bounds: dict) -> pd.DataFrame:
    """:func:`metrics_core.report.leaderboard.tie_band` of the board, kept in the session for
    the same board settings, evaluations and bounds (a rerun does not recompute it)."""
    key = (board.attrs.get("query_set"), tuple(dict.fromkeys(board["measure"])))
    held = tuple((n, ev, bounds.get(n)) for n, ev in evaluations.items())
    memo = st.session_state.get(_BAND_MEMO)
    if (memo is not None and memo[0] == key and len(memo[1]) == len(held)
            and all(a[0] == b[0] and a[1] is b[1] and a[2] is b[2] for a, b in zip(memo[1], held, strict=True))):
        return memo[2]
    band = tie_band(board, {n: ev.per_query for n, ev in evaluations.items()}, bounds)
    st.session_state[_BAND_MEMO] = (key, held, band)
    return band


def style_grid(grid: pd.DataFrame):
    """pandas Styler: best cells bold on a light background, CI rows grey."""
    def cell(v):
        if isinstance(v, str) and BEST in v:
            return "font-weight: bold; background-color: #e4f4e4"
        return ""

    def row(r):
        label = str(r["Run"])
        if label == TIE_ROW:
            return ["color: #92400e; font-size: 0.85em; font-style: italic" for _ in r]
        grey = label.startswith("   ")
        return ["color: #6b7280; font-size: 0.85em" if grey else "" for _ in r]

    return grid.style.apply(row, axis=1).map(cell)
