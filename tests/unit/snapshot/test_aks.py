"""The AKS GPU pool projection: every row of the table in aicr.snapshot.aks, and the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aicr import gate
from aicr.constraints import ConstraintResult
from aicr.errors import FileFormatError
from aicr.recipe.load import load_recipe, parse_recipe
from aicr.snapshot import aks
from aicr.snapshot.load import parse_snapshot

GPU = "Standard_ND96isr_H100_v5"
CPU = "Standard_D8s_v5"


def pool(name: str, size: str = GPU, driver: str | None = None, managed: bool = False) -> Any:
    profile: dict[str, Any] = {}
    if driver is not None:
        profile["driver"] = driver
    if managed:
        profile["nvidia"] = {"managementMode": "Managed"}
    return {"name": name, "vmSize": size, "gpuProfile": profile or None}


def projected(*pools: Any) -> str | None:
    return aks.gpu_driver(aks.parse_pools(json.dumps(list(pools)), "pools.json"))


ROWS = [
    ([pool("a", driver="Install"), pool("b", driver="Install")], "Install"),
    ([pool("a"), pool("b")], "Install"),  # none set: AKS's default driver-only profile
    ([pool("a", driver="Install"), pool("b")], "Install"),
    ([pool("a", driver="None"), pool("b", driver="None")], "None"),
    ([pool("a", driver="Install"), pool("b", driver="None")], "Mixed"),
    ([pool("a"), pool("b", driver="None")], "Mixed"),
    ([pool("a", driver="Install", managed=True), pool("b", driver="Install")], "Managed"),
    ([pool("a", managed=True), pool("b", driver="None")], "Managed"),  # Managed wins
    ([pool("sys", CPU, driver="None"), pool("gpu", driver="Install")], "Install"),  # CPU ignored
    ([pool("sys", CPU), pool("user", "Standard_E16s_v5")], None),  # no GPU pool
    ([], None),
]


@pytest.mark.parametrize(
    ("pools", "mode"),
    ROWS,
    ids=["all-install", "none-set", "install-and-unset", "all-none", "install-none",
         "unset-none", "managed", "managed-wins", "cpu-pools-ignored", "no-gpu-pool", "empty"],
)  # fmt: skip
def test_every_row_of_the_table(pools: list[Any], mode: str | None) -> None:
    assert projected(*pools) == mode


@pytest.mark.parametrize(
    ("size", "is_gpu"),
    [("Standard_NC24ads_A100_v4", True), ("Standard_ND96isr_H100_v5", True),
     ("Standard_NV36ads_A10_v5", True), ("standard_nc6s_v3", True),
     ("Standard_NG32ads_V620_v1", True), ("Standard_D8s_v5", False),
     ("Standard_E16s_v5", False), ("Standard_B2s", False), ("Standard_L8s_v3", False)],
)  # fmt: skip
def test_gpu_pools_are_the_n_series_sizes(size: str, is_gpu: bool) -> None:
    assert aks.Pool("p", size, None, False).is_gpu is is_gpu


BAD = [
    ("{", "malformed JSON"),
    ('{"name": "a"}', "(top level): got 'dict' (expected a JSON list)"),
    ('[{"name": "a"}]', "[0].vmSize: got None (expected a non-empty string)"),
    ('[{"name": "a", "vmSize": "x", "gpuProfile": {"driver": "Yes"}}]',
     "[0].gpuProfile.driver: got 'Yes' (expected Install, None or absent)"),
    ('[{"name": "a", "vmSize": "x", "gpuProfile": "Install"}]',
     "[0].gpuProfile: got 'Install' (expected an object or null)"),
    ('[3]', "[0]: got 3 (expected a node pool object)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), BAD, ids=[
    "not-json", "not-a-list", "no-vm-size", "bad-driver", "bad-profile", "not-an-object"])
def test_a_malformed_dump_is_bad_input(text: str, message: str) -> None:
    with pytest.raises(FileFormatError) as exc:
        aks.parse_pools(text, "pools.json")
    assert message in str(exc.value)
    assert str(exc.value).startswith("pools.json:")


SNAPSHOT = "measurements:\n  - type: K8s\n    subtypes:\n      - subtype: server\n" \
           "        data: {version: v1.33.0}\n"  # fmt: skip


def gated(expression: str, pools: list[Any] | None) -> ConstraintResult:
    recipe = parse_recipe(f"constraints:\n  - {{name: {aks.READING}, value: '{expression}'}}\n")
    snapshot = parse_snapshot(SNAPSHOT)
    if pools is not None:
        snapshot = aks.project(snapshot, aks.parse_pools(json.dumps(pools), "p.json"))
    return gate.run(recipe, snapshot).results[0]


def test_install_passes_a_recipe_that_wants_install() -> None:
    result = gated("Install", [pool("a"), pool("b", driver="Install")])
    assert (result.verdict, result.blocks) == ("passed", False)


def test_none_fails_a_recipe_that_wants_install() -> None:
    result = gated("Install", [pool("a", driver="None")])
    assert result.verdict == "failed"
    assert result.message == "None does not satisfy == Install"


@pytest.mark.parametrize(
    ("pools", "state", "detail"),
    [([pool("a"), pool("b", driver="None")], "Mixed", "a: Install, b: None"),
     ([pool("a", managed=True)], "Managed", "a: Managed")],
    ids=["mixed", "managed"],
)  # fmt: skip
@pytest.mark.parametrize("expression", ["!= None", "Mixed", "Managed", "!= Install"])
def test_mixed_and_managed_fail_closed_whatever_the_expression(
    pools: list[Any], state: str, detail: str, expression: str
) -> None:
    result = gated(expression, pools)
    assert result.verdict == "failed"
    assert result.blocks
    assert result.message.startswith(f"AKS GPU pools are {state} ({detail}): ")
    assert result.message.endswith("recipe qualification fails closed")


def test_a_snapshot_without_the_reading_says_to_recapture_with_the_pool_dump() -> None:
    result = gated("Install", None)
    assert result.verdict == "missing"
    assert result.blocks
    assert result.message.startswith(
        "reading unavailable — recapture the snapshot with the pool dump"
    )


def test_a_dump_without_gpu_pools_says_so() -> None:
    result = gated("Install", [pool("sys", CPU)])
    assert result.verdict == "missing"
    assert result.message == "the pool dump lists no GPU pool (no N-series vmSize)"


def test_a_new_dump_replaces_the_old_projection() -> None:
    snapshot = parse_snapshot(SNAPSHOT)
    first = aks.project(snapshot, aks.parse_pools(json.dumps([pool("a")]), "p"))
    second = aks.project(first, aks.parse_pools(json.dumps([pool("a", driver="None")]), "p"))
    assert second.reading(aks.READING) == "None"
    assert second.reading("K8s.server.version") == "v1.33.0"
    k8s = [m for m in second.measurements if m.type == "K8s"]
    assert len(k8s) == 1
    assert [s.subtype for s in k8s[0].subtypes] == ["server", "aks-gpu-pools"]


def test_the_aks_example_recipe_needs_the_pool_dump() -> None:
    recipes = Path(__file__).parents[3] / "recipes"
    recipe = load_recipe(str(recipes / "h100-aks-ubuntu-inference-dynamo.yaml"))
    names = [c.name for c in recipe.constraints]
    assert aks.READING in names
    snapshot = parse_snapshot(SNAPSHOT)
    without = gate.run(recipe, snapshot).results[names.index(aks.READING)]
    assert without.blocks and without.message.startswith("reading unavailable")
    with_dump = aks.project(snapshot, aks.parse_pools(json.dumps([pool("gpu")]), "p"))
    assert gate.run(recipe, with_dump).results[names.index(aks.READING)].verdict == "passed"
