"""imageID: the digest a container ran, read in every form a kubelet writes, never invented."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aicr.kube.image_ids import ran, resolve
from aicr.result import WORKLOAD, ImageRun

REAL = Path(__file__).parents[2] / "data" / "real" / "kubelet"
HEX = "2834dc507516af02784808c5f48b7cbe38b8ed5d0f4837f16e78d00deb7e7767"


def test_a_containerd_pod_reports_its_repo_digest_and_the_spec_names_the_tag() -> None:
    pod = yaml.safe_load((REAL / "k8s-docs-containerd-nginx-pod.yaml").read_text())
    assert list(ran(pod)) == [("nginx", "nginx", f"docker.io/library/nginx@sha256:{HEX}")]
    [run] = ImageRun.of(pod, WORKLOAD)
    assert (run.pod, run.image, run.digest, run.no_digest) == (
        "default/nginx-deployment-67d4bdd6f5-w6kd7",
        "nginx",
        f"sha256:{HEX}",
        None,
    )
    assert run.as_extra()["digest"] == f"sha256:{HEX}" and "noDigest" not in run.as_extra()


@pytest.mark.parametrize(
    ("image_id", "repository"),
    [
        (f"docker-pullable://nginx@sha256:{HEX}", "nginx"),  # dockershim, a repo digest
        (f"docker-pullable://registry.example:5000/team/app@sha256:{HEX}",
         "registry.example:5000/team/app"),
        (f"nvcr.io/nvidia/cuda@sha256:{HEX}", "nvcr.io/nvidia/cuda"),  # containerd, CRI-O
        (f"  docker.io/library/ubuntu@sha256:{HEX}\n", "docker.io/library/ubuntu"),
        ("ghcr.io/x/y@sha512:" + "ab" * 64, "ghcr.io/x/y"),
    ],
)  # fmt: skip
def test_every_repo_digest_form_gives_the_repository_and_digest(
    image_id: str, repository: str
) -> None:
    found = resolve(image_id)
    assert found.repository == repository and found.no_digest is None
    assert found.digest == image_id.strip().rsplit("@", 1)[1]


@pytest.mark.parametrize(
    ("image_id", "why"),
    [
        ("", "no imageID reported"),
        (None, "no imageID reported"),
        (f"docker://sha256:{HEX}", f"only the local image id sha256:{HEX}, no registry digest"),
        (f"sha256:{HEX}", f"only the local image id sha256:{HEX}, no registry digest"),
        ("docker.io/library/ubuntu:22.04", "holds no digest"),  # a tag is not a digest
        ("nginx@sha256:abc", "holds no digest"),  # too short to be a sha256
        (f"nginx@md5:{HEX[:32]}", "holds no digest"),
        (f"nginx@SHA256:{HEX}", "holds no digest"),
    ],
)
def test_a_status_without_a_registry_digest_says_why_and_records_none(
    image_id: str | None, why: str
) -> None:
    found = resolve(image_id)
    assert found.digest is None and found.repository is None
    assert found.no_digest is not None and why in found.no_digest


def test_init_and_ephemeral_containers_count_and_an_unnamed_status_keeps_its_own_image() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"initContainers": [{"name": "init", "image": "busybox:1.36"}],
                 "containers": [{"name": "main", "image": "ubuntu:22.04"}]},
        "status": {
            "initContainerStatuses": [{"name": "init", "image": "docker.io/library/busybox:1.36",
                                       "imageID": f"docker.io/library/busybox@sha256:{HEX}"}],
            "containerStatuses": [{"name": "main", "image": "docker.io/library/ubuntu:22.04",
                                   "imageID": ""}],
            "ephemeralContainerStatuses": [{"name": "debugger", "image": "busybox:1.28",
                                            "imageID": f"sha256:{HEX}"}],
        },
    }  # fmt: skip
    runs = ImageRun.of(pod, WORKLOAD)
    assert [(r.container, r.image, r.digest) for r in runs] == [
        ("init", "busybox:1.36", f"sha256:{HEX}"), ("main", "ubuntu:22.04", None),
        ("debugger", "busybox:1.28", None)]  # fmt: skip
    assert runs[1].as_extra()["noDigest"].startswith("no imageID reported")
    assert "local image id" in runs[2].as_extra()["noDigest"]
