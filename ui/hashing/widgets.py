"""The Hash codes page's data box: the sample, or four upload slots read together."""

from __future__ import annotations

import streamlit as st

from ui.common.i18n import gettext as _
from ui.common.upload import UploadSlot, read_once, release
from ui.hashing import state as hs
from ui.hashing.data import (
    PART_NAMES,
    PARTS,
    missing_parts,
    parse_parts,
    still_to_upload,
    use_sample_codes,
)


def ensure_defaults() -> None:
    """No codes until the sample or an upload is loaded."""
    st.session_state.setdefault(hs.DATA, None)


CODE_TYPES = ["npy", "pt", "pth", "csv", "tsv", "txt"]


def data_panel() -> None:
    """The page's Data panel: open while nothing is loaded; it closes when codes are loaded
    (the sample, or the fourth upload read), so that mAP and P@k are on the first screen.
    The visitor may open it again (and it stays as they leave it until other codes load)."""
    if st.session_state.pop(hs.CLOSE_DATA, False):
        st.session_state[hs.DATA_OPEN] = False
    st.session_state.setdefault(hs.DATA_OPEN, st.session_state[hs.DATA] is None)
    with st.expander(_("Data"), expanded=True, key=hs.DATA_OPEN, on_change="rerun"):
        uploads_box()


def uploads_box() -> None:
    """The sample button and the four upload slots; the codes are read when an upload changes."""
    st.button(_("Load the sample"), key=hs.LOAD_SAMPLE, on_click=use_sample_codes)
    st.write(_("Or upload the four files (.npy, .pt or CSV):"))
    # two boxes per row: four in a row cut the file names and the accepted types
    cols = [c for _row in range(2) for c in st.columns(2)]
    uploads = {}
    for col, (part, _what) in zip(cols, PARTS, strict=True):
        files = UploadSlot(hs.upload_part(part), _(PART_NAMES[part]), types=CODE_TYPES).files(col)
        uploads[part] = files[0] if files else None
    if any(uploads.values()):

        def use_uploads():
            parsed = parse_parts(uploads)
            if parsed is not None:  # the four files: the codes to evaluate
                st.session_state[hs.DATA] = parsed
                # read: their raw bytes leave the server (a torch file can be hundreds of MB)
                release([up for up in uploads.values() if up is not None])

        read_now, error = read_once(
            hs.UPLOAD,
            tuple(up.file_id if up is not None else None for up in uploads.values()),
            use_uploads,
        )
        missing = missing_parts(uploads)
        if error:
            st.error(error)
        elif missing:
            st.info(still_to_upload(missing))
        elif read_now:  # the four files read: the page again, its panel closed
            st.session_state[hs.CLOSE_DATA] = True
            st.rerun()


__all__ = ["ensure_defaults", "data_panel", "uploads_box", "CODE_TYPES"]
