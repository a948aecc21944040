"""The v1.37 "hybrid verification" artifact rules, kept apart because they are provisional.

These come from the project's requirements for the validator revision reviewers will
run from 1.37 on, not from a published upstream revision: evidence may point into
junit.xml and e2e.log with ``file://<artifact>#<check>``, the fragment must name a test
case present in the artifact, and any failing test case fails the whole artifact.
Change this module alone when upstream publishes its rules.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from aicr import sources
from aicr.limits import Kind

HYBRID_REVISION = "v1.37 hybrid verification (provisional: file://junit.xml#<check>, e2e.log)"
FILE_SCHEME = "file://"
# A `go test -v` result line; subtests are indented.
_GO_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Artifact:
    """The test cases an artifact holds and which of them fail."""

    cases: dict[str, str]  # name -> PASS | FAIL | SKIP
    problem: str | None = None

    @property
    def failing(self) -> list[str]:
        """Names of failing test cases."""
        return sorted(n for n, o in self.cases.items() if o == "FAIL")


def read_junit(path: Path) -> Artifact:
    """Test cases of a junit XML file."""
    cases: dict[str, str] = {}
    try:
        data = io.BytesIO(sources.read_bytes(str(path), kind=Kind.ARTIFACT))
        for _, elem in ET.iterparse(data, events=("end",)):
            if elem.tag == "testcase":
                children = {c.tag for c in elem}
                outcome = (
                    "FAIL"
                    if children & {"failure", "error"}
                    else "SKIP"
                    if "skipped" in children
                    else "PASS"
                )
                cases[elem.get("name", "")] = outcome
                elem.clear()
    except ET.ParseError as exc:
        return Artifact({}, f"is not well-formed XML ({exc})")
    return Artifact(cases)


def read_e2e(path: Path) -> Artifact:
    """Test cases of a ``go test -v`` log."""
    text = sources.read_bytes(str(path), kind=Kind.ARTIFACT).decode("utf-8", errors="replace")
    return Artifact({m[2]: m[1] for m in _GO_RESULT.finditer(text)})


@dataclass
class ArtifactCache:
    """Each artifact is parsed once per verification, however often it is cited."""

    base: Path
    parsed: dict[Path, Artifact] = field(default_factory=dict)

    def get(self, path: Path) -> Artifact:
        """The parsed artifact at ``path``."""
        if path not in self.parsed:
            self.parsed[path] = read_junit(path) if path.suffix == ".xml" else read_e2e(path)
        return self.parsed[path]


def check_reference(ref: str, cache: ArtifactCache) -> list[str]:
    """Problems with one ``file://`` evidence reference (empty when it holds)."""
    target, _, fragment = ref.removeprefix(FILE_SCHEME).partition("#")
    if not target or target.startswith("/"):
        return [f"'{ref}' must be a path relative to the PRODUCT.yaml folder"]
    path = (cache.base / target).resolve()
    if not path.is_relative_to(cache.base.resolve()):
        return [f"'{ref}' points outside the submission directory"]
    if not path.is_file():
        return [f"'{ref}': {target} does not exist"]
    if path.suffix not in (".xml", ".log"):
        return (
            [f"'{ref}': a fragment only names a test case in junit XML or a go test log"]
            if fragment
            else []
        )
    artifact = cache.get(path)
    problems = []
    if artifact.problem:
        return [f"'{ref}': {target} {artifact.problem}"]
    if artifact.failing:
        shown = ", ".join(artifact.failing[:5]) + (" ..." if len(artifact.failing) > 5 else "")
        problems.append(
            f"'{ref}': {target} has failing test cases ({shown}); any failing test case "
            "fails the whole artifact"
        )
    if not fragment:
        problems.append(
            f"'{ref}' has no #<test case> fragment; without one it resolves through the "
            "upstream test-name map, which knows no aicr check names"
        )
    elif fragment not in artifact.cases:
        problems.append(f"'{ref}': {target} has no test case named '{fragment}'")
    return problems


def check_agreement(cache: ArtifactCache) -> list[str]:
    """junit.xml and e2e.log cited together must tell the same story (same report)."""
    junits = [a for p, a in cache.parsed.items() if p.suffix == ".xml" and not a.problem]
    logs = [a for p, a in cache.parsed.items() if p.suffix == ".log"]
    problems = []
    for junit in junits:
        for log in logs:
            if junit.cases != log.cases:
                differ = sorted(
                    n
                    for n in set(junit.cases) | set(log.cases)
                    if junit.cases.get(n) != log.cases.get(n)
                )
                problems.append(
                    "junit.xml and e2e.log disagree on "
                    + ", ".join(differ[:5])
                    + "; both must come from the same report"
                )
    return problems
