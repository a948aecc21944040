"""Run one check through ``aicr validate`` (Job executor) on the simulated cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from harness import SimCluster

from aicr import validate
from aicr.catalog import load_catalog
from aicr.kube import names
from aicr.kube.rest import KubeApi, credentials
from aicr.kube.target import KubeTarget
from aicr.phases import Phase
from aicr.runner import cleanup

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = str(ROOT / "tests/data/snapshots/ok.yaml")
DEPLOYMENT_CHECKS = [c.name for c in load_catalog().checks if c.phase == Phase.DEPLOYMENT]


def recipe_text(
    components: str, checks: list[str], constraints: str = "", phase: str = "deployment"
) -> str:
    """A recipe with ``components`` (YAML list items) and one phase listing ``checks``."""
    text = "kind: RecipeResult\napiVersion: aicr.nvidia.com/v1alpha1\ncomponentRefs:\n"
    text += components
    text += f"validation:\n  {phase}:\n"
    if constraints:
        text += f"    constraints:\n{constraints}"
    text += "    checks: [" + ", ".join(checks) + "]\n"
    return text


def run_check(
    cluster: SimCluster,
    tmp_path: Path,
    check: str,
    components: str,
    constraints: str = "",
    phase: str = "deployment",
    **request: Any,
) -> dict[str, Any]:
    """Validate ``phase`` with only ``check`` and return its CTRF test."""
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe_text(components, [check], constraints, phase))
    req = validate.ValidateRequest(
        recipe=str(path),
        snapshot=SNAPSHOT,
        phases=(phase,),
        kube=KubeTarget(str(cluster.kubeconfig)),
        image=cluster.validator_image,
        executor="job",
        **request,
    )
    outcome = validate.run(req)
    tests = [t.model_dump(mode="json", exclude_none=True) for t in outcome.report.results.tests]
    assert [t["name"] for t in tests] == [check], tests
    # the requirement summary (aicr.validate adds it to the report), for tests that assert it
    tests[0]["requirements"] = {r["id"]: r["status"] for r in (outcome.report.extra or {}).get(
        "aicr", {}).get("cncf", {}).get("requirements", [])}  # fmt: skip
    return tests[0]


def run_conformance_with_sim_config(
    cluster: SimCluster, tmp_path: Path, check: str, components: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Validate the conformance phase with only ``check``, the sim's config and these params.

    The run must leave nothing of itself in the cluster, whatever the check's verdict.
    """
    config = cluster.validate_config()
    config["spec"]["validate"]["checks"][check]["params"] = params
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    test = run_check(cluster, tmp_path, check, components, phase="conformance", config=str(path))
    with KubeApi(credentials(KubeTarget(str(cluster.kubeconfig)))) as api:
        assert cleanup.remaining(api, names.run_selector(None)) == []
    return test
