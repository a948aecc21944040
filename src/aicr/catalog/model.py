"""Catalog models and loading."""

from __future__ import annotations

import functools
import re
from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator, model_validator

from aicr import durations, version
from aicr.document import Document, refuse_duplicates, validate
from aicr.phases import PHASE_ORDER, Phase
from aicr.yaml_io import parse, parse_package_file

# Verbs RBAC cannot match against resourceNames: a rule naming objects would deny them.
UNNAMED_VERBS = frozenset({"create", "list", "watch", "deletecollection", "*"})
_PARAM = re.compile(r"^[a-z][a-zA-Z0-9]*$")


class PolicyRule(Document):
    """One RBAC rule, in the shape of a Kubernetes PolicyRule."""

    api_groups: list[str] = Field(description="API groups ('' is the core group).")
    resources: list[str] = Field(description="Resources, including subresources like pods/log.")
    verbs: list[str] = Field(description="Verbs allowed on them.")
    resource_names: list[str] | None = Field(
        default=None, description="Restrict to these object names."
    )
    own_name: bool = Field(
        default=False,
        description="Restrict to the one object named like the check's run-unique workload "
        "namespace (the cluster-scoped objects a check creates take that name).",
    )

    @model_validator(mode="after")
    def _nameable(self) -> PolicyRule:
        if self.own_name and self.resource_names:
            raise ValueError("give resourceNames or ownName, not both")
        unnamed = sorted(set(self.verbs) & UNNAMED_VERBS)
        if self.own_name and unnamed:
            raise ValueError(
                f"ownName cannot restrict {', '.join(unnamed)}: RBAC has no object "
                "name to match for them; grant them in a rule of their own"
            )
        return self


class Resources(Document):
    """Requests and limits of the check's container."""

    cpu: str = "100m"
    memory: str = "256Mi"


class GpuNeed(Document):
    """The GPUs a check takes while it runs; the run reserves them before it starts.

    Exactly one form: ``all`` (every free GPU: nothing else holds a GPU meanwhile),
    ``count`` (that many in all, wherever the scheduler puts them), ``countParam``
    (as many in all as the check's param of that name says: the plan reads it from
    the check's effective params), or ``perNode`` on ``nodes`` nodes (a number, or
    ``every`` schedulable GPU node).
    """

    all: bool = Field(default=False, description="Every free GPU; no other GPU check overlaps.")
    count: int | None = Field(
        default=None, ge=1, description="GPUs in all, on whichever nodes the scheduler picks."
    )
    count_param: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-zA-Z0-9]*$",
        description="GPUs in all, as many as the check's param of this name (camelCase) says.",
    )
    per_node: int | None = Field(default=None, ge=1, description="GPUs on each node it uses.")
    nodes: int | Literal["every"] = Field(
        default=1, description="How many nodes get perNode GPUs: a number, or every GPU node."
    )

    @model_validator(mode="after")
    def _one_form(self) -> GpuNeed:
        forms = [
            self.all,
            self.count is not None,
            self.count_param is not None,
            self.per_node is not None,
        ]
        if sum(forms) != 1:
            raise ValueError("give exactly one of all: true, count, countParam, perNode")
        if self.per_node is None and self.nodes != 1:
            raise ValueError("nodes goes with perNode")
        if isinstance(self.nodes, int) and self.nodes < 1:
            raise ValueError("nodes must be at least 1 or 'every'")
        return self

    def counted(self, params: dict[str, object]) -> GpuNeed:
        """The need with ``countParam`` read from ``params`` (camelCase keys); else itself.

        Raises ValueError naming the param when it is absent or not a whole number >= 1.
        """
        if self.count_param is None:
            return self
        if self.count_param not in params:
            known = ", ".join(sorted(params)) or "none"
            raise ValueError(
                f"gpus.countParam names '{self.count_param}', which is not a param "
                f"of the check (its params: {known})"
            )
        value = params[self.count_param]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"gpus.countParam: params.{self.count_param} is {value!r}, "
                "not a whole number of GPUs (at least 1)"
            )
        return GpuNeed(count=value)

    def __str__(self) -> str:
        if self.all:
            return "every free GPU"
        if self.count is not None:
            return f"{gpu_count(self.count)} in all"
        if self.count_param is not None:
            return f"params.{self.count_param} GPUs in all"
        each = gpu_count(self.per_node or 0)
        if self.nodes == "every":
            return f"{each} on every GPU node"
        if self.nodes == 1:
            return f"{each} on one node"
        return f"{each} on each of {self.nodes} nodes ({(self.per_node or 0) * self.nodes} in all)"


def gpu_count(n: int) -> str:
    """``1 GPU``, ``2 GPUs``."""
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


class CheckSpec(Document):
    """One check of the catalog."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=40)
    phase: Phase
    description: str
    timeout: timedelta = Field(description="Job deadline, e.g. 5m.")
    requirements: list[str] = Field(
        default_factory=list,
        description="CNCF requirement ids this check backs, in every version that has the id.",
    )
    images: dict[str, str | None] = Field(
        default_factory=dict,
        description="The pinned workload images (aicr/checks/images.yaml names) the check "
        "runs, each with the param that replaces it (null: none).",
    )
    gpus: GpuNeed | None = Field(
        default=None,
        description="Whole GPUs the check takes; the run reserves them before it starts.",
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
    param_secrets: list[str] = Field(
        default_factory=list,
        description="Params whose secretRef (namespace, name) names a Secret the check reads; "
        "the run grants get on exactly that Secret, in its namespace.",
    )
    resources: Resources = Field(default_factory=Resources)

    @field_validator("timeout", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        return durations.field(value)

    @field_validator("images")
    @classmethod
    def _params(cls, images: dict[str, str | None]) -> dict[str, str | None]:
        bad = [p for p in images.values() if p is not None and not _PARAM.match(p)]
        if bad:
            raise ValueError(f"not a param name (camelCase): {', '.join(bad)}")
        return images


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

    def image_users(self, image: str) -> list[str]:
        """The checks whose entry names workload image ``image``, in file order."""
        return [c.name for c in self.checks if image in c.images]

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
    return validate(Catalog, parse_package_file("aicr.catalog", "catalog.yaml"))


def workload_pod_security(spec: CheckSpec) -> str:
    """GPU test pods run CUDA images that often need root: baseline; everything else restricted.

    This is the default. A check's params may ask for more (``CheckParams.
    workload_pod_security``: nccl-all-reduce-bw's ``IPC_LOCK`` for an RDMA fabric is
    outside baseline, and Pod Security has no level between baseline and privileged);
    the run then labels that run-unique namespace alone, and the pods the check makes
    there still set ``privileged: false`` and add only the capabilities asked for.
    """
    return "baseline" if spec.gpus is not None else "restricted"
