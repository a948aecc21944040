"""Runtime handlers and the gVisor bundle: which pods get a sandbox, and how runsc is called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.rest import ApiException
from simcluster.runtime import gvisor, handlers


def node(faults: str | None = None) -> dict[str, Any]:
    notes = {handlers.RUNTIME_FAULT_ANNOTATION: faults} if faults else {}
    return {"metadata": {"name": "n", "annotations": notes}}


@pytest.mark.parametrize(
    ("handler", "faults", "binary", "want"),
    [
        ("runc", None, False, True),
        ("nvidia", "no-sandbox-handler", False, True),
        ("nvidia-container-runtime", None, False, False),  # not the ClusterPolicy's
        ("runsc", None, True, True),
        ("runsc", None, False, False),  # the package could not be unpacked
        ("runsc", "other,no-sandbox-handler", True, False),
        ("kata-qemu", None, True, False),
    ],
)
def test_configured(
    tmp_path: Path, handler: str, faults: str | None, binary: bool, want: bool
) -> None:
    runsc = tmp_path / "runsc"
    if binary:
        runsc.write_text("")
    assert handlers.configured(handler, node(faults), runsc, "nvidia") is want


class Policies:
    """A stand-in for the API's ClusterPolicy list (404 when the CRD is absent)."""

    def __init__(self, items: list[dict[str, Any]] | None) -> None:
        self.items = items

    def list_cluster_custom_object(self, group: str, version: str, plural: str) -> Any:
        if self.items is None:
            raise ApiException(status=404)
        return {"items": self.items}


@pytest.mark.parametrize(
    ("items", "want"),
    [(None, "nvidia"), ([], "nvidia"), ([{"spec": {}}], "nvidia"),
     ([{"spec": {"operator": {"runtimeClass": "nvidia-container-runtime"}}}],
      "nvidia-container-runtime")],
)  # fmt: skip
def test_the_gpu_handler_is_the_cluster_policys_runtime_class(
    monkeypatch: pytest.MonkeyPatch, items: list[dict[str, Any]] | None, want: str
) -> None:
    monkeypatch.setattr(handlers.client, "CustomObjectsApi", lambda api: Policies(items))
    assert handlers.gpu_handler(None) == want


def test_the_message_is_containerds() -> None:
    assert handlers.not_configured_message("runsc").endswith(
        'failed to get sandbox runtime: no runtime for "runsc" is configured'
    )


SPEC = {
    "argv": ["sh", "-c", "uname -r"],
    "env": {"PATH": "/bin", "A": "b"},
    "cwd": "/work",
    "hostname": "p",
    "mounts": [{"source": "/s", "target": "/t", "readOnly": True},
               {"source": "/log", "target": "/dev/termination-log", "readOnly": False}],
    "sandbox": {"runsc": "/c/runsc", "state": "/p/runsc", "bundle": "/p/b", "id": "u-main-0"},
}  # fmt: skip


@pytest.mark.parametrize(("netns", "network"), [("/proc/9/ns/net", "host"), (None, "none")])
def test_runsc_gets_host_network_only_in_the_pods_own_namespace(
    netns: str | None, network: str
) -> None:
    assert gvisor.argv({**SPEC, "netns": netns}) == [
        "/c/runsc", "--root=/p/runsc", f"--network={network}", "--overlay2=root:memory",
        "run", "--bundle=/p/b", "u-main-0"]  # fmt: skip


def test_bundle_runs_the_command_over_the_hosts_root_with_the_volumes() -> None:
    b = gvisor.bundle(SPEC, "/p/layers/0/root")
    assert b["process"]["args"] == SPEC["argv"]
    assert b["process"]["env"] == ["PATH=/bin", "A=b"]
    assert (b["process"]["cwd"], b["hostname"]) == ("/work", "p")
    assert b["root"] == {"path": "/p/layers/0/root", "readonly": False}
    assert [(m["destination"], m.get("options")) for m in b["mounts"]] == [
        ("/proc", None), ("/t", ["rbind", "ro"]),
        ("/dev/termination-log", ["rbind", "rw"])]  # fmt: skip
    assert "network" not in [n["type"] for n in b["linux"]["namespaces"]]


def test_container_ids_keep_to_runscs_alphabet() -> None:
    assert gvisor.container_id("uid-1/main:0") == "uid-1-main-0"
