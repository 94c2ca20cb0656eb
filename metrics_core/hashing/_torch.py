"""torch, imported on first use.

Importing :mod:`metrics_core.hashing` for its constants (TIE_RULES, NORMALIZERS), or the
command line for its option checks, loads no torch; the first attribute looked up on
:data:`torch` imports it (and each attribute is cached on the proxy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING


class _LazyTorch:
    def __getattr__(self, name):
        import torch as _torch

        value = getattr(_torch, name)
        object.__setattr__(self, name, value)
        return value


if TYPE_CHECKING:  # the checker sees the module itself, with its types
    import torch
else:
    torch = _LazyTorch()
