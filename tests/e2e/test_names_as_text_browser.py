"""Names are text in the browser: runs and queries named by a Markdown link or an HTML
anchor are uploaded through the drop zones; on the main pages the DOM holds no link (HTML or
SVG, as plotly draws them) to their address and no image they would inject, and the names
read literally. (tests/app/test_names_as_text.py checks every page's elements under AppTest.)
"""

from __future__ import annotations

import pytest

from tests.e2e.test_explorer_browser import _wait_for_app

pytestmark = pytest.mark.e2e

LINK_RUN = "[t](http://x.example/run)"
LINK_QUERY = "[q](http://x.example/q)"
IMG = "<img/src=x/onerror=alert(1)>"
ANCHOR_FILE = '<a href="http:x.example">a.txt'  # a file name holds no "/": the tag stays open

#: links to the hostile address, HTML or SVG (plotly's <a xlink:href>), and injected images
INJECTED = (
    "() => Array.from(document.querySelectorAll("
    '\'a[href*="x.example"], a[*|href*="x.example"], img[src="x"]\'))'
    ".map(e => (e.closest('[data-testid]') || {}).dataset?.testid + ': ' + e.outerHTML.slice(0, 200))"
)


def _shown(page) -> str:
    """The page's text as a reader sees it (the word joiners that keep an address from
    becoming a link are invisible)."""
    return page.evaluate("() => document.body.innerText").replace("\u2060", "")


def _files(tmp_path):
    queries = [LINK_QUERY, "q2", "q3"]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d1 1\n{q} 0 {IMG} 1\n" for q in queries))
    run = tmp_path / "run.txt"  # a generic stem: the TREC tag names the run
    run.write_text(
        "".join(f"{q} Q0 d1 1 2.0 {LINK_RUN}\n{q} Q0 {IMG} 2 1.0 {LINK_RUN}\n" for q in queries[:2])
    )
    anchor = tmp_path / ANCHOR_FILE
    anchor.write_text("".join(f"{q} Q0 {IMG} 1 2.0 x\n{q} Q0 d1 2 1.0 x\n" for q in queries))
    return qrels, run, anchor


def test_hostile_names_are_never_links_on_the_main_pages(server, page, tmp_path):
    qrels, run, anchor = _files(tmp_path)
    page.set_default_timeout(90_000)  # uploads and diagnostics are slow on a busy machine
    page.goto(server + "/data")
    _wait_for_app(page)
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files(str(qrels))
    page.get_by_text("qrels: 3 queries").first.wait_for()
    inputs.nth(1).set_input_files([str(run), str(anchor)])
    page.get_by_text("Diagnostics").first.wait_for()
    page.wait_for_function(
        "name => document.body.innerText.replaceAll('\\u2060', '').includes(name)",
        arg=LINK_RUN,
        timeout=60_000,
    )  # the name, as text
    assert page.evaluate(INJECTED) == []
    for title in ("Overview", "Per query", "Breakdown", "Compare systems", "Data"):
        link = page.locator('[data-testid="stSidebarNav"] a', has_text=title)
        assert link.count() >= 1, title
        link.first.click()
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000
        )
        page.wait_for_timeout(1500)  # charts draw after the script ends
        assert page.locator('[data-testid="stException"]').count() == 0, title
        assert page.evaluate(INJECTED) == [], title
        assert LINK_RUN in _shown(page), title


#: Every form a name could take to come alive in Streamlit's Markdown, as run file names
#: (a file's stem names its run; no "/" in a file name): code, math, colour, icon, emoji,
#: emphasis, a heading, a list, a quote, a tag, a link without an address.
HOSTILE_FILES = (
    "`zc` code",
    "$zq$ math",
    ":red[zr] colour",
    ":smile: emoji",
    "**zb** bold",
    "# zh heading",
    "- zl list",
    "> zg quote",
    "<b>zt tag",
    "[zk](javascript:alert(1))",
    "z" * 120 + " long",
)
#: an icon's name holds a "/", which no file name does: a run named by its TREC tag (a file
#: of a generic stem, run.txt, is named by its tag)
ICON_TAG = ":material/warning:"
#: the payloads' elements if they came alive: code, math, a coloured span, an icon, a bold,
#: a heading, a list item, a quote, a tag, a javascript: link
ALIVE = """() => {
  const hits = [];
  const has = (sel, test) => Array.from(document.querySelectorAll(sel))
    .filter(e => test(e.textContent.trim()))
    .forEach(e => hits.push(sel + ': ' + e.outerHTML.slice(0, 120)));
  const is = word => text => text === word;
  const starts = word => text => text.startsWith(word);
  has('code', is('zc')); has('.katex', t => t.includes('zq')); has('strong', is('zb'));
  has('b', starts('zt')); has('h1,h2,h3,h4,h5,h6', starts('zh')); has('li', starts('zl'));
  has('blockquote', starts('zg')); has('span[style*="color"]', is('zr'));
  has('[data-testid="stIconMaterial"]', starts('warning'));
  Array.from(document.querySelectorAll('a[href^="javascript"]'))
    .forEach(e => hits.push('js link: ' + e.outerHTML.slice(0, 120)));
  return hits;
}"""
#: every page's menu title (app.py's registry)
PAGE_TITLES = (
    "Home", "Data", "Overview", "Per query", "Breakdown", "Fusion", "Detection", "Calibration",
    "Dynamic K", "Hash codes", "Compare systems", "Comparative table", "Click feedback",
    "History", "Measures explained",
)  # fmt: skip


def test_every_page_shows_every_hostile_form_as_text(server, page, tmp_path):
    """Runs named by every hostile form (code, math, colour, icon, emoji, emphasis, heading,
    list, quote, tag, javascript: link, a long name) beside the link-named run: on every
    page of the menu nothing they hold comes alive, and where a page names the runs (the
    status line, the sidebar, the cards) each name reads literally."""
    qrels, run, _anchor = _files(tmp_path)
    hostile = []
    for i, name in enumerate(HOSTILE_FILES):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"{LINK_QUERY} Q0 d1 1 {2 + i}.5 x\nq2 Q0 d1 1 1.0 x\n")
        hostile.append(path)
    (tmp_path / "icon").mkdir()
    icon = tmp_path / "icon" / "run.txt"
    icon.write_text(f"{LINK_QUERY} Q0 d1 1 0.5 {ICON_TAG}\nq2 Q0 d1 1 0.5 {ICON_TAG}\n")
    hostile.append(icon)
    page.set_default_timeout(120_000)
    page.goto(server + "/data")
    _wait_for_app(page)
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files(str(qrels))
    page.get_by_text("qrels: 3 queries").first.wait_for()
    inputs.nth(1).set_input_files([str(run), *(str(p) for p in hostile)])
    page.get_by_text("Diagnostics").first.wait_for()
    # every run read (the box reads its files in turn) before another page is opened
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000
    )
    page.get_by_text(f"{len(hostile) + 1} runs").first.wait_for()  # the status line counts them
    for title in PAGE_TITLES:
        link = page.locator('[data-testid="stSidebarNav"] a', has_text=title)
        assert link.count() >= 1, title
        link.first.click()
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000
        )
        page.wait_for_timeout(1500)  # charts draw after the script ends
        assert page.locator('[data-testid="stException"]').count() == 0, title
        assert page.evaluate(INJECTED) == [], title
        assert page.evaluate(ALIVE) == [], title
        shown = _shown(page)
        if ICON_TAG in shown or title in ("Overview", "Compare systems"):
            # the page names the runs: every one as it was written
            for name in (*HOSTILE_FILES, ICON_TAG):
                assert name in shown, (title, name)
