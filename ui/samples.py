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


def load_every_sample() -> None:
    """Put every bundled sample into the session, replacing what was loaded."""
    from ui.detection.data import use_sample_candidates, use_sample_scores
    from ui.hashing.data import use_sample_codes  # numpy only: no torch
    from ui.ranking.data import load_sample_into_state

    load_sample_into_state()
    use_sample_scores()
    use_sample_candidates()
    use_sample_codes()


__all__ = ["SAMPLE_SUMMARY", "load_every_sample"]
