"""Readers for hash codes and labels: .npy and .npz (never unpickled), .pt (weights only),
CSV/TSV.

Nothing is allocated for an array before its size is known: a ``.npy`` array's shape and
dtype are read from its header (and must match the bytes that follow), each member of an
``.npz`` archive likewise, and a torch ``.pt`` archive's member sizes from its zip
directory, all against the input limit (:mod:`metrics_core.io.limits`) before
``numpy``/``torch`` load anything; ``torch.load`` runs with ``weights_only=True``, and the
tensor it returns is held to the same limit by the shape it declares before it becomes an
array (a view saved by ``torch.save`` declares more than its file holds).
"""

from __future__ import annotations

import io
import tokenize
import warnings
import zipfile

import numpy as np

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.formats import sniff_format
from metrics_core.io.limits import Limits, over_input
from metrics_core.io.source import read_source
from metrics_core.validation import parse_number

#: The kinds of matrices read_matrix reads, marked for the catalogs (its messages name them).
MATRIX_WORDS = (N_("codes"), N_("labels"))


_NPY_HINT = N_("save plain numeric arrays (no objects) with numpy.save")


def _npy_header(buf, source: str, available: int, limits: Limits):
    """(shape, dtype) of the ``.npy`` array that ``buf`` (a file object at its start)
    holds in ``available`` bytes, its header read and checked: numbers only (no pickled
    objects), the declared shape x dtype equal to the bytes after the header and within
    the input limit. ``buf`` is left at the start of the data."""
    hint = _NPY_HINT
    fmt = np.lib.format
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
    if declared > limits.input_bytes:  # before its consistency: a forged header names it
        what = Phrase(
            N_("the array its header declares ({shape} of {dtype})"),
            {"shape": str(tuple(int(n) for n in shape)), "dtype": str(dtype)},
        )
        raise over_input(source, what, declared, limits.input_bytes)
    available -= buf.tell()
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
    return shape, dtype


def _read_npy(data: bytes, source: str, limits: Limits) -> np.ndarray:
    """A .npy file, its header (shape, dtype) checked against its size and the input limit
    before any allocation (:func:`_npy_header`)."""
    _npy_header(io.BytesIO(data), source, len(data), limits)
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        raise InputError(
            N_("cannot read this .npy file ({error})"),
            source=source,
            hint=_NPY_HINT,
            params={"error": str(exc)},
        ) from None


def _zip_members(data: bytes, source: str, limits: Limits) -> list[zipfile.ZipInfo]:
    """The members of a zip archive (a torch ``.pt`` or a NumPy ``.npz``), their declared
    sizes checked against the input limit before any is read."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise InputError(
            N_("cannot read this archive ({error})"),
            source=source,
            hint=N_("save a tensor with torch.save(tensor, path), or arrays with numpy.savez"),
            params={"error": type(exc).__name__},
        ) from None
    total = sum(m.file_size for m in members)
    if total > limits.input_bytes:
        what = Phrase(N_("the archive, decompressed,"))
        raise over_input(source, what, total, limits.input_bytes)
    return members


def _read_npz(data: bytes, source: str, what: str, members, limits: Limits) -> np.ndarray:
    """The array of a ``.npz`` archive: its only one, or the one named ``what`` (``codes``,
    ``labels``); the member's header read and checked (:func:`_npy_header`) before the
    array is loaded."""
    names = [m.filename[:-4] for m in members]
    chosen = [m for m in members if m.filename[:-4] == what] or members
    if len(chosen) != 1:
        raise InputError(
            N_("the .npz archive holds {names}: name the array {what}, or save one array"),
            source=source,
            hint=_NPY_HINT,
            params={"names": ", ".join(names), "what": repr(what)},
        )
    member = chosen[0]
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            with archive.open(member) as fh:
                _npy_header(fh, f"{source}:{member.filename}", member.file_size, limits)
            with archive.open(member) as fh:  # checked: now read from its start
                return np.lib.format.read_array(fh, allow_pickle=False)
    except InputError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(
            N_("cannot read this .npz file ({error})"),
            source=source,
            hint=_NPY_HINT,
            params={"error": type(exc).__name__},
        ) from None


def _tensor_array(tensor, source: str, limits: Limits) -> np.ndarray:
    """The array of a tensor loaded from a ``.pt`` file, its declared shape x dtype checked
    against the input limit first: a tensor saved as a view (``expand``, ``as_strided``)
    declares a shape its few stored bytes do not hold (a 2 kB file can declare a tensor of
    gigabytes), and every later step (the finite check, the codes' packing) allocates the
    shape. Within the limit the view is made contiguous: each row its own bytes."""
    declared = tensor.numel() * tensor.element_size()
    if declared > limits.input_bytes:
        what = Phrase(
            N_("the tensor the .pt file declares ({shape} of {dtype})"),
            {"shape": str(tuple(tensor.shape)), "dtype": str(tensor.dtype).removeprefix("torch.")},
        )
        raise over_input(source, what, declared, limits.input_bytes)
    return tensor.contiguous().numpy()


def read_matrix(
    source, what: str = "codes", name: str | None = None, *, limits: Limits | None = None
) -> np.ndarray:
    """A 2-D (or 1-D for labels) numeric array from a .npy, .npz, .pt or CSV/TSV source.

    ``.npy`` and ``.npz`` are loaded with ``allow_pickle=False`` and ``.pt`` with
    ``torch.load(weights_only=True)``: an upload is never unpickled. What an array takes
    is read from its header (or its archive's directory) and checked against ``limits``
    (default: the limits in force) before it is loaded.
    """
    raw = read_source(source, name, limits=limits)
    limits = raw.limits
    fmt = sniff_format(raw)
    if fmt not in ("npy", "pt"):
        from metrics_core.io.text_check import check_text

        check_text(raw)  # the lines measured before the data is read
    data = raw.data
    words = Phrase(what) if what in MATRIX_WORDS else what  # translatable in messages
    members = _zip_members(data, raw.name, limits) if fmt == "pt" else []
    if fmt == "npy":
        arr = _read_npy(data, raw.name, limits)
    elif members and all(m.filename.endswith(".npy") for m in members):
        arr = _read_npz(data, raw.name, what, members, limits)
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
        arr = _tensor_array(obj, raw.name, limits)
    else:
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
