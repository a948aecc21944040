"""Refuse, in the test process, any network connection that is not loopback.

`install()` patches `socket.socket.connect`/`connect_ex`/`sendto` and
`socket.getaddrinfo`, so a test that tries to reach anything but 127.0.0.0/8,
::1, `localhost` or a Unix socket gets `NetworkViolation` at once, and the
attempt is recorded. `take_violations()` returns (and forgets) what was
attempted, so a fixture can fail the test even when the code under test
swallowed the error. Child processes are not covered (they have their own
libc); the simulated cluster binds everything to loopback for them.

Wire it for every tier in tests/conftest.py:

    import netguard
    netguard.install()

    @pytest.fixture(autouse=True)
    def _no_network():
        yield
        netguard.assert_clean()
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any

_lock = threading.Lock()
_violations: list[str] = []
_installed = False
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_sendto = socket.socket.sendto
_real_getaddrinfo = socket.getaddrinfo
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


class NetworkViolation(ConnectionRefusedError):
    """Raised instead of sending a packet off loopback."""


def _is_loopback_host(host: object) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port) means the local host
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host.lower() in LOOPBACK_NAMES or host == "":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _refuse(what: str) -> None:
    with _lock:
        _violations.append(what)
    raise NetworkViolation(f"netguard: refused non-loopback network access: {what}")


def _check(sock: socket.socket, address: Any, op: str) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return  # Unix sockets, netlink: never leave the machine
    host = address[0] if isinstance(address, tuple) else address
    if not _is_loopback_host(host):
        _refuse(f"{op} {address!r}")


def _connect(self: socket.socket, address: Any) -> None:
    _check(self, address, "connect")
    _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address, "connect")
    return int(_real_connect_ex(self, address))


def _sendto(self: socket.socket, data: Any, *args: Any) -> int:
    _check(self, args[-1], "sendto")
    return int(_real_sendto(self, data, *args))


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_loopback_host(host):
        _refuse(f"resolve {host!r}")  # a DNS query would leave the machine
    return _real_getaddrinfo(host, *args, **kwargs)


def install() -> None:
    """Patch the socket module for the rest of the process (idempotent)."""
    global _installed
    if _installed:
        return
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = _sendto  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _getaddrinfo
    _installed = True


def take_violations() -> list[str]:
    """Attempts refused since the last call (and forget them)."""
    with _lock:
        out = list(_violations)
        _violations.clear()
    return out


def assert_clean() -> None:
    """Fail if anything tried to reach a non-loopback address since the last check."""
    attempts = take_violations()
    if attempts:
        raise AssertionError("non-loopback network access attempted: " + "; ".join(attempts))
