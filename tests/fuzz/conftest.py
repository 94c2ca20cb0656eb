"""The ``fuzz`` marker: coverage-guided runs of the readers (a short run, under 60 s).

``fuzz_readers.py`` is the fuzzing script itself (``python -m tests.fuzz.fuzz_readers``): it
imports atheris at once and instruments the readers, so the test run does not collect it
(``--doctest-modules`` would import it). atheris is optional: ``test_fuzz_short.py`` runs the
script in a child process and is skipped, with its reason, where atheris is not installed.
"""

collect_ignore = ["fuzz_readers.py"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fuzz: short coverage-guided fuzz runs of every reader (atheris)"
    )
