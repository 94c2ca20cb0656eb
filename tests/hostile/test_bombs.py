"""Bombs: small files that would make the reader allocate far more than they hold.

Each is refused with one line naming the file and the problem, and the process's peak
resident set while it is read stays within :data:`BOUND_MB` of where it stood (measured
with :func:`tests.hostile.bombs.peak_growth_mb`). Before this, a 0.9 MB gzip of zeros
grew the app 395 -> 2,065 MB (the decompressor filled a buffer up to the 4 GiB input limit,
the text checks ran after), a 978-byte Parquet file declaring 600,000,000 rows cost
+408 MB, and a 57 kB history file whose CHECK constraint builds a 900 MB string cost
+860 MB while ``PRAGMA integrity_check`` evaluated it.
"""

from __future__ import annotations

import io
import sqlite3

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics_core.errors import InputError
from metrics_core.history.store import HistoryStore
from metrics_core.io import read_qrels, read_run
from metrics_core.io.limits import Limits, using_limits
from metrics_core.io.source import read_source
from metrics_core.io.text_check import TextCheck
from tests.hostile.bombs import (
    COLUMN_VALUES,
    FILE_ROWS,
    FORMATS,
    GROUP_ROWS,
    check_bomb_history,
    compress,
    compressed_bomb,
    patch_parquet_rows,
    peak_growth_mb,
)

#: MiB a refused bomb may add to the process's peak resident set. Alone a refusal adds 0.4-7 MB;
#: inside the whole suite's long-lived process (over a GB of other tests' heap) one case was seen
#: at 46 MB from the allocator's own growth. The bombs themselves took 417 MB to 2 GB.
BOUND_MB = 64
MIB = 1 << 20
LINE = b"q1 Q0 d1 1 2.5 bm25\n"
#: 1 GiB of output: 64 members of 16 MiB
MEMBERS, MEMBER = 64, 16 * MIB


def _refusal(read, *args, **kwargs) -> tuple[InputError, float]:
    """The InputError ``read(*args, **kwargs)`` raises, and the peak growth meanwhile."""
    caught: list[InputError] = []

    def attempt():
        with pytest.raises(InputError) as info:
            read(*args, **kwargs)
        caught.append(info.value)

    grown = peak_growth_mb(attempt)
    return caught[0], grown


def _one_line(exc: InputError, name: str, words: str) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text, text
    assert name in text and words in text, text
    return text


@pytest.fixture(scope="module")
def zero_bombs():
    """Per format, 1 GiB of zeros compressed (gzip: about 1 MB, as in the report)."""
    return {fmt: compressed_bomb(fmt, bytes(MEMBER), MEMBERS) for fmt in FORMATS}


