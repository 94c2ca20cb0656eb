"""Which column is which: the one place that knows the names the usual tools write.

Every table reader (CSV, TSV, Parquet, JSON, DataFrames, Arrow tables, lists of records)
and the format sniff (is the first line a header?) use :data:`ROLE_NAMES`.

=================  =====================================================================
tool               columns it writes
=================  =====================================================================
BEIR, MTEB         ``query-id``, ``corpus-id``, ``score`` (qrels: the score is the label)
HuggingFace        ``query_id``, ``corpus_id``, ``score``
PyTerrier          ``qid``, ``docno``, ``label`` (qrels); ``qid``, ``docid``, ``docno``,
                   ``rank``, ``score``, ``query`` (results): ``docno`` is the document id
                   whenever it exists, ``docid`` is Terrier's internal number
ranx               ``q_id``, ``doc_id``, ``score``
ir_datasets        ``query_id``, ``doc_id``, ``relevance``, ``iteration``; ``score`` (runs)
=================  =====================================================================

In qrels a ``score`` column is the relevance when no column has a relevance name; in runs
a ``rank`` column is used when no column has a score name (rank 1 is best).
"""

from __future__ import annotations

from metrics_core.errors import N_, InputError, Phrase

#: Usual column names of each role, most specific first (compared case-insensitively).
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "query_id": (
        "query_id",
        "query-id",
        "qid",
        "queryid",
        "q_id",
        "query",
        "topic",
        "topic_id",
        "question_id",
        "qno",
    ),
    "doc_id": (
        "doc_id",
        "doc-id",
        "corpus-id",
        "corpus_id",
        "docno",
        "docid",
        "doc",
        "document",
        "document_id",
        "passage_id",
        "pid",
        "item_id",
        "item",
        "did",
        "id",
    ),
    "score": (
        "score",
        "sim",
        "similarity",
        "prob",
        "probability",
        "relevance_score",
        "rank_score",
        "logit",
    ),
    "relevance": (
        "relevance",
        "rel",
        "label",
        "grade",
        "judgment",
        "judgement",
        "qrel",
        "gain",
        "y",
    ),
}
#: The roles of each kind of table.
ROLES = {"run": ("query_id", "doc_id", "score"), "qrels": ("query_id", "doc_id", "relevance")}
#: Roles a column mapping may name (``rank``: a run's rank column, 1 is best).
MAPPABLE = ("query_id", "doc_id", "score", "relevance", "rank")
#: Second choices: a run's ``rank`` when no score column, a qrels' ``score`` when no label.
FALLBACK = {("run", "score"): "rank", ("qrels", "relevance"): "score"}


def column_hint(role: str) -> Phrase:
    """How to name the column of ``role`` (the readers' ``columns=`` argument; the command
    line shows its ``--columns`` instead).

    >>> column_hint("doc_id")
    "Name one of them with columns={'doc_id': NAME}"
    """
    return Phrase(N_("Name one of them with columns={{'{role}': NAME}}"), {"role": role})


def detect_columns(
    columns, kind: str, mapping: dict | None = None, source: str = "<table>"
) -> dict:
    """Map each role of ``kind`` ("run" or "qrels") to a column name.

    A mapping's ``rank`` role (runs) becomes the score column, read as ranks; a role
    given in ``mapping`` wins, the others are found by their usual names
    (:data:`ROLE_NAMES`).

    >>> detect_columns(["qid", "docno", "sim"], "run")
    {'query_id': 'qid', 'doc_id': 'docno', 'score': 'sim'}
    >>> detect_columns(["qid", "docid", "docno", "rank", "score", "query"], "run")["doc_id"]
    'docno'
    >>> detect_columns(["query-id", "corpus-id", "score"], "qrels")
    {'query_id': 'query-id', 'doc_id': 'corpus-id', 'relevance': 'score'}
    """
    mapping = {k: v for k, v in dict(mapping or {}).items() if v is not None}
    unknown = sorted(set(mapping) - set(MAPPABLE))
    if unknown:
        raise InputError(
            N_("unknown column role {role}"),
            source=source,
            hint=N_("roles: {roles}"),
            params={"role": repr(unknown[0]), "roles": ", ".join(MAPPABLE)},
        )
    if kind == "run" and "rank" in mapping and "score" not in mapping:
        mapping["score"] = mapping["rank"]
    cols = [str(c) for c in columns]
    lower: dict[str, str] = {}
    for c in cols:
        lower.setdefault(c.lower().strip(), c)
    out = {}
    for role in ROLES[kind]:
        if role in mapping:
            if mapping[role] not in cols:
                raise InputError(
                    N_("column {column} (given for {role}) is not in the table"),
                    source=source,
                    hint=N_("columns found: {columns}"),
                    field=role,
                    params={
                        "column": repr(mapping[role]),
                        "role": role,
                        "columns": ", ".join(cols),
                    },
                )
            out[role] = mapping[role]
            continue
        used = set(out.values()) | set(mapping.values())
        names = ROLE_NAMES[role] + ((FALLBACK[(kind, role)],) if (kind, role) in FALLBACK else ())
        found = next((lower[n] for n in names if n in lower and lower[n] not in used), None)
        if found is None:
            raise InputError(
                N_("no {role} column found"),
                source=source,
                field=role,
                hint=N_("columns found: {columns}. {how}"),
                plain_hint=N_("columns found: {columns}"),
                params={"role": role, "columns": ", ".join(cols), "how": column_hint(role)},
            )
        out[role] = found
    return out


def is_rank_column(roles: dict, mapping: dict | None, kind: str) -> bool:
    """Whether a run's score column holds ranks (named ``rank``, or mapped as ``rank``)."""
    if kind != "run":
        return False
    col = roles["score"]
    return (mapping or {}).get("rank") == col or col.lower().strip() == "rank"


def candidate_columns(columns, role: str) -> list[str]:
    """The columns whose names are usual names of ``role``, in the table's order.

    >>> candidate_columns(["qid", "docid", "docno", "rank", "score"], "doc_id")
    ['docid', 'docno']
    """
    names = set(ROLE_NAMES[role])
    return [str(c) for c in columns if str(c).lower().strip() in names]


def is_table_header(line: bytes) -> bool:
    """Whether ``line`` names at least two columns by their usual names (a table header).

    >>> is_table_header(b"query-id\\tcorpus-id\\tscore"), is_table_header(b"1\\t0\\t12\\t1")
    (True, False)
    """
    names = {n for names in ROLE_NAMES.values() for n in names} | {"rank", "iteration"}
    text = line.decode("utf-8", "replace").lower().lstrip("\ufeff")
    for sep in (",", "\t", ";", " "):
        cells = [c.strip().strip('"') for c in text.split(sep)]
        if len(cells) >= 2 and sum(c in names for c in cells) >= 2:
            return True
    return False
