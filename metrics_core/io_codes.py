"""Readers for hash codes and their labels: ``.npy`` (no pickle), ``.pt`` (weights only), CSV.

Each reader takes a path or raw bytes (an upload) and returns a numpy array; value checks
(±1 / 0-1, shapes) are :func:`metrics_core.hashing.validate_codes`'s job. Problems raise
:class:`~metrics_core.errors.InputError` naming the file.
"""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd

from metrics_core.errors import InputError

SUFFIXES = (".npy", ".pt", ".pth", ".csv", ".txt")


def _source(data, name):
    if isinstance(data, (bytes, bytearray)):
        return io.BytesIO(bytes(data)), name or "upload"
    path = os.fspath(data)
    with open(path, "rb") as fh:
        return io.BytesIO(fh.read()), name or path


def _suffix(name: str) -> str:
    lower = name.lower()
    for s in SUFFIXES:
        if lower.endswith(s):
            return s
    raise InputError(f"unknown file type of {name!r}", source=name,
                     hint="give codes/labels as .npy, .pt or .csv")


def read_array(data, name: str | None = None) -> np.ndarray:
    """Read a numeric array from a ``.npy``, ``.pt``/``.pth`` or CSV file (path or bytes).

    ``.npy`` loads with ``allow_pickle=False``; ``.pt`` with ``torch.load(weights_only=True)``
    and must hold one tensor (or a dict with exactly one tensor); CSV may have a header row
    and holds numbers (labels may also be strings, mapped to integer ids in sorted order).

    Examples
    --------
    >>> read_array(b"1,0,1\\n0,0,1\\n", "codes.csv").tolist()
    [[1, 0, 1], [0, 0, 1]]
    >>> read_array(b"label\\ncat\\ndog\\ncat\\n", "labels.csv").tolist()
    [0, 1, 0]
    """
    buf, name = _source(data, name)
    suffix = _suffix(name)
    if suffix == ".npy":
        try:
            arr = np.load(buf, allow_pickle=False)
        except ValueError as exc:
            raise InputError(f"cannot read .npy ({exc})", source=name,
                             hint="save plain numeric arrays (pickled objects are refused)") from None
        except Exception as exc:  # noqa: BLE001 - a corrupt file is a user error
            raise InputError(f"not a valid .npy file ({type(exc).__name__})", source=name) from None
    elif suffix in (".pt", ".pth"):
        import torch

        try:
            obj = torch.load(buf, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"cannot read with torch.load(weights_only=True) ({type(exc).__name__})",
                             source=name, hint="save a single tensor with torch.save") from None
        if isinstance(obj, dict):
            tensors = [v for v in obj.values() if isinstance(v, torch.Tensor)]
            if len(tensors) != 1:
                raise InputError(f"expected one tensor, found a dict with {len(tensors)}", source=name)
            obj = tensors[0]
        if not isinstance(obj, torch.Tensor):
            raise InputError(f"expected a tensor, found {type(obj).__name__}", source=name)
        arr = obj.detach().cpu().numpy()
    else:
        arr = _read_csv(buf, name)
    if arr.size == 0:
        raise InputError("the file holds no values", source=name)
    if arr.dtype.kind not in "biuf":
        raise InputError(f"expected numbers, found dtype {arr.dtype}", source=name)
    return arr


def _read_csv(buf, name):
    text = buf.getvalue().decode("utf-8-sig", errors="replace")
    sep = "\t" if "\t" in text.splitlines()[0] if text else False else ","
    try:
        df = pd.read_csv(io.StringIO(text), header=None, sep=sep, skipinitialspace=True)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"cannot parse CSV ({exc})", source=name) from None
    if df.empty:
        raise InputError("the file holds no values", source=name)
    numeric = df.apply(pd.to_numeric, errors="coerce")
    if numeric.iloc[0].isna().all() and len(df) > 1:  # a header row
        df, numeric = df.iloc[1:].reset_index(drop=True), numeric.iloc[1:].reset_index(drop=True)
    if df.shape[1] == 1 and numeric.iloc[:, 0].isna().any():
        # one column of class names: map to integer ids
        values = df.iloc[:, 0].astype(str).str.strip()
        return pd.Categorical(values, categories=sorted(values.unique())).codes.astype(np.int64)
    bad = numeric.isna().to_numpy()
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise InputError(f"column {col + 1} is not a number ({df.iat[row, col]!r})",
                         source=name, line=int(row) + 1 + (len(text.splitlines()) - len(df) > 0))
    arr = numeric.to_numpy()
    if np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    return arr[:, 0] if arr.shape[1] == 1 else arr
