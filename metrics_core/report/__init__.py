"""Words and files: labels, legends, tables, exports, the thesis table, the HTML report.

This file only re-exports the names most callers need; the code is in the modules:

* :mod:`.exports` -- provenance, the table formats (:data:`TABLE_FORMATS`), safe CSV and
  JSON, writing a file or stdout;
* :mod:`.labels` -- interpretation labels (Good, Fair, Needs improvement), their
  thresholds, the interpreted reports' measures and the run colours;
* :mod:`.cells` -- how one cell prints (a missing value, a p-value, a LaTeX cell);
* :mod:`.comparison` (``compare`` -> ``Comparison``) and :mod:`.comparison_words` (its
  legends and sentences), :mod:`.leaderboard`, :mod:`.comparative`, :mod:`.thesis` and
  :mod:`.thesis_export`, :mod:`.evaluations`, :mod:`.html`, :mod:`.catalogs`.

Nothing here imports those modules' dependants (no import cycle through this file).
"""

from __future__ import annotations

from metrics_core.report.cells import (
    LATEX_MARKERS,
    MISSING,
    csv_number,
    format_cell,
    format_p,
    is_missing,
    is_p_column,
    latex_cell,
    latex_escape,
    latex_text,
    markdown_escape,
    short_caption,
)
from metrics_core.report.exports import (
    SIDECAR_SUFFIX,
    TABLE_FORMATS,
    csv_safe,
    format_table,
    json_safe,
    provenance,
    provenance_json,
    provenance_line,
    sidecar_path,
    write_export,
    write_text,
)
from metrics_core.report.labels import (
    DEFAULT_GOOD_THRESHOLDS,
    LABELS,
    PALETTE,
    REPORT_MEASURES,
    interpret,
    row_label,
    worst_labels,
)

__all__ = [
    "LATEX_MARKERS",
    "MISSING",
    "csv_number",
    "format_cell",
    "format_p",
    "is_missing",
    "is_p_column",
    "latex_cell",
    "latex_escape",
    "latex_text",
    "markdown_escape",
    "short_caption",
    "SIDECAR_SUFFIX",
    "TABLE_FORMATS",
    "csv_safe",
    "format_table",
    "json_safe",
    "provenance",
    "provenance_json",
    "provenance_line",
    "sidecar_path",
    "write_export",
    "write_text",
    "DEFAULT_GOOD_THRESHOLDS",
    "LABELS",
    "PALETTE",
    "REPORT_MEASURES",
    "interpret",
    "row_label",
    "worst_labels",
]
