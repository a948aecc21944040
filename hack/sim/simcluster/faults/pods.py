"""Pod faults: what a pod the runtime plays shows instead of running its command.

Two ways to ask for one, because tests cannot annotate pods that the product's
Jobs create:
- the annotation `sim.aicr.dev/fault: <fault>` on a pod the test creates;
- a rule in `<sim dir>/faults.json`, matched when a pod starts, by node,
  namespace, pod-name prefix and/or the `job-name` label (all given fields
  must match). `hack/sim/sim fault crash NODE` adds a node rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from simcluster.runtime.ownership import FAULT_ANNOTATION

PodFault = Literal["image-pull", "crash", "oom", "never-ready", "evict"]
POD_FAULTS: tuple[PodFault, ...] = ("image-pull", "crash", "oom", "never-ready", "evict")
RULES_FILE = "faults.json"
_FIELDS = ("node", "namespace", "podNamePrefix", "jobName")


def read_rules(sim_dir: Path) -> list[dict[str, Any]]:
    """Current fault rules (an empty list when none)."""
    try:
        rules: list[dict[str, Any]] = json.loads((sim_dir / RULES_FILE).read_text())
    except (OSError, ValueError):
        return []
    return rules


def _write(sim_dir: Path, rules: list[dict[str, Any]]) -> None:
    tmp = sim_dir / (RULES_FILE + ".tmp")
    tmp.write_text(json.dumps(rules, indent=1))
    tmp.replace(sim_dir / RULES_FILE)


def add_rule(
    sim_dir: Path,
    fault: PodFault,
    *,
    node: str | None = None,
    namespace: str | None = None,
    pod_name_prefix: str | None = None,
    job_name: str | None = None,
) -> None:
    """Add a rule; new pods matching every given field get `fault`."""
    if fault not in POD_FAULTS:
        raise ValueError(f"unknown pod fault {fault!r}; expected one of {POD_FAULTS}")
    if not (node or namespace or pod_name_prefix or job_name):
        raise ValueError("a fault rule needs a node, namespace, pod_name_prefix or job_name")
    rule = dict(zip(_FIELDS, (node, namespace, pod_name_prefix, job_name), strict=True))
    _write(sim_dir, [*read_rules(sim_dir), {"fault": fault, **rule}])


def remove_node_rule(sim_dir: Path, fault: str, node: str) -> None:
    """Remove the rule `add_rule(fault, node=node)` added (rules of other forms stay)."""
    only_node = {
        "fault": fault,
        "node": node,
        "namespace": None,
        "podNamePrefix": None,
        "jobName": None,
    }
    _write(sim_dir, [r for r in read_rules(sim_dir) if r != only_node])


def clear_rules(sim_dir: Path) -> None:
    """Remove every rule."""
    (sim_dir / RULES_FILE).unlink(missing_ok=True)


def rule_matches(rule: dict[str, Any], pod: dict[str, Any]) -> bool:
    """True when every field the rule gives matches the pod."""
    meta = pod.get("metadata", {})
    labels = meta.get("labels") or {}
    if rule.get("node") and rule["node"] != (pod.get("spec") or {}).get("nodeName"):
        return False
    if rule.get("namespace") and rule["namespace"] != meta.get("namespace"):
        return False
    if rule.get("podNamePrefix") and not meta.get("name", "").startswith(rule["podNamePrefix"]):
        return False
    return not (rule.get("jobName") and labels.get("job-name") != rule["jobName"])


def fault_for(sim_dir: Path, pod: dict[str, Any]) -> str | None:
    """The fault this pod should show, if any (annotation first, then rules)."""
    annotated = (pod.get("metadata", {}).get("annotations") or {}).get(FAULT_ANNOTATION)
    if annotated:
        return str(annotated)
    rule = next((r for r in read_rules(sim_dir) if rule_matches(r, pod)), None)
    return str(rule["fault"]) if rule else None
