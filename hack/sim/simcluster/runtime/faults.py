"""Faults a test can inject into pods the runtime plays.

Two ways, because tests cannot annotate pods that the product's Jobs create:
- the annotation `sim.aicr.dev/fault: <fault>` on a pod the test creates;
- a rule in `<sim dir>/faults.json`, matched when a pod starts, by namespace,
  pod-name prefix and/or the `job-name` label (all given fields must match).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from simcluster.runtime.ownership import FAULT_ANNOTATION

Fault = Literal["image-pull", "crash", "oom", "never-ready", "evict"]
FAULTS: tuple[Fault, ...] = ("image-pull", "crash", "oom", "never-ready", "evict")
RULES_FILE = "faults.json"


def read_rules(sim_dir: Path) -> list[dict[str, Any]]:
    """Current fault rules (an empty list when none)."""
    try:
        rules: list[dict[str, Any]] = json.loads((sim_dir / RULES_FILE).read_text())
    except (OSError, ValueError):
        return []
    return rules


def add_rule(
    sim_dir: Path,
    fault: Fault,
    *,
    namespace: str | None = None,
    pod_name_prefix: str | None = None,
    job_name: str | None = None,
) -> None:
    """Add a rule; new pods matching every given field get `fault`."""
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; expected one of {FAULTS}")
    if not (namespace or pod_name_prefix or job_name):
        raise ValueError("a fault rule needs a namespace, pod_name_prefix or job_name")
    rules = read_rules(sim_dir)
    rules.append(
        {
            "fault": fault,
            "namespace": namespace,
            "podNamePrefix": pod_name_prefix,
            "jobName": job_name,
        }
    )
    tmp = sim_dir / (RULES_FILE + ".tmp")
    tmp.write_text(json.dumps(rules, indent=1))
    tmp.replace(sim_dir / RULES_FILE)


def clear_rules(sim_dir: Path) -> None:
    """Remove every rule."""
    (sim_dir / RULES_FILE).unlink(missing_ok=True)


def fault_for(sim_dir: Path, pod: dict[str, Any]) -> str | None:
    """The fault this pod should show, if any (annotation first, then rules)."""
    meta = pod.get("metadata", {})
    annotated = (meta.get("annotations") or {}).get(FAULT_ANNOTATION)
    if annotated:
        return str(annotated)
    labels = meta.get("labels") or {}
    for rule in read_rules(sim_dir):
        if rule.get("namespace") and rule["namespace"] != meta.get("namespace"):
            continue
        if rule.get("podNamePrefix") and not meta.get("name", "").startswith(rule["podNamePrefix"]):
            continue
        if rule.get("jobName") and labels.get("job-name") != rule["jobName"]:
            continue
        return str(rule["fault"])
    return None
