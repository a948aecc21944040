"""Builders for the CNCF layer's tests: reports, configs, recipes and snapshots made inline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from aicr import ctrf
from aicr.catalog import load_catalog
from aicr.cncf import (
    Conformance,
    SubmissionInputs,
    SubmissionResult,
    check_not_applicable,
    check_vendor,
    load_requirements,
)
from aicr.cncf import write_submission as write_cncf_submission
from aicr.cncf.requirements import Level, RequirementSet
from aicr.config import ValidateConfig, parse_config
from aicr.ctrf import Report, Status, Test
from aicr.recipe import Recipe
from aicr.recipe.load import parse_recipe
from aicr.snapshot import Snapshot
from aicr.snapshot.load import parse_snapshot

DATA = Path(__file__).parents[2] / "data"
CTRF_SCHEMA = DATA / "ctrf" / "ctrf.schema.json"
TEMPLATES = DATA / "cncf" / "templates"

CONFORMANCE = [c.name for c in load_catalog().checks if c.phase == "conformance"]

VENDOR: dict[str, str] = yaml.safe_load((DATA / "cncf" / "vendor.yaml").read_text())


def unbacked_should(reqs: RequirementSet) -> tuple[RequirementSet, str]:
    """``reqs`` (or a view of it) and the id of a SHOULD in it that no check backs.

    The version's own unbacked SHOULD when it has one; once checks back every SHOULD,
    ``made_unbacked(reqs)``. Either way the tests of the unbacked path run, and a check
    that comes to back a requirement edits none of them.
    """
    own = [r.id for r in reqs.requirements if r.level == Level.SHOULD and not r.checks]
    return (reqs, own[0]) if own else made_unbacked(reqs)


def made_unbacked(reqs: RequirementSet) -> tuple[RequirementSet, str]:
    """A view of ``reqs`` in which its last backed SHOULD has lost its checks, and that id.

    As the set would read if no catalog entry named the id (``parse_requirements``
    derives each requirement's checks from the catalog).
    """
    req = [r for r in reqs.requirements if r.level == Level.SHOULD and r.checks][-1]
    view = [r.model_copy(update={"checks": []}) if r.id == req.id else r
            for r in reqs.requirements]
    return reqs.model_copy(update={"requirements": view}), req.id


def backed_should(reqs: RequirementSet) -> str:
    """The id of the first SHOULD of ``reqs`` that a check backs."""
    return next(r.id for r in reqs.requirements if r.level == Level.SHOULD and r.checks)


def config_yaml(vendor: dict[str, Any] | None = None, not_applicable: dict[str, str] | None = None,
                redaction: dict[str, Any] | None = None, version: str | None = None) -> str:
    cncf: dict[str, Any] = {"vendor": VENDOR if vendor is None else vendor}
    if not_applicable:
        cncf["notApplicable"] = not_applicable
    if version:
        cncf["version"] = version
    spec: dict[str, Any] = {"validate": {"evidence": {"cncf": cncf}}}
    if redaction:
        spec["validate"]["redaction"] = redaction
    return json.dumps({"apiVersion": "aicr.nvidia.com/v1alpha1", "kind": "ValidateConfig",
                       "spec": spec})


def make_config(**kwargs: Any) -> ValidateConfig:
    return parse_config(config_yaml(**kwargs), "config.yaml")


def make_test(name: str, status: Status = Status.PASSED, *, message: str | None = None,
              phase: str = "conformance", stdout: list[str] | None = None,
              evidence: list[dict[str, Any]] | None = None, reason: str | None = None,
              detail: str | None = None, duration: int = 1500) -> Test:
    extra: dict[str, Any] = {}
    if evidence is None:  # a real check records what it asked and what came back
        evidence = [{"title": "probe", "asked": f"{name} probe", "answer": "as expected"}]
    if evidence:
        extra["evidence"] = evidence
    if reason:
        extra["reason"] = reason
    if detail:
        extra["statusDetail"] = detail
    spec = load_catalog().get(name)
    labels: dict[str, Any] = {"phase": phase, "check": name}
    if spec and spec.requirements:
        labels["requirements"] = spec.requirements
    return Test(name=name, status=status, duration=duration, suite=[phase],
                message=message or f"{name} {status.value}", stdout=stdout,
                labels=labels, extra=extra or None)


def make_report(tests: list[Test], **aicr: Any) -> Report:
    report = ctrf.build(tests, start=1_780_000_000_000, stop=1_780_000_100_000, version="0.1.0",
                        run_id="run-1234", timestamp="2026-06-01T10:00:00Z",
                        extra={"aicr": {"runId": "run-1234", "interrupted": False, **aicr}})
    assert_schema_valid(report)
    return report


def assert_schema_valid(report: Report) -> None:
    schema = json.loads(CTRF_SCHEMA.read_text())
    jsonschema.validate(json.loads(ctrf.dumps(report)), schema)


def all_passed(version_checks: list[str] | None = None, **overrides: Status) -> list[Test]:
    names = version_checks or CONFORMANCE
    return [make_test(n, overrides.get(n.replace("-", "_"), Status.PASSED)) for n in names]


def recipe_yaml(checks: list[str] | None = None) -> str:
    checks = CONFORMANCE if checks is None else checks
    return json.dumps({
        "kind": "RecipeResult", "apiVersion": "aicr.nvidia.com/v1alpha1",
        "metadata": {"version": "0.11.1"},
        "criteria": {"service": "eks", "accelerator": "h100", "intent": "training"},
        "validation": {"deployment": {"checks": ["operator-health"]},
                       "conformance": {"checks": checks}},
    })


def make_recipe(checks: list[str] | None = None) -> Recipe:
    return parse_recipe(recipe_yaml(checks), "recipe.yaml")


SNAPSHOT_YAML = """
kind: Snapshot
apiVersion: aicr.nvidia.com/v1alpha1
metadata:
  source-node: gpu-worker-canary-7
  clusterName: prod-canary-cluster
measurements:
  - type: K8s
    subtypes:
      - subtype: server
        data: {version: v1.35.2}
      - subtype: node
        data: {osImage: Ubuntu 24.04.2 LTS, containerRuntimeVersion: containerd://2.0.5}
  - type: GPU
    subtypes:
      - subtype: smi
        data: {gpu.model: NVIDIA H100 80GB HBM3, driver: "570.86.16"}
  - type: OS
    subtypes:
      - subtype: release
        data: {ID: ubuntu, VERSION_ID: "24.04"}
"""


def make_snapshot(text: str = SNAPSHOT_YAML) -> Snapshot:
    return parse_snapshot(text, "snapshot.yaml")


def write_submission(root: Path, version: str = "1.36", directory: str = "example",
                     evidence: dict[str, list[str]] | None = None) -> Path:
    """A valid submission ``root/v<version>/<directory>/PRODUCT.yaml`` for a made-up platform.

    Every requirement of ``version`` is Implemented with one documentation link
    (``evidence`` replaces the links of the ids it names).
    """
    reqs = load_requirements(version)
    spec: dict[str, list[dict[str, Any]]] = {}
    for req in reqs.requirements:
        spec.setdefault(req.category, []).append({
            "id": req.id, "description": req.description, "level": req.level.value,
            "status": "Implemented",
            "evidence": (evidence or {}).get(req.id, [f"https://docs.example.com/{req.id}"]),
            "notes": "",
        })
    metadata = {"kubernetesVersion": f"v{version}", **VENDOR,
                "k8sConformanceUrl": f"https://github.com/cncf/k8s-conformance/tree/main/"
                                     f"v{version}/example"}
    d = root / f"v{version}" / directory
    d.mkdir(parents=True)
    (d / "PRODUCT.yaml").write_text(
        yaml.safe_dump({"metadata": metadata, "spec": spec}, sort_keys=False, width=1000))
    return d


def render_submission(out: Path, *, report: Report, recipe: Recipe, snapshot: Snapshot | None,
           config: ValidateConfig, version: str = "1.35", force: bool = False,
           recipe_source: str = "recipes/eks.yaml", snapshot_source: str | None = None,
           config_source: str = "config",
           reqs: RequirementSet | None = None) -> SubmissionResult:
    """``aicr.cncf.write_submission`` of a run judged against ``version`` (or ``reqs``)."""
    conformance = Conformance(version, reqs or load_requirements(version), "--cncf-version")
    checked = check_vendor(config, config_source)
    checked += check_not_applicable(conformance.requirements, config, config_source)
    run = SubmissionInputs(report, recipe, snapshot, config, conformance, recipe_source,
                           snapshot_source, config_source, checked=tuple(checked))
    return write_cncf_submission(out, run, force=force)
