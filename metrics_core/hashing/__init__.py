"""Hash-code retrieval: Hamming ranking measures, exact about ties, in torch.

Codes are ±1 (or 0/1, converted) matrices of shape (items, bits). The Hamming distance
of two ±1 codes of K bits is ``(K - u·v) / 2``, computed by matrix product in
query chunks sized to a memory budget, on the CPU or on CUDA when asked.

Equal distances are common with short codes (16 bits give only 17 distinct values), and
the order among them decides mAP by many points. RankLab names the tie rule:

* ``expected`` (default): the expected value over a uniformly random order within each
  group of equal distances. It needs no sort: only, per query, the number of items
  ``n_d`` and of relevant items ``r_d`` at each distance ``d`` (a histogram), and
  harmonic numbers (closed form below).
* ``optimistic`` / ``pessimistic``: relevant items first / last within each tie group
  (the best and worst the tie order can do); reported with ``expected`` as a band.
* ``stable``: distance, then database index -- what the usual per-query loop computes
  when its sort is stable.

Closed form. Take a tie group of ``n`` items of which ``m`` are relevant, after ``A``
items of which ``B`` relevant. In a random order the relevant items take a random
``m``-subset of the ``n`` positions; the item at group position ``p`` is relevant with
probability ``m/n``, and then the expected number of relevant items up to it is
``1 + (p-1)(m-1)/(n-1)``. So the expected sum of precisions at its relevant items, over
positions ``p <= L`` (``L = n``, or fewer when a cutoff falls inside the group), is::

    sum_{p=1..L} (m/n) (B + 1 + (p-1)(m-1)/(n-1)) / (A + p)
      = c1 (H(A+L) - H(A)) + c2 (L - (A+1)(H(A+L) - H(A))),
    c1 = (m/n)(B+1),  c2 = (m/n)(m-1)/(n-1)  (0 when n = 1),

with ``H`` the harmonic numbers. AP is that sum over groups divided by the normalizer.

Devices. Every measure comes from integers: per query, the histograms ``n_d`` and ``r_d`` and,
for ``stable``, the precision sum as a fixed-point integer (2**-48) and relevant counts. The
CPU route counts them with numpy; the device route (:mod:`metrics_core.hashing.device`:
a torch engine, and fused Triton kernels on CUDA) counts them where the codes are. One
device-agnostic torch function (:mod:`metrics_core.hashing.ties`) turns the histograms into
per-query sums where they are, with operations every device rounds alike and sums taken as
exact integer sums; only those sums come back, and the host divides and averages them. So
every device gives the same numbers bit for bit.

References: Buckley & Voorhees on ties in trec_eval; McSherry & Najork, "Computing
information retrieval performance measures efficiently in the presence of tied scores"
(ECIR 2008), for the expected-value view of ties.
"""

from __future__ import annotations

from metrics_core.hashing.validate import (
    DEFAULT_MEMORY_BUDGET,
    NORMALIZERS,
    TIE_RULES,
    ZERO_RELEVANT,
    code_bits,
    default_device,
    resolve_device,
    validate_codes,
)


def __getattr__(name):
    # the measures and histograms load on first use (numpy work; torch only when called)
    import importlib

    for sub in ("evaluate", "histograms", "ties"):
        module = importlib.import_module(f"{__name__}.{sub}")
        if name in vars(module):
            return vars(module)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TIE_RULES",
    "NORMALIZERS",
    "ZERO_RELEVANT",
    "DEFAULT_MEMORY_BUDGET",
    "validate_codes",
    "code_bits",
    "resolve_device",
    "default_device",
    "evaluate_hashing",
    "distance_histograms",
    "calculate_hamming_dist_matrix",
    "calculate_mAP",
    "calculate_precision_at_k",
]
