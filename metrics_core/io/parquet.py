"""What a Parquet file holds, measured before it is read: its footer, then its texts.

:func:`check_parquet_metadata` reads the footer alone (row counts, the row groups'
compressed and uncompressed page sizes, dictionary pages included) and refuses what no
Parquet writer makes or what the input limit does not allow; :func:`parquet_file` opens the
file so that its text columns come back as dictionaries (each distinct text once, an
index per row), and :func:`decoded_table` measures what they expand to -- each text's
length against the field limit, the total against the input limit -- before it decodes
them. The readers of :mod:`metrics_core.io.tables` read every Parquet table through these.
"""

from __future__ import annotations

import pyarrow as pa

from metrics_core.errors import N_, InputError, Phrase
from metrics_core.io.limits import Limits, over_field, over_input, resolve

#: Largest number of cells (rows x columns) a Parquet file may declare.
MAX_PARQUET_CELLS = 2_000_000_000
#: Most rows a Parquet row group may declare per byte of its (compressed) column chunks.
#: pyarrow's densest output, a column of one repeated value, holds about 3,000 rows per
#: byte (pages of at most 20,000 rows, each with its header); a table with any column
#: that varies holds far fewer. A file declaring more was not written by a Parquet writer.
MAX_PARQUET_ROWS_PER_BYTE = 10_000
#: Fewest bytes of memory a cell of a Parquet table takes once read (a 64-bit number; a
#: text takes its 4-byte offset and its characters): the floor of the memory estimate.
PARQUET_CELL_BYTES = 8
#: Bytes a text cell takes once read into a DataFrame beside its characters (a Python
#: string's header and the frame's pointer to it), and how many times the characters are
#: held while a table is read whole (Arrow's column, pandas' strings, the run's ids).
PANDAS_TEXT_CELL_BYTES = 64
TEXT_COPIES = 3


def check_parquet_metadata(
    meta, file_size: int, source: str, limits: Limits | None = None, *, whole: bool = True
) -> None:
    """Refuse a Parquet file whose footer declares more than its bytes can hold, or more
    than the input limit, before any data is read (a forged footer makes the reader
    allocate for the rows it declares).

    Checks, all on the footer (``meta``, a ``pyarrow.parquet.FileMetaData``):

    * the file's row count equals the sum of its row groups' row counts;
    * each column chunk holds at least its row group's rows as values (a flat column holds
      exactly one value, or null, per row; a list column at least one level per row);
    * each row group declares at most :data:`MAX_PARQUET_ROWS_PER_BYTE` rows per byte of
      its compressed column chunks, and those chunks lie within the file's ``file_size``;
    * what a row group's pages take once decompressed (their uncompressed sizes, the
      dictionary pages included) is within the input limit of ``limits`` (default: the
      limits in force): a reader of batches holds a row group's pages at once;
    * for a table read whole (``whole``): rows x columns is at most
      :data:`MAX_PARQUET_CELLS`, and rows x columns x :data:`PARQUET_CELL_BYTES` (the
      least memory the table takes once read) as well as the declared uncompressed size of
      the whole file are within the input limit.

    What the dictionaries expand to is measured after them, before any column is decoded
    (:func:`decoded_table`). Each problem is one :class:`InputError` naming ``source``.
    """
    limit = resolve(limits).input_bytes
    hint = N_("Save the table again as Parquet, or as CSV")
    rows, columns = meta.num_rows, max(meta.num_columns, 1)
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    held = sum(g.num_rows for g in groups)
    if rows != held or rows < 0:
        raise InputError(
            N_("the Parquet file declares {rows} rows, but its row groups hold {held}"),
            source=source,
            hint=hint,
            params={"rows": f"{rows:,}", "held": f"{held:,}"},
        )
    unpacked = 0
    for g in groups:
        chunks = [g.column(j) for j in range(g.num_columns)]
        values = min((c.num_values for c in chunks), default=g.num_rows)
        stored = sum(c.total_compressed_size for c in chunks)
        if values < g.num_rows:
            raise InputError(
                N_(
                    "a row group of the Parquet file declares {rows} rows, but its columns "
                    "hold {values} values"
                ),
                source=source,
                hint=hint,
                params={"rows": f"{g.num_rows:,}", "values": f"{values:,}"},
            )
        if stored > file_size or g.num_rows > MAX_PARQUET_ROWS_PER_BYTE * max(stored, 1):
            raise InputError(
                N_(
                    "a row group of the Parquet file declares {rows} rows in {size} bytes: "
                    "more than a Parquet file can hold (a damaged or forged footer)"
                ),
                source=source,
                hint=hint,
                params={"rows": f"{g.num_rows:,}", "size": f"{stored:,}"},
            )
        pages = sum(max(c.total_uncompressed_size, 0) for c in chunks)
        if pages > limit:
            raise over_input(source, _PAGES, pages, limit)
        unpacked += pages
    if not whole:
        return
    if rows * columns > MAX_PARQUET_CELLS:
        raise InputError(
            N_("the Parquet file declares {rows} rows"),
            source=source,
            hint=N_("Split the file"),
            params={"rows": f"{rows:,}"},
        )
    declared = max(
        unpacked,
        sum(g.total_byte_size for g in groups),
        rows * columns * PARQUET_CELL_BYTES,
    )
    if declared > limit:
        raise over_input(source, _DECLARED, declared, limit)


