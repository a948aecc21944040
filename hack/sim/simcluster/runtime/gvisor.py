"""Run one container under gVisor's real `runsc`, from inside the container's namespaces.

Standalone (standard library only): `enter` calls `run(spec)` in place of
exec'ing the command when the worker put a `sandbox` entry in the spec (see
`handlers`). The OCI bundle's root is the host's `/` (the simulated images are
the host) seen through `enter`'s private overlay (where runsc's gofer makes
missing mount points) and behind gVisor's in-memory overlay, so the container
can write its root file system and the host sees none of it; the container's
volumes and its termination log are bind mounts. gVisor brings its own kernel: `uname -r` and
`/proc/version` say 4.4.0 and `dmesg` starts with "Starting gVisor...".

Networking: `--network=host` only when the process already sits in a network
namespace of the pod's own (made by the sim), so "host" is that namespace;
otherwise `--network=none`. Never `runsc do`, whose default network creates a
veth with a NAT'd address on the real host.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

# Flags this environment needs: none beyond the defaults (ptrace platform) were
# needed here; the overlay keeps the host's files untouched.
FLAGS = ("--overlay2=root:memory",)
NAMESPACES = ("pid", "ipc", "uts", "mount")


def container_id(text: str) -> str:
    """A runsc container id from any text (letters, digits, `-`, `_` and `.`)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:120]


def bundle(spec: dict[str, Any], root: str) -> dict[str, Any]:
    """The OCI runtime config for the container `spec` describes, its root at `root`."""
    mounts: list[dict[str, Any]] = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
    ]
    for m in spec["mounts"]:
        mode = "ro" if m.get("readOnly") else "rw"
        mounts.append(
            {
                "destination": m["target"],
                "type": "bind",
                "source": m["source"],
                "options": ["rbind", mode],
            }
        )
    return {
        "ociVersion": "1.0.2",
        "process": {
            "args": spec["argv"],
            "env": [f"{k}={v}" for k, v in spec["env"].items()],
            "cwd": spec.get("cwd") or "/",
            "user": {"uid": 0, "gid": 0},
        },
        "root": {"path": root, "readonly": False},
        "hostname": spec.get("hostname") or "localhost",
        "mounts": mounts,
        "linux": {"namespaces": [{"type": t} for t in NAMESPACES]},
    }


def argv(spec: dict[str, Any]) -> list[str]:
    """The `runsc run` command line for `spec` (bundle written by `run`)."""
    box = spec["sandbox"]
    network = "host" if spec.get("netns") else "none"  # the pod sandbox's, never the cluster's
    return [
        box["runsc"],
        f"--root={box['state']}",
        f"--network={network}",
        *FLAGS,
        "run",
        f"--bundle={box['bundle']}",
        box["id"],
    ]


def run(spec: dict[str, Any], root: str) -> None:
    """Write the bundle (root `root`) and exec `runsc run` (OSError if it cannot)."""
    box = spec["sandbox"]
    Path(box["state"]).mkdir(parents=True, exist_ok=True)
    Path(box["bundle"]).mkdir(parents=True, exist_ok=True)
    config = Path(box["bundle"]) / "config.json"
    config.write_text(json.dumps(bundle(spec, root)))
    config.chmod(0o600)
    cmd = argv(spec)
    os.execv(cmd[0], cmd)


def delete(box: dict[str, Any]) -> None:
    """Remove the container's runsc state once `runsc run` has ended (its sandbox dies with it)."""
    if Path(box["state"]).is_dir():
        cmd = [box["runsc"], f"--root={box['state']}", "delete", "--force", box["id"]]
        subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False)
