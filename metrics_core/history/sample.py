"""The bundled sample history (package data ``sample.json``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from metrics_core.history.comparative_report import REPORT_MEASURES
from metrics_core.history.store import HistoryStore

#: bundled with the package (package data), so it loads from an installed wheel too
SAMPLE_PATH = Path(__file__).resolve().parent / "sample.json"


def load_sample_history(store: HistoryStore, path: str | os.PathLike | None = None) -> list[int]:
    """Load the bundled sample history (a suite and a few dated runs) into ``store``.

    The JSON holds the suite's qrels and query texts and, for each past evaluation, its
    date and ranking; the values are computed here by :func:`metrics_core.evaluate`, so
    they are exact. Returns the new evaluation ids.
    """
    from metrics_core.front_door import evaluate

    path = SAMPLE_PATH if path is None else Path(path)
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    ids = []
    for suite in data["suites"]:
        qrels = {q: dict(docs) for q, docs in suite["qrels"].items()}
        meta = pd.DataFrame({"query": suite.get("queries", {})})
        meta.index.name = "query_id"
        store.add_suite(suite["name"], qrels, meta if len(meta) else None)
        for item in suite["evaluations"]:
            run = {
                q: {d: float(len(docs) - i) for i, d in enumerate(docs)}
                for q, docs in item["ranking"].items()
            }
            ev = evaluate(qrels, run, list(data.get("measures", REPORT_MEASURES)), name=item["run"])
            ids.append(
                store.save_evaluation(
                    suite["name"], ev, timestamp=item["timestamp"], note=item.get("note")
                )
            )
    return ids
