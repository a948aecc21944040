"""The pure part of gpu-operator-health: which operands belong on which node, which are ready.

No client and no I/O: functions of the API's dicts, tested as tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aicr.checks import gpu_operator as op
from aicr.checks import health as h
from aicr.kube.gpus import gpu_nodes

Obj = dict[str, Any]


def _labels(node: Obj) -> dict[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


@dataclass
class OperandVerdict:
    """One operand across the GPU nodes it should run on."""

    operand: op.Operand
    ready: list[str] = field(default_factory=list)  # nodes with a ready pod
    lacking: list[str] = field(default_factory=list)  # "node (why)"
    opted_out: list[str] = field(default_factory=list)  # "node (deploy.<x>=value)"
    pods: list[str] = field(default_factory=list)  # "ns/pod on node: state" for the evidence

    @property
    def title(self) -> str:
        """The evidence step's title."""
        return f"operand {self.operand.app}"

    @property
    def problem(self) -> str:
        """What is wrong, as the message says it ("" when nothing)."""
        if self.lacking:
            return "no ready pod on " + ", ".join(self.lacking)
        return ""


def _pod_state(pod: Obj) -> str:
    problems = h.pod(pod)
    return problems[0] if problems else "ready"


def judge_operand(operand: op.Operand, nodes: list[Obj], pods: list[Obj]) -> OperandVerdict:
    """Has ``operand`` a ready pod on every GPU node that does not opt out of it?"""
    verdict = OperandVerdict(operand)
    mine = [p for p in pods if _labels(p).get("app") == operand.app]
    for p in mine:
        meta, node = p["metadata"], (p.get("spec") or {}).get("nodeName") or "no node"
        verdict.pods.append(f"{meta.get('namespace')}/{meta['name']} on {node}: {_pod_state(p)}")
    by_name = {str(n["metadata"]["name"]): n for n in nodes}
    for name in gpu_nodes(nodes):
        labels = _labels(by_name[name])
        if labels.get(op.OPERANDS_LABEL) == "false":
            verdict.opted_out.append(f"{name} ({op.OPERANDS_LABEL}=false)")
            continue
        deploy = labels.get(op.DEPLOY_LABEL + operand.deploy)
        if deploy is not None and deploy != op.DEPLOY_ON:
            verdict.opted_out.append(f"{name} ({op.DEPLOY_LABEL}{operand.deploy}={deploy})")
            continue
        here = [p for p in mine if (p.get("spec") or {}).get("nodeName") == name]
        if any(not h.pod(p) and (p.get("status") or {}).get("phase") == "Running" for p in here):
            verdict.ready.append(name)
        elif here:
            verdict.lacking.append(f"{name} ({'; '.join(_pod_state(p) for p in here)})")
        else:
            verdict.lacking.append(f"{name} (no pod)")
    return verdict


def expected_operands(policy: Obj | None) -> tuple[list[op.Operand], list[op.Operand]]:
    """``(deployed, switched off)`` by the ClusterPolicy's spec (no policy: every operand)."""
    if policy is None:
        return list(op.OPERANDS), []
    on = [o for o in op.OPERANDS if op.enabled(policy, o)]
    return on, [o for o in op.OPERANDS if o not in on]
