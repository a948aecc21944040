"""Plays `uname` in a container, reporting its node's kernel: `python uname.py KERNEL [FLAGS]`.

Standalone (standard library only). The runtime mounts a wrapper over the
container's `uname`, so `uname -r` agrees with the node's
`status.nodeInfo.kernelVersion` as it does on a real node. Flags: -a, -s, -n,
-r, -v, -m, -p, -i, -o and their long forms; no flag means -s.
"""

from __future__ import annotations

import os
import sys

LONG = {"--all": "a", "--kernel-name": "s", "--nodename": "n", "--kernel-release": "r",
        "--kernel-version": "v", "--machine": "m", "--processor": "p",
        "--hardware-platform": "i", "--operating-system": "o"}  # fmt: skip
ORDER = "snrvmpio"


def main(argv: list[str]) -> int:
    """Print the fields asked for, in uname's order."""
    kernel, args = argv[0], argv[1:]
    flags: set[str] = set()
    for a in args:
        if a in LONG:
            flags.add(LONG[a])
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1:
            flags.update(a[1:])
        else:
            sys.stderr.write(f"uname: extra operand '{a}'\n")
            return 1
    if "a" in flags:
        flags = set("snrvmo")
    u = os.uname()
    fields = {"s": u.sysname, "n": u.nodename, "r": kernel, "v": "#1 SMP PREEMPT_DYNAMIC",
              "m": u.machine, "p": u.machine, "i": u.machine, "o": "GNU/Linux"}  # fmt: skip
    unknown = flags - set(fields)
    if unknown:
        sys.stderr.write(f"uname: invalid option -- '{sorted(unknown)[0]}'\n")
        return 1
    print(" ".join(fields[f] for f in ORDER if f in (flags or {"s"})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
