"""The reservation arithmetic: free GPUs from the API's objects, and where a need fits."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from aicr.catalog import load_catalog
from aicr.catalog.model import GpuNeed, parse_catalog
from aicr.errors import SchemaError
from aicr.kube.placement import Placement
from aicr.plan import PlannedCheck
from aicr.runner.gpu_fit import Holding, Inventory, fit, free_text, inventory

Obj = dict[str, Any]


def node(name: str, gpus: int, *, ready: bool = True, cordoned: bool = False) -> Obj:
    return {
        "metadata": {"name": name, "labels": {}},
        "spec": {"unschedulable": cordoned},
        "status": {"allocatable": {"nvidia.com/gpu": str(gpus)},
                   "conditions": [{"type": "Ready", "status": str(ready)}]},
    }  # fmt: skip


def pod(on: str, gpus: int, phase: str = "Running", run: str = "", check: str = "") -> Obj:
    labels = {"aicr.dev/run-id": run, "aicr.dev/check": check} if run else {}
    return {
        "metadata": {"labels": labels},
        "spec": {"nodeName": on, "containers": [
            {"resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]},
        "status": {"phase": phase},
    }  # fmt: skip


CATALOG_HEAD = """apiVersion: aicr.nvidia.com/v1alpha1
kind: Catalog
image: ghcr.io/x/aicr
checks:
  - name: gang-scheduling
    phase: conformance
    description: d
    timeout: 5m
