"""Pod status shapes the kubelet writes, built from the runtime's view.

Kept apart from the process handling so the shapes (reasons, exit codes,
condition types) can be read and compared with a real kubelet's in one place.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from simcluster.net.addresses import LOOPBACK
from simcluster.runtime.logs import now_rfc3339nano

HOST_IP = LOOPBACK  # every node's InternalIP, in the cluster's network namespace


def container_id(pod_uid: str, name: str, run: int) -> str:
    """A stable fake containerd id for one run of one container."""
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{run}".encode()).hexdigest()


def image_id(image: str) -> str:
    """The `imageID` a kubelet over containerd reports for a container of `image`.

    containerd's CRI reports the image's repo digest, `<repository>@sha256:<manifest
    digest>`, with the repository normalised as Docker references are (`docker.io/library/`
    before a bare name, `docker.io/` before a name with no registry host): kubernetes/website,
    "Debug Running Pods", shows `docker.io/library/nginx@sha256:2834...` for the spec's
    `nginx`. The sim has no registry, so a tag's manifest digest is the sha256 of the
    reference as the pod names it: stable per reference, as a registry's is until the tag
    moves. An image named by digest reports that digest. `IMAGE_ID_TEMPLATE` is the same
    rule for the pods KWOK plays.
    """
    name = re.sub(r":[^:/]*$", "", image.split("@", 1)[0])
    if not re.match(r"^(localhost|[^/]*[.:][^/]*)/", name):
        name = "docker.io/" + (name if "/" in name else "library/" + name)
    if "@" in image:
        return f"{name}@{image.split('@', 1)[1]}"
    return f"{name}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


# `image_id` as a KWOK status template expression over a container's `.image` (KWOK's
# templates carry sprig's functions: regexReplaceAll, regexMatch, ternary, sha256sum);
# written in place of @IMAGE_ID@ in kwok-stages.yaml when the run starts.
IMAGE_ID_TEMPLATE = (
    '{{ $n := regexReplaceAll ":[^:/]*$" (regexReplaceAll "@.*$" .image "") "" }}'
    '{{ if not (regexMatch "^(localhost|[^/]*[.:][^/]*)/" $n) }}'
    '{{ $n = printf "docker.io/%s" (ternary $n (printf "library/%s" $n) (contains "/" $n)) }}'
    "{{ end }}"
    '{{ printf "%s@%s" $n (ternary (regexReplaceAll "^[^@]*@" .image "") '
    '(printf "sha256:%s" (sha256sum .image)) (contains "@" .image)) | Quote }}'
)


def base_status(container: dict[str, Any]) -> dict[str, Any]:
    """A container status before anything ran."""
    return {
        "name": container["name"],
        "image": container["image"],
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": "ContainerCreating"}},
    }


def running(cs: dict[str, Any], cid: str, ready: bool) -> None:
    """Mark a container status as running since now."""
    cs.update(
        state={"running": {"startedAt": now_rfc3339nano()[:19] + "Z"}},
        started=True,
        ready=ready,
        containerID=cid,
        imageID=image_id(cs["image"]),
    )


def terminated(
    cs: dict[str, Any], cid: str, code: int, reason: str, message: str, started: str
) -> dict[str, Any]:
    """Mark a container status as terminated; return the terminated state."""
    state: dict[str, Any] = {
        "exitCode": code,
        "reason": reason,
        "startedAt": started,
        "finishedAt": now_rfc3339nano()[:19] + "Z",
        "containerID": cid,
    }
    if message:
        state["message"] = message
    # a container that ran (or failed to start) was created from the pulled image
    image = cs.get("imageID") or image_id(cs["image"])
    cs.update(
        state={"terminated": state}, started=False, ready=False, containerID=cid, imageID=image
    )
    return state


def waiting(cs: dict[str, Any], reason: str, message: str = "") -> None:
    """Mark a container status as waiting (image pull, back-off, config error)."""
    w: dict[str, Any] = {"reason": reason}
    if message:
        w["message"] = message
    cs.update(state={"waiting": w}, started=False, ready=False)


def conditions(
    phase: str, initialized: bool, ready: bool, not_ready_names: list[str], scheduled: Any
) -> list[dict[str, Any]]:
    """The pod conditions for a phase and readiness, keeping PodScheduled."""
    now = now_rfc3339nano()[:19] + "Z"

    def cond(t: str, ok: bool, reason: str = "", message: str = "") -> dict[str, Any]:
        c: dict[str, Any] = {
            "type": t,
            "status": "True" if ok else "False",
            "lastTransitionTime": now,
        }
        if not ok and reason:
            c["reason"] = reason
        if not ok and message:
            c["message"] = message
        return c

    done = phase in ("Succeeded", "Failed")
    why = "PodCompleted" if done else "ContainersNotReady"
    msg = "" if done else f"containers with unready status: [{' '.join(not_ready_names)}]"
    out = [
        cond("PodReadyToStartContainers", not done),
        cond("Initialized", initialized, "ContainersNotInitialized"),
        cond("Ready", ready, why, msg),
        cond("ContainersReady", ready, why, msg),
    ]
    if scheduled:
        out.append(scheduled)
    return out
