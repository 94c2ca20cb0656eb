"""The ranked-list engine and every ranking measure.

``metrics_core.ranking.evaluate`` holds :func:`evaluate`; it is imported from
``metrics_core`` directly (importing it here would make the readers, which build
:class:`Run` / :class:`Qrels`, import themselves).
"""

from metrics_core.ranking.data import Qrels, Run

__all__ = ["Qrels", "Run"]
