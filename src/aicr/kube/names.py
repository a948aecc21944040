"""Run ids, run-unique object names and the labels that tie every object to its run.

A run id is ``r`` and 8 hex digits, optionally after a name prefix the user gave
with ``--job-name`` (``nightly-r1a2b3c4d``). Object names start with the
prefixed run id, or with ``aicr-`` and the bare one, so they stay unique per run
whatever the prefix.
"""

from __future__ import annotations

import hashlib
import re
import secrets

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "aicr"
RUN_ID_LABEL = "aicr.dev/run-id"
CHECK_LABEL = "aicr.dev/check"
PHASE_LABEL = "aicr.dev/phase"
# What an object is for: inputs, result, check (Job/pod/RBAC), workloads (namespace).
PART_LABEL = "app.kubernetes.io/component"

DNS_LABEL_MAX = 63
# Job names stay short enough that the pod names derived from them (name + "-" + 5
# random characters) and the `job-name` label stay within 63 characters.
JOB_NAME_MAX = 52

NAME_PREFIX_MAX = 30  # leaves room in a 52-character Job name for the run id and a check
_NAME_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_RUN_ID = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?-)?r[0-9a-f]{8}$")


def new_run_id(prefix: str | None = None) -> str:
    """Short, lowercase and unique enough to name Kubernetes objects of concurrent runs."""
    token = "r" + secrets.token_hex(4)
    return f"{prefix}-{token}" if prefix else token


def is_run_id(text: str) -> bool:
    """True when ``text`` looks like a run id this tool generates."""
    return len(text) <= NAME_PREFIX_MAX + 10 and bool(_RUN_ID.match(text))


def is_name_prefix(text: str) -> bool:
    """True when ``text`` can start the object names of a run (a short DNS label)."""
    return len(text) <= NAME_PREFIX_MAX and bool(_NAME_PREFIX.match(text))


def bounded(name: str, limit: int = DNS_LABEL_MAX) -> str:
    """``name`` cut to ``limit`` characters; a hash of the full name keeps cut names unique."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    return name[: limit - len(digest) - 1].rstrip("-") + "-" + digest


def run_prefix(run_id: str) -> str:
    """The prefix every object name of a run starts with."""
    return run_id if "-" in run_id else f"aicr-{run_id}"


def inputs_name(run_id: str) -> str:
    """The run ConfigMap holding recipe, snapshot, config and run.json."""
    return f"{run_prefix(run_id)}-inputs"


def check_name(run_id: str, check: str) -> str:
    """Job, ServiceAccount, Role and ClusterRole of one check share this name."""
    return bounded(f"{run_prefix(run_id)}-{check}", JOB_NAME_MAX)


def result_name(run_id: str, check: str) -> str:
    """The ConfigMap the check writes its result into."""
    return f"{check_name(run_id, check)}-result"


def workload_namespace(run_id: str, check: str) -> str:
    """The run-unique namespace a check's own workloads (GPU test pods...) live in."""
    return bounded(f"{run_prefix(run_id)}-{check}-w", DNS_LABEL_MAX)


def run_labels(run_id: str) -> dict[str, str]:
    """Labels every object of the run carries; cleanup selects on them."""
    return {MANAGED_BY_LABEL: MANAGED_BY, RUN_ID_LABEL: run_id}


def holder_id(run_id: str, check: str) -> str:
    """How the shared GPU Lease names one check of one run."""
    return f"{run_id}/{check}"


def check_labels(run_id: str, check: str, phase: str) -> dict[str, str]:
    """Run labels plus the check and its phase."""
    return {**run_labels(run_id), CHECK_LABEL: check, PHASE_LABEL: phase}


def run_selector(run_id: str | None) -> str:
    """Label selector for one run's objects, or for every run's when ``run_id`` is None."""
    base = f"{MANAGED_BY_LABEL}={MANAGED_BY}"
    return f"{base},{RUN_ID_LABEL}={run_id}" if run_id else base
