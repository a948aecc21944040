"""The ``aicr`` entry point: the only place that prints errors and sets exit codes.

``aicr --help`` is answered from ``root_help.TEXT`` without importing click: it is the
root group's own help at the widths where click's never changes (a test renders the group
and compares, so the two cannot drift). Everything else runs the click group in
``aicr.cli.root``.
"""

from __future__ import annotations

import sys

_HELP_FLAGS = (["--help"], ["-h"])
# click wraps help at min(terminal columns, 80) - 2; from 80 columns on it is always 78.
_FULL_WIDTH = 80


def _root_help(argv: list[str]) -> bool:
    """Print the root help and say True when ``argv`` asks for it alone at full width."""
    if argv not in _HELP_FLAGS:
        return False
    import shutil  # click's formatter measures the terminal with this very call

    if shutil.get_terminal_size().columns < _FULL_WIDTH:
        return False
    from aicr.cli import root_help

    sys.stdout.write(root_help.TEXT + "\n")
    sys.stdout.flush()
    return True


def _no_pydantic_plugins() -> None:
    """Give pydantic its empty plugin list without the import of importlib.metadata.

    pydantic (2.x) asks ``pydantic.plugin._loader.get_plugins()`` for plugins each time
    it builds a validator; with none it builds a plain ``SchemaValidator``. That module
    imports importlib.metadata (email, zipfile, csv, socket: about 95 M instructions)
    before it reads PYDANTIC_DISABLE_PLUGINS, pydantic's documented switch, so even the
    switch costs the import. aicr declares no plugin, and its file formats must validate
    the same whatever else is installed beside it, so the CLI answers as that switch set
    to ``__all__`` does: no plugins. Only where pydantic has not loaded its own loader.
    """
    name = "pydantic.plugin._loader"
    if name not in sys.modules:
        import types

        loader = types.ModuleType(name, "aicr's answer: no pydantic plugins (aicr.cli.main).")
        loader.__dict__["get_plugins"] = lambda: ()
        sys.modules[name] = loader


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code; errors become one message each on stderr."""
    if _root_help(sys.argv[1:] if argv is None else list(argv)):
        return 0
    _no_pydantic_plugins()
    # imported here, past the shortcut: click, dataclasses and typing cost more than it does
    import click

    from aicr.cli.root import cli
    from aicr.errors import EXIT_INTERRUPTED, EXIT_VALIDATION_FAILED, AicrError, InputError

    try:
        # Commands return an int when their outcome is an exit code other than 0.
        code = cli.main(args=argv, prog_name="aicr", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return 2
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except InputError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        return exc.exit_code
    except AicrError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except Exception as exc:  # a bug: say so plainly, fail closed, keep the trace for --debug
        import logging
        import traceback

        if logging.getLogger("aicr").isEnabledFor(logging.DEBUG):
            traceback.print_exc()
        click.echo(
            f"internal error: {type(exc).__name__}: {exc} (--debug shows the trace)", err=True
        )
        return EXIT_VALIDATION_FAILED
    return code if isinstance(code, int) else 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())


if __name__ == "__main__":
    main()
