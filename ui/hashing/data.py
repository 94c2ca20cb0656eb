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
from ui.common import budget
from ui.common.cache import remember
from ui.common.i18n import current_language
from ui.common.i18n import gettext as _
from ui.common.state import digest
from ui.common.style import md_join, plain, say

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


#: Bytes of working memory the evaluation's chunks of queries may use (``memory_budget`` of
#: :func:`metrics_core.hashing.evaluate_hashing`; the library's default, 256 MB, is a quarter
#: of a hosted app's whole memory).
EVALUATION_BUDGET = 64 << 20
#: Bytes importing torch adds to the server (its libraries): 200.5 MB measured by
#: ``bench/app_gate_needs.py`` (case torch_import, under ``flock /work/bench.lock``); rounded
#: up. Reserved by the first work that imports it (a .pt upload, the first evaluation).
TORCH_IMPORT_BYTES = 210_000_000
#: Bytes reading hash codes takes per byte of the file, by format, measured as above (cases
#: codes_npy and codes_pt: 1.0 a byte; codes_csv: 25.5, the numbers are Python objects while
#: they are read); rounded up.
READ_BYTES_PER_BYTE = {"npy": 2, "pt": 2, "text": 30}
#: Bytes the evaluation holds per query and database code beside its chunks (the codes on the
#: device, the per-query histograms), measured as above (case hashing: 714 a code above a
#: fixed 12.5 MB, the chunks within :data:`EVALUATION_BUDGET`); rounded up.
EVALUATION_BYTES_PER_CODE = 800


def torch_need() -> int:
    """:data:`TORCH_IMPORT_BYTES` until torch is imported in this server, then 0."""
    import sys

    return 0 if "torch" in sys.modules else TORCH_IMPORT_BYTES


def read_need(data: bytes, name: str) -> int:
    """What reading one uploaded file of codes or labels may take at its peak."""
    ext = name.rsplit(".", 1)[-1].lower()
    kind = "npy" if ext == "npy" else "pt" if ext in ("pt", "pth") else "text"
    return len(data) * READ_BYTES_PER_BYTE[kind] + (torch_need() if kind == "pt" else 0)


def device_name() -> str:
    """The device the page evaluates on: CUDA when torch sees one, else CPU (imports torch
    inside the gate)."""
    with budget.work(torch_need()):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"


def device_label() -> str:
    """The device in words for the caption ("GPU (name)" or "CPU")."""
    with budget.work(torch_need()):
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
    files = {
        part: SAMPLE_DIR / f"{part}.{'npy' if what == 'codes' else 'csv'}" for part, what in PARTS
    }
    with budget.work(0):  # the bundled sample: the app's own (200 kB), not a visitor's input
        for part, what in PARTS:
            arr = read_matrix(files[part], what)
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
        need=lambda: read_need(data, name),
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
    first call imports torch), inside the gate with :func:`evaluation_need`; ``device``:
    None for :func:`device_name`'s."""
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
    def build():
        from metrics_core.hashing import evaluate_hashing
        from metrics_core.hashing.tables import hashing_tables

        result = evaluate_hashing(
            query_codes,
            db_codes,
            query_labels,
            db_labels,
            topk=topk,
            ks=ks,
            ties=ties,
            normalizer=normalizer,
            zero_relevant=zero_relevant,
            device=device or device_name(),
            memory_budget=EVALUATION_BUDGET,
        )
        result["tables"] = hashing_tables(result, gettext=_)  # the page's tables, made once
        return result

    return remember(
        "hashing.evaluations",
        (topk, ties, normalizer, zero_relevant, tuple(ks), device, current_language()),
        build,
        held=(query_codes, db_codes, query_labels, db_labels),
        size=8,
        need=lambda: evaluation_need(query_codes, db_codes),
    )


def evaluation_need(query_codes, db_codes) -> int:
    """What the evaluation may take at its peak: its chunks (:data:`EVALUATION_BUDGET`),
    :data:`EVALUATION_BYTES_PER_CODE` per query and per database code, and torch's import
    the first time."""
    codes = len(query_codes) + len(db_codes)
    return EVALUATION_BUDGET + codes * EVALUATION_BYTES_PER_CODE + torch_need()


def settings_of(result: dict, source: str, normalizer: str) -> dict:
    """The settings every export of the evaluation states
    (:func:`metrics_core.hashing.tables.hashing_settings`: words of the result's options)."""
    from metrics_core.hashing.tables import hashing_settings

    with budget.work(0):
        return hashing_settings(result, gettext=_, source=source, normalizer=normalizer)


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
    return say(
        _("Still to upload: {parts}. Upload the four files, or load the sample."),
        parts=md_join(_(PART_NAMES[m]) for m in missing),
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
    parsed["source"] = plain(
        _("uploaded: {files}"), files=", ".join(up.name for up in uploads.values())
    )
    return parsed


def codes_summary() -> list[str]:
    """The sidebar's lines on the Hash codes page: the codes it evaluates."""
    from ui.hashing.state import DATA

    data = st.session_state.get(DATA)
    return [
        plain(_("hash codes: {source}"), source=data["source"]) if data else _("hash codes: none")
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
    "evaluation_need",
    "read_need",
    "settings_of",
    "torch_need",
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
