"""Click wiring only: parse options, call the library, render, map errors to exit codes."""
