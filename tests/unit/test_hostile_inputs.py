"""The five hostile inputs of issue 29, each run as `aicr validate --no-cluster` in a child.

The child measures itself (CPU and wall time of the run, peak RSS): the refusal must
cost seconds of CPU and under 200 MB, where before the fix each ran for minutes and took
gigabytes. CPU time, not wall time, bounds the work, so a loaded machine cannot fail it;
the wall bound is only that the client gave up before the server would have stopped
sending. The URL servers bind 127.0.0.1 only, answer a bounded number of requests and
stop sending after SERVE_SECONDS.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

RECIPE = Path(__file__).parents[1] / "data" / "recipes" / "small.yaml"
# The issue asks 2 s; idle, each costs well under 1 s of CPU. The bound still catches the
# minutes of work they took before.
MAX_CPU_SECONDS = 5.0
# A handler stops sending after this, whatever the client does: a run that ends later did
# not end on its own deadline or cap but when the server stopped.
SERVE_SECONDS = 30.0
MAX_RSS_MB = 200  # each took gigabytes before; an idle aicr process is about 60 MB

# The child runs the CLI in-process and reports code, seconds and peak RSS as JSON.
CHILD = """
import io, json, sys, time, contextlib
from aicr.cli.main import run
import aicr.cli.validate, aicr.validate, httpx  # imported before the clock: it times the run
err = io.StringIO()
start, cpu = time.monotonic(), time.process_time()
with contextlib.redirect_stderr(err):
    code = run(sys.argv[1:])
seconds, cpu = time.monotonic() - start, time.process_time() - cpu
# VmHWM, not ru_maxrss: ru_maxrss survives exec, so a big parent's peak would show here
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
rss_mb = int(hwm.split()[1]) / 1024
print(json.dumps({"code": code, "seconds": seconds, "cpu": cpu, "rss_mb": rss_mb,
                  "err": err.getvalue()}))
"""


def aicr_child(*args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True, text=True, timeout=SERVE_SECONDS + 60,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def assert_refused(result: dict[str, object], *needles: str) -> None:
    err = str(result["err"])
    assert result["code"] == 2, err
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    assert float(str(result["cpu"])) < MAX_CPU_SECONDS, result
    assert float(str(result["seconds"])) < SERVE_SECONDS, result
    assert float(str(result["rss_mb"])) < MAX_RSS_MB, result


BOMB = "\n".join(
    [f'a: &a [{", ".join(["lol"] * 9)}]']
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]"
       for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
) + "\n"  # fmt: skip


def test_a_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert bomb.stat().st_size < 500  # the 400-byte, 9-level bomb
    result = aicr_child("validate", "-r", str(bomb), "--no-cluster")
    assert_refused(result, f"{bomb}: aliases expand to", "alias-nodes bound of 100000")


def test_a_200_mb_recipe_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:  # sparse: the size is real, the disk stays empty
        f.truncate(200 * 1024 * 1024)
    result = aicr_child("validate", "-r", str(big), "--no-cluster")
    assert_refused(result, f"{big}: 200 MiB is over the recipe size cap of 16 MiB",
                   "--limit recipe=VALUE")  # fmt: skip


def test_a_recipe_without_a_size_is_read_only_to_its_cap() -> None:
    # a device reports size 0 and never ends: only cap + 1 bytes are read
    result = aicr_child("validate", "-r", "/dev/zero", "--no-cluster",
                        env={"AICR_LIMIT_RECIPE": "1MiB"})  # fmt: skip
    assert_refused(result, "/dev/zero: more than that is over the recipe size cap of 1 MiB")


def test_a_zero_timeout_is_refused() -> None:
    result = aicr_child("validate", "-r", str(RECIPE), "--no-cluster", "--timeout", "0s")
    assert_refused(result, "--timeout: duration '0s' must be above zero")


# ---- URLs: a local server, 127.0.0.1 only --------------------------------------------

MAX_REQUESTS = 4


def _trickle(handler: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
    handler.send_response(200)
    handler.end_headers()
    end = time.monotonic() + SERVE_SECONDS
    while time.monotonic() < end and not stop.is_set():
        handler.wfile.write(b"#")
        handler.wfile.flush()
        stop.wait(1.0)  # one byte a second, as in the issue


def _stream(handler: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
    handler.send_response(200)  # no Content-Length: the size shows only as it arrives
    handler.end_headers()
    chunk = b"# padding\n" * 6554  # 64 KiB
    end = time.monotonic() + SERVE_SECONDS
    sent = 0
    while sent < 300 * 1024 * 1024 and time.monotonic() < end and not stop.is_set():
        handler.wfile.write(chunk)
        sent += len(chunk)


def _announce(handler: http.server.BaseHTTPRequestHandler, stop: threading.Event) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", str(300 * 1024 * 1024))
    handler.end_headers()
    handler.wfile.write(b"kind: RecipeResult\n")


ROUTES: dict[str, Callable[[http.server.BaseHTTPRequestHandler, threading.Event], None]] = {
    "/trickle.yaml": _trickle, "/stream.yaml": _stream, "/announce.yaml": _announce,
}  # fmt: skip


@pytest.fixture
def server() -> Iterator[str]:
    stop = threading.Event()
    served: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.append(self.path)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                ROUTES[self.path](self, stop)  # a client that gave up, as it should

        def log_message(self, *_: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    stop.set()
    httpd.shutdown()
    httpd.server_close()
    assert len(served) <= MAX_REQUESTS


def test_a_trickling_url_ends_at_the_fetch_deadline(server: str) -> None:
    url = f"{server}/trickle.yaml"
    result = aicr_child("--limit", "fetch-deadline=1s", "validate", "-r", url, "--no-cluster")
    assert_refused(result, f"{url}: not read within the fetch deadline of 1s",
                   "--limit fetch-deadline=VALUE")  # fmt: skip


def test_a_300_mb_stream_is_cut_at_the_size_cap(server: str) -> None:
    url = f"{server}/stream.yaml"
    result = aicr_child("validate", "-r", url, "--no-cluster")
    assert_refused(result, f"{url}: more than that is over the recipe size cap of 16 MiB")


def test_an_announced_300_mb_body_is_refused_before_it_is_read(server: str) -> None:
    url = f"{server}/announce.yaml"
    result = aicr_child("validate", "-r", url, "--no-cluster")
    assert_refused(result, f"{url}: 300 MiB is over the recipe size cap of 16 MiB")
