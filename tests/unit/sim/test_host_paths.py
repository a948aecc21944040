"""The simulated runtime's hostPath: the node profile's root, never the build machine's files."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from simcluster.nodes.layout import LAYOUT, node_manifest, node_root
from simcluster.runtime.volumes import PodMaterialiser, VolumeError


class FakeCore:
    def read_node(self, name: str) -> Any:
        profile = next((n.profile for n in LAYOUT if n.name == name), None)
        annotations = {"sim.aicr.dev/profile": profile} if profile else {}
        return SimpleNamespace(metadata=SimpleNamespace(annotations=annotations))


def source(node: str, path: str, kind: str) -> Path:
    pod = {"metadata": {"namespace": "ns"}, "spec": {"nodeName": node}}
    mat = PodMaterialiser(FakeCore(), pod, None)  # type: ignore[arg-type]
    return mat.host_path({"name": "h", "hostPath": {"path": path, "type": kind}})


def test_a_gpu_node_reads_its_profile_files() -> None:
    found = source("gpu-h100-0", "/etc/os-release", "File")
    assert found == node_root("p5-h100") / "etc/os-release"
    assert "ID=ubuntu" in found.read_text()
    assert source("cpu-system-0", "/etc/os-release", "File").read_text().count('ID="amzn"') == 1


@pytest.mark.parametrize(
    ("node", "path", "kind", "message"),
    [("cpu-system-0", "/etc/nvidia-container-runtime/config.toml", "File",
      "is not a file"),
     ("gpu-h100-0", "/etc/os-release", "Directory", "is not a directory"),
     ("karpenter-0", "/etc/os-release", "File", "has no profile")],
    ids=["absent-on-cpu-node", "wrong-type", "node-without-profile"],
)  # fmt: skip
def test_a_path_the_root_lacks_is_a_config_error(node: str, path: str, kind: str,
                                                 message: str) -> None:  # fmt: skip
    with pytest.raises(VolumeError, match=message):
        source(node, path, kind)


def test_nodes_report_os_image_and_kernel_from_their_root() -> None:
    gpu = next(n for n in LAYOUT if n.name == "gpu-h100-0")
    info = node_manifest(gpu, "v1.35.4", 10250)["status"]["nodeInfo"]
    assert (info["osImage"], info["kernelVersion"]) == ("Ubuntu 24.04.1 LTS", "6.8.0-1028-aws")
