"""What the runtime runs for a container of an image a component plays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simcluster.components.registry import image_binary
from simcluster.runtime.ownership import image_repo_name


def plays(image: str) -> bool:
    """True when a component binary plays this image."""
    return image_binary(image_repo_name(image)) is not None


def argv(container: dict[str, Any], sim_dir: Path, python: str) -> list[str]:
    """The container's command line, the image's entrypoint being the component's binary.

    As with a real image: `args` without `command` replace the image's default
    arguments; a `command` naming the binary (`/bin/prometheus`) runs the
    cached one; any other command runs as written.
    """
    command = [str(a) for a in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]
    found = image_binary(image_repo_name(str(container.get("image", ""))))
    if found is None:
        return [*command, *args]
    component, image = found
    if image.script is not None:  # a sim model: its flags come from the pod spec
        return [python, str(image.script), "--sim-dir", str(sim_dir), *command[1:], *args]
    binary = str(component.bin_dir() / image.binary)
    if not command:
        return [binary, *(args or image.args)]
    if command[0].rsplit("/", 1)[-1] == image.binary:
        return [binary, *command[1:], *args]
    return [*command, *args]