@pytest.mark.parametrize("fmt", FORMATS)
def test_zeros_are_refused_at_the_first_chunk(fmt, zero_bombs, tmp_path):
    bomb = zero_bombs[fmt]
    assert len(bomb) * 200 < MEMBERS * MEMBER  # a small file (LZ4 packs the least: 4.2 MB) ...
    path = tmp_path / f"zeros.{fmt}"
    path.write_bytes(bomb)
    # ... read from a path (the command line) and as an upload (a named file object)
    upload = io.BytesIO(bomb)
    upload.name = f"upload-zeros.{fmt}"
    for source, name in ((str(path), path.name), (upload, upload.name)):
        exc, grown = _refusal(read_run, source)
        _one_line(exc, name, "binary data (a NUL byte)")
        assert exc.line == 1
        assert grown < BOUND_MB, f"{fmt} from {name}: +{grown:.0f} MB"


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_past_the_limit_stops_at_the_limit(fmt):
    """1 GiB of valid run lines, read with a budget of 8 MiB: refused once 8 MiB came out."""
    bomb = compressed_bomb(fmt, LINE * (4 * MIB // len(LINE)), 256)
    upload = io.BytesIO(bomb)
    upload.name = f"lines.{fmt}"
    exc, grown = _refusal(read_run, upload, max_bytes=8 * MIB)
    _one_line(
        exc,
        upload.name,
        f"the {fmt} data once decompressed is larger than the input limit of 8 MiB",
    )
    assert grown < 8 + BOUND_MB, f"{fmt}: +{grown:.0f} MB"


def test_the_limits_in_force_apply():
    bomb = compressed_bomb("gzip", LINE * (MIB // len(LINE)), 8)
    with using_limits(Limits(max_input_mb=2)):
        with pytest.raises(
            InputError, match="decompressed is larger than the input limit of 2 MiB"
        ):
            read_qrels(bomb, name="qrels.gz")
    # within the limit it reads as before
    small = compress("gzip", LINE * 3)
    assert len(read_run(small, name="small")) == 3


def test_zeros_after_text_are_refused_where_they_start():
    lines = 200_000  # about 4 MB of text: several chunks before the zeros
    bomb = compressed_bomb("gzip", bytes(MEMBER), MEMBERS, prefix=LINE * lines)
    upload = io.BytesIO(bomb)
    upload.name = "late-zeros.gz"
    exc, grown = _refusal(read_run, upload)
    _one_line(exc, "late-zeros.gz", "NUL byte")
    assert exc.line == lines + 1
    assert grown < BOUND_MB


def test_text_check_follows_lines_and_characters_across_chunks():
    check = TextCheck("t.txt")
    check.feed("q1 Q0 é\n".encode()[:-2])  # "é" cut between two chunks
    check.feed("é\n".encode()[-2:] + b"x\n")
    with pytest.raises(InputError) as info:
        check.feed(b"ok\nbad \xff here\n")
    assert info.value.line == 4 and "0xff" in str(info.value)
    cut = TextCheck("cut.txt")
    cut.feed("a\né".encode()[:-1])
    with pytest.raises(InputError, match="not UTF-8") as info:
        cut.close()
    assert info.value.line == 2
    with pytest.raises(InputError, match="UTF-16"):
        TextCheck("u16.txt").feed("q1 Q0 d1 1 1 t\n".encode("utf-16-le"))


def test_decompressed_text_is_checked_once_and_binary_formats_pass():
    raw = read_source(compress("xz", LINE * 10), "ok.xz")
    assert raw.data == LINE * 10 and raw.text_checked
    buf = io.BytesIO()
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}), buf)
    parquet = compress("zstd", buf.getvalue())  # a Parquet file holds NUL bytes: not text
    assert len(read_run(parquet, name="r", fmt="parquet")) == 1


# -- Parquet ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_parquet() -> bytes:
    buf = io.BytesIO()
    pq.write_table(
        pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}), buf
    )
    return buf.getvalue()


def test_the_footer_patch_is_faithful(small_parquet):
    """Patching the counts to their true value gives a file that reads as the original."""
    same = patch_parquet_rows(small_parquet, 2, FILE_ROWS, GROUP_ROWS, COLUMN_VALUES)
    assert len(read_run(same, name="r", fmt="parquet")) == 2
    forged = patch_parquet_rows(small_parquet, 600_000_000, FILE_ROWS, GROUP_ROWS, COLUMN_VALUES)
    meta = pq.ParquetFile(pa.BufferReader(forged)).metadata
    assert (
        meta.num_rows
        == meta.row_group(0).num_rows
        == meta.row_group(0).column(0).num_values
        == 600_000_000
    )
    assert len(forged) < 1000


@pytest.mark.parametrize(
    ("paths", "words"),
    [
        ((FILE_ROWS,), "declares 600,000,000 rows, but its row groups hold 2"),
        ((FILE_ROWS, GROUP_ROWS), "declares 600,000,000 rows, but its columns hold 2 values"),
        ((FILE_ROWS, GROUP_ROWS, COLUMN_VALUES), "declares 600,000,000 rows in"),
    ],
)
def test_parquet_declaring_600_million_rows_is_refused(small_parquet, tmp_path, paths, words):
    forged = patch_parquet_rows(small_parquet, 600_000_000, *paths)
    path = tmp_path / "forged.parquet"
    path.write_bytes(forged)
    upload = io.BytesIO(forged)
    upload.name = "upload-forged.parquet"
    for source, name in ((str(path), path.name), (upload, upload.name)):
        exc, grown = _refusal(read_run, source)
        _one_line(exc, name, words)
        assert grown < BOUND_MB, f"{name}: +{grown:.0f} MB"


def test_parquet_over_the_budget_is_refused_before_reading(small_parquet):
    """Honest counts, but more cells than the caller's budget allows."""
    rows = 200_000
    buf = io.BytesIO()
    pq.write_table(
        pa.table(
            {
                "query_id": [f"q{i}" for i in range(rows)],
                "doc_id": ["d"] * rows,
                "score": [1.0] * rows,
            }
        ),
        buf,
    )
    upload = io.BytesIO(buf.getvalue())
    upload.name = "big.parquet"
    assert len(buf.getvalue()) < 2 * MIB  # the file fits the budget, its table does not
    exc, _ = _refusal(read_run, upload, max_bytes=4 * MIB)
    _one_line(exc, "big.parquet", "above the input limit of 4 MiB")
    assert len(read_run(io.BytesIO(buf.getvalue()), name="big", max_bytes=64 * MIB)) == rows


