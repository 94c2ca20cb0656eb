"""RankLab's library: exact, fast evaluation of rankings, detection gates, calibration
and hash-code retrieval. Pure Python + numpy (torch for hash codes); no UI imports.
"""

__version__ = "0.1.0"

from metrics_core.conventions import Conventions  # noqa: E402
from metrics_core.errors import InputError  # noqa: E402

__all__ = ["__version__", "Conventions", "InputError"]
