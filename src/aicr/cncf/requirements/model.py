"""The version-keyed requirement map: one package data file per CNCF conformance version."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum

from pydantic import Field

from aicr.catalog import Catalog, load_catalog
from aicr.config import ValidateConfig
from aicr.document import Document, validate
from aicr.errors import InputError, Problem, SchemaError, UnsupportedVersionError
from aicr.snapshot import Snapshot
from aicr.yaml_io import LoadedYaml, parse, parse_package_file

# Order is data: every version aicr holds requirement data for, oldest first.
SUPPORTED_VERSIONS: tuple[str, ...] = ("1.33", "1.34", "1.35", "1.36", "1.37", "1.38")

# The upstream validator the verifier reproduces: scripts/validate.go of the CNCF
# submissions repository at this revision, the newest one that could be read and run.
UPSTREAM_REPOSITORY = "cncf/k8s-ai-conformance"
UPSTREAM_COMMIT = "b2c8969"
UPSTREAM_REVISION = f"{UPSTREAM_REPOSITORY} scripts/validate.go at {UPSTREAM_COMMIT} (2026-08-19)"

# The last version whose upstream validator (UPSTREAM_REVISION) rejects N/A on a MUST and
# does not understand file:// references; later versions follow the v1.37 hybrid rules.
LAST_PLAIN_VERSION = "1.36"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:[.\-+].*)?$")


class Level(StrEnum):
    """How binding a requirement is."""

    MUST = "MUST"
    SHOULD = "SHOULD"


class Requirement(Document):
    """One requirement of a conformance version."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    category: str
    level: Level
    description: str = Field(min_length=1)
    checks: list[str] = Field(
        default_factory=list,
        description="Catalog checks that must all pass for Implemented: derived on load from "
        "the catalog entries that name this id, never written in the data file.",
    )
    conditional: bool = Field(
        default=False, description="Conditional text: may be N/A with a justification."
    )


class RequirementSet(Document):
    """All requirements of one version, in template order."""

    version: str
    kubernetes_version: str
    requirements: list[Requirement]

    @property
    def categories(self) -> list[str]:
        """Categories in template order."""
        return list(dict.fromkeys(r.category for r in self.requirements))

    @property
    def ids(self) -> list[str]:
        """Requirement ids in template order."""
        return [r.id for r in self.requirements]

    def get(self, requirement_id: str) -> Requirement | None:
        """The requirement with ``requirement_id``, if this version has it."""
        return next((r for r in self.requirements if r.id == requirement_id), None)

    def backed_by(self, check: str) -> list[Requirement]:
        """The requirements of this version that ``check`` backs."""
        return [r for r in self.requirements if check in r.checks]

    @property
    def hybrid(self) -> bool:
        """True from 1.37 on: junit.xml and e2e.log are parsed by the verifier."""
        return version_key(self.version) > version_key(LAST_PLAIN_VERSION)


def version_key(version: str) -> tuple[int, int]:
    """``"1.35"`` -> ``(1, 35)`` for ordering."""
    major, minor = version.split(".")
    return int(major), int(minor)


def major_minor(text: str) -> str | None:
    """``v1.35.2`` / ``1.35`` / ``v1.35.0-eks-1`` -> ``1.35``; None when it is not a version."""
    match = _VERSION.match(text.strip())
    return f"{int(match[1])}.{int(match[2])}" if match else None


def parse_requirements(text: str, source: str, catalog: Catalog) -> RequirementSet:
    """Parse one requirement data file; each requirement's checks come from ``catalog``.

    A check backs a requirement in every version whose set has the id its catalog
    entry names (``CheckSpec.requirements``); the data file lists no checks, and one
    that does is refused, so the two can never disagree.
    """
    return _requirements(parse(text, source), catalog)


