"""Where reports and snapshots go: a file, stdout (``-``), or a ConfigMap (``cm://ns/name``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from aicr.ctrf import Report
from aicr.errors import ClusterError, FileFormatError, Problem
from aicr.formats import EXTENSIONS, Format, report_text, snapshot_text
from aicr.k8s import KubeTarget
from aicr.snapshot.model import Snapshot
from aicr.sources import parse_configmap_ref

REPORT_KEY = "report.json"  # the ConfigMap key a cm:// report is stored under (JSON)
SNAPSHOT_KEY = "snapshot"  # AICR stores a cm:// snapshot under snapshot.<format>


def write_report(
    report: Report, target: str | None, kube: KubeTarget, fmt: Format = Format.JSON
) -> str:
    """Write the CTRF report in ``fmt``; returns a description of where it went."""
    key = REPORT_KEY if fmt == Format.JSON else f"report.{EXTENSIONS[fmt]}"
    return write_text(report_text(report, fmt), target, kube, key=key, what="report")


def write_snapshot(snapshot: Snapshot, target: str | None, kube: KubeTarget, fmt: Format) -> str:
    """Write the snapshot in ``fmt``; returns a description of where it went."""
    key = f"{SNAPSHOT_KEY}.{EXTENSIONS[fmt]}"
    return write_text(snapshot_text(snapshot, fmt), target, kube, key=key, what="snapshot")


def write_text(text: str, target: str | None, kube: KubeTarget, *, key: str, what: str) -> str:
    """Put ``text`` on stdout (no target or ``-``), in a file (atomically) or a ConfigMap key."""
    if target in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return "stdout"
    assert target is not None
    if target.startswith("cm://"):
        _write_configmap(text, target, kube, key, what)
        return target
    path = Path(target)
    tmp = path.with_name(f".{path.name}.tmp")  # a reader never sees half a file
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise FileFormatError(
            Problem(f"cannot write {what}: {exc.strerror}", source=target)
        ) from None
    return str(path)


def _write_configmap(text: str, target: str, kube: KubeTarget, default_key: str, what: str) -> None:
    namespace, name, key = parse_configmap_ref(target)
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.k8s import api_client, describe_api_error

    api = client.CoreV1Api(api_client(kube))
    # A plain dict is what the client serializes; its stubs only name the model class.
    body: Any = {
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "aicr"}},
        "data": {key or default_key: text},
    }
    try:
        try:
            api.replace_namespaced_config_map(name, namespace, body)
        except ApiException as exc:
            if exc.status != 404:
                raise
            api.create_namespaced_config_map(namespace, body)
    except ApiException as exc:
        raise ClusterError(f"cannot write {what} to {target}: {describe_api_error(exc)}") from None
