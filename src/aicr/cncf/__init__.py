"""CNCF AI Conformance: a run's CTRF report -> requirement statuses -> a verified submission.

The last stage of the pipeline. Requirement sets per version are package data; the
aggregation is fail closed; the writer renders, redacts and verifies before anything
reaches the output directory.

Each name below is imported from its module when first asked for, so a run that only
prints the requirement summary never loads the page writers, redaction (RE2) or JUnit.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aicr.cncf.aggregation import (
        Aggregation,
        CheckOutcome,
        ReqStatus,
        RequirementResult,
        SummaryRow,
        aggregate,
        check_not_applicable,
        check_recipe_coverage,
    )
    from aicr.cncf.requirements import (
        SUPPORTED_VERSIONS,
        Conformance,
        Level,
        Requirement,
        RequirementSet,
        load_requirements,
        resolve_conformance,
    )
    from aicr.cncf.submission import (
        SubmissionInputs,
        SubmissionResult,
        check_output_dir,
        planned_checks,
        refuse_leaks,
        submit,
        write_submission,
    )
    from aicr.cncf.vendor import check_vendor
    from aicr.cncf.verifier import VerifyResult, read_members, verify
    from aicr.redaction import Redactor

# Searched in this order for a name of __all__: the light modules first, so asking for
# the aggregation or the verifier never imports the writer or redaction.
_MODULES = (
    "aicr.cncf.aggregation",
    "aicr.cncf.requirements",
    "aicr.cncf.vendor",
    "aicr.cncf.verifier",
    "aicr.cncf.submission",
    "aicr.redaction",
)


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name in __all__:
        for module in _MODULES:
            found = importlib.import_module(module)
            if hasattr(found, name):
                value = getattr(found, name)
                globals()[name] = value
                return value
    raise AttributeError(f"module 'aicr.cncf' has no attribute {name!r}")


__all__ = [
    "SUPPORTED_VERSIONS",
    "Aggregation",
    "CheckOutcome",
    "Conformance",
    "Level",
    "Redactor",
    "ReqStatus",
    "Requirement",
    "RequirementResult",
    "RequirementSet",
    "SubmissionInputs",
    "SubmissionResult",
    "SummaryRow",
    "VerifyResult",
    "aggregate",
    "check_not_applicable",
    "check_output_dir",
    "check_recipe_coverage",
    "check_vendor",
    "load_requirements",
    "planned_checks",
    "read_members",
    "refuse_leaks",
    "resolve_conformance",
    "submit",
    "verify",
    "write_submission",
]
