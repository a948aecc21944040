"""The root group's ``--help`` text as click renders it from 80 columns on (generated).

``aicr.cli.main`` prints it for ``aicr --help`` so that answer needs no click. Written by
``make golden`` from ``aicr.cli.root``; tests/unit/cli/test_root_help.py fails when the
two differ.
"""

TEXT = (
    "Usage: aicr [OPTIONS] COMMAND [ARGS]...\n"
    "\n"
    "  Validate GPU/AI Kubernetes clusters and produce CNCF AI Conformance\n"
    "  evidence.\n"
    "\n"
    "  Exit codes: 0 success, 2 invalid input, 8 validation failed, 130\n"
    "  interrupted.\n"
    "\n"
    "Options:\n"
    "  --version           Show the version and exit.\n"
    "  --limit NAME=VALUE  Change an input bound (e.g. recipe=32MiB, fetch-\n"
    "                      deadline=60s, depth=200); every bound and its\n"
    "                      AICR_LIMIT_* variable: docs/cli.md#input-bounds.\n"
    "  --debug             Debug log and internal-error traces on stderr.  [env\n"
    "                      var: AICR_DEBUG]\n"
    "  --log-json          Progress as one JSON object per line on stderr (for\n"
    "                      pipelines).  [env var: AICR_LOG_JSON]\n"
    "  -h, --help          Show this message and exit.\n"
    "\n"
    "Commands:\n"
    "  attestation  Make the key pair that signs run attestations.\n"
    "  check        List the check catalog, or run one check (inside its Job).\n"
    "  cleanup      Remove what earlier runs left in the cluster.\n"
    "  completion   Print the shell completion script (bash, zsh, fish).\n"
    "  evidence     Render and verify CNCF AI Conformance submissions.\n"
    "  images       List every image a run pulls, for mirrors of air-gapped\n"
    "               clusters.\n"
    "  snapshot     Capture what the cluster is (AICR Snapshot format) from the\n"
    "               Kubernetes API.\n"
    "  validate     Validate a cluster against a recipe and write a CTRF report."
)