"""


def need(**fields: Any) -> GpuNeed:
    return GpuNeed.model_validate(fields)


def test_free_gpus_are_allocatable_minus_requests_of_non_terminal_pods() -> None:
    nodes = [node("a", 4), node("b", 2), node("c", 8, cordoned=True), node("d", 8, ready=False),
             node("cpu", 0)]  # fmt: skip
    pods = [pod("a", 1), pod("a", 2, phase="Succeeded"), pod("b", 2)]
    inv = inventory(nodes, pods, [], [], Placement(), holders=())
    assert inv.usable == {"a": 3}  # b is fully used, c cordoned, d not Ready, cpu has none


def test_workloads_of_live_holders_count_through_their_holdings_only() -> None:
    pods = [pod("a", 1, run="r1", check="dra-support"),  # live: counted by its holding
            pod("a", 1, run="r0", check="dra-support")]  # a crashed run's leftover pod
    inv = inventory([node("a", 4)], pods, [], [], Placement(), holders={"r1/dra-support"})
    assert inv.usable == {"a": 3}


def test_dra_nodes_count_slice_devices_minus_allocated_claims() -> None:
    devices = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}} for i in range(4)]
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "a", "pool": {"name": "a"},
                        "devices": devices}}]  # fmt: skip
    claim = {"metadata": {"labels": {}}, "status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "a", "device": "gpu-0"}]}}}}  # fmt: skip
    inv = inventory([node("a", 0)], [], slices, [claim], Placement(), holders=())
    assert inv.usable == {"a": 3}


def test_a_gpu_node_that_lost_its_gpus_is_named_in_the_inventory() -> None:
    lost = node("lost", 0)
    lost["metadata"]["labels"] = {"nvidia.com/gpu.present": "true"}
    inv = inventory([node("a", 2), lost, node("cpu", 0)], [], [], [], Placement(), holders=())
    assert (inv.usable, inv.without_gpus) == ({"a": 2}, ("lost",))
    assert free_text(inv, []) == (
        "free now a 2 (lost: labelled as GPU nodes, advertising 0 GPUs)")


def test_the_workload_node_selector_limits_the_inventory() -> None:
    nodes = [node("a", 2), node("b", 2)]
    nodes[1]["metadata"]["labels"] = {"pool": "gpu"}
    inv = inventory(nodes, [], [], [], Placement(node_selector={"pool": "gpu"}), holders=())
    assert inv.usable == {"b": 2}


TWO_BY_FOUR = Inventory({"a": 4, "b": 4})


@pytest.mark.parametrize(
    ("fields", "held", "expected"),
    [
        ({"count": 1}, [], {"a": 1}),
        ({"count": 6}, [], {"a": 4, "b": 2}),
        ({"count": 3}, [Holding({"a": 2})], {"b": 3, "a": 0}),  # spread to the roomiest
        ({"perNode": 2}, [Holding({"a": 1})], {"a": 2}),  # best fit keeps b whole
        ({"perNode": 4}, [Holding({"a": 1})], {"b": 4}),
        ({"perNode": 2, "nodes": 2}, [Holding({"a": 2})], {"a": 2, "b": 2}),
        ({"perNode": 1, "nodes": "every"}, [Holding({"a": 3})], {"a": 1, "b": 1}),
    ],
)
def test_a_need_that_fits_gets_gpus_where_they_are_free(
    fields: dict[str, Any], held: list[Holding], expected: dict[str, int]
) -> None:
    got = fit(need(**fields), TWO_BY_FOUR, held)
    assert got is not None and not got.all
    assert {n: g for n, g in got.gpus.items() if g} == {n: g for n, g in expected.items() if g}


@pytest.mark.parametrize(
    ("fields", "held"),
    [
        ({"count": 5}, [Holding({"a": 4})]),
        ({"perNode": 3}, [Holding({"a": 2, "b": 2})]),
        ({"perNode": 1, "nodes": "every"}, [Holding({"a": 4})]),
        ({"all": True}, [Holding({"a": 1})]),
        ({"count": 1}, [Holding({"a": 0}, all=True)]),  # nothing beside every free GPU
    ],
)
def test_a_need_that_does_not_fit_waits(fields: dict[str, Any], held: list[Holding]) -> None:
    assert fit(need(**fields), TWO_BY_FOUR, held) is None


def test_every_free_gpu_fits_only_when_nobody_holds_one() -> None:
    assert fit(need(all=True), TWO_BY_FOUR, []) == Holding({"a": 4, "b": 4}, all=True)
    # a holder of nothing (a check alone on a GPU-less cluster) blocks nobody
    assert fit(need(all=True), TWO_BY_FOUR, [Holding({})]) == Holding({"a": 4, "b": 4}, all=True)


def test_a_need_larger_than_the_cluster_starts_alone_instead_of_waiting_for_ever() -> None:
    too_big = need(perNode=1, nodes=3)
    assert fit(too_big, TWO_BY_FOUR, [Holding({"a": 1})]) is None  # someone else first
    assert fit(too_big, TWO_BY_FOUR, []) == Holding({"a": 4, "b": 4}, all=True)
    assert fit(need(count=1), Inventory({}), []) == Holding({}, all=True)  # no GPU node


def test_the_waiting_message_says_what_is_free_per_node() -> None:
    assert free_text(TWO_BY_FOUR, [Holding({"a": 3})]) == "free now a 1, b 4"
    assert free_text(Inventory({}), []) == "no schedulable GPU node"


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"all": True}, "every free GPU"),
        ({"count": 1}, "1 GPU in all"),
        ({"perNode": 2}, "2 GPUs on one node"),
        ({"perNode": 1, "nodes": "every"}, "1 GPU on every GPU node"),
        ({"perNode": 2, "nodes": 3}, "2 GPUs on each of 3 nodes (6 in all)"),
        ({"countParam": "size"}, "params.size GPUs in all"),
    ],
)
def test_a_need_reads_as_plain_words(fields: dict[str, Any], text: str) -> None:
    assert str(need(**fields)) == text


@pytest.mark.parametrize(
    "fields",
    [{}, {"all": True, "count": 1}, {"count": 2, "nodes": 2}, {"perNode": 0},
     {"perNode": 1, "nodes": 0}, {"perNode": 1, "nodes": "all"},
     {"countParam": "size", "count": 2}, {"countParam": "Size"}, {"countParam": ""},
     {"countParam": "size", "nodes": 2}],
)  # fmt: skip
def test_a_malformed_need_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        need(**fields)


def test_a_malformed_catalog_need_names_its_field_and_the_forms() -> None:
    text = (CATALOG_HEAD + "    gpus: {countParam: size, count: 2}\n")
    with pytest.raises(SchemaError) as exc:
        parse_catalog(text, "cat.yaml")
    assert [str(p) for p in exc.value.problems] == [
        "cat.yaml:9: checks[0].gpus: value error, give exactly one of all: true, count, "
        "countParam, perNode, got dict"]


@pytest.mark.parametrize(("params", "message"), [
    ({"observeSeconds": 30}, "gpus.countParam names 'size', which is not a param of the check "
                             "(its params: observeSeconds)"),
    ({"size": 0}, "gpus.countParam: params.size is 0, not a whole number of GPUs (at least 1)"),
    ({"size": True}, "gpus.countParam: params.size is True, not a whole number of GPUs "
                     "(at least 1)"),
    ({"size": "2"}, "gpus.countParam: params.size is '2', not a whole number of GPUs "
                    "(at least 1)"),
])  # fmt: skip
def test_a_count_param_must_name_a_whole_number_param(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        need(countParam="size").counted(params)
    assert str(exc.value) == message
    assert need(countParam="size").counted({"size": 3}) == need(count=3)


def test_every_count_param_of_the_catalog_counts_with_the_checks_defaults() -> None:
    planned = {c.name: PlannedCheck(c, c.timeout).gpus for c in load_catalog().checks
               if c.gpus and c.gpus.count_param}  # fmt: skip
    assert {n: str(g) for n, g in planned.items()} == {"gang-scheduling": "2 GPUs in all"}


def test_the_catalog_declares_the_documented_needs() -> None:
    declared = {c.name: str(c.gpus) for c in load_catalog().checks if c.gpus}
    assert declared == {
        "check-nvidia-smi": "every free GPU",
        "nccl-all-reduce-bw": "every free GPU",
        "inference-perf": "every free GPU",
        "dra-support": "1 GPU in all",
        "accelerator-metrics": "1 GPU in all",
        "gang-scheduling": "params.size GPUs in all",
        "pod-autoscaling": "2 GPUs in all",
        "cluster-autoscaling": "every free GPU",
        "secure-accelerator-access": "4 GPUs in all",
        "driver-runtime-management": "1 GPU on every GPU node",
        "gpu-sharing": "every free GPU",
        "virtualized-accelerator": "1 GPU in all",
    }
