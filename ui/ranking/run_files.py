"""The runs of the run upload boxes: each file one run, no run lost to a name clash.

Every run box (Data page, Overview, a page's "drop runs here") goes through three calls:
:func:`content_of` identifies each file by a digest of its bytes (the same content dropped
twice is one run; :func:`is_loaded` says whether to parse it), :func:`parsed` holds a parsed
run until it is named, and
:func:`name_box` names the box's runs with :func:`metrics_core.io.run_names.unique_run_names`
(clashing names made unique by tag or number, earlier names kept), loads them, removes the
run of a file the visitor took out of the box, and says which file became which name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.uploaded_file_manager import DeletedFile

from metrics_core.io.run_names import RunFile, unique_run_names
from ui.common import state
from ui.common.i18n import gettext as _
from ui.common.keep import keep_keys
from ui.common.style import md_join, say
from ui.common.upload import human_size

FILES = (
    "ranklab.ranking.run_files"  # content digest -> (name, id) of its run (runs from upload boxes)
)
DIGESTS = "ranklab.ranking.run_digests"  # file id -> content digest
PENDING = "ranklab.ranking.run_pending"  # content digest -> parsed run not yet named
SHOWN = "ranklab.ranking.run_shown"  # box key -> [(file id, digest)] the box showed last
keep_keys(
    FILES, DIGESTS
)  # a reload brings them back (ui.common.keep): the same file again is one run


def _dict(key: str) -> dict:
    return st.session_state.setdefault(key, {})


def content_of(uploaded) -> str:
    """A digest of the file's bytes (BLAKE2b, 128 bits), computed once per dropped file."""
    ident = getattr(uploaded, "file_id", None) or (uploaded.name, uploaded.size)
    digests = _dict(DIGESTS)
    if ident not in digests:
        digests[ident] = hashlib.blake2b(uploaded.getvalue(), digest_size=16).hexdigest()
    return digests[ident]


def _loaded() -> dict[str, str]:
    """Content digest -> name of each loaded run that came from an upload box (a run replaced
    since, by the sample or a removal, no longer counts)."""
    runs = st.session_state.get(state.RUNS) or {}
    return {d: name for d, (name, ident) in _dict(FILES).items() if id(runs.get(name)) == ident}


def is_loaded(uploaded) -> bool:
    """Whether the file's content is loaded as a run (or parsed and waiting for its name)."""
    digest = content_of(uploaded)
    return digest in _dict(PENDING) or digest in _loaded()


def parsed(uploaded, run) -> None:
    """Hold ``run``, parsed from ``uploaded``, until :func:`name_box` names and loads it."""
    _dict(PENDING)[content_of(uploaded)] = run


def held_ids(widget_key: str) -> list[str]:
    """The ids of the files still in the box of ``widget_key`` whose bytes were released once
    parsed (:func:`ui.common.upload.release`).

    ``st.file_uploader`` leaves such a file out of the list it returns (in the browser, on every
    rerun after the release: a click elsewhere on the page, or taking another file out), while
    its chip stays in the box; the widget's state in ``st.session_state`` still holds it, as a
    ``DeletedFile`` carrying its id. Without these ids the box would look empty and every run
    of its released files would be taken out with it.
    """
    raw = st.session_state.get(widget_key)
    items = raw if isinstance(raw, list) else [raw]
    return [f.file_id for f in items if isinstance(f, DeletedFile)]


def box_order(widget_key: str) -> list[str]:
    """The ids of every file in the box of ``widget_key``, in the box's order: those the
    uploader hands over and those released once parsed (:func:`held_ids`), which it does not.
    A note about a file numbers it by this order, as the visitor sees the box."""
    raw = st.session_state.get(widget_key)
    items = raw if isinstance(raw, list) else [raw]
    return [f.file_id for f in items if getattr(f, "file_id", None)]


