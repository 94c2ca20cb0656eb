"""What a Markdown element reads as on screen: the app shows names and words through one
escaper (``ui.common.style.md_text``), so an element's source holds backslashes, word joiners
and entities that the reader never sees; tests compare what the reader sees."""

from __future__ import annotations

import html
import re


def shown(markdown: str) -> str:
    """``markdown`` as a reader sees it: escapes' backslashes, word joiners and entities gone.

    >>> shown("trec\\\\_eval \\\\[t\\\\](http\\u2060\\\\://x) &lt;b&gt;")
    'trec_eval [t](http://x) <b>'
    """
    return html.unescape(re.sub(r"\\(.)", r"\1", str(markdown)).replace("\u2060", ""))
