"""DCGM's load generator, ``dcgmproftester12``, as the checks run it: what its exit codes mean.

``dcgmproftester``'s ``main()`` returns ``dcgmStartEmbedded``'s status from ``Init()``;
run as another user than root that is ``DCGM_ST_REQUIRES_ROOT`` (-29), which the shell
sees as 227 (NVIDIA/DCGM ``dcgmproftester/DcgmProfTester.cpp``,
``dcgmlib/dcgm_structs.h``). With ``--no-dcgm-validation`` it prints only the embedded
host engine's ``CacheManager Init Failed. Error: -29`` (NVIDIA/DCGM issues 79 and 102).
Pure.
"""

from __future__ import annotations

from typing import Any

REQUIRES_ROOT_EXIT = 227  # DCGM_ST_REQUIRES_ROOT (-29) as an exit status


def exit_reason(code: int, log: str = "", when: str = "") -> str:
    """The load generator's exit, as a clause; DCGM's refusal without root named as such.

    ``when`` follows any other exit (" before utilization rose"); the log's last line ends it.
    """
    said = (log.strip().splitlines() or [""])[-1][:200]
    tail = f" (its log: {said!r})" if said else ""
    if code == REQUIRES_ROOT_EXIT:
        return (
            f"dcgmproftester12 refused to load the GPU: exit {code}, DCGM_ST_REQUIRES_ROOT "
            f"(profiling requires root; the pod ran as another user){tail}"
        )
    return f"the load generator exited {code}{when}{tail}"


def last_exit(pod: dict[str, Any]) -> int | None:
    """The exit code of the pod's first container's current or last termination, if any."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return None
    for state in (statuses[0].get("state") or {}, statuses[0].get("lastState") or {}):
        ended = state.get("terminated")
        if ended:
            return int(ended.get("exitCode", -1))
    return None
