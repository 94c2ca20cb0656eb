"""Names are text, everywhere: uploaded names (runs, tags, queries, documents, columns,
files) holding a Markdown link, HTML and LaTeX are shown literally on every page.

Every element Streamlit renders as Markdown (markdown, captions, headings, alerts, toasts,
expander and tab labels, widget labels and help, radio options, metric labels) is checked:
none may hold a hostile name in a form that would render as a link, a tag or math (the one
escaper, :func:`metrics_core.report.cells.markdown_escape`, turns ``[`` into ``\\[``, ``<``
into ``&lt;`` and ``$`` into ``\\$``). Raw HTML elements (``st.html``) may not hold them at all.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics_core as mc

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120

LINK_RUN = "[t](http://x.example/run)"
LINK_QUERY = "[q](http://x.example/q)"
BOLD = "<b>x</b>"
IMG = "<img/src=x/onerror=alert(1)>"  # no spaces: a TREC id
MATH = "$x$"
ANCHOR = '<a href="http://x.example/a">a</a>'
#: what must never reach a Markdown element unescaped: a link (an unescaped ``](``, or the
#: bare address, which GitHub's Markdown links by itself), a tag, math between unescaped dollars
LIVE = re.compile(
    r"(?<!\\)\]\((?:http://)?x\.example|http://x\.example|<(?:a|b|img)\b|(?<!\\)\$x(?<!\\)\$"
)

QUERIES = ["plain", BOLD, MATH, LINK_QUERY]


def _hostile_files() -> tuple[bytes, bytes, bytes]:
    """qrels, a run whose TREC tag is a Markdown link, and query metadata with hostile
    column names and values."""
    qrels = "".join(f"{q} 0 d{i} 1\n{q} 0 {IMG} 1\n" for i, q in enumerate(QUERIES))
    run = "".join(
        f"{q} Q0 d{i} 1 2.0 {LINK_RUN}\n{q} Q0 {BOLD} 2 1.0 {LINK_RUN}\n"
        for i, q in enumerate(QUERIES[:-1])
    )  # LINK_QUERY is missing from the run
    meta = pd.DataFrame(
        {
            "query_id": QUERIES,
            "query": [IMG, BOLD, MATH, LINK_QUERY],
            BOLD: ["[c](http://x.example/c)", MATH, "a", "a"],
        }
    ).to_csv(index=False)
    return qrels.encode(), run.encode(), meta.encode()


def hostile_session() -> dict:
    """Session state with the hostile qrels, three runs (one named by a Markdown link, one
    by HTML, one plain) and the hostile metadata."""
    qrels_b, run_b, meta_b = _hostile_files()
    qrels = mc.read_qrels(qrels_b, name="qrels.txt")
    run = mc.read_run(run_b, name=LINK_RUN)
    other = mc.read_run(run_b.replace(b"2.0", b"0.5"), name=MATH)
    meta = pd.read_csv(io.BytesIO(meta_b), dtype=str).set_index("query_id")
    return {
        "ranklab.qrels": qrels,
        "ranklab.runs": {run.name: run, BOLD: other, ANCHOR: other, "base": other},
        "ranklab.meta": meta,
    }


@pytest.fixture(scope="module")
def hostile_state():
    return hostile_session()


def _nodes(node):
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _nodes(child)


MARKDOWN_TYPES = {
    "markdown",
    "caption",
    "title",
    "header",
    "subheader",
    "error",
    "warning",
    "info",
    "success",
    "toast",
    "exception",
}


def rendered_markdown(at: AppTest) -> list[tuple[str, str]]:
    """(element type, text) of everything the page renders as Markdown."""
    out = []
    for node in _nodes(at._tree):
        kind = getattr(node, "type", "")
        if kind in MARKDOWN_TYPES:
            out.append((kind, str(getattr(node, "value", ""))))
        for attr in ("label", "help"):
            value = getattr(node, attr, None)
            if isinstance(value, str) and value:
                out.append((f"{kind}.{attr}", value))
        if kind == "radio":
            out += [("radio.option", str(o)) for o in node.options]
        proto = getattr(node, "proto", None)
        if kind == "metric" and proto is not None:
            out.append(("metric.label", proto.label))
        if kind == "tab" and proto is not None:
            out.append(("tab.label", proto.label))
    return out


def raw_html(at: AppTest) -> list[str]:
    return [
        node.proto.body
        for node in _nodes(at._tree)
        if getattr(node, "type", "") == "html" and getattr(node, "proto", None) is not None
    ]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "customdata":  # not drawn: what a click on a point returns (a query id)
                yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def plotly_texts(at: AppTest) -> list[str]:
    """Every string of every plotly figure on the page (names, ticks, titles, hovers)."""
    out = []
    for node in _nodes(at._tree):
        if getattr(node, "type", "") == "plotly_chart":
            out += list(_strings(json.loads(node.proto.spec)))
    return out


def live_names(at: AppTest) -> list[tuple[str, str]]:
    """Markdown elements holding a hostile name in live form, raw HTML holding one, and
    plotly strings holding a hostile tag (plotly reads <a href>, <b> ... in its text)."""
    bad = [(kind, text) for kind, text in rendered_markdown(at) if LIVE.search(text)]
    bad += [
        ("html", body)
        for body in raw_html(at)
        if any(m in body for m in (LINK_RUN, BOLD, IMG, MATH, ANCHOR))
    ]
    bad += [("plotly", text) for text in plotly_texts(at) if re.search(r"<(?:a|b|img)\b", text)]
    return bad


PAGES = ["overview", "data", "per_query", "breakdown", "table", "compare", "learn", "home"]


@pytest.mark.parametrize("page", PAGES)
def test_ranking_pages_show_hostile_names_as_text(page, hostile_state):
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    for key, value in hostile_state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts = " ".join(text for _, text in rendered_markdown(at))
    if page not in ("home", "learn"):
        # the names are on the page (escaped), so the check below looked at them
        assert "\\[t\\](http" in texts or "\\[q\\](http" in texts, texts[:2000]
    assert live_names(at) == []


def test_per_query_page_with_a_hostile_query_selected(hostile_state):
    at = AppTest.from_file(str(ROOT / "pages" / "per_query.py"), default_timeout=TIMEOUT)
    for key, value in hostile_state.items():
        at.session_state[key] = value
    at.session_state["ranklab.selected_query"] = LINK_QUERY
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert live_names(at) == []


def test_compare_page_with_a_hostile_baseline(hostile_state):
    at = AppTest.from_file(str(ROOT / "pages" / "compare.py"), default_timeout=TIMEOUT)
    for key, value in hostile_state.items():
        at.session_state[key] = value
    at.run()
    for box in at.selectbox:
        if LINK_RUN in [str(o) for o in box.options]:
            box.set_value(LINK_RUN)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert live_names(at) == []


def test_data_page_upload_with_hostile_file_names():
    qrels_b, run_b, _ = _hostile_files()
    at = AppTest.from_file(str(ROOT / "pages" / "data.py"), default_timeout=TIMEOUT).run()
    qrels_box = next(u for u in at.get("file_uploader") if "qrels" in u.key)
    qrels_box.set_value(("[f](x.example) <b>q</b>.txt", qrels_b, "text/plain")).run()
    run_box = next(u for u in at.get("file_uploader") if "run" in u.key)
    # "run.txt": a generic stem, so the TREC tag (a Markdown link) names the run
    other_b = run_b.replace(
        b" 2.0 ", b" 3.0 "
    )  # another run (one content dropped twice is one run)
    run_box.set_value(
        [
            ("run.txt", run_b, "text/plain"),
            ("$x$.txt", other_b, "text/plain"),
            ("[f](x.example) $x$ <b>bad</b>.txt", b"\x00\x01 not text", "text/plain"),
        ]
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    assert {LINK_RUN, MATH} <= set(at.session_state["ranklab.runs"])
    # the error names the bad file (escaped)
    assert any("bad" in text and "NUL" in text for _, text in rendered_markdown(at))
    assert live_names(at) == []
    for page in ("overview", "compare"):
        at.switch_page(f"{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert live_names(at) == []


HOSTILE_FILE = "[f](x.example) <b>x</b> $x$"
SAMPLES = ROOT / "sample_data"


@pytest.mark.parametrize(
    ("page", "sample"),
    [
        ("detection", "detection_scores.csv"),
        ("calibration", "detection_scores.csv"),
        ("dynamic_k", "dynamic_k_candidates.csv"),
        ("clicks", "ranking/clicks.csv"),
    ],
)
def test_table_pages_show_a_hostile_file_name_as_text(page, sample):
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    box = at.get("file_uploader")[0]
    box.set_value((f"{HOSTILE_FILE}.csv", (SAMPLES / sample).read_bytes(), "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert live_names(at) == []
    # a file that fails names itself in its message, escaped too
    box = at.get("file_uploader")[0]
    box.set_value((f"{HOSTILE_FILE} bad.csv", b"\x00\x01\x02", "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("bad.csv" in text for _, text in rendered_markdown(at))
    assert live_names(at) == []


def test_history_page_shows_hostile_suite_and_run_names_as_text(tmp_path, monkeypatch):
    from ui.history import state as hs
    from ui.history.actions import save_current_evaluations

    state = hostile_session()
    evaluations = []
    for name, run in state["ranklab.runs"].items():
        ev = mc.evaluate(state["ranklab.qrels"], run, ["RR", "nDCG@10", "P@5"])
        evaluations.append(ev.replace(run_name=name))
    path = tmp_path / "h.sqlite3"
    save_current_evaluations(
        evaluations, LINK_QUERY, state["ranklab.qrels"], store_path=str(path), note=f"{BOLD} {MATH}"
    )
    monkeypatch.setenv(hs.ENV_STORE, str(path))
    at = AppTest.from_file(str(ROOT / "pages" / "history.py"), default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    assert live_names(at) == []
