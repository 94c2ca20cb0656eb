"""RankLab's version, written once: the package (``metrics_core.__version__``), every
output's provenance and the installed distribution (``pyproject.toml`` reads it with
``[tool.setuptools.dynamic]``) take it from here. A module with no import, so any module
of the library can read it without importing the package root."""

__version__ = "0.1.0"
