"""Names are text, everywhere: uploaded names (runs, tags, queries, documents, columns,
files) holding a Markdown link, HTML and LaTeX are shown literally on every page.

Every element Streamlit renders as Markdown (markdown, captions, headings, alerts, toasts,
expander and tab labels, widget labels and help, radio options, metric labels) is checked:
none may hold a hostile name in a form that would render as a link, a tag or math (the one
escaper, :func:`metrics_core.report.cells.markdown_escape`, turns ``[`` into ``\\[``, ``<``
into ``&lt;`` and ``$`` into ``\\$``). Raw HTML elements (``st.html``) may not hold them at all.
"""

from __future__ import annotations

import ast
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
#: Every form a name could take to come alive in Streamlit's Markdown: a link, an image, a
#: tag, a ``javascript:`` address, code, math, a colour, an icon, a heading, a list, a quote,
#: emphasis, a bare address, a very long name.
HOSTILE = (
    LINK_RUN,
    "![i](http://x.example/i.png)",
    "[js](javascript:alert(1))",
    "<script>alert(1)</script>",
    BOLD,
    IMG,
    ANCHOR,
    "`code`",
    MATH,
    "$$x^2$$",
    ":red[red] :blue-background[bg]",
    ":material/warning: :smile:",
    "# heading",
    "> quote",
    "1. item",
    "- item",
    "**bold** _it_ ~~gone~~",
    "http://x.example/bare www.x.example me@x.example",
    "r" * 300 + "[t](http://x.example/long)",
)
#: what the hostile names start with when Markdown reads them at a line's start
LINE_START = ("#", ">", "1.", "-")


