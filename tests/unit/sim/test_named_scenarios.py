"""Named scenarios and `sim apply`: loading, strictness, and bad input exiting 2 before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
from simcluster.__main__ import main
from simcluster.cluster.sim import Sim
from simcluster.scenarios import named


def test_gpu_platform_runs_prometheus_and_the_gpu_stack() -> None:
    s = named.load("gpu-platform")
    assert [c.name for c in s.components] == ["prometheus", "dcgm-exporter"]
    kinds = {(m["kind"], m["metadata"]["name"]) for m in s.manifests}
    assert {("Deployment", "gpu-operator"), ("Deployment", "cert-manager"),
            ("Deployment", "nvidia-dra-driver-gpu-controller"),
            ("ClusterPolicy", "cluster-policy"), ("RuntimeClass", "nvidia"),
            ("RuntimeClass", "gvisor")} <= kinds  # fmt: skip
    assert s.gpu_mode == "device-plugin"


def test_gpu_platform_deploys_every_operand_its_cluster_policy_enables() -> None:
    # A healthy GPU Operator has a DaemonSet for each operand its ClusterPolicy switches
    # on (gpu-operator-health's rule); the scenario must be one, not only say so.
    from simcluster.components import dcgm_exporter

    from aicr.checks import gpu_operator as op

    s = named.load("gpu-platform")
    policy = next(m for m in s.manifests if m["kind"] == "ClusterPolicy")
    deployed = {
        m["spec"]["template"]["metadata"]["labels"]["app"]
        for m in s.manifests
        if m["kind"] == "DaemonSet" and m["metadata"]["namespace"] == "gpu-operator"
    }
    if "dcgm-exporter" in [c.name for c in s.components]:
        deployed.add(dcgm_exporter.NAME)
    enabled = {o.app for o in op.OPERANDS if op.enabled(policy, o)}
    assert enabled - deployed == set()
    assert deployed - enabled == set()


def test_every_scenario_loads_and_says_what_it_is() -> None:
    assert "gpu-platform" in named.names()
    for n in named.names():
        assert len(named.load(n).description) > 20, n


@pytest.fixture
def scenarios(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(named, "SCENARIOS", tmp_path)
    return tmp_path


DEPLOYMENT = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Scenario\nname: s\ncolour: red\n", "header: unknown key 'colour'"),
        ("kind: Scenario\nname: t\n", "header: name must be 's' (the file's name)"),
        ("kind: Scenario\nname: s\ngpuMode: dual\n", "header: gpuMode 'dual', expected one of"),
        ("kind: Scenario\nname: s\ncomponents: [prometeus]\n",
         "header: components: unknown component 'prometeus'; did you mean prometheus?"),
        ("apiVersion: v1\nkind: ConfigMap\n", "document 1: expected the header, `kind: Scenario`"),
        ("kind: Scenario\nname: s\n---\napiVersion: v1\nkind: ConfigMap\n",
         "document 2: metadata.name missing"),
        ("kind: Scenario\nname: s\n---\n[unclosed\n", "not YAML"),
    ],
)  # fmt: skip
def test_a_wrong_scenario_names_file_and_field(scenarios: Path, text: str, message: str) -> None:
    (scenarios / "s.yaml").write_text(text)
    with pytest.raises(named.ScenarioError) as e:
        named.load("s")
    assert str(e.value).startswith(f"{scenarios / 's.yaml'}: ")
    assert message in str(e.value)


def test_a_good_scenario_loads(scenarios: Path) -> None:
    (scenarios / "s.yaml").write_text("kind: Scenario\nname: s\ndescription: d\n" + DEPLOYMENT)
    s = named.load("s")
    assert (s.name, s.components, len(s.manifests)) == ("s", (), 1)


def _never_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Sim, "is_up", lambda self: pytest.fail("no cluster work on bad input"))


def test_unknown_scenario_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    _never_up(monkeypatch)
    assert main(["scenario", "gpu-platfrom"], Sim(tmp_path)) == 2
    assert capsys.readouterr().err.startswith(
        "sim scenario: unknown scenario 'gpu-platfrom' (scenarios: gpu-platform"
    )


def test_apply_of_a_missing_or_bad_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _never_up(monkeypatch)
    missing = tmp_path / "nope.yaml"
    assert main(["apply", str(missing)], Sim(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err == f"sim apply: {missing}: cannot read: No such file or directory\n"
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["apply", str(bad)], Sim(tmp_path)) == 2
    assert capsys.readouterr().err == f"sim apply: {bad}: document 1: apiVersion missing\n"


def test_scenario_list_prints_each_with_its_description(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:  # fmt: skip
    assert main(["scenario", "list"], Sim(tmp_path)) == 0
    assert "gpu-platform  the healthy GPU stack" in capsys.readouterr().out
