"""The ``fuzz`` marker: coverage-guided runs of the readers (a short run, under 60 s)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: short coverage-guided fuzz runs of every reader (atheris)")
