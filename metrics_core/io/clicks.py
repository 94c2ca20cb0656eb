"""Click logs: one row per impression (the query, the results shown in rank order, the
ids clicked in click order), from a DataFrame, records, CSV/TSV (lists in a cell as JSON
arrays or separated by ``|``, ``;``, ``,`` or spaces), JSON or JSON Lines. The measures
over them are in :mod:`metrics_core.clicks`.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from metrics_core.errors import N_, InputError
from metrics_core.io.formats import sniff_format
from metrics_core.io.source import read_source
from metrics_core.io.text_check import check_json, check_text

QUERY_NAMES = ("query", "query_id", "qid", "consulta", "question")
SHOWN_NAMES = ("shown", "results", "resultados", "impressions", "ranking", "retrieved", "docs")
CLICK_NAMES = ("clicked", "clicks", "click", "clicked_ids")


def _as_list(value) -> list[str]:
    """One cell of the shown/clicked columns as a list of id strings."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value]
    if isinstance(value, float) and np.isnan(value):
        return []
    text = str(value).strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    for sep in ("|", ";", ",", " "):
        if sep in text:
            return [t for t in (p.strip() for p in text.split(sep)) if t]
    return [text]


def _find(columns, names, role, source):
    lower = {str(c).lower().strip(): c for c in columns}
    for n in names:
        if n in lower:
            return lower[n]
    raise InputError(
        N_("no {role} column found in the click log"),
        source=source,
        hint=N_("columns found: {columns}. Name it one of: {names}"),
        params={"role": role, "columns": ", ".join(map(str, columns)), "names": ", ".join(names)},
    )


def read_click_log(source, name: str | None = None) -> pd.DataFrame:
    """Read a click log into a DataFrame with columns ``query``, ``shown``, ``clicked``.

    Accepted: a DataFrame; a list of dicts; CSV/TSV (lists in a cell as JSON arrays or
    separated by ``|``, ``;``, ``,`` or spaces); JSON (a list of objects, or
    ``{"rows": [...]}``) or JSON Lines; a path, bytes or file object (``.gz`` ok).
    Column names are matched case-insensitively (Spanish names such as ``consulta``,
    ``resultados`` and ``clicks`` work too).

    Examples
    --------
    >>> log = read_click_log([{"consulta": "q1", "resultados": ["a", "b"], "clicks": ["b"]}])
    >>> log.to_dict(orient="records")
    [{'query': 'q1', 'shown': ['a', 'b'], 'clicked': ['b']}]
    >>> read_click_log(b"query,shown,clicked\\nq1,a|b|c,c\\n").loc[0, "shown"]
    ['a', 'b', 'c']
    """
    label = name or "<click log>"
    if isinstance(source, pd.DataFrame):
        frame = source
    elif isinstance(source, list):
        if not all(isinstance(r, dict) for r in source):
            raise InputError(
                N_("a click log list must hold one object per impression"), source=label
            )
        frame = pd.DataFrame(source)
    else:
        raw = read_source(source, name)
        label = raw.name
        fmt = sniff_format(raw)
        if fmt in ("parquet", "npy", "pt"):
            raise InputError(
                N_("a click log is a text table (CSV/TSV/JSON), not a {format} file"),
                source=label,
                params={"format": fmt},
            )
        check_text(raw, lines=fmt != "json")  # a JSON document may be one line
        text = raw.data.decode("utf-8").lstrip("\ufeff")
        if not text.strip():
            raise InputError(N_("the click log is empty"), source=label)
        if fmt in ("json", "jsonl"):
            check_json(raw.data, label, raw.limits)
            try:
                obj = json.loads(text)
            except json.JSONDecodeError:
                obj = None
                try:
                    obj = [json.loads(line) for line in text.splitlines() if line.strip()]
                except json.JSONDecodeError as exc:
                    raise InputError(
                        N_("invalid JSON ({error})"), source=label, params={"error": exc.msg}
                    ) from None
            if isinstance(obj, dict):
                obj = next(
                    (
                        obj[k]
                        for k in ("rows", "data", "records", "impressions", "log")
                        if isinstance(obj.get(k), list)
                    ),
                    None,
                )
            if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
                raise InputError(
                    N_("unrecognised JSON shape for a click log"),
                    source=label,
                    hint=N_('use [{"query": ..., "shown": [...], "clicked": [...]}, ...]'),
                )
            frame = pd.DataFrame(obj)
        else:
            sep = "\t" if fmt == "tsv" else ","
            try:
                frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False)
            except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
                raise InputError(
                    N_("malformed table ({error})"),
                    source=label,
                    hint=N_("Put lists in a cell as JSON arrays or separated by |"),
                    params={"error": str(exc).split(".")[0]},
                ) from None
    if len(frame) == 0:
        raise InputError(N_("the click log has no rows"), source=label)
    qcol = _find(frame.columns, QUERY_NAMES, "query", label)
    scol = _find(frame.columns, SHOWN_NAMES, "shown-results", label)
    ccol = _find(frame.columns, CLICK_NAMES, "clicked-ids", label)
    return pd.DataFrame(
        {
            "query": frame[qcol].astype(str).to_numpy(),
            "shown": [_as_list(v) for v in frame[scol]],
            "clicked": [_as_list(v) for v in frame[ccol]],
        }
    )
