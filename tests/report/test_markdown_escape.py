"""The one Markdown escaper (metrics_core.report.cells.markdown_escape): what it escapes,
pinned case by case, and checked against a CommonMark renderer (markdown-it-py, with
GitHub's tables and strikethrough) on hostile and random text: whatever the text, the
rendered page shows exactly that text, with no tag, link, emphasis or extra cell."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import report
from metrics_core.report import comparison, thesis_export
from metrics_core.report.cells import markdown_escape

markdown_it = pytest.importorskip("markdown_it")
RENDERER = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])


@pytest.mark.parametrize(
    "text, escaped",
    [
        ("a|b", "a\\|b"),  # a pipe cannot open a cell
        ("C:\\temp\\x", "C:\\\\temp\\\\x"),  # backslashes print as themselves
        ("*bold* and _it_", "\\*bold\\* and \\_it\\_"),  # no emphasis
        ("x__y**z", "x\\_\\_y\\*\\*z"),
        ("`code`", "\\`code\\`"),  # no code span
        ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),  # no link
        ("![i](x.png)", "!\\[i\\](x.png)"),  # no image
        ("~~gone~~", "\\~\\~gone\\~\\~"),  # no strikethrough
        ("# title", "\\# title"),  # no heading
        ("#5", "\\#5"),
        ("- item", "\\- item"),  # no list item
        ("+ item", "\\+ item"),
        ("---", "\\---"),  # no rule
        ("1. first", "1\\. first"),  # no ordered list
        ("12) x", "12\\) x"),
        ("a # b - c + d", "a # b - c + d"),  # only at the start
        ("-0.5", "-0.5"),  # signed numbers stay numbers
        ("+1.25", "+1.25"),
        ("-.5", "-.5"),
        ("0.2500", "0.2500"),
        ("two\nlines\r\nend", "two lines  end"),  # one row, one paragraph
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),  # no HTML
        ("a & b &amp; c", "a &amp; b &amp;amp; c"),  # no entity either
        ("nDCG@10 P(rel=2)@5 ★ Ejecución ñ", "nDCG@10 P(rel=2)@5 ★ Ejecución ñ"),
        (0.25, "0.25"),  # any value, as its text
        ("$x$ costs $5", "\\$x\\$ costs \\$5"),  # no math (Streamlit, GitHub)
        (
            "[t](http://x.org/a)",
            "\\[t\\](http\\://x.org/a)",
        ),  # no autolink of the bare address either
        ("www.x.org WWW.y.org", "www\\.x.org WWW\\.y.org"),
        ("me@x.org", "me\\@x.org"),  # no mailto: link
        ("nDCG@10 a@b", "nDCG@10 a@b"),  # no address: unchanged
    ],
)
def test_what_is_escaped(text, escaped):
    assert markdown_escape(text) == escaped


def _paragraph(markdown: str) -> str:
    out = RENDERER.render(markdown)
    match = re.fullmatch(r"<p>(.*)</p>\n", out, flags=re.S)
    assert match, out  # one paragraph: no heading, list, rule, code block or HTML block
    return match.group(1)


def _cell(markdown: str) -> str:
    out = RENDERER.render(f"| head | other |\n|---|---|\n| {markdown} | z |\n")
    cells = re.findall(r"<td>(.*?)</td>", out, flags=re.S)
    assert len(cells) == 2 and cells[1] == "z", out  # the text stayed in its cell
    return cells[0]


def _shows(rendered: str, text: str) -> bool:
    """The rendered HTML is plain text (no tag) and reads as ``text``."""
    return "<" not in rendered and html.unescape(rendered) == text


HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[a][b]",
    "[ref]: http://x",
    "<http://x.org>",
    "&#65;&lt;",
    "a  \nb",
    "x\\",
    "\\*",
    "*",
    "_",
    "**",
    "***",
    "___",
    "- - -",
    "=",
    "> quote",
    "```",
    "~~~ py",
    "1. a",
    "1) a",
    "  - a",
    "   # h",
    "| a | b |",
    "a|b|c",
    "<!-- c -->",
    "<div>",
    "\\|",
    "$x$",
    "{g}h^j",
    "★ best <b>|x|</b>",
    "a_b&c%d$e#f{g}h~i^j\\k",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_renderer_prints_hostile_text_as_itself(text):
    shown = text.replace("\r", " ").replace("\n", " ").strip()
    assert _shows(_paragraph(markdown_escape(text.strip())), shown)
    assert _shows(_cell(markdown_escape(text.strip())), shown)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ab1.#-+*_`[]()|\\<>&!~= \t\n:;'\"{}^$%@") + ["ñ", "★"]),
        min_size=1,
        max_size=24,
    )
)
def test_a_renderer_prints_random_text_as_itself(text):
    text = text.replace("\r", " ").replace("\n", " ").strip(" \t")
    if not text:
        return
    assert _shows(_paragraph(markdown_escape(text)), text)
    assert _shows(_cell(markdown_escape(text)), text)


def test_every_markdown_export_uses_the_one_escaper():
    # the package's name, the comparison's and the comparative table's exports share it
    assert report.markdown_escape is markdown_escape
    assert (
        comparison.markdown_escape is markdown_escape
        and thesis_export.markdown_escape is markdown_escape
    )
