"""The demo's failure output: one line naming the part that failed and what to do."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("demo", REPO / "hack" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NoSim:
    """A cluster that never started: nothing to bring down."""

    logs = REPO / "demo-out" / "sim" / "logs"

    def state(self) -> None:
        return None

    def is_up(self) -> bool:
        return False


def _run(demo: ModuleType, monkeypatch: pytest.MonkeyPatch, build: Any) -> int:
    monkeypatch.setattr(demo, "build", build)
    monkeypatch.setattr(demo, "Sim", NoSim)
    monkeypatch.setattr(demo.shutil, "which", lambda name: f"/bin/{name}")
    monkeypatch.setattr(sys, "argv", ["demo.py"])
    code: int = demo.main()
    return code


def test_an_error_in_a_part_is_one_line_with_what_to_do_and_no_traceback(
    demo: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken() -> None:
        raise RuntimeError("go: module lookup disabled\n\tby GOFLAGS")

    assert _run(demo, monkeypatch, broken) == 1
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if line.startswith("demo: ")]
    assert said == [
        "demo: build failed: go: module lookup disabled by GOFLAGS; "
        "run `make sim-build` to see the whole build"
    ]
    assert not [line for line in err if "Traceback" in line]
    assert err[-1].startswith("==> time per part: build ")


def test_an_interrupt_exits_130_in_one_line(
    demo: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    assert _run(demo, monkeypatch, interrupted) == 130
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith("demo: ")] == ["demo: interrupted"]


def test_a_must_not_implemented_or_a_run_not_seen_as_simulated_fails_the_demo(
    demo: ModuleType,
) -> None:
    musts = ["accelerator_metrics", "ai_inference", "ai_service_metrics", "cluster_autoscaling",
             "dra_support", "gang_scheduling", "pod_autoscaling", "robust_controller",
             "secure_accelerator_access"]  # fmt: skip
    requirements = [{"id": m, "status": "Implemented"} for m in musts]
    trust = {"class": "simulated", "why": "node n1 carries KWOK's annotation kwok.x-k8s.io/node"}
    raw: dict[str, Any] = {"extra": {"aicr": {"cncf": {"requirements": requirements},
                                             "trust": trust}}}  # fmt: skip
    assert demo.judged(raw) == (
        "all 9 MUSTs Implemented; trust class simulated "
        "(node n1 carries KWOK's annotation kwok.x-k8s.io/node)"
    )
    requirements[0]["status"] = "Not Implemented"
    with pytest.raises(demo.PartFailed, match=r"^MUSTs not Implemented: accelerator_metrics;"):
        demo.judged(raw)
    requirements[0]["status"] = "Implemented"
    trust["class"] = "observed"
    with pytest.raises(demo.PartFailed, match="trust class is 'observed', not 'simulated'"):
        demo.judged(raw)
