"""Fixtures shared by the app's AppTest modules."""

import pytest

from ui.ranking.data import load_sample


@pytest.fixture(scope="module")
def sample():
    """(qrels, runs, query metadata) of the bundled sample."""
    return load_sample()
