"""The GPU model's nccl-tests: ranks meet through its state; its output is nccl-tests' own.

The product's parser and judge read what the model prints, so the simulated
run and a real one go through exactly the same code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from simcluster.gpu import nccl
from simcluster.gpu.model import write_tools

from aicr.checks.performance.nccl_all_reduce_bw.judge import Host, judge
from aicr.constraints import parse_gate
from aicr.parsers.nccl_tests import parse

SIM_ROOT = Path(__file__).resolve().parents[3] / "hack" / "sim"


def profile(node: str, faults: tuple[str, ...] = (), busbw: float = 158.0) -> dict[str, Any]:
    return {
        "node": node,
        "product": "NVIDIA H100 80GB HBM3",
        "count": 8,
        "gpus": list(range(8)),
        "faults": list(faults),
        "ncclBusBw": busbw,
    }


def world(*profiles: dict[str, Any]) -> dict[str, Any]:
    hosts = [
        {**nccl.host_record(p, f"nccl-worker-{i}"), "slots": 8} for i, p in enumerate(profiles)
    ]
    return {"np": 8 * len(profiles), "hosts": hosts}


ARGS = nccl.parse_test_args(["-b", "8", "-e", "16G", "-f", "2", "-g", "1", "-c", "1"])
HOSTS = [Host("nccl-worker-0", "gpu-a", 8), Host("nccl-worker-1", "gpu-b", 8)]


def run(*profiles: dict[str, Any]) -> tuple[str, int]:
    return nccl.report(ARGS, nccl.ranks(world(*profiles), None), "all_reduce_perf")


def test_two_nodes_pass_with_the_profiles_bandwidth() -> None:
    text, code = run(profile("gpu-a"), profile("gpu-b"))
    report = parse(text)
    assert code == 0 and len(report.rows) == 32 and report.incomplete() is None
    assert [(r.rank, r.host, r.device) for r in report.ranks][7:9] == [
        (7, "nccl-worker-0", 7),
        (8, "nccl-worker-1", 0),
    ]
    v = judge(report, HOSTS, parse_gate(">= 150"))
    assert v.outcome == "passed" and v.busbw == 157.39 and v.size == 16 << 30


def test_the_slowest_node_sets_the_pace_and_degraded_cuts_it() -> None:
    text, _ = run(profile("gpu-a"), profile("gpu-b", busbw=100.0))
    assert parse(text).largest.out_of_place.busbw == pytest.approx(99.6, abs=0.1)  # type: ignore[union-attr]
    text, _ = run(profile("gpu-a"), profile("gpu-b", faults=("nccl-degraded",)))
    v = judge(parse(text), HOSTS, parse_gate(">= 150"))
    assert v.outcome == "failed" and v.busbw == pytest.approx(62.95, abs=0.01)


def test_wrong_data_is_reported_and_exits_non_zero() -> None:
    text, code = run(profile("gpu-a", faults=("nccl-wrong",)), profile("gpu-b"))
    report = parse(text)
    assert code != 0 and report.wrong > 0 and report.out_of_bounds
    assert judge(report, HOSTS, parse_gate(">= 100")).outcome == "failed"


def test_mpirun_command_lines() -> None:
    np_, hosts, program = nccl.parse_mpirun(
        [
            "--allow-run-as-root",
            "-np",
            "16",
            "--bind-to",
            "none",
            "--mca",
            "plm_rsh_args",
            "-o X",
            "--host",
            "a.svc:8,b.svc:8",
            "-x",
            "PATH",
            "all_reduce_perf",
            "-b",
            "8",
        ]
    )
    assert (np_, hosts, program) == (
        16,
        [("a.svc", 8), ("b.svc", 8)],
        ["all_reduce_perf", "-b", "8"],
    )


def test_ranks_meet_through_the_state_and_a_missing_host_fails_as_mpirun_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    tools = write_tools(tmp_path, profile("gpu-a"), sys.executable, state)
    hosts = state / "hosts"
    hosts.mkdir(parents=True)
    for i, node in enumerate(("gpu-a", "gpu-b")):
        name = f"nccl-worker-{i}"
        (hosts / f"{name}.json").write_text(json.dumps(nccl.host_record(profile(node), name)))
    env = {"PATH": f"{tools}:/usr/bin:/bin"}
    argv = [
        str(tools / "mpirun"),
        "-np",
        "16",
        "--host",
        "nccl-worker-0.nccl-worker:8,nccl-worker-1.nccl-worker:8",
        "-x",
        "LD_LIBRARY_PATH",
        "all_reduce_perf",
        "-b",
        "1G",
        "-e",
        "16G",
        "-f",
        "2",
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # without -x LD_LIBRARY_PATH the ranks ssh starts on the workers find no libnccl
    bare = [a for a in argv if a not in ("-x", "LD_LIBRARY_PATH")]
    lost = subprocess.run(bare, env=env, capture_output=True, text=True, timeout=60)
    assert lost.returncode == nccl.NO_LIBRARY and lost.stdout == ""
    assert "all_reduce_perf: error while loading shared libraries: libnccl.so.2" in lost.stderr
    assert judge(parse(done.stdout), HOSTS, parse_gate(">= 150")).outcome == "passed"
    monkeypatch.setattr(nccl, "SSH_SECONDS", 0.1)
    code = nccl.mpirun(
        state,
        [
            "-np",
            "24",
            "--host",
            "nccl-worker-0:8,nccl-worker-1:8,nccl-worker-2:8",
            "all_reduce_perf",
        ],
        env,
    )
    assert code == 1
