"""Config files that name the pod's own IP, for binaries that read bind addresses only from a file.

Runtime pods share the sim's network namespace, so a listener on `:PORT`
would take that port from every other pod; each binds its own pod IP
instead. Where a binary takes its bind addresses only from a config file,
an init container (busybox, as charts do for templated configs) writes the
ConfigMap's file with `@POD_IP@` replaced into an emptyDir the main
container reads.
"""

from __future__ import annotations

from typing import Any

from simcluster.components import objects

PLACEHOLDER = "@POD_IP@"
BUSYBOX = "docker.io/library/busybox:1.36"
SOURCE_VOLUME = "config-template"
RENDERED_VOLUME = "config"


def init_container(*filenames: str) -> dict[str, Any]:
    """The init container that renders each of `filenames` from the template volume."""
    script = " && ".join(
        f'sed "s/{PLACEHOLDER}/$POD_IP/g" /template/{f} > /config/{f}' for f in filenames
    )
    return {
        "name": "render-config",
        "image": BUSYBOX,
        "command": ["sh", "-c", script],
        "env": [objects.pod_ip_env()],
        "volumeMounts": [
            {"name": SOURCE_VOLUME, "mountPath": "/template"},
            {"name": RENDERED_VOLUME, "mountPath": "/config"},
        ],
    }


def volumes(configmap: str) -> list[dict[str, Any]]:
    """The template (ConfigMap) and rendered (emptyDir) volumes."""
    return [
        {"name": SOURCE_VOLUME, "configMap": {"name": configmap}},
        {"name": RENDERED_VOLUME, "emptyDir": {}},
    ]


def mount() -> dict[str, Any]:
    """Where the main container finds the rendered file (`/config/<filename>`)."""
    return {"name": RENDERED_VOLUME, "mountPath": "/config", "readOnly": True}
