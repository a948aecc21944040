"""aicr: validate GPU/AI Kubernetes clusters against their recipe and produce CNCF evidence."""

from __future__ import annotations

# The version pyproject.toml gives the package, as a literal: looking it up through
# importlib.metadata imports email, zipfile, csv and socket (about 95 M instructions, more
# than click) in every run and check pod. tests/unit/test_version.py fails when this and
# the installed metadata (or pyproject.toml) disagree.
__version__ = "0.1.0"


def version() -> str:
    """The installed version (``aicr.__version__``)."""
    return __version__