def _requirements(loaded: LoadedYaml, catalog: Catalog) -> RequirementSet:
    source = loaded.source
    reqs = validate(RequirementSet, loaded)
    listed = [i for i, r in enumerate(reqs.requirements) if "checks" in r.model_fields_set]
    if listed:
        raise SchemaError(
            [
                Problem(
                    "checks are not listed in requirement data: a check's catalog entry "
                    "names the requirement ids it backs",
                    source=source,
                    field_path=f"requirements[{i}].checks",
                    line=loaded.line_of(("requirements", i, "checks")),
                    hint="add the id to the check's requirements in aicr/catalog/catalog.yaml",
                )
                for i in listed
            ]
        )
    backers = [(c.name, set(c.requirements)) for c in catalog.ordered]
    return reqs.model_copy(
        update={
            "requirements": [
                r.model_copy(update={"checks": [n for n, ids in backers if r.id in ids]})
                for r in reqs.requirements
            ]
        }
    )


@functools.cache
def load_requirements(version: str) -> RequirementSet:
    """The shipped requirement set for ``version`` (X.Y)."""
    if version not in SUPPORTED_VERSIONS:
        raise UnsupportedVersionError(
            Problem(
                f"no CNCF AI Conformance requirement data for version '{version}'",
                hint="supported: " + ", ".join(SUPPORTED_VERSIONS),
            )
        )
    loaded = parse_package_file("aicr.cncf.requirements", f"v{version}.yaml")
    return _requirements(loaded, load_catalog())


@dataclass(frozen=True)
class Conformance:
    """The conformance version a run is judged against, where it was chosen, and its data."""

    version: str
    requirements: RequirementSet
    source: str  # "--cncf-version", "config" or "snapshot"
    field_path: str | None = None

    def check_cluster(self, snapshot: Snapshot) -> None:
        """Refuse a version from flag or config that is not the snapshot's Kubernetes minor.

        A vX.Y submission comes from an X.Y cluster; a version read from the snapshot
        matches it by definition.
        """
        cluster = major_minor(str(snapshot.server_version))
        if self.source == "snapshot" or not cluster or cluster == self.version:
            return
        raise InputError(
            Problem(
                f"CNCF version {self.version} does not match the cluster's Kubernetes "
                f"{cluster} (K8s.server.version in the snapshot)",
                source=self.source,
                field_path=self.field_path,
                hint=f"a v{self.version} submission must come from a Kubernetes {self.version} "
                f"cluster; use {cluster} or leave the version out",
            )
        )


def resolve_conformance(
    snapshot: Snapshot | None,
    flag: str | None,
    config: ValidateConfig,
    *,
    match_cluster: bool = False,
) -> Conformance:
    """The conformance version: ``--cncf-version`` > config > the snapshot's server version.

    With ``match_cluster`` (a submission) a version given by flag or config must be the
    Kubernetes minor the snapshot recorded (``Conformance.check_cluster``).
    """
    candidates = [
        (flag, "--cncf-version", None),
        (config.cncf.version, "config", "spec.validate.evidence.cncf.version"),
        (snapshot.server_version if snapshot else None, "snapshot", "K8s.server.version"),
    ]
    for value, source, field_path in candidates:
        if value is None or value == "":
            continue
        version = major_minor(str(value))
        if version is None:
            raise InputError(
                Problem(
                    f"'{value}' is not a version (expected X.Y, e.g. 1.35)",
                    source=source,
                    field_path=field_path,
                )
            )
        if version not in SUPPORTED_VERSIONS:
            raise UnsupportedVersionError(
                Problem(
                    f"no CNCF AI Conformance requirement data for version '{version}'",
                    source=source,
                    field_path=field_path,
                    hint="supported: " + ", ".join(SUPPORTED_VERSIONS),
                )
            )
        conformance = Conformance(version, load_requirements(version), source, field_path)
        if match_cluster and snapshot is not None:
            conformance.check_cluster(snapshot)
        return conformance
    raise InputError(
        Problem(
            "cannot tell the CNCF conformance version",
            hint="pass --cncf-version X.Y, set spec.validate.evidence.cncf.version in the "
            "config, or give a snapshot with K8s.server.version",
        )
    )


# The statuses PRODUCT.yaml may carry, as the upstream validator spells them.
PRODUCT_STATUSES: tuple[str, ...] = (
    "Implemented",
    "Not Implemented",
    "Partially Implemented",
    "N/A",
)
