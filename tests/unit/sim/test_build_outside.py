"""No build runs inside the simulated cluster's network namespace.

The namespace has no route out, so a build there dies on its first download
("dial udp ...:53: connect: network is unreachable"). The build scripts refuse
there in one line, before starting; the Python side builds before it enters
the namespace and, inside, only checks that the binaries are there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from simcluster.__main__ import main
from simcluster.components import install
from simcluster.components.gateway import COMPONENT as GATEWAY
from simcluster.components.prometheus import COMPONENT as PROMETHEUS
from simcluster.scenarios import named as named_scenarios

SIM_ROOT = Path(__file__).resolve().parents[3] / "hack" / "sim"
needs_netns = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
    reason="needs root, unshare and ip for a scratch network namespace",
)
# A recipe of the shape of components/*/build.sh whose build takes a few seconds.
SLOW_RECIPE = """version=1.0
binaries=(slow)
build() { sleep 3.5; touch "$1/slow"; }
"""
# Runs in a fresh network namespace: set up as `sim up` sets up the cluster's own
# (lo, the Service CIDR, the pods' bridge, no route out), then the command.
SIM_NAMESPACE = """
import subprocess, sys
from simcluster.net import namespace
namespace.set_up(sys.argv[1])
sys.exit(subprocess.run(sys.argv[2:]).returncode)
"""


def _in_new_namespace(
    argv: list[str], env: dict[str, str], setup: str = ""
) -> subprocess.CompletedProcess[str]:
    """`argv` in a scratch network namespace: the cluster's shape, or `setup`'s (ip -batch)."""
    if setup:
        script = f"ip -batch - <<'IP' || exit 99\n{setup}\nIP\nexec \"$@\""
        command = ["unshare", "--net", "bash", "-c", script, "bash", *argv]
    else:
        host_ns = os.readlink("/proc/self/ns/net")
        command = ["unshare", "--net", sys.executable, "-c", SIM_NAMESPACE, host_ns, *argv]
    return subprocess.run(
        command,
        env={**env, "PYTHONPATH": str(SIM_ROOT), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_netns
def test_the_component_build_refuses_in_the_clusters_namespace_in_one_line(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    script = str(SIM_ROOT / "build-component.sh")
    proc = _in_new_namespace(["bash", script, "gateway"], {"AICR_SIM_CACHE": str(cache)})
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines() == [
        f"sim-build: refusing to build gateway {GATEWAY.version}: this network namespace has no "
        "route out (the simulated cluster's, or another), so nothing can be fetched; run "
        "`bash hack/sim/build-component.sh gateway` outside it first"
    ]
    assert proc.stdout == "" and not cache.exists()  # nothing started, nothing made


@needs_netns
@pytest.mark.parametrize(
    ("script", "what"),
    [
        ("build.sh", "build the simulated cluster's control plane"),
        ("loadgen.sh", "install aiperf"),
    ],
    ids=["control-plane", "load-generator"],
)
def test_the_other_builds_refuse_there_too(tmp_path: Path, script: str, what: str) -> None:
    proc = _in_new_namespace(
        ["bash", str(SIM_ROOT / script)], {"AICR_SIM_CACHE": str(tmp_path / "cache")}
    )
    assert proc.returncode == 3, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and f": refusing to {what}" in proc.stderr


def _scratch_sim_root(tmp_path: Path) -> Path:
    """The build script and what it sources, beside one slow component recipe."""
    root = tmp_path / "sim"
    (root / "simcluster/components/slow").mkdir(parents=True)
    for name in ("build-component.sh", "cache.sh", "pins.env"):
        shutil.copy(SIM_ROOT / name, root / name)
    (root / "simcluster/components/slow/build.sh").write_text(SLOW_RECIPE)
    return root


@needs_netns
def test_with_a_route_out_the_build_runs_and_says_how_long_it_has_taken(tmp_path: Path) -> None:
    root, cache = _scratch_sim_root(tmp_path), tmp_path / "cache"
    env = {"AICR_SIM_CACHE": str(cache), "PROGRESS_SECONDS": "1"}
    argv = ["bash", str(root / "build-component.sh"), "slow"]
    # a scratch namespace with a default route, to a veth whose peer is in it too (nothing
    # leaves it)
    routed = "\n".join(
        [
            "link add v0 type veth peer name v1",
            "link set v0 up",
            "link set v1 up",
            "route add default dev v0",
        ]
    )
    proc = _in_new_namespace(argv, env, setup=routed)
    assert proc.returncode == 0, proc.stderr
    bin_dir = cache / "components/slow-1.0/bin"
    assert proc.stdout == f"{bin_dir}\n" and (bin_dir / "slow").exists()
    lines = proc.stderr.splitlines()
    assert lines[0] == "sim-build: building slow 1.0"
    # A tick every second, each saying the whole seconds since the start. Not exactly
    # 1, 2: the start is read in whole seconds and a loaded machine wakes a sleep late.
    ticks = [re.fullmatch(r"sim-build: building slow 1\.0: (\d+) s so far", x) for x in lines[1:-1]]
    seconds = [int(m.group(1)) for m in ticks if m]
    assert len(seconds) == len(ticks) >= 1, lines
    assert seconds == sorted(seconds) and 1 <= seconds[0] <= 3 and seconds[-1] <= 60, lines
    assert lines[-1].startswith("sim-build: built slow 1.0 in ")
    # without the route, the same recipe is refused before it starts
    refused = _in_new_namespace(argv, {**env, "AICR_SIM_CACHE": str(tmp_path / "c2")})
    assert (refused.returncode, refused.stdout) == (3, ""), refused.stderr
    assert not (tmp_path / "c2").exists()


def test_check_builds_nothing_and_names_what_is_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AICR_SIM_CACHE", str(tmp_path / "cache"))
    with pytest.raises(install.ComponentError) as e:
        install.require_built([PROMETHEUS, GATEWAY])
    assert str(e.value) == (
        f"prometheus {PROMETHEUS.version} is not built (build it outside the simulated "
        "cluster's network namespace: bash hack/sim/build-component.sh prometheus); "
        f"gateway {GATEWAY.version} is not built (build it outside the simulated cluster's "
        "network namespace: bash hack/sim/build-component.sh gateway)"
    )
    assert not (tmp_path / "cache").exists()


def test_install_inside_the_namespace_refuses_an_unbuilt_component_before_applying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AICR_SIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(install.subprocess, "run", _refuse_build(install.subprocess.run))
    applied: list[Any] = []
    monkeypatch.setattr(install.scenario, "apply", lambda sim, docs: applied.append(docs))
    with pytest.raises(install.ComponentError, match=r"prometheus \S+ is not built"):
        install.install(object(), [PROMETHEUS])  # type: ignore[arg-type]
    assert applied == []


def _refuse_build(run: Any) -> Any:
    """subprocess.run that fails the test when the build script is asked to build."""

    def guarded(argv: list[str], **kwargs: Any) -> Any:
        if argv[:2] == ["bash", str(install.BUILD_SCRIPT)]:
            assert argv[2] == "--check", f"a build was started: {argv}"
        return run(argv, **kwargs)

    return guarded


class OrderSim:
    """A running cluster that records when a verb enters its network namespace."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def is_up(self) -> bool:
        return True

    def enter(self) -> None:
        self.events.append("enter")

    def up(self, platform: str | None = None) -> Path:
        self.events.append("enter")
        return Path("kubeconfig")


@pytest.mark.parametrize(
    ("argv", "built"),
    [
        (["scenario", "gpu-platform"], "build prometheus,dcgm-exporter"),
        (["up", "--with", "prometheus"], "build prometheus"),
    ],
    ids=["scenario", "up"],
)
def test_the_verbs_build_before_they_enter_the_namespace(
    argv: list[str], built: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    monkeypatch.setattr(
        install, "build", lambda cs: events.append("build " + ",".join(c.name for c in cs))
    )

    def inside(*args: Any) -> None:
        events.append("install")
        raise install.ComponentError("stop here")

    monkeypatch.setattr(install, "install", inside)
    monkeypatch.setattr(named_scenarios, "run", inside)
    assert main(argv, sim=OrderSim(events)) == 3  # type: ignore[arg-type]
    assert events == [built, "enter", "install"]
