"""The binary-gate metrics: detection (AUROC, AUPRC, TPR at a target FPR), calibration
(ECE, debiased ECE, MCE, Brier) and dynamic K (evidence recall and precision, average K).

* :mod:`metrics_core.gates.registry` -- one declaration per metric (name, aliases,
  parameters, formula, edge cases, reference, value range, which direction is better,
  a checked example), the name parser and :func:`~metrics_core.gates.registry.gate_score`;
* :mod:`metrics_core.gates.counts` -- the one sort and the integer counts under the
  detection metrics; :mod:`metrics_core.gates.resample` -- their bootstrap intervals.

The user-facing functions stay in :mod:`metrics_core.detection`,
:mod:`metrics_core.calibration` and :mod:`metrics_core.dynamic_k`; every one validates
its input through :func:`metrics_core.validation.check_binary`. This package imports
nothing at import time (so the detection module can build on :mod:`.counts`).
"""
