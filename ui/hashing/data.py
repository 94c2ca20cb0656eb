"""Loading hash codes for the Hashing page: the bundled sample and uploads (cached by bytes).

torch (about 180 MB resident) is imported only when codes are evaluated: opening the
page, reading the sample and parsing .npy / CSV uploads do not load it. Caches are
bounded and private to the session.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

from metrics_core.hashing.tables import (  # the page's words and rules are the library's
    RADIUS_RULE,
    TIE_RULE_NAMES,
    radius_note,
    radius_precision,
)
from metrics_core.io.codes import read_matrix
from metrics_core.report.catalogs import N_
from ui.common.cache import remember
from ui.common.i18n import gettext as _
from ui.common.state import digest

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_data" / "hashing"
PARTS = (
    ("query_codes", "codes"),
    ("db_codes", "codes"),
    ("query_labels", "labels"),
    ("db_labels", "labels"),
)
#: The four parts' names on screen.
PART_NAMES = {
    "query_codes": N_("query codes"),
    "db_codes": N_("database codes"),
    "query_labels": N_("query labels"),
    "db_labels": N_("database labels"),
}
#: The tie rules of :func:`metrics_core.hashing.evaluate_hashing` in words (the library's).
TIE_RULES = TIE_RULE_NAMES


def device_name() -> str:
    """The device the page evaluates on: CUDA when torch sees one, else CPU."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def device_label() -> str:
    import torch

    if torch.cuda.is_available():
        return f"GPU ({torch.cuda.get_device_name(0)})"
    return "CPU"


def tidy_labels(arr: np.ndarray) -> np.ndarray:
    """Whole-number float labels (CSV reads them as floats) as int64, so classes print as 3, not 3.0."""
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    return arr


def load_sample() -> dict:
    """The bundled sample (200 queries x 2000 database codes x 16 bits, 10 classes)."""
    out = {}
    for part, what in PARTS:
        ext = "npy" if what == "codes" else "csv"
        arr = read_matrix(SAMPLE_DIR / f"{part}.{ext}", what)
        out[part] = tidy_labels(arr) if what == "labels" else arr
    out["source"] = _("sample, 10 classes")  # the caption gives the counts and bits
    return out


def use_sample_codes() -> None:
    """The bundled sample as the Hash codes page's data."""
    from ui.hashing.state import DATA, DATA_OPEN

    st.session_state[DATA] = load_sample()
    st.session_state[DATA_OPEN] = False  # the numbers come to the first screen


def _parse_upload(data: bytes, name: str, what: str) -> np.ndarray:
    arr = read_matrix(data, what, name=name)
    return tidy_labels(arr) if what == "labels" else arr


def parse_upload(data: bytes, name: str, what: str) -> np.ndarray:
    """Parse one uploaded file (kept in the session by its content digest); raises InputError on
    bad content."""
    return remember(
        "hashing.uploads",
        (digest(data), name, what),
        lambda: _parse_upload(data, name, what),
        size=8,
    )


def evaluate(
    query_codes,
    db_codes,
    query_labels,
    db_labels,
    topk,
    ties,
    normalizer,
    zero_relevant,
    ks,
    device,
) -> dict:
    """metrics_core.hashing.evaluate_hashing, cached on the arrays and options (the
    first call imports torch)."""
    with st.spinner(_("Evaluating hash codes...")):
        return _evaluate(
            query_codes,
            db_codes,
            query_labels,
            db_labels,
            topk,
            ties,
            normalizer,
            zero_relevant,
            ks,
            device,
        )


def _evaluate(
    query_codes,
    db_codes,
    query_labels,
    db_labels,
    topk,
    ties,
    normalizer,
    zero_relevant,
    ks,
    device,
) -> dict:
    from metrics_core.hashing import evaluate_hashing

    return remember(
        "hashing.evaluations",
        (topk, ties, normalizer, zero_relevant, tuple(ks), device),
        lambda: evaluate_hashing(
            query_codes,
            db_codes,
            query_labels,
            db_labels,
            topk=topk,
            ks=ks,
            ties=ties,
            normalizer=normalizer,
            zero_relevant=zero_relevant,
            device=device,
        ),
        held=(query_codes, db_codes, query_labels, db_labels),
        size=8,
    )


def p_at_k_cutoffs(n_db: int) -> tuple[int, ...]:
    """Cut-offs for the P@k chart: 1, 2, 5, 10, 20, 50, ... up to the database size."""
    ks, base = [], 1
    while base <= n_db:
        ks.extend(k for k in (base, 2 * base, 5 * base) if k <= n_db)
        base *= 10
    return tuple(ks) or (1,)


def missing_parts(parts: dict) -> list[str]:
    """The parts (of :data:`PARTS`) not given yet: ``parts`` maps a part to its file or array,
    or None."""
    return [p for p, _what in PARTS if parts.get(p) is None]


def still_to_upload(missing: list[str]) -> str:
    """What the upload box says while some of the four files are not there yet: a sentence
    naming them, and what to do."""
    return _("Still to upload: {parts}. Upload the four files, or load the sample.").format(
        parts=", ".join(_(PART_NAMES[m]) for m in missing)
    )


def parse_parts(uploads: dict) -> dict | None:
    """The hash codes and labels of the four uploads (``{part: uploaded file or None}``);
    None while a part is missing (each file given is read all the same, so a bad one is named
    at once); raises InputError when a file is unreadable."""
    parsed = {
        part: parse_upload(up.getvalue(), up.name, what) if up is not None else None
        for (part, what), up in zip(PARTS, uploads.values(), strict=True)
    }
    if missing_parts(parsed):
        return None
    parsed["source"] = _("uploaded: {files}").format(
        files=", ".join(up.name for up in uploads.values())
    )
    return parsed


def codes_summary() -> list[str]:
    """The sidebar's lines on the Hash codes page: the codes it evaluates."""
    from ui.hashing.state import DATA

    data = st.session_state.get(DATA)
    return [
        _("hash codes: {source}").format(source=data["source"]) if data else _("hash codes: none")
    ]


__all__ = [
    "PARTS",
    "PART_NAMES",
    "RADIUS_RULE",
    "TIE_RULES",
    "codes_summary",
    "device_label",
    "device_name",
    "evaluate",
    "load_sample",
    "missing_parts",
    "p_at_k_cutoffs",
    "parse_parts",
    "parse_upload",
    "radius_note",
    "radius_precision",
    "still_to_upload",
    "tidy_labels",
]
