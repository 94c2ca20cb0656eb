"""The library's error messages in the session's language.

Bad inputs read through the public readers raise an :class:`InputError` whose ``str()`` is
the English of the command line (unchanged) and whose ``plain(gettext)`` is Spanish with the
same file name and line; an AST scan fails on a raise site whose text is not marked for the
catalogs; the Data page of a Spanish session shows a bad upload's message in Spanish.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import metrics_core as mc
from metrics_core.errors import N_, InputError, Phrase, prefixed
from metrics_core.io.codes import read_matrix
from metrics_core.io.scores import read_scores
from metrics_core.report.catalogs import translations

ROOT = Path(__file__).resolve().parents[2]
SPANISH = translations("es").gettext

#: Words of the English templates that a Spanish message must not contain (once the file
#: name is taken out: user data and column layouts such as "qid Q0 docid rank score tag" may
#: be English, the sentences around them may not).
ENGLISH = re.compile(
    r"\b(expected|found|is not|are not|must|empty|line|lines|row|rows|Every|Give|cannot|"
    r"column|columns|file|number|the|this|Save|Remove|Write|value|not a)\b"
)
#: The layouts and ids the messages quote as they are (never translated).
QUOTED = ("qid Q0 docid rank score tag", "qid iter docid relevance", "--qrels", "--run")


def _run(path):
    return mc.read_run(str(path))


def _qrels(path):
    return mc.read_qrels(str(path))


def _scores(path):
    return read_scores(str(path))


def _codes(path):
    return read_matrix(str(path), "codes")


def _labels(path):
    return read_matrix(str(path), "labels")


#: (case id, file name, bytes, reader, line of the problem or None, str(exc) after "<file>, ")
CASES = [
    (
        "wrong column count",
        "mine.txt",
        b"q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2\n",
        _run,
        2,
        "line 2: expected 6 columns, found 4. run lines are: qid Q0 docid rank score tag (this line looks "
        "like a qrels line: did you swap qrels= and run=?)",
    ),
    (
        "non-numeric score",
        "mine.txt",
        b"q1 Q0 d1 1 abc tag\n",
        _run,
        1,
        "line 1: score 'abc' is not a number. run lines are: qid Q0 docid rank score tag",
    ),
    (
        "non-finite score",
        "mine.txt",
        b"q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 nan tag\n",
        _run,
        2,
        "line 2: score is 'nan', not a finite number. Every score must be a finite number",
    ),
    (
        "a run given as qrels",
        "judged.txt",
        b"q1 Q0 d1 1 0.5 tag\n",
        _qrels,
        1,
        "line 1: expected 4 columns, found 6. qrels lines are: qid iter docid relevance (this line looks "
        "like a run line: did you swap qrels= and run=?)",
    ),
    (
        "quoted ids",
        "mine.txt",
        b'q1 Q0 "d 1" 1 0.5 tag\n',
        _run,
        1,
        'line 1: a double quote (") in the line: TREC files are not quoted, and ids cannot contain spaces. '
        "Remove the quotes and the spaces inside ids; run lines are: qid Q0 docid rank score tag",
    ),
    (
        "NUL bytes",
        "mine.txt",
        b"q1 Q0 d1 1 0.5 tag\nq1 Q0 d\x002 2 0.4 tag\n",
        _run,
        2,
        "line 2: binary data (a NUL byte): this is not a text file. Give a plain-text TREC file or a "
        "CSV/TSV/JSON/Parquet table",
    ),
    (
        "not UTF-8",
        "mine.txt",
        b"q1 Q0 d1 1 0.5 tag\nq1 Q0 d\xe92 2 0.4 tag\n",
        _run,
        2,
        "line 2: not UTF-8 text (byte 0xe9). Save the file as UTF-8",
    ),
    (
        "only comments",
        "mine.txt",
        b"# nothing here\n",
        _run,
        None,
        "no data lines: the file is empty (or only comments). run lines are: qid Q0 docid rank score tag",
    ),
    (
        "missing column",
        "mine.csv",
        b"a,b,c\nq1,d1,1\n",
        _run,
        None,
        "no query_id column found. columns found: a, b, c. Name one of them with columns={'query_id': NAME}",
    ),
    (
        "non-numeric score in a table",
        "mine.csv",
        b"query_id,doc_id,score\nq1,d1,1\nq1,d2,high\n",
        _run,
        3,
        "line 3: score 'high' is not a number. Every row needs a numeric score",
    ),
    (
        "empty query id in a table",
        "mine.csv",
        b"query_id,doc_id,score\nq1,d1,1\n,d2,2\n",
        _run,
        3,
        "line 3: empty query id. Every row needs a query id (a text or a whole number)",
    ),
    (
        "ragged CSV",
        "mine.csv",
        b"query_id,doc_id,score\nq1,d1,1,9,9\n",
        _run,
        2,
        "line 2: the rows have more fields than the header (3). Every row needs the same number of fields",
    ),
    (
        "label not 0/1",
        "scores.csv",
        b"score,label\n0.5,1\n0.7,2\n",
        _scores,
        3,
        "line 3: label value 2 is not 0 or 1. Labels must be 0/1: 1 = positive, 0 = negative (yes/no, "
        "true/false accepted)",
    ),
    (
        "no score column",
        "scores.csv",
        b"foo,label\n0.5,1\n",
        _scores,
        None,
        "cannot tell which column holds the scores (columns: foo, label). Name it with score_col=",
    ),
    (
        "score out of a JSON table",
        "scores.json",
        b'[{"score": 0.5, "label": 1}, {"score": "x", "label": 0}]',
        _scores,
        None,
        "row 2: score value 'x' is not a number. Every row needs a numeric score; remove or "
        "fix this row",
    ),
    (
        "code not a number",
        "codes.csv",
        b"1,0\nx,1\n",
        _codes,
        2,
        "line 2: codes value 'x' is not a number. Write numbers with ASCII digits, one row per line",
    ),
    (
        "ragged codes",
        "codes.csv",
        b"1,0\n1\n",
        _codes,
        None,
        "rows have different numbers of values (2 in the first row, 1 in another). Every row needs the "
        "same number of values",
    ),
    (
        "labels with NaN",
        "labels.csv",
        b"1\nnan\n",
        _labels,
        None,
        "labels contain NaN or infinity. Every value must be a finite number",
    ),
]


def _strip(text: str, path: Path) -> str:
    text = text.replace(str(path), "")
    for quoted in QUOTED:
        text = text.replace(quoted, "")
    return text


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_bad_input_reads_in_spanish_and_its_english_is_unchanged(tmp_path, case):
    _, name, data, reader, line, english = case
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        reader(path)
    exc = info.value
    assert str(exc) == (f"{path}, " if line is not None else f"{path}: ") + english
    assert exc.line == line
    spanish = exc.plain(SPANISH)
    assert spanish != exc.plain()
    assert spanish.startswith(f"{path}, línea {line}: " if line is not None else f"{path}: ")
    assert exc.problem not in spanish
    left = _strip(spanish, path)
    assert not ENGLISH.search(left), (spanish, ENGLISH.search(left))


def test_the_duplicates_message_is_spanish_too(tmp_path):
    """Raised by the evaluation (the ranking package), converted with it."""
    run = tmp_path / "mine.txt"
    run.write_bytes(b"q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n")
    qrels = mc.read_qrels(b"q1 0 d1 1\n")
    with pytest.raises(InputError) as info:
        mc.evaluate(qrels, mc.read_run(str(run)), ["P@5"])
    exc = info.value
    assert str(exc).startswith(
        f"{run}: duplicate document in the run for query 'q1', document 'd1' (lines 1 and 2"
    )
    spanish = exc.plain(SPANISH)
    assert "q1" in spanish and "d1" in spanish and not ENGLISH.search(_strip(spanish, run))


def test_a_hashing_role_is_translated_and_the_command_line_rebuild_keeps_it():
    from metrics_core.cli.hash import _with_file
    from metrics_core.hashing.validate import as_labels

    with pytest.raises(InputError) as info:
        as_labels([0.5, 1.0], 2, "query labels")
    exc = info.value
    assert str(exc) == "query labels: class labels must be whole numbers"
    assert (
        exc.plain(SPANISH)
        == "etiquetas de consulta: las etiquetas de clase deben ser números enteros"
    )

    class Args:
        query_codes, db_codes, query_labels, db_labels = "q.npy", "d.npy", "ql.csv", "dl.csv"

    moved = _with_file(exc, Args)
    assert str(moved) == "ql.csv (query labels): class labels must be whole numbers"
    assert (
        moved.plain(SPANISH)
        == "ql.csv (query labels): las etiquetas de clase deben ser números enteros"
    )


def test_replace_keeps_templates_values_and_phrases():
    exc = InputError(
        N_("expected {want} columns, found {got}"),
        source="a.txt",
        line=3,
        hint=N_("Check the file"),
        plain_hint=N_("Give another file"),
        params={"want": 6, "got": 4},
    )
    words = {
        "expected {want} columns, found {got}": "se esperaban {want} columnas y hay {got}",
        "Give another file": "Da otro archivo",
        "{source}, line {line}: ": "{source}, línea {line}: ",
    }

    def spanish(text):
        return words.get(text, text)

    moved = exc.replace(source="b.txt")
    assert str(moved) == "b.txt, line 3: expected 6 columns, found 4. Check the file"
    assert (
        moved.plain(spanish) == "b.txt, línea 3: se esperaban 6 columnas y hay 4. Da otro archivo"
    )
    literal = exc.replace(
        hint="Elige {otra} columna", plain_hint=None
    )  # a literal text: braces stay
    assert literal.plain(spanish).endswith(". Elige {otra} columna")
    assert (
        exc.phrase("hint") == "Check the file"
        and exc.phrase("plain_hint").translate(spanish) == "Da otro archivo"
    )
    # user data is never read as a template nor translated
    odd = InputError(N_("no column {column}"), params={"column": "{want}"})
    assert (
        str(odd) == "no column {want}"
        and odd.plain(lambda t: {"no column {column}": "falta {column}"}.get(t, t))
        == "falta {want}"
    )
    nested = prefixed(
        Phrase(N_("row {row}: "), {"row": 2}),
        Phrase(N_("empty {what}"), {"what": Phrase(N_("query id"))}),
    )
    assert nested == "row 2: empty query id"
    assert InputError(nested).plain(SPANISH) == "fila 2: id de consulta vacío"


# ----------------------------------------------------------------------------------
# every raise site marks its texts

#: The library's command-line and drop-in layers speak English (their words are the
#: command line's); every other module's InputError texts must be marked for the catalogs.
ENGLISH_ONLY = ("metrics_core/cli", "metrics_core/compat")
SCANNED = tuple(
    sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "metrics_core").rglob("*.py")
        if "__pycache__" not in p.parts
        and not p.relative_to(ROOT).as_posix().startswith(ENGLISH_ONLY)
    )
)
#: Calls whose text arguments are checked: the error itself and the phrases built for it.
CHECKED_CALLS = {"InputError": ("problem", "hint", "plain_hint"), "Phrase": ("template",)}


def _files(paths=SCANNED) -> list[Path]:
    out = []
    for name in paths:
        path = ROOT / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _unmarked(node: ast.AST) -> bool:
    """Whether ``node`` is a text written in place without the catalog marker: a string
    literal, an f-string, a concatenation or a ``.format()``/``.join()`` of texts."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return True
    if isinstance(node, ast.IfExp):
        return _unmarked(node.body) or _unmarked(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_unmarked(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("format", "join", "replace", "strip")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id == "str"
    return False


def unmarked_texts(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line`` of every checked call in ``path`` with a text not marked by ``N_``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name not in CHECKED_CALLS:
            continue
        fields = CHECKED_CALLS[name]
        args = list(zip(fields, node.args[:1], strict=False))
        args += [(k.arg, k.value) for k in node.keywords if k.arg in fields]
        for field, value in args:
            if value is not None and _unmarked(value):
                found.append(f"{path.relative_to(root)}:{node.lineno} ({name} {field})")
    return found


def test_the_scan_finds_an_unmarked_raise_site(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(n):\n"
        '    raise InputError(f"expected {n} columns")\n'
        "def g():\n"
        '    raise InputError("no rows", hint=N_("Give rows"))\n'
        "def h(x):\n"
        '    raise InputError(N_("ok {x}"), hint="plain " + x, params={"x": x})\n'
        "def k(x):\n"
        '    raise mc.InputError(N_("ok"), hint=x or "fallback")\n'
        "def m(x):\n"
        '    return Phrase(f"row {x}")\n'
        "def fine(x, problem):\n"
        '    raise InputError(N_("a {x}"), hint=N_("b") if x else None, params={"x": x})\n'
        "def fine2(problem):\n"
        '    raise InputError(problem, hint=Phrase(N_("c")))\n'
    )
    found = unmarked_texts(bad, tmp_path)
    assert [f.split(" ")[0] for f in found] == [
        "bad.py:2",
        "bad.py:4",
        "bad.py:6",
        "bad.py:8",
        "bad.py:10",
    ]


def test_every_scanned_raise_site_marks_its_texts():
    files = _files()
    assert len(files) >= 80  # the whole library but its command line and drop-ins
    found = [f for path in files for f in unmarked_texts(path)]
    assert found == [], "texts not marked with N_ (use a template and params):\n" + "\n".join(found)


# ----------------------------------------------------------------------------------
# the app


def test_a_bad_run_uploaded_in_a_spanish_session_gets_a_spanish_message():
    from streamlit.testing.v1 import AppTest

    from ui.ranking.data import load_sample

    qrels, runs, _ = load_sample()
    at = AppTest.from_file(str(ROOT / "pages" / "data.py"), default_timeout=120)
    at.query_params["lang"] = "es"
    at.session_state["ranklab.qrels"] = qrels
    at.session_state["ranklab.runs"] = dict(runs)
    at.run()
    assert not at.exception
    upload = next(u for u in at.get("file_uploader") if u.key.startswith("ranklab.data.run_file"))
    upload.set_value(
        [("broken.txt", b"q01 Q0 D1 1 0.5 x\nq01 Q0 D2 2 notanumber x\n", "text/plain")]
    ).run()
    assert not at.exception
    messages = " ".join(e.value for e in at.error)
    assert "broken.txt, línea 2: puntuación: 'notanumber' no es un número" in messages, messages
    assert "las líneas de una ejecución son: qid Q0 docid rank score tag" in messages
    assert "is not a number" not in messages and "line 2" not in messages
    assert set(at.session_state["ranklab.runs"]) == set(runs)  # what was loaded stays


def test_the_detection_pages_rebuilt_errors_keep_the_readers_translations():
    """The scores pages rebuild the reader's error in their words (a box to choose instead of
    an option); the reader's problem and file frame still translate."""
    from ui.detection.data import for_the_page

    with pytest.raises(InputError) as info:
        read_scores(b"score,verdict\n0.9,1\n0.2,0\n", name="odd.csv")
    page = for_the_page(info.value)
    assert page.plain(SPANISH).startswith(
        "odd.csv: no se puede saber qué columna es la de etiquetas (columnas: score, verdict). "
    )
    assert "--label-col" not in page.plain(SPANISH)
    with pytest.raises(InputError) as info:
        read_scores(b"score,label\n0.5,1\n0.5,3\n", name="bad.csv")
    page = for_the_page(info.value)
    assert str(page) == info.value.plain()
    assert page.plain(SPANISH) == (
        "bad.csv, línea 3: valor de label: 3 no es 0 ni 1. Las etiquetas deben ser 0/1: "
        "1 = positivo, 0 = negativo (se aceptan yes/no, true/false)"
    )
