"""Start background processes and stop exactly those, by pid.

A pid alone can be reused after a process dies, so each record also keeps the
process start time from /proc; `stop` only signals a pid whose start time
still matches the one recorded when we started it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Proc:
    """One process we started: enough to find and stop it again."""

    name: str
    pid: int
    start_ticks: int
    argv: list[str]
    log: str

    def to_json(self) -> dict[str, object]:
        """Serialisable form for the state file."""
        return asdict(self)


def start_ticks(pid: int) -> int | None:
    """Start time of `pid` in clock ticks since boot, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may contain spaces, so split after ')'.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def alive(proc: Proc) -> bool:
    """True if the recorded process still runs (same pid and start time)."""
    return start_ticks(proc.pid) == proc.start_ticks


def spawn(
    name: str,
    argv: list[str],
    log: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Proc:
    """Start `argv` detached from our session, output appended to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        p = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            cwd=cwd,
        )
    ticks = start_ticks(p.pid)
    if ticks is None:
        raise RuntimeError(f"{name} exited at once; see {log}")
    return Proc(name=name, pid=p.pid, start_ticks=ticks, argv=argv, log=str(log))


def stop(proc: Proc, timeout: float = 10.0) -> None:
    """SIGTERM the recorded process, SIGKILL it after `timeout`; reap if ours."""
    if not alive(proc):
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _reap(proc.pid)
        if not alive(proc):
            return
        time.sleep(0.05)
    if alive(proc):
        os.kill(proc.pid, signal.SIGKILL)
        while alive(proc):
            _reap(proc.pid)
            time.sleep(0.05)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