def alive(text: str) -> list[str]:
    """The hostile names that ``text`` (one Markdown element's) holds as they were written
    (unescaped): a form that Streamlit's Markdown would bring alive. One that only acts at
    a line's start counts there only."""
    found = [h for h in HOSTILE if not h.startswith(LINE_START) and h in text]
    found += [
        h
        for h in HOSTILE
        if h.startswith(LINE_START) and (text.startswith(h) or ("\n" + h) in text)
    ]
    if LIVE.search(text):
        found.append(LIVE.search(text).group(0))
    return found


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
    bad = [(kind, text[:300]) for kind, text in rendered_markdown(at) if alive(text)]
    bad += [
        ("html", body)
        for body in raw_html(at)
        if any(m in body for m in (LINK_RUN, BOLD, IMG, MATH, ANCHOR, *HOSTILE))
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


def every_form_session() -> dict:
    """Session state whose runs are named by every hostile form (:data:`HOSTILE`), whose
    query ids, metadata columns and values hold them too."""
    queries = ["q1", LINK_QUERY, "`q`", "# q", ":red[q]", "q" * 200]
    qrels = mc.read_qrels(
        "".join(
            f"{q} 0 d{i % 3} {i % 2 + 1}\n{q} 0 {IMG} 1\n" for i, q in enumerate(queries)
        ).encode(),
        name="qrels.txt",
    )
    runs = {}
    for k, name in enumerate(HOSTILE):
        text = "".join(
            f"{q}\tQ0\td{(i + k) % 3}\t1\t{2.0 + k}\tx\n{q}\tQ0\t{IMG}\t2\t1.0\tx\n"
            for i, q in enumerate(queries[:-1] if k % 2 else queries)
        )
        run = mc.read_run(text.encode(), name=name)
        runs[name] = run
    meta = pd.DataFrame(
        {
            "query": [HOSTILE[i % len(HOSTILE)] for i in range(len(queries))],
            "category": [LINK_RUN, ":red[c]", "`c`", "# c", "c", "c"],
            "fold": [1, 2, 1, 2, 1, 2],
            "criterion": [BOLD, "x", "y", "x", "y", "x"],
            ":red[col] `c`": ["a", "b", "a", "b", "a", "b"],
        },
        index=pd.Index(queries, name="query_id"),
    )
    return {"ranklab.qrels": qrels, "ranklab.runs": runs, "ranklab.meta": meta}


@pytest.fixture(scope="module")
def every_form():
    return every_form_session()


ALL_PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py"))


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_shows_every_hostile_form_as_text(page, every_form):
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    for key, value in every_form.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert live_names(at) == []


@pytest.mark.parametrize(
    ("page", "widget", "key", "value"),
    [
        ("compare", "toggle", "ranklab.w.compare.all_pairs", True),
        ("fusion", "toggle", "ranklab.w.fusion.tune", True),
        ("fusion", "selectbox", "ranklab.w.fusion.method", "wsum"),
        ("table", "radio", "ranklab.table.source", "queries"),
        ("per_query", "selectbox", "ranklab.pq.query", LINK_QUERY),
        ("breakdown", "selectbox", "ranklab.bd.column", ":red[col] `c`"),
    ],
)
def test_hostile_forms_stay_text_on_every_setting(page, widget, key, value, every_form):
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    for k, v in every_form.items():
        at.session_state[k] = v
    at.run()
    getattr(at, widget)(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    assert live_names(at) == []


#: Systems of several runs (Compare's box) named by hostile names, of hostile runs
HOSTILE_SYSTEMS = f"[s](http://x.example/s)={HOSTILE[0]},{HOSTILE[1]}\n<b>sys</b>={HOSTILE[4]}"


@pytest.mark.parametrize("page", ["compare", "table"])
@pytest.mark.parametrize(
    "systems", [HOSTILE_SYSTEMS, f"{LINK_RUN} <b>no runs</b>"], ids=["systems", "wrong line"]
)
def test_hostile_systems_and_their_errors_stay_text(page, systems, every_form):
    """Systems named by links and tags (on Compare's answer, the power table, the
    Comparative table's caption) and a wrong line quoted in its error."""
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    for k, v in every_form.items():
        at.session_state[k] = v
    at.session_state["ranklab.w.compare.systems"] = systems
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts = " ".join(text for _, text in rendered_markdown(at))
    if page == "compare":  # the systems were compared, or the wrong line was named (escaped)
        assert "sys" in texts if "=" in systems else "no runs" in texts, texts[:2000]
    assert live_names(at) == []


def test_a_fused_run_of_hostile_runs_joins_them_as_text(every_form):
    """The Fusion page's join button and its line name the fused run (its inputs' hostile
    names) as text; the Overview and Compare then show it as text too."""
    at = AppTest.from_file(str(ROOT / "pages" / "fusion.py"), default_timeout=TIMEOUT)
    for k, v in every_form.items():
        at.session_state[k] = v
    at.run()
    button = next(b for b in at.button if "to the loaded runs" in b.label)
    assert live_names(at) == []
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("is a loaded run" in s.value for s in at.success)
    assert live_names(at) == []
    runs = at.session_state["ranklab.runs"]
    assert len(runs) == len(every_form["ranklab.runs"]) + 1
    for page in ("overview", "compare"):
        after = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
        for k, v in {**every_form, "ranklab.runs": runs}.items():
            after.session_state[k] = v
        after.run()
        assert not after.exception, [e.value for e in after.exception]
        assert live_names(after) == []


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


@pytest.mark.parametrize("baseline", [LINK_RUN, BOLD, ANCHOR])
def test_table_page_with_a_hostile_baseline(hostile_state, baseline):
    """The Comparative table against a baseline named by a link or HTML: its p-values' and
    its power table's sentences name it as text."""
    at = AppTest.from_file(str(ROOT / "pages" / "table.py"), default_timeout=TIMEOUT)
    for key, value in hostile_state.items():
        at.session_state[key] = value
    at.session_state["ranklab.table.baseline"] = baseline
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe) == 3  # the table, its p-values, how many queries
    assert any("How many queries each comparison against" in c.value for c in at.caption)
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
    from ui.history.data import save_current_evaluations

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


# --- one rendering path: every value reaches Streamlit's Markdown through say / md_text ------
#: Streamlit calls whose text (first argument, or ``label=`` / ``help=`` / ``caption=``) is
#: read as Markdown.
MARKDOWN_CALLS = frozenset(
    {
        "markdown", "caption", "write", "title", "header", "subheader", "info", "warning",
        "error", "success", "toast", "exception", "expander", "metric", "button",
        "download_button", "link_button", "page_link", "checkbox", "toggle", "radio",
        "selectbox", "multiselect", "slider", "select_slider", "text_input", "text_area",
        "number_input", "date_input", "time_input", "file_uploader", "form_submit_button",
        "popover", "status", "spinner", "color_picker", "segmented_control", "pills",
    }
)  # fmt: skip
#: The one rendering path (ui.common.style): what they return is Markdown whose values are text.
SAYERS = frozenset({"say", "md_text", "md_join"})
TRANSLATE = frozenset({"_", "gettext", "ngettext"})


def _called(node) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _builds_text(expr) -> bool:
    """Whether ``expr`` puts values into text another way than through the one path: an
    f-string with values, ``.format``, ``%`` or ``+`` of anything but the app's own words."""
    if isinstance(expr, ast.Call):
        name = _called(expr)
        if name in SAYERS:
            return False
        if name == "format":
            return True
        return any(_builds_text(a) for a in expr.args)
    if isinstance(expr, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in expr.values)
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Mod):
            return True
        if isinstance(expr.op, ast.Add):
            return not (_own_words(expr.left) and _own_words(expr.right))
    if isinstance(expr, ast.IfExp):
        return _builds_text(expr.body) or _builds_text(expr.orelse)
    return False


