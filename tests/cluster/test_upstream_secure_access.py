"""A peer's test suite as the proof: the upstream TestSecureAcceleratorAccess on the sim.

Opt-in: set AICR_AI_CONFORMANCE_SRC to a checkout of kubernetes-sigs/ai-conformance
at the revision hack/sim/pins.env names (AI_CONFORMANCE_REVISION). The test
binary is built once with `go test -c` into the sim cache
(hack/sim/build-upstream-test.sh) and run against the simulated cluster in DRA
mode, healthy and under `device-leak`; secure-accelerator-access must agree
with it both times. Its code is not ours: nothing of it is kept in this tree.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from deployhelp import run_check
from harness import SimCluster
from manifests import GPU_RUNTIME_CLASS
from simcluster.cluster import paths

SRC = os.environ.get("AICR_AI_CONFORMANCE_SRC")
REVISION = paths.read_pins()["AI_CONFORMANCE_REVISION"]
if not SRC:
    pytest.skip(f"upstream TestSecureAcceleratorAccess not run: set AICR_AI_CONFORMANCE_SRC to a "
                f"checkout of kubernetes-sigs/ai-conformance at {REVISION}",
                allow_module_level=True)  # fmt: skip

BUILD = paths.SIM_ROOT / "build-upstream-test.sh"
SUBTESTS = ("PositiveAccessTest", "NegativeIsolationTest", "MultiContainerIsolationTest")
CHECK = "secure-accelerator-access"
RECIPE = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "  overrides: {devicePlugin: {enabled: false}}\n"
    "- name: nvidia-dra-driver-gpu\n  namespace: nvidia-dra-driver-gpu\n"
    "  overrides: {resources: {gpus: {enabled: true}}, gpuResourcesEnabledOverride: true}\n"
)


def _build() -> tuple[Path | None, str]:
    """The test binary (built unless cached) and the build's log."""
    start = time.monotonic()
    proc = subprocess.run(["bash", str(BUILD), str(SRC)], capture_output=True, text=True,
                          timeout=1200)  # fmt: skip
    log = f"{proc.stderr.strip()} (ready in {time.monotonic() - start:.1f}s)"
    return (Path(proc.stdout.split()[-1]) if proc.returncode == 0 else None), log


# Built while the tests are collected: the session later moves into the sim's network
# namespace, where a Go build could not fetch a module it lacks.
BINARY, BUILD_LOG = _build()


@pytest.fixture(scope="module")
def binary() -> Path:
    assert BINARY is not None, f"building the upstream test failed: {BUILD_LOG}"
    print(f"\nupstream test binary {BINARY}: {BUILD_LOG}")
    return BINARY


@pytest.fixture
def dra(cluster: SimCluster) -> SimCluster:
    cluster.apply(GPU_RUNTIME_CLASS)
    cluster.set_mode("dra")
    return cluster


def upstream(cluster: SimCluster, binary: Path) -> tuple[int, str]:
    """Run TestSecureAcceleratorAccess verbosely; its exit code and output."""
    start = time.monotonic()
    proc = subprocess.run(
        [str(binary), "-test.run", "^TestSecureAcceleratorAccess$", "-test.v",
         "-test.timeout", "6m", "-kubeconfig", str(cluster.kubeconfig)],
        capture_output=True, text=True, timeout=420,
        env={**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    print(f"\n--- upstream output ({time.monotonic() - start:.1f}s, exit {proc.returncode}) ---\n"
          f"{out}")  # fmt: skip
    return proc.returncode, out


def test_healthy_dra_mode_passes_upstream_and_ours(
    dra: SimCluster, binary: Path, tmp_path: Path
) -> None:
    code, out = upstream(dra, binary)
    assert code == 0, out
    for sub in SUBTESTS:
        assert f"--- PASS: TestSecureAcceleratorAccess/{sub}" in out, out
    ours = run_check(dra, tmp_path, CHECK, RECIPE, phase="conformance")
    assert ours["status"] == "passed", ours["message"]


def test_device_leak_fails_upstream_and_ours(dra: SimCluster, binary: Path, tmp_path: Path) -> None:
    dra.fault("device-leak")
    code, out = upstream(dra, binary)
    assert code != 0, out
    # Its negative pod is not pinned to a GPU node and may land on a CPU node, where it
    # sees nothing whatever the fault; the multi-container pod holds a claim, so it is on one.
    assert "--- FAIL: TestSecureAcceleratorAccess/MultiContainerIsolationTest" in out, out
    assert "VIOLATION" in out, out
    ours = run_check(dra, tmp_path, CHECK, RECIPE, phase="conformance")
    assert ours["status"] == "failed", ours["message"]
    leaked = "9/9 probes failed: positive: positive/claimed was allocated one GPU but sees 8 GPU"
    assert ours["message"].startswith(leaked), ours["message"]
