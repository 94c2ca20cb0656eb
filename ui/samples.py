"""Every bundled sample at once: "Load sample data" (Home, Data and the pages' prologues)
fills each section with its sample, each through its own data module: the ranking section's
qrels, runs, query metadata and click log, the detection pages' scores and candidates, the
hash codes.

This module composes the sections, as a page does: it stands above them (no section and
nothing in :mod:`ui.common` imports it) and below the pages. The sections' modules are
imported when the samples are asked for, so a page that never loads them never reads the
detection and hashing readers.
"""

from __future__ import annotations

from ui.common.i18n import N_

#: What "Load sample data" loaded, in words (shown translated).
SAMPLE_SUMMARY = N_(
    "Sample loaded: 50 queries, runs bm25, dense and hybrid, query metadata, a click log, "
    "detection scores, dynamic-K candidates and hash codes."
)


#: What "Diversity sample" loaded, in words (shown translated).
DIVERSITY_SUMMARY = N_(
    "Diversity sample loaded: subtopic qrels of 20 queries (2 to 6 intents each) and the runs "
    "relevance and diverse; the Overview shows alpha-nDCG, ERR-IA and subtopic recall."
)


def load_diversity_sample() -> None:
    """The diversity sample into the ranking section (its qrels and runs replaced)."""
    from ui.ranking.data import load_diversity_sample_into_state

    load_diversity_sample_into_state()


def load_every_sample() -> None:
    """Put every bundled sample into the session, replacing what was loaded."""
    from ui.detection.data import use_sample_candidates, use_sample_scores
    from ui.hashing.data import use_sample_codes  # numpy only: no torch
    from ui.ranking.data import load_sample_into_state

    load_sample_into_state()
    use_sample_scores()
    use_sample_candidates()
    use_sample_codes()


__all__ = [
    "DIVERSITY_SUMMARY",
    "SAMPLE_SUMMARY",
    "load_diversity_sample",
    "load_every_sample",
]
