"""Run names from files: every file a run, no two runs with one name, one run per content.

A run is named after its file (the stem, without ``.gz``), or after its TREC tag when the
stem says nothing (``run.txt``, ``results.txt``). Two different files that would get the same
name (``sysA/test_run.txt`` and ``sysB/test_run.txt``: a browser sends only ``test_run.txt``)
both stay: the later one takes its tag as well (``test_run (sysB)``) or, when the tag does
not tell them apart, a number (``test_run (2)``). The same content given twice is one run.

The functions are pure: the caller identifies each file's content (a digest of its bytes)
and says which names other runs already hold; it words what :func:`unique_run_names` reports.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

#: Stems that name no system: a run file called so is named after its tag.
GENERIC_STEMS = frozenset({"", "run", "runs", "result", "results", "output", "out", "submission"})


def base_run_name(filename: str, tag: str | None = None) -> str:
    """The name a run file gives its run before any clash: the file's stem (``.gz``/``.gzip``
    and the last extension removed, directories ignored), or the run's tag when the stem is
    generic (:data:`GENERIC_STEMS`) and the tag is a non-empty string; ``"run"`` when neither
    says anything.

    >>> base_run_name("sysA/test_run.txt.gz", "sysA"), base_run_name("run.txt", "bm25")
    ('test_run', 'bm25')
    """
    name = PurePath(filename.replace("\\", "/")).name
    for suffix in (".gz", ".gzip"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    stem = PurePath(name).stem if name and not name.startswith(".") else name
    stem = stem or name
    if stem.lower() in GENERIC_STEMS:
        return tag if isinstance(tag, str) and tag.strip() else (stem or "run")
    return stem


@dataclass(frozen=True)
class RunFile:
    """One uploaded run file: its name, its TREC tag (None when it has none) and what
    identifies its content (e.g. a digest of its bytes: equal contents, one run)."""

    filename: str
    tag: str | None
    content: Hashable


@dataclass(frozen=True)
class RunNaming:
    """What :func:`unique_run_names` decided, per file in the order given.

    Attributes
    ----------
    names : list of str
        The run each file is (a repeated content has the name of its first file).
    renamed : list of (int, str, str)
        ``(index, name, base)`` for each file whose run is not called by its base name
        (:func:`base_run_name`) because another run holds that name.
    repeats : list of (int, int)
        ``(index, first)`` for each file whose content equals that of the earlier file
        ``first``: one run, not two.
    """

    names: list[str]
    renamed: list[tuple[int, str, str]] = field(default_factory=list)
    repeats: list[tuple[int, int]] = field(default_factory=list)


def unique_run_names(
    files: Sequence[RunFile], taken: Iterable[str] = (), known: Mapping[Hashable, str] | None = None
) -> RunNaming:
    """Name each run file so that no run is lost: distinct names, one run per content.

    Parameters
    ----------
    files : sequence of RunFile
        In the order the visitor gave them (the earlier file keeps the plain name).
    taken : iterable of str
        Names held by other runs (the sample, another upload box): never given again.
    known : mapping, optional
        ``content -> name`` of files named before (the same files on a later rerun): they
        keep their names, so adding or removing a file never renames another.

    Returns
    -------
    RunNaming
        A new file is named :func:`base_run_name`; when that is taken, ``"base (tag)"`` if its
        tag differs from the base, else ``"base (2)"``, ``"base (3)"``, ... (the first free).

    Examples
    --------
    >>> n = unique_run_names([RunFile("test_run.txt", "sysA", 1), RunFile("test_run.txt", "sysB", 2),
    ...                       RunFile("test_run.txt", "sysA", 1)])
    >>> n.names, n.renamed, n.repeats
    (['test_run', 'test_run (sysB)', 'test_run'], [(1, 'test_run (sysB)', 'test_run')], [(2, 0)])
    """
    known = dict(known or {})
    present = {f.content for f in files}
    used = set(taken) | {name for content, name in known.items() if content in present}
    names: list[str] = []
    renamed: list[tuple[int, str, str]] = []
    repeats: list[tuple[int, int]] = []
    first: dict[Hashable, int] = {}
    for i, f in enumerate(files):
        if f.content in first:
            names.append(names[first[f.content]])
            repeats.append((i, first[f.content]))
            continue
        first[f.content] = i
        base = base_run_name(f.filename, f.tag)
        if f.content in known:
            name = known[f.content]
        else:
            name = base
            if name in used and isinstance(f.tag, str) and f.tag.strip() and f.tag != base:
                name = f"{base} ({f.tag})"
            k = 2
            while name in used:
                name, k = f"{base} ({k})", k + 1
            used.add(name)
        if name != base:
            renamed.append((i, name, base))
        names.append(name)
    return RunNaming(names, renamed, repeats)


__all__ = ["GENERIC_STEMS", "RunFile", "RunNaming", "base_run_name", "unique_run_names"]
