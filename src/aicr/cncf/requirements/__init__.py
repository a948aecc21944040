"""CNCF requirement sets, one data file per conformance version, and how a run picks one."""

from aicr.cncf.requirements.model import (
    LAST_PLAIN_VERSION,
    PRODUCT_STATUSES,
    SUPPORTED_VERSIONS,
    UPSTREAM_REVISION,
    Conformance,
    Level,
    Requirement,
    RequirementSet,
    load_requirements,
    major_minor,
    parse_requirements,
    resolve_conformance,
    version_key,
)

__all__ = [
    "LAST_PLAIN_VERSION",
    "PRODUCT_STATUSES",
    "SUPPORTED_VERSIONS",
    "UPSTREAM_REVISION",
    "Conformance",
    "Level",
    "Requirement",
    "RequirementSet",
    "load_requirements",
    "major_minor",
    "parse_requirements",
    "resolve_conformance",
    "version_key",
]
