"""Reading a container's command line the way Go flag parsers do."""

from __future__ import annotations

from collections.abc import Collection


def last_flag(argv: list[str], names: Collection[str]) -> str | None:
    """The value of the last ``--name=value`` or ``--name value`` among ``names``.

    pflag and Go's flag package both keep the last one given.
    """
    value = None
    for i, arg in enumerate(argv):
        key, eq, rest = arg.partition("=")
        if key in names:
            value = rest if eq else (argv[i + 1] if i + 1 < len(argv) else "")
    return value
