"""Bounded memory: evaluation of runs too big to hold whole, with the same numbers.

:mod:`.blocks` reads a run in batches (TREC on :mod:`metrics_core.io.trec`'s helpers,
Parquet, CSV/TSV), :mod:`.streaming` evaluates it in blocks of whole queries with a
reading thread ahead (:mod:`.read_ahead`), both on the engine over whole-query parts
(:mod:`.parts`); on a Dask cluster :mod:`.distributed` cuts a run's files into units
(:mod:`.units`) that the workers read and evaluate (:mod:`.unit_tasks`). :mod:`.spill`
keeps columns on disk and maps them back (spilled rows; data a process keeps but rarely reads). The choice of
path is :func:`metrics_core.front_door.evaluate`'s alone. Nothing is imported here, so
importing a module of this package loads only what it needs.
"""