# -- History ----------------------------------------------------------------------------


def test_the_history_check_bomb_is_live():
    """``PRAGMA integrity_check`` evaluates an upload's CHECK constraints: a 40 MB string
    per row grows the process by about that much (the test bomb asks for 900 MB)."""
    small = check_bomb_history(40 * MIB, rows=2)
    conn = sqlite3.connect(":memory:")
    conn.deserialize(small)
    grown = peak_growth_mb(lambda: conn.execute("PRAGMA integrity_check").fetchone())
    conn.close()
    assert grown > 30, f"+{grown:.0f} MB"


def test_history_with_a_check_constraint_is_refused_before_it_runs():
    bomb = check_bomb_history(900_000_000)
    assert len(bomb) < 64 * 1024
    exc, grown = _refusal(HistoryStore.from_bytes, bomb, "check-bomb.sqlite3")
    _one_line(exc, "check-bomb.sqlite3", "the SQL of suite_qrels is not RankLab's own schema")
    assert grown < BOUND_MB, f"+{grown:.0f} MB"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE extra (x TEXT)",
        "CREATE VIEW v AS SELECT printf('%.*c', 900000000, 'x')",
        "CREATE TRIGGER t AFTER INSERT ON suites BEGIN SELECT 1; END",
        "CREATE INDEX suites_big ON suites(length(printf('%.*c', 900000000, name)))",
    ],
)
def test_history_with_a_foreign_object_is_refused(sql):
    with HistoryStore(":memory:") as store:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.deserialize(store.to_bytes())
    conn.execute(sql)
    image = bytes(conn.serialize())
    conn.close()
    exc, grown = _refusal(HistoryStore.from_bytes, image, "foreign.sqlite3")
    _one_line(exc, "foreign.sqlite3", "unexpected")
    assert grown < BOUND_MB


def test_a_true_history_file_still_loads():
    from metrics_core.history.sample import load_sample_history

    with HistoryStore(":memory:") as store:
        load_sample_history(store)
        image = store.to_bytes()
        count = store.count_evaluations()
    with HistoryStore.from_bytes(image, "mine.sqlite3") as loaded:
        assert loaded.count_evaluations() == count > 0
        assert loaded.integrity_check() == "ok"


def test_history_page_refuses_the_check_bomb_within_a_few_mb(monkeypatch):
    """The History page's upload box: the bomb's message, not 'Loaded 0 saved evaluations'."""
    from tests.app.test_history_page import page
    from ui.history import state as hs

    monkeypatch.delenv(hs.ENV_STORE, raising=False)  # the session's own history
    at = page(None)
    bomb = check_bomb_history(900_000_000)

    def upload():
        at.get("file_uploader")[0].set_value(
            ("check-bomb.sqlite3", bomb, "application/octet-stream")
        ).run()

    grown = peak_growth_mb(upload)
    assert not at.exception
    assert len(at.error) == 1
    assert "check-bomb.sqlite3" in at.error[0].value and "RankLab's own schema" in at.error[0].value
    assert not any("Loaded" in t.value for t in at.toast)
    assert grown < BOUND_MB, f"+{grown:.0f} MB"


def test_streamed_readers_refuse_a_forged_parquet_footer(small_parquet, tmp_path):
    """The batch reader (the app's big uploads) and the planner of the command line's units
    check the footer too; a reader of batches is not held to the memory estimate."""
    from metrics_core.io import open_run_stream
    from metrics_core.scale.units import plan_units

    forged = patch_parquet_rows(small_parquet, 600_000_000, FILE_ROWS, GROUP_ROWS, COLUMN_VALUES)
    path = tmp_path / "forged.parquet"
    path.write_bytes(forged)

    def stream():
        for _ in open_run_stream(str(path)).batches():
            pass

    exc, grown = _refusal(stream)
    _one_line(exc, "forged.parquet", "declares 600,000,000 rows in")
    assert grown < BOUND_MB
    with pytest.raises(InputError, match="declares 600,000,000 rows in"):
        plan_units([str(path)], unit_bytes=1 << 20)
    honest = tmp_path / "honest.parquet"
    honest.write_bytes(small_parquet)
    assert sum(t.num_rows for t in open_run_stream(str(honest)).batches()) == 2
