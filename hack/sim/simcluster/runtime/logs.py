"""Container logs in the CRI format the kubelet keeps on disk.

Each line is `<RFC3339Nano time> <stream> F <text>`, so `timestamps`,
`sinceSeconds`, `tailLines` and `limitBytes` can be answered as a kubelet would.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO


def now_rfc3339nano() -> str:
    """Current UTC time as the CRI log format writes it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LogWriter:
    """Appends lines of both streams of one container to its log file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(path, "ab")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()

    def write(self, stream: str, data: bytes) -> None:
        """Record one line (without its newline) from `stream`."""
        line = f"{now_rfc3339nano()} {stream} F ".encode() + data.rstrip(b"\n") + b"\n"
        with self._lock:
            self._f.write(line)
            self._f.flush()

    def pump(self, stream: str, pipe: IO[bytes]) -> threading.Thread:
        """Copy `pipe` line by line into the log in a background thread."""

        def run() -> None:
            for raw in iter(pipe.readline, b""):
                self.write(stream, raw)
            pipe.close()

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._f.close()


def parse_line(raw: bytes) -> tuple[str, str, bytes] | None:
    """Split a CRI log line into (time, stream, text with newline)."""
    parts = raw.split(b" ", 3)
    if len(parts) < 4:
        return None
    return parts[0].decode(), parts[1].decode(), parts[3]


def render(
    path: Path,
    *,
    timestamps: bool = False,
    tail_lines: int | None = None,
    limit_bytes: int | None = None,
    since: datetime | None = None,
) -> bytes:
    """The log as `kubectl logs` shows it, with the kubelet's options applied."""
    try:
        raw_lines = path.read_bytes().splitlines(keepends=True)
    except OSError:
        return b""
    out: list[bytes] = []
    for raw in raw_lines:
        parsed = parse_line(raw)
        if parsed is None:
            continue
        ts, _stream, text = parsed
        if since is not None and datetime.fromisoformat(ts.replace("Z", "+00:00")) < since:
            continue
        out.append((ts.encode() + b" " + text) if timestamps else text)
    if tail_lines is not None:
        out = out[-tail_lines:] if tail_lines > 0 else []
    data = b"".join(out)
    if limit_bytes is not None:
        data = data[:limit_bytes]
    return data


def tail_text(path: Path, max_lines: int = 80, max_bytes: int = 2048) -> str:
    """The end of a log, as the kubelet's FallbackToLogsOnError message takes it."""
    data = render(path, tail_lines=max_lines)
    return data[-max_bytes:].decode(errors="replace")
