"""Subcommands of ``python -m metrics_core``; see :mod:`metrics_core.cli`."""
