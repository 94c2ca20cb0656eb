"""Session-state keys of the Hashing page (namespaced ``ranklab.hashing.*``).

The loaded data is a dict of numpy arrays: ``query_codes``, ``db_codes``,
``query_labels``, ``db_labels``, plus ``source`` (a short description).
"""

DATA = "ranklab.hashing.data"        # dict of arrays or None
MESSAGE = "ranklab.hashing.message"  # last load error shown on the page, or None
