"""Where the report goes: a file, stdout (``-``), or a ConfigMap (``cm://namespace/name``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from aicr import ctrf
from aicr.ctrf import Report
from aicr.errors import ClusterError, FileFormatError, Problem
from aicr.k8s import KubeTarget
from aicr.sources import parse_configmap_ref

REPORT_KEY = "report.json"  # the ConfigMap key a cm:// report is stored under


def write_report(report: Report, target: str | None, kube: KubeTarget) -> str:
    """Write the CTRF report; returns a description of where it went."""
    if target in (None, "-"):
        sys.stdout.write(ctrf.dumps(report))
        sys.stdout.flush()
        return "stdout"
    assert target is not None
    if target.startswith("cm://"):
        _write_configmap(report, target, kube)
        return target
    path = Path(target)
    try:
        ctrf.write(report, path)
    except OSError as exc:
        raise FileFormatError(
            Problem(f"cannot write report: {exc.strerror}", source=target)
        ) from None
    return str(path)


def _write_configmap(report: Report, target: str, kube: KubeTarget) -> None:
    namespace, name, key = parse_configmap_ref(target)
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.k8s import api_client, describe_api_error

    api = client.CoreV1Api(api_client(kube))
    # A plain dict is what the client serializes; its stubs only name the model class.
    body: Any = {
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "aicr"}},
        "data": {key or REPORT_KEY: ctrf.dumps(report)},
    }
    try:
        try:
            api.replace_namespaced_config_map(name, namespace, body)
        except ApiException as exc:
            if exc.status != 404:
                raise
            api.create_namespaced_config_map(namespace, body)
    except ApiException as exc:
        raise ClusterError(f"cannot write report to {target}: {describe_api_error(exc)}") from None
