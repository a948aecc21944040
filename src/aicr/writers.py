"""Where reports and snapshots go: a file, stdout (``-``), or a ConfigMap (``cm://ns/name``).

Every file the tool writes goes through ``write_file``: a regular file is replaced
atomically (a reader never sees half a report), while a device, a FIFO or
``/dev/stdout`` is written through, since renaming a temporary file over
``/dev/null`` would replace the device itself. A symlink is followed to what it points at.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from aicr.ctrf import Report
from aicr.errors import ClusterError, FileFormatError, Problem
from aicr.kube.target import KubeTarget
from aicr.serialize import EXTENSIONS, Format, report_text, snapshot_text
from aicr.snapshot.model import Snapshot
from aicr.sources import parse_configmap_ref

REPORT_KEY = "report.json"  # the ConfigMap key a cm:// report is stored under (JSON)
SNAPSHOT_KEY = "snapshot"  # AICR stores a cm:// snapshot under snapshot.<format>
MAX_SYMLINK_HOPS = 40  # as the kernel's own limit: a longer chain is a loop


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
    """Put ``text`` on stdout (no target or ``-``), in a file (write_file) or a ConfigMap key."""
    if target in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return "stdout"
    assert target is not None
    if target.startswith("cm://"):
        _write_configmap(text, target, kube, key, what)
        return target
    write_file(Path(target), text, what=what)
    return target


def write_file(path: Path, text: str, *, what: str = "output") -> None:
    """Write ``text`` to ``path`` without destroying what is there (see the module doc)."""
    try:
        try:
            mode: int | None = os.stat(path).st_mode  # follows symlinks
        except FileNotFoundError:
            mode = None
        special = mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
        if special or _through_system_links(path):
            with open(path, "w", encoding="utf-8") as stream:
                stream.write(text)
            return
        _replace_atomically(Path(os.path.realpath(path)), text)
    except OSError as exc:
        raise FileFormatError(
            Problem(f"cannot write {what}: {exc.strerror or exc}", source=str(path))
        ) from None


def _through_system_links(path: Path) -> bool:
    """True when ``path`` is, or links through, /dev or /proc (``/dev/stdout`` -> fd 1).

    What such a link ends at may be a regular file (stdout redirected to a file), which
    must still be written through: the shell holds it open.
    """
    hop = Path(os.path.abspath(path))
    for _ in range(MAX_SYMLINK_HOPS):
        if hop.parts[1:2] in (("dev",), ("proc",)):
            return True
        if not hop.is_symlink():
            return False
        hop = Path(os.path.abspath(hop.parent / os.readlink(hop)))
    return False


def _replace_atomically(target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(target: str | None, flag: str) -> Problem | None:
    """Why ``target`` (a file flag's value) cannot be written, or None; asked before any check.

    stdout and ``cm://`` targets are not files; a long run must not be lost at the end
    because a folder is missing or read-only.
    """
    if target in (None, "", "-") or target.startswith("cm://"):
        return None
    path = Path(target)
    if path.is_dir():
        return Problem(f"{flag} {target}: is a folder", hint="expected a file path")
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        ok = os.access(path, os.W_OK)
        return None if ok else Problem(f"{flag} {target}: not writable")
    parent = Path(os.path.realpath(path)).parent
    return _folder_problem(flag, target, parent)


def check_writable_dir(target: str | None, flag: str) -> Problem | None:
    """Why folder ``target`` cannot be created or written, or None."""
    if not target:
        return None
    path = Path(os.path.realpath(target))
    if path.exists():
        if not path.is_dir():
            return Problem(f"{flag} {target}: exists and is not a folder")
        return _folder_problem(flag, target, path)
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    return _folder_problem(flag, target, ancestor)


def _folder_problem(flag: str, target: str, folder: Path) -> Problem | None:
    if not folder.exists():
        return Problem(f"{flag} {target}: folder {folder} does not exist", hint="create it first")
    if not folder.is_dir():
        return Problem(f"{flag} {target}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        return Problem(f"{flag} {target}: folder {folder} is not writable")
    return None


def _write_configmap(text: str, target: str, kube: KubeTarget, default_key: str, what: str) -> None:
    namespace, name, key = parse_configmap_ref(target)
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.kube.target import api_client, describe_api_error

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
