"""Which image a container really ran: the digest in its status's ``imageID``.

A pod spec names an image by tag (``nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04``); a
tag can move, so the report records what the kubelet says it ran. The kubelet copies
the container runtime's image reference into ``status.containerStatuses[].imageID``
(and ``initContainerStatuses``, ``ephemeralContainerStatuses``). Its forms:

- containerd and CRI-O: the image's first repo digest, ``<repository>@sha256:<hex>``
  (kubernetes/website, "Debug Running Pods": ``docker.io/library/nginx@sha256:2834…``
  for the spec's ``nginx``);
- dockershim (Kubernetes 1.23 and older): ``docker-pullable://<repository>@sha256:<hex>``,
  or, for an image with no repo digest, ``docker://sha256:<image id>`` (kubelet's
  ``toPullableImageID``: ``DockerPullableImageIDPrefix + RepoDigests[0]``, else
  ``DockerImageIDPrefix + id``);
- an image with no repo digest under containerd (imported or built on the node): its
  image id alone, ``sha256:<hex>``;
- empty, until the container was created.

An image id is the digest of the image's config, not of the manifest a registry
serves, so it is recorded but never offered as the registry digest. Whatever holds no
digest is said so, with the reason; a digest is never made up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
PULLABLE_PREFIX = "docker-pullable://"
IMAGE_ID_PREFIX = "docker://"
STATUS_FIELDS = ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
SPEC_FIELDS = ("initContainers", "containers", "ephemeralContainers")
# the OCI image spec's registered algorithms, each with its encoded length
_DIGEST = r"(?:sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})"
_REPO_DIGEST = re.compile(rf"^(?P<repo>[^@\s]+)@(?P<digest>{_DIGEST})$")
_IMAGE_ID = re.compile(rf"^{_DIGEST}$")


@dataclass(frozen=True)
class Resolved:
    """What one ``imageID`` says: the repository and registry digest, or why there is none."""

    repository: str | None
    digest: str | None  # ``sha256:<hex>`` of the manifest, when the runtime reported one
    no_digest: str | None  # why not, when ``digest`` is None


def resolve(image_id: str | None) -> Resolved:
    """Read one ``imageID`` in any of the kubelet's forms (see the module docstring)."""
    text = (image_id or "").strip()
    if not text:
        return Resolved(None, None, "no imageID reported (the container was not created)")
    bare = text.removeprefix(PULLABLE_PREFIX).removeprefix(IMAGE_ID_PREFIX)
    found = _REPO_DIGEST.match(bare)
    if found:
        return Resolved(found["repo"], found["digest"], None)
    if _IMAGE_ID.match(bare):
        return Resolved(
            None,
            None,
            f"the runtime reports only the local image id {bare}, no registry digest "
            "(an image without a repo digest: imported or built on the node)",
        )
    return Resolved(None, None, f"imageID {text!r} holds no digest")


def ran(pod: Obj) -> Iterator[tuple[str, str, str]]:
    """``(container, image asked for, imageID)`` of each container the pod's status lists.

    The image asked for is the spec's (the status's own ``image`` is the runtime's
    normalised name); a status whose container the spec does not name keeps its own.
    """
    spec = pod.get("spec") or {}
    asked = {
        str(c.get("name")): str(c.get("image") or "")
        for field in SPEC_FIELDS
        for c in spec.get(field) or []
        if isinstance(c, dict)
    }
    status = pod.get("status") or {}
    for field in STATUS_FIELDS:
        for cs in status.get(field) or []:
            if not isinstance(cs, dict):
                continue
            name = str(cs.get("name") or "")
            image = asked.get(name) or str(cs.get("image") or "")
            yield name, image, str(cs.get("imageID") or "")
