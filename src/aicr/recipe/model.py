"""The recipe: AICR's RecipeResult format, every field a real file can carry."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from aicr.document import Document
from aicr.phases import Phase

Scalar = str | int | float | bool
UNUSED = "Accepted for AICR compatibility; unused."


class ConstraintWarning(Document):
    """A constraint an overlay could not satisfy when the recipe was hydrated."""

    overlay: str | None = Field(default=None, description=UNUSED)
    constraint: str | None = Field(default=None, description=UNUSED)
    expected: str | None = Field(default=None, description=UNUSED)
    actual: str | None = Field(default=None, description=UNUSED)
    reason: str | None = Field(default=None, description=UNUSED)


class RecipeMetadata(Document):
    """Provenance of the hydrated recipe."""

    version: str | None = Field(default=None, description="AICR version that hydrated it.")
    applied_overlays: list[str] | None = None
    excluded_overlays: list[str] | None = Field(default=None, description=UNUSED)
    constraint_warnings: list[ConstraintWarning] | None = None


class Criteria(Document):
    """What the recipe was made for (service, accelerator, intent, os, platform, nodes)."""

    service: str | None = None
    accelerator: str | None = None
    intent: str | None = None
    os: str | None = None
    platform: str | None = None
    nodes: int | None = None


class Constraint(Document):
    """A named reading and the expression it must satisfy."""

    name: str = Field(description="Measurement path Type.subtype.key, or a check threshold name.")
    value: Scalar = Field(description="Expression: '>= 1.30', '== v25.10.1', or an exact value.")
    severity: Literal["error", "warning"] = "error"
    remediation: str | None = None
    unit: str | None = None


class ExpectedResource(Document):
    """An object a component must have created."""

    kind: str
    name: str
    namespace: str | None = None


class ComponentRef(Document):
    """One deployed component (Helm chart or Kustomize bundle)."""

    name: str
    namespace: str | None = None
    chart: str | None = None
    type: Literal["Helm", "Kustomize"] | None = None
    source: str | None = None
    version: str | None = None
    tag: str | None = None
    values_file: str | None = None
    overrides: dict[str, Any] | None = Field(
        default=None, description="Helm value overrides; overrides.enabled: false disables."
    )
    patches: list[Any] | None = Field(default=None, description=UNUSED)
    dependency_refs: list[str] | None = None
    manifest_files: list[str] | None = Field(default=None, description=UNUSED)
    path: str | None = Field(default=None, description=UNUSED)
    cleanup: bool | None = Field(default=None, description=UNUSED)
    expected_resources: list[ExpectedResource] | None = Field(
        default=None,
        description="Objects the component must have created (checked by "
        "expected-resources and platform-health).",
    )
    health_check_asserts: Any = Field(default=None, description=UNUSED)
    enabled: bool | None = Field(default=None, description="false disables the component.")

    @property
    def is_enabled(self) -> bool:
        """False when the component is switched off by ``enabled`` or ``overrides.enabled``."""
        if self.enabled is False:
            return False
        return not (self.overrides and self.overrides.get("enabled") is False)


class NodeSelection(Document):
    """Which nodes a phase's workloads may use."""

    selector: dict[str, str] | None = None
    max_nodes: int | None = None
    exclude_nodes: list[str] | None = None


class ValidationPhase(Document):
    """One phase of the recipe's validation section."""

    timeout: str | None = Field(default=None, description="Overrides each check's timeout.")
    constraints: list[Constraint] | None = None
    checks: list[str] | None = Field(
        default=None, description="Catalog check names to run in this phase, in order."
    )
    node_selection: NodeSelection | None = None
    infrastructure: str | None = Field(default=None, description=UNUSED)


class Validation(Document):
    """The recipe's validation section, one entry per phase."""

    readiness: ValidationPhase | None = None
    deployment: ValidationPhase | None = None
    performance: ValidationPhase | None = None
    conformance: ValidationPhase | None = None

    def phase(self, phase: Phase) -> ValidationPhase | None:
        """The recipe's section for ``phase``."""
        section: ValidationPhase | None = getattr(self, phase.value)
        return section


class Recipe(Document):
    """A hydrated recipe (``kind: RecipeResult``)."""

    kind: Literal["RecipeResult"] = "RecipeResult"
    api_version: Literal["aicr.nvidia.com/v1alpha1"] = "aicr.nvidia.com/v1alpha1"
    metadata: RecipeMetadata | None = None
    criteria: Criteria | None = None
    constraints: list[Constraint] = Field(default_factory=list)
    component_refs: list[ComponentRef] = Field(default_factory=list)
    deployment_order: list[str] | None = None
    validation: Validation | None = None

    def component(self, name: str) -> ComponentRef | None:
        """The component named ``name``, if the recipe has it."""
        return next((c for c in self.component_refs if c.name == name), None)

    def checks(self, phase: Phase) -> list[str] | None:
        """The check names the recipe lists for ``phase`` (None when the phase is absent)."""
        section = self.validation.phase(phase) if self.validation else None
        return None if section is None or section.checks is None else list(section.checks)
