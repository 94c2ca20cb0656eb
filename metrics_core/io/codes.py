"""Readers for hash codes and labels: .npy (never unpickled), .pt (weights only), CSV/TSV."""

from __future__ import annotations

import io
import tokenize
import warnings

import numpy as np

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.formats import sniff_format
from metrics_core.io.source import read_source
from metrics_core.validation import parse_number

#: The kinds of matrices read_matrix reads, marked for the catalogs (its messages name them).
MATRIX_WORDS = (N_("codes"), N_("labels"))


def _read_npy(data: bytes, source: str) -> np.ndarray:
    """A .npy file, its header (shape, dtype) checked against its size before any allocation;
    object arrays (pickles) refused."""
    hint = N_("save plain numeric arrays (no objects) with numpy.save")
    fmt = np.lib.format
    buf = io.BytesIO(data)
    try:
        version = fmt.read_magic(buf)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(buf)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(buf)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except (
        ValueError,
        SyntaxError,
        TypeError,
        OverflowError,
        EOFError,
        tokenize.TokenError,
    ) as exc:
        text = (str(exc).splitlines() or [type(exc).__name__])[0][:100]
        raise InputError(
            N_("not a readable .npy file ({error})"),
            source=source,
            hint=hint,
            params={"error": text},
        ) from None
    if dtype.hasobject:
        raise InputError(
            N_(
                "the .npy file holds Python objects (a pickle), which are never loaded "
                "(read with allow_pickle=False)"
            ),
            source=source,
            hint=hint,
        )
    if dtype.kind not in "biuf":
        raise InputError(
            N_("the .npy array has dtype {dtype}, not numbers"),
            source=source,
            hint=hint,
            params={"dtype": str(dtype)},
        )
    count = 1
    for n in shape:
        count *= int(n)
    declared = count * dtype.itemsize
    available = len(data) - buf.tell()
    if declared != available:
        raise InputError(
            N_(
                "the .npy header declares shape {shape} ({declared} bytes) but the file holds "
                "{available} bytes of data"
            ),
            source=source,
            hint=N_("The file is damaged or truncated; save it again"),
            params={
                "shape": str(tuple(int(n) for n in shape)),
                "declared": f"{declared:,}",
                "available": f"{available:,}",
            },
        )
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        raise InputError(
            N_("cannot read this .npy file ({error})"),
            source=source,
            hint=hint,
            params={"error": str(exc)},
        ) from None


def read_matrix(source, what: str = "codes", name: str | None = None) -> np.ndarray:
    """A 2-D (or 1-D for labels) numeric array from a .npy, .pt or CSV/TSV source.

    ``.npy`` is loaded with ``allow_pickle=False`` and ``.pt`` with
    ``torch.load(weights_only=True)``: an upload is never unpickled.
    """
    raw = read_source(source, name)
    data = raw.data
    fmt = sniff_format(raw)
    words = Phrase(what) if what in MATRIX_WORDS else what  # translatable in messages
    if fmt == "npy":
        arr = _read_npy(data, raw.name)
    elif fmt == "pt":
        import torch

        try:
            with (
                warnings.catch_warnings()
            ):  # torch's notes on pickle protocols: not the user's concern
                warnings.simplefilter("ignore")
                obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many kinds; all mean "not a safe tensor file"
            raise InputError(
                N_("cannot read this .pt file ({error})"),
                source=raw.name,
                hint=N_("save a tensor with torch.save(tensor, path)"),
                params={"error": type(exc).__name__},
            ) from None
        if isinstance(obj, dict) and len(obj) == 1:
            obj = next(iter(obj.values()))
        if not isinstance(obj, torch.Tensor):
            raise InputError(
                N_("the .pt file holds a {type}, not a tensor"),
                source=raw.name,
                params={"type": type(obj).__name__},
            )
        arr = obj.numpy()
    else:
        from metrics_core.io.source import check_text

        check_text(raw)
        text = data.decode("utf-8").lstrip("\ufeff")
        sep = "\t" if "\t" in text.split("\n", 1)[0] else ","
        rows: list[list[float | None]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = [c.strip() for c in line.split(sep)]
            values = [parse_number(c) for c in cells]
            if None in values:
                if not rows and number == 1:
                    continue  # a header line
                bad = cells[values.index(None)]
                raise InputError(
                    N_("{what} value {value} is not a number"),
                    source=raw.name,
                    line=number,
                    hint=N_("Write numbers with ASCII digits, one row per line"),
                    params={"what": words, "value": repr(bad)},
                )
            rows.append(values)
        if not rows:
            raise InputError(N_("no numeric rows"), source=raw.name)
        widths = {len(r) for r in rows}
        if len(widths) != 1:
            first = len(rows[0])
            raise InputError(
                N_(
                    "rows have different numbers of values ({first} in the first row, {other} in another)"
                ),
                source=raw.name,
                hint=N_("Every row needs the same number of values"),
                params={"first": first, "other": next(len(r) for r in rows if len(r) != first)},
            )
        arr = np.asarray(rows)
        if arr.shape[1] == 1 and what == "labels":
            arr = arr[:, 0]
    if arr.dtype.kind not in "biuf":
        raise InputError(
            N_("{what} must be numeric, got dtype {dtype}"),
            source=raw.name,
            params={"what": words, "dtype": str(arr.dtype)},
        )
    if arr.size == 0:
        raise InputError(N_("no {what} in the file"), source=raw.name, params={"what": words})
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise InputError(
            N_("{what} contain NaN or infinity"),
            source=raw.name,
            hint=N_("Every value must be a finite number"),
            params={"what": words},
        )
    if what == "labels" and arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)  # class ids read from text come back as whole numbers
    return arr
