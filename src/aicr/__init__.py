"""aicr: validate GPU/AI Kubernetes clusters against their recipe and produce CNCF evidence."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("aicr")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