_PAGES = Phrase(N_("a row group of the Parquet file, its pages decompressed,"))
_DECLARED = Phrase(N_("the data the Parquet file declares"))
_DECODED = Phrase(N_("the Parquet table, its texts decoded,"))
_DECODED_BATCH = Phrase(N_("a batch of the Parquet file, its texts decoded,"))


def _is_text(t: pa.DataType) -> bool:
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
    )


def parquet_file(source):
    """A ``pyarrow.parquet.ParquetFile`` of ``source`` (a path or a buffer) whose text
    columns are read as dictionaries: their values are read once and each row holds a
    4-byte index, so what a column expands to can be measured before it is decoded
    (:func:`decoded_table`)."""
    import pyarrow.parquet as pq

    probe = pq.ParquetFile(source)
    names = [f.name for f in probe.schema_arrow if _is_text(f.type)]
    if not names:
        return probe
    if isinstance(source, pa.BufferReader):
        source.seek(0)
    return pq.ParquetFile(source, read_dictionary=names)


def decoded_table(table, source: str, limits: Limits, *, whole: bool = True):
    """``table`` (a Table or RecordBatch read by :func:`parquet_file`) with its dictionary
    columns decoded, after measuring what they decode to: each text's length (the field
    limit) and the total (the input limit). The total counts the table (a whole file's, or
    one batch of a file read in batches: ``whole`` False) as the readers will hold it, read
    into pandas -- its texts :data:`TEXT_COPIES` times and :data:`PANDAS_TEXT_CELL_BYTES`
    per text cell, :data:`PARQUET_CELL_BYTES` per other cell.
    The lengths are read off the dictionary (each distinct text measured once) and taken
    per row: 4 bytes a row, never the texts themselves."""
    import pyarrow.compute as pc

    text = text_cells = other_cells = 0
    for name, column in zip(table.column_names, table.columns, strict=True):
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        for chunk in chunks:
            kind = chunk.type
            if pa.types.is_dictionary(kind) and _is_text(kind.value_type):
                lengths = pc.binary_length(chunk.dictionary)
                per_row = pc.take(lengths, chunk.indices)
            elif _is_text(kind):
                per_row = pc.binary_length(chunk)
            else:
                other_cells += len(chunk)
                continue
            text_cells += len(chunk)
            longest = pc.max(per_row).as_py() or 0
            if longest > limits.field_bytes:
                what = Phrase(N_("text in column {column}"), {"column": repr(name)})
                raise over_field(source, what, longest, limits.field_bytes)
            text += pc.sum(per_row).as_py() or 0
    size = text * TEXT_COPIES + text_cells * PANDAS_TEXT_CELL_BYTES
    size += other_cells * PARQUET_CELL_BYTES
    if size > limits.input_bytes:
        raise over_input(source, _DECODED if whole else _DECODED_BATCH, size, limits.input_bytes)
    return _decoded(table)


def _decoded(table):
    """``table`` with its dictionary columns cast to their values' type."""
    arrays, changed = [], False
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
            changed = True
        arrays.append(column)
    if not changed:
        return table
    fields = [
        pa.field(f.name, a.type, f.nullable, f.metadata)
        for f, a in zip(table.schema, arrays, strict=True)
    ]
    schema = pa.schema(fields, metadata=table.schema.metadata)
    if isinstance(table, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, schema=schema)
    return pa.Table.from_arrays(arrays, schema=schema)


__all__ = [
    "MAX_PARQUET_CELLS",
    "check_parquet_metadata",
    "decoded_table",
    "parquet_file",
]
