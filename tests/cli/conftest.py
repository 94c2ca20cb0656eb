"""What the command-line tests share: a small qrels and run that evaluate cleanly."""

from __future__ import annotations

import pytest

#: Three judgements over two queries, and a run that retrieves each judged document.
GOOD_QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
GOOD_RUN = b"q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 1.5 sys\n"


@pytest.fixture
def good_files(tmp_path):
    """``(qrels, run)`` paths of :data:`GOOD_QRELS` and :data:`GOOD_RUN`."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_bytes(GOOD_QRELS)
    run.write_bytes(GOOD_RUN)
    return qrels, run
