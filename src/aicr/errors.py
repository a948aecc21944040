"""The one error family of aicr, and the exit code each error maps to.

    AicrError                      exit 8 unless a subclass says otherwise
    ├── InputError                 exit 2: the user gave us something we cannot use
    │   ├── FileFormatError        unreadable file, malformed YAML/JSON
    │   │   └── BoundExceededError an input over a size, time, depth or alias bound
    │   ├── SchemaError            a document that does not fit its model
    │   ├── UnknownCheckError      a check name the catalog does not have
    │   ├── FlagConflictError      flags that cannot be combined or are malformed
    │   ├── UnsupportedVersionError a CNCF version we hold no data for
    │   └── InvalidRequestError    inputs that are each valid but contradict each other
    ├── ValidationFailed           exit 8: the cluster does not deliver what was promised
    │   ├── GateFailed             readiness constraints failed
    │   ├── ChecksFailed           a check failed or ended `other`
    │   └── SubmissionFailed       a CNCF submission could not be written or verified
    ├── ClusterError               exit 8: the cluster could not be reached or refused us
    └── Interrupted                exit 130: Ctrl-C / SIGTERM

Library code raises these; only ``aicr.cli.main`` turns them into output and exit codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

EXIT_OK = 0
EXIT_INVALID_INPUT = 2
EXIT_VALIDATION_FAILED = 8
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where it is, what is wrong, what was expected."""

    problem: str
    source: str | None = None
    line: int | None = None
    field_path: str | None = None
    hint: str | None = None

    def __str__(self) -> str:
        where = ""
        if self.source:
            where = self.source + (f":{self.line}" if self.line else "") + ": "
        path = f"{self.field_path}: " if self.field_path else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}{path}{self.problem}{hint}"


class AicrError(Exception):
    """Base of every error aicr reports to its user."""

    exit_code: ClassVar[int] = EXIT_VALIDATION_FAILED


class InputError(AicrError):
    """Bad input; carries every problem found so the user fixes them in one go."""

    exit_code: ClassVar[int] = EXIT_INVALID_INPUT

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = problems
        super().__init__("\n".join(str(p) for p in problems))


class FileFormatError(InputError):
    """A file that cannot be read or parsed."""


class BoundExceededError(FileFormatError):
    """An input over one of its bounds (``aicr.limits``): refused before it is parsed further."""


class SchemaError(InputError):
    """A document that parses but does not fit its model."""


class UnknownCheckError(InputError):
    """A check name that the catalog does not have."""


class FlagConflictError(InputError):
    """Flags that are malformed or cannot be combined."""


class UnsupportedVersionError(InputError):
    """A CNCF conformance version without requirement data."""


class InvalidRequestError(InputError):
    """Inputs that are each well-formed but contradict each other."""


class ValidationFailed(AicrError):
    """The cluster does not deliver what the recipe promises."""


class GateFailed(ValidationFailed):
    """Readiness constraints failed against the snapshot."""


class ChecksFailed(ValidationFailed):
    """At least one check failed or ended in `other`."""


class SubmissionFailed(ValidationFailed):
    """A CNCF submission could not be written, or did not pass the verifier."""


class ClusterError(AicrError):
    """The cluster could not be reached, or refused what the run needs."""


class Interrupted(AicrError):
    """The run was stopped by a signal."""

    exit_code: ClassVar[int] = EXIT_INTERRUPTED
