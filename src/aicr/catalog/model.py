"""Catalog models and loading."""

from __future__ import annotations

import functools
from datetime import timedelta
from importlib import resources
from typing import Literal

from pydantic import Field, field_validator

from aicr import durations, version
from aicr.document import Document, refuse_duplicates, validate
from aicr.phases import PHASE_ORDER, Phase
from aicr.yaml_io import parse


class PolicyRule(Document):
    """One RBAC rule, in the shape of a Kubernetes PolicyRule."""

    api_groups: list[str] = Field(description="API groups ('' is the core group).")
    resources: list[str] = Field(description="Resources, including subresources like pods/log.")
    verbs: list[str] = Field(description="Verbs allowed on them.")
    resource_names: list[str] | None = Field(
        default=None, description="Restrict to these object names."
    )


class Resources(Document):
    """Requests and limits of the check's container."""

    cpu: str = "100m"
    memory: str = "256Mi"


class CheckSpec(Document):
    """One check of the catalog."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=40)
    phase: Phase
    description: str
    timeout: timedelta = Field(description="Job deadline, e.g. 5m.")
    requirements: list[str] = Field(
        default_factory=list, description="CNCF requirement ids this check backs."
    )
    exclusive_gpus: bool = Field(
        default=False, description="Takes whole GPUs; never runs beside another such check."
    )
    queries_prometheus: bool = Field(
        default=False, description="Must be scheduled next to the Prometheus pod."
    )
    access: list[PolicyRule] = Field(
        default_factory=list, description="Cluster-wide API access the check needs."
    )
    workload_access: list[PolicyRule] = Field(
        default_factory=list,
        description="API access inside the run-unique namespaces the check creates.",
    )
    resources: Resources = Field(default_factory=Resources)

    @field_validator("timeout", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        return durations.parse(value) if isinstance(value, str) else value


class Catalog(Document):
    """The whole catalog document."""

    api_version: Literal["aicr.nvidia.com/v1alpha1"]
    kind: Literal["Catalog"]
    image: str = Field(description="Validator image repository; the tag is the tool's version.")
    checks: list[CheckSpec]

    @field_validator("checks")
    @classmethod
    def _unique(cls, checks: list[CheckSpec]) -> list[CheckSpec]:
        refuse_duplicates([c.name for c in checks], "check names")
        return checks

    @property
    def names(self) -> list[str]:
        """Check names in phase order, then file order."""
        return [c.name for c in self.ordered]

    @property
    def ordered(self) -> list[CheckSpec]:
        """Checks in phase order, then file order."""
        return sorted(self.checks, key=lambda c: PHASE_ORDER.index(c.phase))

    def get(self, name: str) -> CheckSpec | None:
        """The check named ``name``, or None."""
        return next((c for c in self.checks if c.name == name), None)

    @property
    def image_ref(self) -> str:
        """The validator image pinned to this tool's version."""
        return f"{self.image}:v{version()}"


def parse_catalog(text: str, source: str = "catalog.yaml") -> Catalog:
    """Parse catalog YAML (tests use this with inline catalogs)."""
    return validate(Catalog, parse(text, source))


@functools.cache
def load_catalog() -> Catalog:
    """The catalog shipped in the package."""
    text = resources.files("aicr.catalog").joinpath("catalog.yaml").read_text(encoding="utf-8")
    return parse_catalog(text, "aicr/catalog/catalog.yaml")
