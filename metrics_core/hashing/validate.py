"""Validation of hash codes, labels and devices; the package's rule names.

Codes are ±1 (or 0/1, converted) matrices of shape (items, bits); labels are class ids
(one per item) or 0/1 multi-label rows. Every problem is an
:class:`~metrics_core.errors.InputError` naming the role ("query codes", ...).
"""

from __future__ import annotations

import numpy as np

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.hashing._torch import torch

TIE_RULES = ("expected", "optimistic", "pessimistic", "stable")
NORMALIZERS = ("retrieved", "min_r_k")
ZERO_RELEVANT = ("zero", "exclude")

#: The roles the package's messages name, marked for the catalogs.
ROLE_WORDS = (
    N_("codes"),
    N_("labels"),
    N_("query codes"),
    N_("database codes"),
    N_("query labels"),
    N_("database labels"),
)
#: The form of every message about one input: "<role>: <problem>".
NAMED = N_("{name}: {problem}")


def named(name: str, template: str, params: dict | None = None) -> Phrase:
    """The problem ``template`` (filled with ``params``) of the input ``name``, as
    "name: problem" (:data:`NAMED`), translatable; the role is translated when it is one of
    :data:`ROLE_WORDS`.

    >>> p = named("query codes", N_("class labels must be whole numbers"))
    >>> p, p.params["problem"]
    ('query codes: class labels must be whole numbers', 'class labels must be whole numbers')
    """
    return Phrase(
        NAMED,
        {"name": Phrase(name) if name in ROLE_WORDS else name, "problem": Phrase(template, params)},
    )


#: Bytes of working memory per query chunk (distance matrix and histogram indices).
DEFAULT_MEMORY_BUDGET = 256 << 20


def code_bits(codes, name: str = "codes") -> np.ndarray:
    """The bits of ±1 or 0/1 codes as a boolean (items, bits) array: True where the code
    is +1 (or 1).

    Anything else (2, 0.5, NaN, -1 and 0 mixed ...) is an InputError naming the first bad
    position. Checked with numpy on the CPU (min and max first: one pass each for the
    usual integer codes).

    >>> code_bits([[0, 1], [1, 1]]).tolist()
    [[False, True], [True, True]]
    """
    if isinstance(codes, torch.Tensor):
        codes = codes.detach().cpu()
        if codes.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
            codes = codes.float()  # types numpy lacks: every value is a float32 exactly
        codes = codes.numpy()
    a = np.asarray(codes)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise InputError(
            named(
                name,
                N_("expected a 2-D array (items x bits), got {count} dimensions"),
                {"count": a.ndim},
            )
        )
    if a.shape[1] == 0 or a.shape[0] == 0:
        raise InputError(
            named(name, N_("empty code matrix of shape {shape}"), {"shape": str(tuple(a.shape))})
        )
    if a.dtype.kind not in "biuf":
        try:
            a = a.astype(np.float32)  # numbers held as objects
        except (TypeError, ValueError):
            raise InputError(
                named(
                    name, N_("codes must be numbers, got {dtype} values"), {"dtype": str(a.dtype)}
                ),
                hint=N_("codes must be all -1/+1 or all 0/1"),
            ) from None
    if a.dtype.kind in "biu":
        lo, hi = int(a.min()), int(a.max())
        if 0 <= lo and hi <= 1:
            return a > 0
        if lo == -1 and hi <= 1 and not (a == 0).any() or lo == hi == 1:
            return a > 0
    a = a.astype(np.float32)
    is_pm = (a == 1) | (a == -1)
    if is_pm.all():
        return a > 0
    is01 = (a == 0) | (a == 1)
    if is01.all():
        return a > 0
    odd = ~(is_pm | is01)
    if odd.any():
        bad = np.argwhere(odd)[0]
        problem = N_("value {value} at row {row}, bit {bit} is not a code bit")
    else:  # only -1, 0 and 1: the two encodings are mixed, and a 0 means nothing
        bad = np.argwhere(a == 0)[0]
        problem = N_(
            "value {value} at row {row}, bit {bit} is not a code bit: these codes mix -1/+1 and 0/1"
        )
    raise InputError(
        named(
            name, problem, {"value": repr(float(a[bad[0], bad[1]])), "row": bad[0], "bit": bad[1]}
        ),
        hint=N_("codes must be all -1/+1 or all 0/1"),
    )


