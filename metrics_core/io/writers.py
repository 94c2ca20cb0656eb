"""Writing a run: TREC run lines, CSV or Parquet (what the readers read back).

TREC: ``query Q0 doc rank score tag``, one line per row in the run's order, ranks counted
from 1 within each query, scores written with ``repr`` precision (read back to the same
float64). CSV: ``query_id,doc_id,score`` with a header. Parquet: the same three columns.
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa

from metrics_core.data import Run
from metrics_core.errors import N_, InputError

RUN_FORMATS = ("trec", "csv", "parquet")


def _ranks(run: Run) -> np.ndarray:
    q = run.qid
    if isinstance(q, pa.ChunkedArray):
        q = q.combine_chunks()
    if pa.types.is_dictionary(q.type):
        q = q.cast(q.type.value_type)
    n = len(q)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow.compute as pc

    changed = np.r_[
        True, pc.not_equal(q.slice(1), q.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    ]
    starts = np.flatnonzero(changed)
    return np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, n])) + 1


def run_table(run: Run) -> pa.Table:
    """The run as an Arrow table ``query_id, doc_id, score``."""
    q = run.qid.combine_chunks() if isinstance(run.qid, pa.ChunkedArray) else run.qid
    if pa.types.is_dictionary(q.type):
        q = q.cast(q.type.value_type)
    d = run.docid.combine_chunks() if isinstance(run.docid, pa.ChunkedArray) else run.docid
    return pa.table({"query_id": q, "doc_id": d, "score": pa.array(run.scores, pa.float64())})


def run_text(run: Run, fmt: str = "trec", tag: str | None = None) -> str:
    """The run as TREC run lines (``fmt="trec"``) or CSV text (``"csv"``)."""
    if fmt == "csv":
        import pyarrow.csv as pcsv

        buf = io.BytesIO()
        pcsv.write_csv(run_table(run), buf)
        return buf.getvalue().decode("utf-8").replace('"', "")
    if fmt != "trec":
        raise InputError(
            N_("unknown run format {format!r}"),
            hint=N_("accepted: {formats}"),
            field="fmt",
            params={"format": fmt, "formats": ", ".join(RUN_FORMATS)},
        )
    import pandas as pd

    tag = "".join(str(tag or run.name).split()) or "run"
    t = run_table(run)
    frame = pd.DataFrame(
        {
            "q": t["query_id"].to_numpy(zero_copy_only=False),
            "Q0": "Q0",
            "d": t["doc_id"].to_numpy(zero_copy_only=False),
            "rank": _ranks(run),
            "score": [repr(float(v)) for v in run.scores],
            "tag": tag,
        }
    )
    return frame.to_csv(sep=" ", header=False, index=False, lineterminator="\n")


def write_run(run: Run, path, fmt: str | None = None, tag: str | None = None) -> None:
    """Write ``run`` to ``path`` (a path or a binary file object) as ``fmt`` (default: from the
    extension: ``.csv`` CSV, ``.parquet``/``.pq`` Parquet, anything else TREC)."""
    name = str(getattr(path, "name", path))
    if fmt is None:
        low = name.lower()
        fmt = (
            "csv"
            if low.endswith(".csv")
            else "parquet"
            if low.endswith((".parquet", ".pq"))
            else "trec"
        )
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(run_table(run), path)
        return
    data = run_text(run, fmt, tag).encode("utf-8")
    if hasattr(path, "write"):
        path.write(data)
    else:
        with open(path, "wb") as fh:
            fh.write(data)


__all__ = ["RUN_FORMATS", "run_text", "run_table", "write_run"]
