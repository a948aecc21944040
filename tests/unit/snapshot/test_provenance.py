"""Provenance: each node group's software and what ran the checks, in report and README."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import submission_recipe
from aicr.run_plan import ValidateRequest
from aicr.snapshot.provenance import MIXED, node_groups
from aicr.validate import run
from executor_fakes import FakeExecutor

DATA = Path(__file__).parents[2] / "data"


def node(name: str, ami: str, driver: str | None = None, gpus: int = 0) -> dict[str, Any]:
    labels = {
        "eks.amazonaws.com/nodegroup-image": ami,
        "node.kubernetes.io/instance-type": "p5.48xlarge" if gpus else "m7i.2xlarge",
    }
    if driver:
        labels["nvidia.com/cuda.driver-version.full"] = driver
    capacity = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "nodeInfo": {
                "osImage": "Amazon Linux 2023.6",
                "kernelVersion": "6.1.119-129.201.amzn2023",
                "kubeletVersion": "v1.35.6-eks-3025e55",
                "containerRuntimeVersion": "containerd://1.7.25",
                "architecture": "amd64",
            },
        },
    }


def test_each_node_group_records_image_os_kernel_kubelet_runtime_and_driver() -> None:
    groups = node_groups(
        [
            node("g0", "ami-0aa", "570.86.16", 8),
            node("g1", "ami-0bb", "570.86.16", 8),
            node("c0", "ami-0cc"),
        ]
    )
    gpu = next(g for g in groups if g.get("nvidiaDriver"))
    cpu = next(g for g in groups if not g.get("nvidiaDriver"))
    assert gpu["nodes"] == 2 and gpu["nodeImage"] == MIXED  # two AMIs: never one for both
    assert (gpu["osImage"], gpu["kernel"], gpu["kubelet"], gpu["containerRuntime"]) == (
        "Amazon Linux 2023.6",
        "6.1.119-129.201.amzn2023",
        "v1.35.6-eks-3025e55",
        "containerd://1.7.25",
    )
    assert gpu["nvidiaDriver"] == "570.86.16"
    assert cpu["nodeImage"] == "ami-0cc" and cpu["nodes"] == 1


def test_the_report_and_the_submission_readme_carry_the_provenance(tmp_path: Path) -> None:
    fake = FakeExecutor(node_objects=[node("g0", "ami-0aa", "570.86.16", 8)])
    outcome = run(
        ValidateRequest(
            recipe=submission_recipe.path(),
            snapshot=str(DATA / "snapshots/ok.yaml"),
            config=str(DATA / "configs/vendor.yaml"),
            cncf_submission=True,
            evidence_dir=str(tmp_path / "v1.35" / "example"),
        ),
        executor=fake,
    )
    assert outcome.exit_code == 0, outcome.no_submission
    provenance = outcome.report.extra["aicr"]["provenance"]  # type: ignore[index]
    assert provenance["validatorImage"] and provenance["catalog"]["sha256"]
    assert provenance["nodeGroups"][0]["nodeImage"] == "ami-0aa"
    assert outcome.submission_path is not None
    readme = (outcome.submission_path / "README.md").read_text()
    assert "## Provenance" in readme and "| ami-0aa |" in readme and "570.86.16" in readme


def test_the_attestation_predicate_carries_the_provenance() -> None:
    from aicr.attestation.statement import predicate

    fake = FakeExecutor(node_objects=[node("g0", "ami-0aa")])
    outcome = run(
        ValidateRequest(
            recipe=submission_recipe.path(),
            snapshot=str(DATA / "snapshots/ok.yaml"),
            emit_attestation=True,
        ),
        executor=fake,
    )
    assert outcome.record is not None
    assert predicate(outcome.record)["provenance"]["nodeGroups"][0]["nodeImage"] == "ami-0aa"


def test_every_image_the_pods_ran_is_in_the_provenance_and_readme_by_digest(
    tmp_path: Path,
) -> None:
    from aicr.result import VALIDATOR, WORKLOAD, ImageRun

    digest = "sha256:" + "d" * 64

    def runs(role: str, pod: str, image: str, image_id: str) -> ImageRun:
        return ImageRun.of({"metadata": {"name": pod, "namespace": "ns"},
                            "spec": {"containers": [{"name": "c", "image": image}]},
                            "status": {"containerStatuses": [{"name": "c", "imageID": image_id}]}},
                           role)[0]  # fmt: skip

    validator, ran_by = (
        "ghcr.io/aicr-dev/aicr-validator:v1",
        f"ghcr.io/aicr-dev/aicr-validator@{digest}",
    )
    ran = {
        "gang-scheduling": [runs(VALIDATOR, "v1", validator, ran_by),
                            runs(WORKLOAD, "w1", "docker.io/library/ubuntu:22.04", "")],
        "dra-support": [runs(VALIDATOR, "v2", validator, ran_by)],
    }  # fmt: skip
    fake = FakeExecutor(node_objects=[node("g0", "ami-0aa", "570.86.16", 8)], images=ran)
    outcome = run(ValidateRequest(recipe=submission_recipe.path(),
                                  snapshot=str(DATA / "snapshots/ok.yaml"),
                                  config=str(DATA / "configs/vendor.yaml"), cncf_submission=True,
                                  evidence_dir=str(tmp_path / "v1.35" / "example")),
                  executor=fake)  # fmt: skip
    assert outcome.exit_code == 0, outcome.no_submission
    images = outcome.report.extra["aicr"]["provenance"]["images"]  # type: ignore[index]
    assert images == [
        {"role": "validator", "image": validator, "checks": ["dra-support", "gang-scheduling"],
         "containers": 2, "digest": digest, "imageID": f"ghcr.io/aicr-dev/aicr-validator@{digest}"},
        {"role": "workload", "image": "docker.io/library/ubuntu:22.04",
         "checks": ["gang-scheduling"], "containers": 1,
         "noDigest": "no imageID reported (the container was not created)"},
    ]  # fmt: skip
    gang = next(t for t in outcome.report.results.tests if t.name == "gang-scheduling")
    assert [i.get("digest") for i in (gang.extra or {})["images"]] == [digest, None]
    assert outcome.submission_path is not None
    readme = (outcome.submission_path / "README.md").read_text()
    row = f"| validator | `{validator}` | `{digest}` | 2 | dra-support, gang-scheduling |"
    assert row in readme
    assert ("| workload | `docker.io/library/ubuntu:22.04` | none: no imageID reported (the "
            "container was not created) | 1 | gang-scheduling |") in readme  # fmt: skip
    page = (outcome.submission_path / "evidence" / "gang_scheduling.md").read_text()
    assert (f"- validator `ns/v1` container `c`: `{validator}` ran `{digest}`\n"
            "- workload `ns/w1` container `c`: `docker.io/library/ubuntu:22.04` ran no digest: "
            "no imageID reported (the container was not created)\n") in page  # fmt: skip