def validate_codes(codes, name: str = "codes") -> torch.Tensor:
    """A float32 ±1 tensor of shape (items, bits) from ±1 or 0/1 codes (checked by
    :func:`code_bits`), on the device of a tensor given, else on the CPU.

    ``torch.sign`` is never used: sign(0) = 0 would silently make a third value.

    >>> validate_codes([[0, 1], [1, 1]]).tolist()
    [[-1.0, 1.0], [1.0, 1.0]]
    """
    bits = code_bits(codes, name)
    t = torch.from_numpy(np.where(bits, np.float32(1), np.float32(-1)))
    return t.to(codes.device) if isinstance(codes, torch.Tensor) else t


def as_labels(labels, n: int, name: str, device=None) -> torch.Tensor:
    """Labels as class ids (int64 vector) or multi-label rows (float32 0/1 matrix).

    A 1-D array is class ids. A 2-D array is 0/1 multi-label rows, one column included:
    items sharing a 1 match, two all-zero rows do not. A one-column matrix whose values
    are not all 0/1 can only be class ids written as a column, and is read as such.
    On the CPU, or on ``device`` when given (a tensor there is checked where it is: the
    device route does not copy labels that are already on the device back and forth).
    ``name`` is the role named in an :class:`InputError` (wrong count, non-0/1 rows,
    fractional ids).

    >>> as_labels([[0], [1]], 2, "labels").tolist()   # one 0/1 column: multi-label
    [[0.0], [1.0]]
    >>> as_labels([[3], [5]], 2, "labels").tolist()   # a column of class ids
    [3, 5]
    """
    if isinstance(labels, torch.Tensor):
        t = labels.detach().to("cpu" if device is None else device)
    else:
        t = torch.as_tensor(np.asarray(labels))
    if t.ndim == 0:
        raise InputError(
            named(name, N_("expected one label (or label row) per code, got a single value"))
        )
    if t.shape[0] != n:
        raise InputError(
            named(
                name, N_("{labels} labels for {codes} codes"), {"labels": t.shape[0], "codes": n}
            ),
            hint=N_("one label (row) per code"),
        )
    if t.ndim == 2 and t.shape[1] == 1 and not bool(((t == 0) | (t == 1)).all()):
        t = t[:, 0]  # a column of class ids
    if t.ndim == 2:
        if not bool(((t == 0) | (t == 1)).all()):
            raise InputError(named(name, N_("multi-label rows must be 0/1 vectors")))
        return t.to(device=device, dtype=torch.float32)
    if t.ndim != 1:
        raise InputError(named(name, N_("labels must be a vector or a 0/1 matrix")))
    if t.dtype.is_floating_point and not bool((t == t.round()).all()):
        raise InputError(named(name, N_("class labels must be whole numbers")))
    return t.to(device=device, dtype=torch.int64)


def relevance_matrix(ql: torch.Tensor, dl: torch.Tensor) -> torch.Tensor:
    """Relevant (query, item) pairs of labels from :func:`as_labels`: same class (class
    ids) or at least one shared label (0/1 rows); an InputError when the kinds differ.

    >>> relevance_matrix(as_labels([1, 2], 2, "q"), as_labels([2, 2, 1], 3, "d")).tolist()
    [[False, False, True], [True, True, False]]
    """
    if ql.ndim == 1 and dl.ndim == 1:
        return ql[:, None] == dl[None, :]
    if ql.ndim == 2 and dl.ndim == 2:
        if ql.shape[1] != dl.shape[1]:
            raise InputError(N_("query and database label vectors have different lengths"))
        return (ql @ dl.T) > 0
    raise InputError(
        N_("query and database labels must both be class ids or both 0/1 vectors"),
        hint=N_(
            "class ids: a 1-D array; multi-label: a 0/1 matrix (items x labels), "
            "one column included"
        ),
    )


def resolve_device(device=None) -> torch.device:
    """The torch device named by ``device`` (None: CUDA when available, else the CPU),
    refused with an :class:`InputError` when it is not a device or not available here."""
    if device is None:
        return default_device()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise InputError(
            N_("unknown device {device}"),
            hint=N_("Use cpu, cuda or cuda:N"),
            params={"device": repr(str(device))},
        ) from None
    if dev.type not in ("cpu", "cuda"):
        raise InputError(
            N_("device {device} is not supported"),
            hint=N_("Use cpu, cuda or cuda:N"),
            params={"device": repr(str(device))},
        )
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(
                N_(
                    "device {device} is not available: this torch build has no CUDA "
                    "or no GPU is visible"
                ),
                hint=N_("Use device='cpu'"),
                params={"device": repr(str(device))},
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise InputError(
                N_("device {device} does not exist ({count} GPUs)"),
                hint=N_("Use cuda:0 or cpu"),
                params={"device": repr(str(device)), "count": torch.cuda.device_count()},
            )
    return dev


def default_device() -> torch.device:
    """CUDA when available, else the CPU."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
