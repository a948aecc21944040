"""CNCF AI Conformance: a run's CTRF report -> requirement statuses -> a verified submission.

The last stage of the pipeline. Requirement sets per version are package data; the
aggregation is fail closed; the writer renders, redacts and verifies before anything
reaches the output directory.
"""

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
    Level,
    Requirement,
    RequirementSet,
    load_requirements,
    resolve_version,
)
from aicr.cncf.submission import (
    SubmissionResult,
    check_output_dir,
    planned_checks,
    refuse_leaks,
    write_submission,
)
from aicr.cncf.vendor import check_vendor
from aicr.cncf.verifier import VerifyResult, read_members, verify
from aicr.redaction import Redactor

__all__ = [
    "SUPPORTED_VERSIONS",
    "Aggregation",
    "CheckOutcome",
    "Level",
    "Redactor",
    "ReqStatus",
    "Requirement",
    "RequirementResult",
    "RequirementSet",
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
    "resolve_version",
    "verify",
    "write_submission",
]
