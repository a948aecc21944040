"""Every flag of AICR v0.11.1's validate, snapshot and root commands, and what it does here.

One table serves three readers: the commands take their refusal messages from
it, ``hack/gen_docs.py`` renders it into docs/cli.md, and a unit test runs an
AICR command line for each row.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Handling(StrEnum):
    """How an AICR flag is treated."""

    SAME = "same"  # AICR's meaning, environment variable and default
    MAPPED = "mapped"  # accepted, with the nearest meaning our design allows
    NO_EFFECT = "no effect"  # accepted and checked; a note on stderr says it changes nothing
    REFUSED = "refused"  # exit 2 with one line saying why and what to use instead
    REMOVED = "removed"  # gone from AICR itself; exit 2 naming what replaced it


@dataclass(frozen=True)
class AicrFlag:
    """One AICR flag: where it lives, what AICR does with it, what aicr does."""

    command: str  # "global", "validate" or "snapshot"
    flag: str
    aicr: str
    here: str
    handling: Handling


SERVICE_ACCOUNT = (
    "refused: aicr never shares a ServiceAccount; every pod it deploys runs under its "
    "own run-unique account with only the permissions that pod needs (drop the flag)"
)
FEATURE = (
    "removed from AICR by the single-path CNCF evidence design: --cncf-submission now "
    "writes evidence for every check the recipe plans (choose checks in the recipe's "
    "validation.conformance.checks)"
)
TEMPLATE = (
    "refused: Go templates are not supported; write -t json or -t yaml and transform "
    "that (for example with jq or yq)"
)
AGENT_NAMESPACE = (
    "no effect: the node agents run in a run-unique namespace of their own, labelled Pod "
    "Security `privileged` (hostPath needs it) for their lifetime only"
)

_S, _M, _N, _R, _X = (
    Handling.SAME,
    Handling.MAPPED,
    Handling.NO_EFFECT,
    Handling.REFUSED,
    Handling.REMOVED,
)

FLAGS: tuple[AicrFlag, ...] = (
    AicrFlag(
        "global",
        "--debug",
        "root flag, env `AICR_DEBUG`: debug logging",
        "same, before or after the command name (`aicr --debug validate ...`)",
        _S,
    ),
    AicrFlag(
        "global",
        "--log-json",
        "root flag, env `AICR_LOG_JSON`: structured logs",
        "same place and variable; progress and notes as one JSON object per line on stderr",
        _S,
    ),
    AicrFlag(
        "global",
        "-o, --output",
        "file, `cm://namespace/name` or stdout (default)",
        "same, and `-` for stdout; a ConfigMap keeps the text under `report.json` "
        "(`report.yaml`, `report.txt`) or `snapshot.yaml` (`snapshot.json`)",
        _S,
    ),
    AicrFlag(
        "global",
        "-t, --format",
        "`json`, `yaml`, `table`, default `yaml`; only "
        "snapshot has it, validate always writes CTRF JSON",
        "validate and snapshot; validate defaults to CTRF JSON, `yaml` is the same "
        "report as YAML, `table` its summary counts only; snapshot defaults to `yaml`, "
        "`table` is one row per reading",
        _M,
    ),
    AicrFlag(
        "global",
        "-k, --kubeconfig",
        "kubeconfig path (overrides `KUBECONFIG`)",
        "same; a path that does not exist is refused (exit 2)",
        _S,
    ),
    AicrFlag(
        "global",
        "--data",
        "validate: a folder with registry.yaml overlaid on the embedded recipe data",
        "validate: the folder holding the values files the "
        "recipe references (aicr embeds no recipe registry to overlay)",
        _M,
    ),
    AicrFlag(
        "validate",
        "-r, --recipe",
        "path, URL or `cm://`; required",
        "same (also read from `AICR_RECIPE`)",
        _S,
    ),
    AicrFlag(
        "validate",
        "-s, --snapshot",
        "path, URL or `cm://`; absent: an agent Job captures one",
        "same sources; absent: read live from the Kubernetes API (K8s "
        "and GPU-label readings; constraints on OS, GPU.smi or SystemD readings fail "
        "closed as missing until a snapshot file provides them)",
        _M,
    ),
    AicrFlag(
        "validate",
        "--phase",
        "repeatable or comma list: deployment, performance, conformance, all; default all",
        "same",
        _S,
    ),
    AicrFlag(
        "validate",
        "--fail-on-error",
        "default true; `--fail-on-error=false` turns it off",
        "same (also `--no-fail-on-error`)",
        _S,
    ),
    AicrFlag("validate", "--no-cluster", "no cluster access; every check skipped", "same", _S),
    AicrFlag(
        "validate", "-n, --namespace", "env `AICR_NAMESPACE`, default `aicr-validation`", "same", _S
    ),
    AicrFlag(
        "validate",
        "--image",
        "env `AICR_VALIDATOR_IMAGE`, default the AICR image of "
        "the CLI's version: the snapshot agent's image",
        "the image the check pods run (env `AICR_CHECK_IMAGE`, default the check image "
        "of this version); AICR's own image is refused (exit 2) because it cannot run "
        "these checks, and a set `AICR_VALIDATOR_IMAGE` is not read (a note says so)",
        _M,
    ),
    AicrFlag(
        "validate",
        "--image-pull-secret",
        "repeatable or comma list",
        "same, for every pod of the run",
        _S,
    ),
    AicrFlag(
        "validate",
        "--job-name",
        "default `aicr-validate`: the agent Job's fixed name",
        "the prefix of the run's object names (`PREFIX-r1a2b3c4d-CHECK`): a fixed name "
        "would let concurrent runs overwrite each other; without it names start "
        "`aicr-r1a2b3c4d`",
        _M,
    ),
    AicrFlag(
        "validate",
        "--service-account-name",
        "default `aicr`: the agent's ServiceAccount",
        f"exit 2, {SERVICE_ACCOUNT}",
        _R,
    ),
    AicrFlag(
        "validate",
        "--node-selector",
        "`key=value`, repeatable: places the snapshot agent",
        "places the workloads checks create (GPU test pods); the check pods "
        "themselves: `--orchestrator-node-selector`",
        _M,
    ),
    AicrFlag(
        "validate",
        "--toleration",
        "`key=value:effect` or `key:effect`, repeatable: "
        "agent and validator Jobs; default tolerate all",
        "tolerations of the workloads "
        "checks create; the check pods tolerate every taint unless "
        "`--orchestrator-toleration` says otherwise",
        _M,
    ),
    AicrFlag(
        "validate",
        "--timeout",
        "default `5m`: how long to wait for the agent Job",
        "bounds the whole run (no default; Go durations such as `5m0s` accepted); "
        "checks still running when it expires end `other`, exit 8",
        _M,
    ),
    AicrFlag(
        "validate",
        "--no-cleanup",
        "keep Jobs and RBAC (leaves cluster-admin bound)",
        "same; nothing privileged is left (every binding is least-privilege), and "
        "`aicr cleanup --run-id` removes it later",
        _S,
    ),
    AicrFlag(
        "validate",
        "--require-gpu",
        "env `AICR_REQUIRE_GPU`: the agent pod requests a GPU",
        "same variable; the snapshot (given or captured) must report a GPU, else "
        "exit 8 before any check runs; with --no-cluster or --dry-run it needs -s",
        _M,
    ),
    AicrFlag(
        "validate",
        "--evidence-dir",
        "where CNCF evidence is written",
        "same; requires --cncf-submission",
        _S,
    ),
    AicrFlag(
        "validate",
        "--cncf-submission",
        "runs a separate evidence collector; requires --evidence-dir",
        "the same run plus a CNCF submission (the single-path design)",
        _S,
    ),
    AicrFlag(
        "validate",
        "-f, --feature",
        "evidence feature to collect, repeatable",
        f"exit 2: {FEATURE}",
        _X,
    ),
    AicrFlag(
        "snapshot",
        "-n, --namespace",
        "env `AICR_NAMESPACE`, default `default`: where the agent runs",
        f"same variable and default; {AGENT_NAMESPACE}",
        _N,
    ),
    AicrFlag(
        "snapshot",
        "--image",
        "env `AICR_IMAGE`: the agent image",
        "same variable: the node agents' image (default: the check image of this version); "
        "AICR's own image is refused (exit 2) because it cannot run aicr's agent",
        _M,
    ),
    AicrFlag("snapshot", "--image-pull-secret", "repeatable", "same, for the agent pods", _S),
    AicrFlag(
        "snapshot",
        "--job-name",
        "default `aicr`: the agent Job's fixed name",
        "the prefix of the agents' object names (names stay run-unique)",
        _M,
    ),
    AicrFlag(
        "snapshot", "--service-account-name", "default `aicr`", f"exit 2, {SERVICE_ACCOUNT}", _R
    ),
    AicrFlag(
        "snapshot",
        "--node-selector",
        "places the agent",
        "only nodes with these labels host an agent; a node group without such a node gets "
        "none, so its file readings are absent (constraints on them fail closed)",
        _M,
    ),
    AicrFlag(
        "snapshot",
        "--toleration",
        "agent tolerations; default tolerate all",
        "same: the agents' tolerations, default every taint",
        _S,
    ),
    AicrFlag(
        "snapshot",
        "--timeout",
        "default `5m`: the wait for the agent Job",
        "same default; bounds each node agent (its Job deadline) and each read of the "
        "Kubernetes API",
        _M,
    ),
    AicrFlag(
        "snapshot",
        "--no-cleanup",
        "keep the agent Job and RBAC",
        "same: keeps the agents' Jobs, RBAC and namespace (`aicr cleanup --run-id` removes "
        "them later)",
        _S,
    ),
    AicrFlag(
        "snapshot",
        "--privileged",
        "default true; `--privileged=false` for PSS-restricted namespaces",
        "no effect: the agent is never privileged (read-only mounts of three host paths, "
        "every capability dropped, non-root)",
        _N,
    ),
    AicrFlag(
        "snapshot",
        "--require-gpu",
        "env `AICR_REQUIRE_GPU`: fail when no GPU is found (and the agent pod requests one)",
        "same variable; exit 8 when no node has "
        "allocatable `nvidia.com/gpu`; refused (exit 2) together with --runtime-class, "
        "as AICR does",
        _S,
    ),
    AicrFlag(
        "snapshot",
        "--runtime-class",
        "env `AICR_RUNTIME_CLASS`: the agent pod's runtimeClassName",
        "same variable, checked; no effect: the agent reads files and needs no GPU runtime",
        _N,
    ),
    AicrFlag(
        "snapshot", "--template", "Go template file for the output", f"exit 2, {TEMPLATE}", _R
    ),
    AicrFlag(
        "snapshot",
        "--max-nodes-per-entry",
        "integer, default 0: node names per NodeTopology entry",
        "must be an integer 0 or above; no effect: NodeTopology here is each node "
        "group's NUMA layout, not lists of node names",
        _N,
    ),
)


def no_effect_flags(command: str) -> dict[str, str]:
    """A command's accepted-but-inert flags (long name) and why, for the stderr note."""
    return {
        f.flag.split(", ")[-1]: f.here[f.here.index("no effect") :]
        for f in FLAGS
        if f.command == command and f.handling == Handling.NO_EFFECT
    }


def markdown() -> str:
    """The docs/cli.md section: one row per AICR flag."""
    lines = [
        "## Coming from AICR",
        "",
        "Every flag of AICR v0.11.1's `validate`, `snapshot` and root command, and what "
        "`aicr` does with it. *same*: AICR's meaning, variable and default; *mapped*: "
        "accepted with the nearest meaning this design allows; *no effect*: accepted and "
        "checked, and a note on stderr says it changes nothing; *refused* and *removed*: "
        "exit 2 with the line shown. Boolean flags take `--flag=true|false` and list flags "
        "take comma lists, as in AICR.",
        "",
        "| command | AICR flag | AICR v0.11.1 | aicr | handling |",
        "|---|---|---|---|---|",
    ]
    for f in FLAGS:
        lines.append(f"| {f.command} | `{f.flag}` | {f.aicr} | {f.here} | {f.handling.value} |")
    return "\n".join(lines) + "\n"
