"""The sim's imageID is what a kubelet over containerd reports: the repo digest, never a tag."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml
from simcluster.runtime import pod_status

from aicr.kube.image_ids import resolve

REAL = (
    Path(__file__).parents[2] / "data" / "real" / "kubelet" / "k8s-docs-containerd-nginx-pod.yaml"
)
STAGES = Path(__file__).parents[3] / "hack" / "sim" / "kwok-stages.yaml"


def _sha(ref: str) -> str:
    return "sha256:" + hashlib.sha256(ref.encode()).hexdigest()


@pytest.mark.parametrize(
    ("image", "repository"),
    [
        ("ubuntu:22.04", "docker.io/library/ubuntu"),
        ("ubuntu", "docker.io/library/ubuntu"),
        ("bitnami/nginx:1.16.0", "docker.io/bitnami/nginx"),
        ("nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04", "nvcr.io/nvidia/cuda"),
        ("localhost:5000/aicr-validator:dev", "localhost:5000/aicr-validator"),
        ("localhost/aicr-validator", "localhost/aicr-validator"),
        ("registry.example:5000/team/app", "registry.example:5000/team/app"),
    ],
)
def test_a_tag_reports_the_normalised_repository_and_a_digest_the_product_reads(
    image: str, repository: str
) -> None:
    got = pod_status.image_id(image)
    assert got == f"{repository}@{_sha(image)}"
    found = resolve(got)
    assert (found.repository, found.digest) == (repository, _sha(image))


def test_the_sim_names_the_repository_as_the_real_containerd_capture_does() -> None:
    pod = yaml.safe_load(REAL.read_text())
    real = pod["status"]["containerStatuses"][0]["imageID"]
    sim = pod_status.image_id(pod["spec"]["containers"][0]["image"])  # the spec's "nginx"
    assert resolve(sim).repository == resolve(real).repository == "docker.io/library/nginx"


def test_an_image_named_by_digest_reports_that_digest() -> None:
    digest = "sha256:" + "e" * 64
    assert (
        pod_status.image_id(f"nvcr.io/nvidia/cuda:12.8@{digest}") == f"nvcr.io/nvidia/cuda@{digest}"
    )


def test_a_container_that_ran_keeps_its_image_id_when_it_ends() -> None:
    cs = pod_status.base_status({"name": "c", "image": "ubuntu:22.04"})
    assert cs["imageID"] == ""  # not created yet: nothing to report
    pod_status.running(cs, "containerd://x", ready=True)
    pod_status.terminated(cs, "containerd://x", 0, "Completed", "", "2026-01-01T00:00:00Z")
    assert cs["imageID"] == pod_status.image_id("ubuntu:22.04")
    failed = pod_status.base_status({"name": "c", "image": "ubuntu:22.04"})
    pod_status.terminated(failed, "containerd://y", 128, "StartError", "no", "2026-01-01T00:00:00Z")
    assert failed["imageID"] == pod_status.image_id("ubuntu:22.04")  # created, then failed


def test_every_pod_stage_kwok_plays_writes_the_same_rule() -> None:
    text = STAGES.read_text()
    assert "imageID: {{ .image" not in text  # the tag as imageID is gone
    stages = list(yaml.safe_load_all(text.replace("@RUNTIME_OWNED@", "x")))
    templates = [s["spec"]["next"].get("statusTemplate") or "" for s in stages]
    assert sum(t.count("imageID") for t in templates) == 3  # init containers, containers, Jobs
    assert all(t.count("imageID: @IMAGE_ID@") == t.count("imageID") for t in templates)
    assert "sha256sum .image" in pod_status.IMAGE_ID_TEMPLATE
