"""A node's own files: read inside the node agent pod, parsed into readings by the CLI.

The agent pod reads exactly three host paths through read-only hostPath mounts and
hands their text back as evidence sections (one per path) through the check
result channel; the invoking machine turns them into readings:

- ``/etc/os-release`` -> ``OS.release.<KEY>`` (every ``KEY=value`` line);
- ``/etc/nvidia-container-runtime/config.toml`` -> ``OS.container-toolkit.<dotted.key>``
  (every scalar of the NVIDIA Container Toolkit's config; GPU groups only);
- ``/sys/devices/system/node`` -> ``NodeTopology.numa``: ``nodes``, ``online`` and
  ``node<N>.cpulist`` (the NUMA layout).
"""

from __future__ import annotations

import contextlib
import json
import shlex
import time
import tomllib
from pathlib import Path
from typing import Any

from aicr.ctrf import Status
from aicr.result import CheckResult, EvidenceSection
from aicr.snapshot.model import MeasurementType, Reading

OS_RELEASE = "/etc/os-release"
TOOLKIT_CONFIG = "/etc/nvidia-container-runtime/config.toml"
TOPOLOGY = "/sys/devices/system/node"
MAX_BYTES = 64 * 1024  # far above any real file of these; a bigger one is not what we expect
READ, ABSENT = "read", "absent"

Readings = dict[tuple[MeasurementType, str], dict[str, Reading]]
AGENT_PREFIX = "node-agent-"  # a node agent's name in the run: node-agent-<group>


def is_agent(name: str) -> bool:
    """Whether a check name is a node agent's (``node-agent-<group>``)."""
    return name.startswith(AGENT_PREFIX)


def _text(path: Path) -> str:
    with open(path, "rb") as stream:
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def _section(path: str, root: Path, read: Any) -> EvidenceSection:
    asked = f"read {path} through a read-only hostPath mount"
    try:
        answer = read(root / path.lstrip("/"))
        return EvidenceSection(title=path, asked=asked, answer=answer, verdict=READ)
    except FileNotFoundError:
        return EvidenceSection(title=path, asked=asked, verdict=ABSENT)
    except (OSError, ValueError) as exc:
        return EvidenceSection(title=path, asked=asked, verdict=f"unreadable: {exc}")


def _topology(folder: Path) -> str:
    nodes = sorted(p for p in folder.glob("node[0-9]*") if p.is_dir())
    layout = {"online": _text(folder / "online").strip()}
    for node in nodes:
        layout[f"{node.name}.cpulist"] = _text(node / "cpulist").strip()
    return json.dumps(layout, sort_keys=True)


def read_on_node(name: str, root: str = "/") -> CheckResult:
    """Inside the agent pod: every path's text; fails unless os-release and topology were read."""
    start_ms = int(time.time() * 1000)
    sections = [
        _section(OS_RELEASE, Path(root), _text),
        _section(TOOLKIT_CONFIG, Path(root), _text),
        _section(TOPOLOGY, Path(root), _topology),
    ]
    missing = [s.title for s in sections if s.verdict != READ and s.title != TOOLKIT_CONFIG]
    status = Status.FAILED if missing else Status.PASSED
    message = f"could not read {', '.join(missing)}" if missing else "read the node's files"
    return CheckResult(
        name=name, status=status, message=message, evidence=sections, start_ms=start_ms
    )


def os_release(text: str) -> dict[str, Reading]:
    """``KEY=value`` lines of os-release(5); values unquoted as a shell would."""
    out: dict[str, Reading] = {}
    for line in text.splitlines():
        key, eq, value = line.strip().partition("=")
        if not eq or not key or key.startswith("#"):
            continue
        try:
            parts = shlex.split(value)
        except ValueError:
            continue  # an unbalanced quote: that line says nothing reliable
        out[key] = " ".join(parts)
    return out


def _flat(table: dict[str, Any], prefix: str = "") -> dict[str, Reading]:
    out: dict[str, Reading] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, name + "."))
        elif isinstance(value, list):
            out[name] = ",".join(str(v) for v in value)
        elif isinstance(value, str | int | float | bool):
            out[name] = value
        else:  # dates and times: as TOML wrote them
            out[name] = str(value)
    return out


def readings(result: CheckResult) -> Readings:
    """The readings an agent's result carries; a file it could not parse gives none."""
    by_path = {s.title: s.answer for s in result.evidence if s.verdict == READ}
    out: Readings = {}
    if OS_RELEASE in by_path:
        out[(MeasurementType.OS, "release")] = os_release(by_path[OS_RELEASE])
    if TOOLKIT_CONFIG in by_path:
        # A config that does not parse gives no reading: constraints on it fail closed.
        with contextlib.suppress(tomllib.TOMLDecodeError):
            config = tomllib.loads(by_path[TOOLKIT_CONFIG])
            out[(MeasurementType.OS, "container-toolkit")] = _flat(config)
    if TOPOLOGY in by_path:
        try:
            layout = json.loads(by_path[TOPOLOGY])
        except json.JSONDecodeError:
            layout = None
        if isinstance(layout, dict):
            numa: dict[str, Reading] = {"nodes": sum(1 for k in layout if k.endswith(".cpulist"))}
            numa.update({str(k): str(v) for k, v in layout.items()})
            out[(MeasurementType.NODE_TOPOLOGY, "numa")] = numa
    return out
