"""What the binary-gate modules (:mod:`metrics_core.detection`,
:mod:`metrics_core.calibration`, :mod:`metrics_core.dynamic_k`) build on:

* :mod:`metrics_core.gates.counts` -- the one sort and the integer counts under the
  detection metrics;
* :mod:`metrics_core.gates.resample` -- their bootstrap intervals.

The user-facing functions stay in the three modules above; every one validates its
input through :func:`metrics_core.validation.check_binary`. This package imports
nothing at import time, and nothing in it imports those modules (no loop).
"""
