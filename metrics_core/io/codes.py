"""Readers for hash codes and labels: .npy (never unpickled), .pt (weights only), CSV/TSV."""

from __future__ import annotations

import io
import tokenize
import warnings

import numpy as np

from metrics_core.errors import InputError
from metrics_core.io.formats import sniff_format
from metrics_core.io.source import read_source
from metrics_core.validation import parse_number


def _read_npy(data: bytes, source: str) -> np.ndarray:
    """A .npy file, its header (shape, dtype) checked against its size before any allocation;
    object arrays (pickles) refused."""
    hint = "save plain numeric arrays (no objects) with numpy.save"
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
    except (ValueError, SyntaxError, TypeError, OverflowError, EOFError, tokenize.TokenError) as exc:
        text = (str(exc).splitlines() or [type(exc).__name__])[0][:100]
        raise InputError(f"not a readable .npy file ({text})", source=source, hint=hint) from None
    if dtype.hasobject:
        raise InputError("the .npy file holds Python objects (a pickle), which are never loaded "
                         "(read with allow_pickle=False)",
                         source=source, hint=hint)
    if dtype.kind not in "biuf":
        raise InputError(f"the .npy array has dtype {dtype}, not numbers", source=source, hint=hint)
    count = 1
    for n in shape:
        count *= int(n)
    declared = count * dtype.itemsize
    available = len(data) - buf.tell()
    if declared != available:
        raise InputError(f"the .npy header declares shape {tuple(int(n) for n in shape)} "
                         f"({declared:,} bytes) but the file holds {available:,} bytes of data",
                         source=source, hint="The file is damaged or truncated; save it again")
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        raise InputError(f"cannot read this .npy file ({exc})", source=source, hint=hint) from None


def read_matrix(source, what: str = "codes", name: str | None = None) -> np.ndarray:
    """A 2-D (or 1-D for labels) numeric array from a .npy, .pt or CSV/TSV source.

    ``.npy`` is loaded with ``allow_pickle=False`` and ``.pt`` with
    ``torch.load(weights_only=True)``: an upload is never unpickled.
    """
    raw = read_source(source, name)
    data = raw.data
    fmt = sniff_format(raw)
    if fmt == "npy":
        arr = _read_npy(data, raw.name)
    elif fmt == "pt":
        import torch

        try:
            with warnings.catch_warnings():  # torch's notes on pickle protocols: not the user's concern
                warnings.simplefilter("ignore")
                obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many kinds; all mean "not a safe tensor file"
            raise InputError(f"cannot read this .pt file ({type(exc).__name__})", source=raw.name,
                             hint="save a tensor with torch.save(tensor, path)") from None
        if isinstance(obj, dict) and len(obj) == 1:
            obj = next(iter(obj.values()))
        if not isinstance(obj, torch.Tensor):
            raise InputError(f"the .pt file holds a {type(obj).__name__}, not a tensor", source=raw.name)
        arr = obj.numpy()
    else:
        from metrics_core.io.source import check_text

        check_text(raw)
        text = data.decode("utf-8").lstrip("\ufeff")
        sep = "\t" if "\t" in text.split("\n", 1)[0] else ","
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = [c.strip() for c in line.split(sep)]
            values = [parse_number(c) for c in cells]
            if None in values:
                if not rows and number == 1:
                    continue  # a header line
                bad = cells[values.index(None)]
                raise InputError(f"{what} value {bad!r} is not a number", source=raw.name, line=number,
                                 hint="Write numbers with ASCII digits, one row per line")
            rows.append(values)
        if not rows:
            raise InputError("no numeric rows", source=raw.name)
        widths = {len(r) for r in rows}
        if len(widths) != 1:
            first = len(rows[0])
            raise InputError(f"rows have different numbers of values ({first} in the first row, "
                             f"{next(len(r) for r in rows if len(r) != first)} in another)", source=raw.name,
                             hint="Every row needs the same number of values")
        arr = np.asarray(rows)
        if arr.shape[1] == 1 and what == "labels":
            arr = arr[:, 0]
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{what} must be numeric, got dtype {arr.dtype}", source=raw.name)
    if arr.size == 0:
        raise InputError(f"no {what} in the file", source=raw.name)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise InputError(f"{what} contain NaN or infinity", source=raw.name,
                         hint="Every value must be a finite number")
    if what == "labels" and arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)  # class ids read from text come back as whole numbers
    return arr
