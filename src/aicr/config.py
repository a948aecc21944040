"""The validate config (``--config FILE``).

Vendor metadata, N/A justifications, per-check settings and redaction settings.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from aicr import sources
from aicr.document import Document, validate
from aicr.kube.target import KubeTarget
from aicr.limits import Kind
from aicr.yaml_io import parse


class Vendor(Document):
    """PRODUCT.yaml metadata. Checked for presence and form before any cluster work."""

    vendor_name: str | None = Field(default=None, description="Exact CNCF member name.")
    platform_name: str | None = None
    platform_version: str | None = Field(default=None, description="Quote it: '1.0' not 1.0.")
    website_url: str | None = None
    repo_url: str | None = Field(default=None, description="Optional.")
    documentation_url: str | None = None
    product_logo_url: str | None = Field(default=None, description="Prefer .svg, .eps or .ai.")
    description: str | None = None
    contact_email_address: str | None = None
    k8s_conformance_url: str | None = Field(
        default=None,
        # to_camel would spell it k8SConformanceUrl; the PRODUCT.yaml key is k8sConformanceUrl
        alias="k8sConformanceUrl",
        description="https://github.com/cncf/k8s-conformance/tree/main/vX.Y/<dir>",
    )


# Where a requirement is declared not applicable, as error messages name it.
NA_PATH = "spec.validate.evidence.cncf.notApplicable"


class Cncf(Document):
    """CNCF submission settings."""

    version: str | None = Field(default=None, description="Conformance version X.Y override.")
    vendor: Vendor = Field(default_factory=Vendor)
    not_applicable: dict[str, str] = Field(
        default_factory=dict,
        description="Requirement id -> written justification (conditional requirements only).",
    )


class Evidence(Document):
    """Evidence settings."""

    cncf: Cncf = Field(default_factory=Cncf)


class Redaction(Document):
    """Extra redaction rules for everything written for others to read."""

    patterns: list[str] = Field(
        default_factory=list, description="Extra regular expressions to redact."
    )
    allow: list[str] = Field(
        default_factory=list, description="Values never redacted (e.g. a public endpoint)."
    )


# host[:port] then path components, in the lower-case form image references allow
REGISTRY_PATTERN = r"^[a-z0-9]+([.-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$"
REGISTRY_EXPECTED = "expected host[:port][/path] in lower case, e.g. mirror.example.com:5000/aicr"


class Images(Document):
    """Where the run's images are pulled from."""

    registry: str | None = Field(
        default=None,
        description=(
            "Mirror replacing the registry host and first path segment of the validator image"
            " and of every workload image, as AICR does (`aicr images list`);"
            " $AICR_VALIDATOR_IMAGE_REGISTRY wins over it."
        ),
    )

    @field_validator("registry")
    @classmethod
    def _registry(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.rstrip("/")
        if not re.match(REGISTRY_PATTERN, value):
            raise ValueError(REGISTRY_EXPECTED)
        return value


class CheckSettings(Document):
    """Per-check settings; unknown keys are refused like everywhere else."""

    timeout: str | None = Field(default=None, description="Overrides catalog and recipe timeout.")
    prometheus_url: str | None = Field(
        default=None, description="Query Prometheus here instead of discovering its Service."
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="The check's parameters, typed by its params model (docs/checks.md); "
        "unknown keys are refused before any Job.",
    )


class ValidateSection(Document):
    """``spec.validate``."""

    evidence: Evidence = Field(default_factory=Evidence)
    redaction: Redaction = Field(default_factory=Redaction)
    checks: dict[str, CheckSettings] = Field(default_factory=dict)
    images: Images = Field(default_factory=Images)


class ConfigSpec(Document):
    """``spec``."""

    validate_: ValidateSection = Field(default_factory=ValidateSection, alias="validate")


class ValidateConfig(Document):
    """The whole config document (``kind: ValidateConfig``)."""

    kind: Literal["ValidateConfig"]
    api_version: Literal["aicr.nvidia.com/v1alpha1"]
    spec: ConfigSpec = Field(default_factory=ConfigSpec)

    @property
    def validate_section(self) -> ValidateSection:
        """Shortcut to ``spec.validate``."""
        return self.spec.validate_

    @property
    def cncf(self) -> Cncf:
        """Shortcut to ``spec.validate.evidence.cncf``."""
        return self.spec.validate_.evidence.cncf

    def check(self, name: str) -> CheckSettings:
        """Settings for check ``name`` (defaults when the config says nothing)."""
        return self.spec.validate_.checks.get(name, CheckSettings())


# Every section defaults to a model made by its own validator, so a validator is built per
# section, each with its place in the parent's. Built leaves first, each parent reuses its
# sections' built schemas instead of generating them again (pydantic takes a built model's
# schema as it is): 21 M fewer instructions of a no-cluster run's 1.44 G (issue 34).
# EMPTY_CONFIG, made below, needs every one of them anyway.
_SECTIONS = (Vendor, Cncf, Evidence, Redaction, Images, CheckSettings, ValidateSection, ConfigSpec)
for _section in _SECTIONS:
    _section.model_rebuild()
EMPTY_CONFIG = ValidateConfig(kind="ValidateConfig", api_version="aicr.nvidia.com/v1alpha1")


def parse_config(text: str, source: str = "config.yaml") -> ValidateConfig:
    """Parse a validate config."""
    return validate(ValidateConfig, parse(text, source))


def load_config(ref: str, kube: KubeTarget | None = None) -> ValidateConfig:
    """Load a validate config from a path, an http(s) URL or ``cm://`` (read via ``kube``)."""
    return parse_config(sources.read(ref, kube, kind=Kind.CONFIG), ref)
