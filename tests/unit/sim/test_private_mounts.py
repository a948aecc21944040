"""Mount points a container needs are made in its own mount namespace, never on the host.

Two simulated clusters share the host's file system: a mount point one of them
created on the host and removed when its container ended vanished under the
other's running container ("cannot read run input /etc/aicr/run/run.json").
These tests run `simcluster.runtime.enter` itself (root: it unshares namespaces).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from simcluster.runtime.enter import layer_anchors

SIM_ROOT = Path(__file__).resolve().parents[3] / "hack" / "sim"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="enter unshares namespaces: needs root")


def start(tmp: Path, name: str, mounts: list[dict[str, str]], script: str) -> subprocess.Popen[str]:
    """One container process as the worker starts it."""
    cdir = tmp / name
    (cdir / "layers").mkdir(parents=True)
    term = cdir / "termination-log"
    term.write_text("")
    spec = {
        "argv": ["sh", "-c", script],
        "env": {"PATH": "/usr/bin:/bin"},
        "mounts": [*mounts, {"source": str(term), "target": "/dev/termination-log"}],
        "startErrorFile": str(cdir / "start-error-0"),
        "layers": str(cdir / "layers"),
        "keep": [str(cdir)],
    }
    path = cdir / "spec.json"
    path.write_text(json.dumps(spec))
    cmd = [sys.executable, "-m", "simcluster.runtime.enter", str(path)]
    env = {"PYTHONPATH": str(SIM_ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def run_input(tmp_path: Path) -> Path:
    folder = tmp_path / "volume"
    folder.mkdir()
    (folder / "run.json").write_text('{"run": 1}')
    return folder


@needs_root
def test_the_host_never_gains_a_missing_mount_target(tmp_path: Path, run_input: Path) -> None:
    tag = f"aicr-test-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "config.yaml"
    config.write_text("k: v\n")
    created = [Path(f"/etc/{tag}"), Path(f"/{tag}"), Path(f"/tmp/{tag}")]
    mounts = [
        {"source": str(run_input), "target": f"/etc/{tag}/run"},  # layer over /etc
        {"source": str(run_input), "target": f"/{tag}/work"},  # layer over / itself
        {"source": str(config), "target": f"/tmp/{tag}/config.yaml"},  # a file, under the root's
    ]
    script = (f"cat /etc/{tag}/run/run.json /{tag}/work/run.json /tmp/{tag}/config.yaml && "
              "echo done > /dev/termination-log && sleep 1")  # fmt: skip
    proc = start(tmp_path, "c", mounts, script)
    while proc.poll() is None:
        assert [p for p in created if p.exists()] == []
        time.sleep(0.05)
    out, err = proc.communicate()
    assert (proc.returncode, out) == (0, '{"run": 1}{"run": 1}k: v\n'), err
    assert (tmp_path / "c" / "termination-log").read_text() == "done\n"
    assert [p for p in created if p.exists()] == []


@needs_root
def test_another_sims_cleanup_of_the_same_host_path_cannot_reach_a_running_container(
    tmp_path: Path, run_input: Path
) -> None:
    tag = f"aicr-test-{uuid.uuid4().hex[:8]}"
    target = Path(f"/etc/{tag}/run")
    mounts = [{"source": str(run_input), "target": str(target)}]
    proc = start(tmp_path, "c", mounts, f"sleep 1; cat {target}/run.json")
    try:
        time.sleep(0.5)  # the container has its mounts; the other sim makes and removes the path
        target.mkdir(parents=True)
        target.rmdir()
        target.parent.rmdir()
    finally:
        out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, '{"run": 1}'), err


@needs_root
def test_two_containers_with_the_same_new_target_each_see_their_own(tmp_path: Path) -> None:
    tag = f"aicr-test-{uuid.uuid4().hex[:8]}"
    procs = []
    for name in ("a", "b"):
        src = tmp_path / f"vol-{name}"
        src.mkdir()
        (src / "who").write_text(name)
        mounts = [{"source": str(src), "target": f"/etc/{tag}/run"}]
        # a ends at once; b reads after a has gone
        procs.append(start(tmp_path, name, mounts, f"sleep {0 if name == 'a' else 1}; "
                                                   f"cat /etc/{tag}/run/who"))  # fmt: skip
    outs = [p.communicate(timeout=30)[0] for p in procs]
    assert outs == ["a", "b"]
    assert not Path(f"/etc/{tag}").exists()


def test_layers_cover_the_nearest_existing_folder_once(tmp_path: Path) -> None:
    (tmp_path / "have").mkdir()
    (tmp_path / "file").write_text("")
    anchors = layer_anchors([
        f"{tmp_path}/have/new/deeper",  # nearest existing: have
        f"{tmp_path}/have/other",  # the same folder again
        f"{tmp_path}/have/new/deeper/sub",  # below an earlier target: made inside that volume
        f"{tmp_path}/file",  # exists: no layer
        "/dev/termination-log",  # the private /dev
    ])  # fmt: skip
    assert anchors == [f"{tmp_path}/have"]
    assert layer_anchors([f"{tmp_path}/have/x", f"{tmp_path}/new/y"]) == [str(tmp_path)]


@needs_root
def test_a_layer_over_the_folder_holding_the_scratch_space_leaves_it_to_the_next_layers(
    tmp_path: Path, run_input: Path
) -> None:
    """The container's layers live under /tmp here; /tmp is layered first, /etc and /run after."""
    assert str(tmp_path).startswith("/tmp/")
    tag = f"aicr-test-{uuid.uuid4().hex[:8]}"
    mounts = [{"source": str(run_input), "target": f"/tmp/{tag}/a"},
              {"source": str(run_input), "target": f"/etc/{tag}/b"},
              {"source": str(run_input), "target": f"/run/{tag}/c"}]  # fmt: skip
    reads = f"cat /tmp/{tag}/a/run.json /etc/{tag}/b/run.json /run/{tag}/c/run.json"
    proc = start(tmp_path, "c", mounts, reads)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, '{"run": 1}' * 3), err
    assert not [p for p in ("/tmp", "/etc", "/run") if Path(f"{p}/{tag}").exists()]
