"""Session-state keys of the ranking pages (Data, Overview, Per query, Breakdown, Click
feedback, Learn, Home), namespaced ``ranklab.*``.

The data every page shares (qrels, runs, metadata, conventions, measures, thresholds, the
click log, the selected query) is in :mod:`ui.common.state`. Here: the ranking section's
caches and each page's widget keys, one class per page, so a page names ``Overview.HEADLINE``
and never spells a key.
"""

from __future__ import annotations

from ui.common.keep import keep_keys

# --- the qrels / run / metadata boxes (ui.ranking.upload) -----------------------------------
UPLOADS_DONE = "ranklab.data.done"  # prefix of the read-once keys: + ".<kind>.<file name>"
SOURCES = "ranklab.data.sources"  # (kind, file name) -> bytes of the upload (parsed, then released)
COLUMN_MAPPINGS = "ranklab.data.mapping"  # (kind, file name) -> {role: column}
MAPPING_WIDGET = "ranklab.data.map"  # prefix of the column-mapping widgets


def upload_key(page: str, kind: str) -> str:
    """The upload slot of ``kind`` ("qrels", "run", "meta") on ``page`` ("data", "overview")."""
    return f"ranklab.{page}.{kind}_file"


# --- shared widgets (ui.ranking.widgets) -----------------------------------------------------
MEASURES_WIDGET = "ranklab.w.measures"
CUSTOM_MEASURE = "ranklab.w.custom_measure"
LOAD_SAMPLE_INLINE = "ranklab.load_sample_inline"
CLICKS_SOURCE = "ranklab.clicks.source"  # file name of the loaded click log
keep_keys(SOURCES, CLICKS_SOURCE)  # a reload brings them back (ui.common.keep)


class Home:
    SAMPLE = "ranklab.home.sample"


class Data:
    SAMPLE = "ranklab.data.sample"
    DIVERSITY_SAMPLE = "ranklab.data.diversity_sample"
    CLEAR = "ranklab.data.clear"
    QRELS_FORMAT = "ranklab.data.qrels_fmt"
    RUN_FORMAT = "ranklab.data.run_fmt"
    LABELS = "ranklab.data.labels"
    DROP_RUN = "ranklab.data.drop_run"
    DROP_RUN_BUTTON = "ranklab.data.drop_run_btn"
    DIAGNOSTICS_K = "ranklab.data.diag_k"


class Overview:
    QUERY_SET = "ranklab.w.overview.query_set"
    HEADLINE = "ranklab.overview.headline"
    GRID = "ranklab.overview.grid"
    LONG = "ranklab.overview.long"
    OWN_QUERIES = "ranklab.overview.own_queries"
    CHART_OPEN = "ranklab.overview.chart_open"
    CHART_MEASURES = "ranklab.overview.chart_measures"
    CHART = "ranklab.overview.chart"
    #: the board settings: read before their widgets are drawn (after the leaderboard)
    BOARD = {
        "baseline": "ranklab.overview.baseline",
        "n_resamples": "ranklab.overview.resamples",
        "confidence": "ranklab.overview.confidence",
        "seed": "ranklab.overview.seed",
        "test": "ranklab.overview.test",
        "correction": "ranklab.overview.correction",
    }


class PerQuery:
    RUN = "ranklab.pq.run"
    FILTER = "ranklab.pq.filter"
    CATEGORIES = "ranklab.pq.cats"
    MEASURE = "ranklab.pq.measure"
    RANGE = "ranklab.pq.range"
    TIED_ONLY = "ranklab.pq.tied_only"
    TABLE = "ranklab.pq.table"
    LAST_ROW = "ranklab.pq.last_row"
    CHART_KIND = "ranklab.pq.kind"
    DISTRIBUTION = "ranklab.pq.dist"
    QUERY = "ranklab.pq.query"
    DEPTH = "ranklab.pq.depth"

    @staticmethod
    def side(i: int) -> str:
        """The run shown on side ``i`` (0: A, 1: B) of the one-query view."""
        return f"ranklab.pq.side{i}"

    @staticmethod
    def ranking(i: int) -> str:
        return f"ranklab.pq.rank{i}"

    @staticmethod
    def missed(i: int) -> str:
        return f"ranklab.pq.missed{i}"


class Breakdown:
    DATES = "ranklab.bd.dates"
    COLUMN = "ranklab.bd.column"
    MEASURE = "ranklab.bd.measure"
    CHART = "ranklab.bd.chart"


class Clicks:
    SAMPLE = "ranklab.clicks.sample"
    UPLOAD = "ranklab.clicks.file"
    RULE = "ranklab.clicks.rule"
    STRICT = "ranklab.clicks.strict"
    CHART = "ranklab.clicks.chart"


class Learn:
    EXAMPLE = "ranklab.learn.example"  # the loaded preset (name) or None
    VERSION = "ranklab.learn.version"  # bumps when a preset is loaded, to reset the editor
    LABELS = "ranklab.learn.labels"
    K = "ranklab.learn.k"
    NUM_RELEVANT = "ranklab.learn.numrel"
    GRADED = "ranklab.learn.graded"
    FOUR_RESULTS = "ranklab.learn.four_results"
    OTHER = "ranklab.learn.other"
    LOAD = "ranklab.learn.load"
    STATED = "ranklab.learn.stated"
    VALUES = "ranklab.learn.values"
    STEPS = "ranklab.learn.steps"
    CHART = "ranklab.learn.chart"
    CONVENTIONS = "ranklab.learn.conventions"

    @staticmethod
    def editor(version: int) -> str:
        return f"ranklab.learn.editor.{version}"

    @staticmethod
    def convention(field: str) -> str:
        """The example's own choice of a convention (gain, discount, ideal, p_denominator)."""
        return f"ranklab.learn.{field}"