def _own_words(expr) -> bool:
    """A literal, a translation of one, or a concatenation of those (no value in them)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Call) and _called(expr) in TRANSLATE | SAYERS:
        return not any(_builds_text(a) for a in expr.args)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _own_words(expr.left) and _own_words(expr.right)
    return False


def markdown_built_by_hand(source: str) -> list[str]:
    """Each Markdown-rendering call of ``source`` given text built with values another way
    than through ``say`` / ``md_text`` / ``md_join``, as "line: call: text"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or _called(node) not in MARKDOWN_CALLS:
            continue
        name = _called(node)
        texts = list(node.args[1:2] if name == "page_link" else node.args[:1])
        texts += [k.value for k in node.keywords if k.arg in ("label", "help", "caption")]
        for text in texts:
            if _builds_text(text):
                found.append(f"{node.lineno}: {name}: {ast.unparse(text)[:80]}")
    return found


APP_FILES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py")])


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_markdown_call_takes_its_values_through_the_one_path(path):
    assert markdown_built_by_hand(path.read_text()) == []


def translations_formatted_by_hand(source: str) -> list[str]:
    """Each translated message of ``source`` given values by ``.format`` (instead of ``say``,
    for Markdown, or ``plain``, for a place that shows text as it is), and each ``plain``
    message given straight to a Markdown call, as "line: text"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "format":
            if isinstance(f.value, ast.Call) and _called(f.value) in TRANSLATE:
                found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
        if _called(node) in MARKDOWN_CALLS:
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Call) and getattr(arg.func, "id", "") == "plain":
                    found.append(f"{node.lineno}: plain text given to {_called(node)}")
    return found


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_message_with_values_says_where_it_goes(path):
    assert translations_formatted_by_hand(path.read_text()) == []


def test_the_check_catches_a_name_put_into_markdown_by_hand():
    """The Compare page's sentence with the baseline's name, as it was written: a run named
    ``[t](http://...)`` became a link. Through ``say`` it is text."""
    by_hand = (
        'st.info(_("{run} is set aside").format(run=baseline))\n'
        'st.caption(f"Run {name}")\n'
        'st.markdown("**" + name + "**")\n'
        'st.number_input(_("Weight of {run}").format(run=r), help="%s" % r)\n'
    )
    assert [f.split(":")[1].strip() for f in markdown_built_by_hand(by_hand)] == [
        "info", "caption", "markdown", "number_input", "number_input",
    ]  # fmt: skip
    through = (
        'st.info(say(_("{run} is set aside"), run=baseline))\n'
        'st.markdown("**" + _("Loaded") + "**")\n'
        "st.caption(md_join(names))\n"
    )
    assert markdown_built_by_hand(through) == []
    assert translations_formatted_by_hand(
        'x = _("{run}: details").format(run=name)\nst.caption(plain(_("{n}"), n=1))\n'
    ) == ["1: _('{run}: details').format(run=name)", "2: plain text given to caption"]


def test_no_markdown_table_no_raw_html_and_no_hand_made_said():
    """st.table reads its cells as Markdown (the Compare page's detail table made a run tag a
    live link); raw HTML is the frame's fixed style sheets only; a Said (Markdown the app
    composed) is made by ui.common.style alone."""
    raw_html = {
        "ui/common/frame.py",  # its style sheet
        "ui/common/uploader_words.py",  # the upload boxes' words, from the catalogs
        "ui/common/upload.py",  # the same, per box
        "ui/common/sidebar.py",  # the script that shuts the sidebar on a narrow window
    }
    for path in APP_FILES:
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                assert _called(node) != "table" or not isinstance(node.func, ast.Attribute), rel
                for k in node.keywords:
                    if k.arg == "unsafe_allow_html":
                        assert isinstance(k.value, ast.Constant) and not k.value.value, rel
                if _called(node) == "html":
                    assert rel in raw_html, f"{rel}:{node.lineno} draws raw HTML"
                if _called(node) == "Said":
                    assert rel == "ui/common/style.py", f"{rel}:{node.lineno}"


def test_the_one_path_shows_every_hostile_form_as_text():
    from ui.common.style import md_join, md_text, say

    for name in HOSTILE:
        shown = md_text(name)
        assert alive(shown) == [] and alive(f"a {shown}") == [], (name, shown)
        assert say("**{x}**", x=name) == "**" + shown + "**"
    assert md_join(["[a](http://x.example)", "b_c"]) == md_text("[a](http://x.example)") + ", b\\_c"
    assert md_text(md_text("<b>")) == md_text("<b>")  # composed text is not escaped twice
