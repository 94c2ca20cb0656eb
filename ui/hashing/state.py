"""Session-state keys of the Hashing page (namespaced ``ranklab.hashing.*``).

The loaded data is a dict of numpy arrays: ``query_codes``, ``db_codes``,
``query_labels``, ``db_labels``, plus ``source`` (a short description).
"""

from ui.common import state
from ui.common.keep import keep_keys

DATA = state.HASH_CODES  # dict of arrays or None (the status line of every page reads it)
keep_keys(DATA)  # a reload brings them back (ui.common.keep)
MESSAGE = "ranklab.hashing.message"  # last load error shown on the page, or None
DATA_OPEN = "ranklab.hashing.data_open"  # the Data panel open (the expander's state)
CLOSE_DATA = "ranklab.hashing.close_data"  # codes just loaded from uploads: close the panel
UPLOAD = "ranklab.hashing.upload"  # upload slot of the four files (its ".seen": the last read)

# widget keys of the page (short names kept: saved sessions and tests use them)
LOAD_SAMPLE = "hash_load_sample"
TOPK = "hash_topk"
TIES = "hash_ties"
NORMALIZER = "hash_norm"
EXCLUDE = "hash_exclude"
PER_CLASS = "hash_per_class"
SUMMARY = "hash_summary"
P_AT_K = "hash_p_at_k"
BY_RADIUS = "hash_by_radius"
PER_QUERY = "hash_per_query"


def upload_part(part: str) -> str:
    """The uploader of one of the four parts (query_codes, db_codes, query_labels, db_labels)."""
    return f"hash_upload_{part}"