def name_box(
    box: str,
    files: list,
    fresh: bool,
    held: Sequence[str] = (),
    order: Sequence[str] = (),
) -> bool:
    """Name and load the runs of the files in run box ``box``; say what was renamed or repeated.

    ``files``: the box's files that parsed (in the box's order). ``fresh``: the box was just
    drawn anew (first visit, page change, reload), so files missing from it were not removed
    by the visitor. ``held``: the ids of the box's files already loaded and released
    (:func:`held_ids`): they stay, with their runs and names. ``order``: the ids of all the
    box's files in its order (:func:`box_order`; default: ``files``, then ``held``): the
    notes number each file by its place in the box, and every file whose content an earlier
    file of the box has is named (files dropped again, released ones among them). Returns
    True when the loaded runs changed.
    """
    shown, pending = _dict(SHOWN), _dict(PENDING)
    runs = dict(st.session_state.get(state.RUNS) or {})
    known = _loaded()
    files = [f for f in files if content_of(f) in known or content_of(f) in pending]  # not removed
    entries = [(getattr(f, "file_id", None), content_of(f)) for f in files]
    digests = _dict(DIGESTS)
    kept = [(fid, digests[fid]) for fid in held if digests.get(fid) in known]
    changed = False
    if not fresh:  # files the visitor took out of this box take their runs with them
        still = {d for _fid, d in entries + kept} | {
            d for key, seen in shown.items() if key != box for _fid, d in seen
        }
        for _fid, digest in shown.get(box, []):
            if digest not in still and digest in known:
                runs.pop(known.pop(digest), None)
                changed = True
    shown[box] = entries + kept
    # the whole box in its order: the files handed over, and the released ones (their runs
    # loaded under their names), so that repeats and places are the box's own
    by_id = {fid: f for f, (fid, _d) in zip(files, entries, strict=True) if fid is not None}
    place = {fid: i for i, fid in enumerate(order)}
    whole = sorted(
        [(fid, d, f) for f, (fid, d) in zip(files, entries, strict=True)]
        + [(fid, d, None) for fid, d in kept if fid not in by_id],
        key=lambda e: place.get(e[0], len(place)),
    )
    naming = unique_run_names(
        [
            # a released file is its loaded run (no name of its own any more)
            RunFile(f.name if f is not None else known[d], getattr(pending.get(d), "tags", None), d)
            for _fid, d, f in whole
        ],
        taken=set(runs),  # every loaded run keeps its name (a file of the box keeps its own)
        known=known,
    )
    for (_fid, digest, _f), name in zip(whole, naming.names, strict=True):
        run = pending.pop(digest, None)
        if run is not None:
            run.name = name
            runs[name] = run
            _dict(FILES)[digest] = (name, id(run))
            changed = True
    if changed:
        st.session_state[state.RUNS] = runs
        from ui.ranking.data import drop_unloaded

        drop_unloaded()  # results of a removed run leave the session cache with it

    def number(i: int) -> int:
        """The place in the box of ``whole[i]`` (a file that failed to load is in the box too)."""
        return place[whole[i][0]] + 1 if whole[i][0] in place else i + 1

    notes = [
        say(
            _("{file} (file {i}, {size}) is the run **{name}**: the name {base} was taken."),
            file=whole[i][2].name,
            i=number(i),
            size=human_size(whole[i][2].size),
            name=name,
            base=base,
        )
        for i, name, base in naming.renamed
        if whole[i][2] is not None  # a released file was named when it was read
    ]
    notes += [
        say(
            _("{file} (file {i}) has the same content as file {first}: one run, **{name}**."),
            file=whole[i][2].name if whole[i][2] is not None else naming.names[i],
            i=number(i),
            first=number(first),
            name=naming.names[i],
        )
        for i, first in naming.repeats
    ]
    if notes:
        st.info(md_join(notes, "  \n"), icon=":material/info:")
    return changed


__all__ = [
    "content_of",
    "is_loaded",
    "parsed",
    "held_ids",
    "box_order",
    "name_box",
    "FILES",
    "SHOWN",
]
