"""aicr: validate GPU/AI Kubernetes clusters against their recipe and produce CNCF evidence."""

from __future__ import annotations

import functools


@functools.cache
def version() -> str:
    """The installed version, looked up on first use.

    importlib.metadata costs about 50 ms to import, which every check process
    and ``aicr --help`` would otherwise pay at start-up.
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("aicr")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def __getattr__(name: str) -> str:
    """``aicr.__version__``, computed by ``version()`` when first asked for."""
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'aicr' has no attribute {name!r}")
