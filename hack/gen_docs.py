"""Generate docs/cli.md and docs/formats.md from the code, so the docs cannot drift.

    python hack/gen_docs.py          # rewrite the files
    python hack/gen_docs.py --check  # exit 1 when they are stale (the tests do this)
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union

import click
from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"

CLI_INTRO = """# Command-line reference

Generated from the code by `python hack/gen_docs.py`; do not edit by hand.

`aicr` writes reports to stdout (or the file given with `-o`) and everything else
(progress, tables, warnings, errors) to stderr.

## Exit codes

| code | meaning |
|---|---|
| 0 | every planned check passed, or was skipped for an allowed reason (`--skip-check`, `--no-cluster`, not applicable) |
| 2 | invalid input: flags, recipe, snapshot, config or report; one message per problem naming file, line and field; nothing is created in the cluster |
| 8 | validation failed: the readiness gate failed, a check failed or ended `other` (timeout, crash, unschedulable, missing result), or a CNCF submission was blocked or rejected by the verifier |
| 130 | interrupted (Ctrl-C or SIGTERM): running checks are stopped, everything is cleaned up and the partial report is written, marked interrupted |

`aicr evidence verify DIR` exits 0 when the submission is valid, 1 when it is not, 2 on bad invocation.
`aicr evidence verify DIR DIR...` checks every submission in one process (one verdict line
each, the same lines as one call per directory) and exits 0 when all are valid, 8 when any
is invalid or leaks, and 2, before checking any, when a path is not a directory or its version
cannot be told.
`aicr evidence verify --attestation FILE --key PUB` exits 0 when the signature, every
subject's digest and every recorded check pass; 1 when the attestation is genuine but
the recorded run has failures (informational); 8 when the signature or a digest does
not check (tampered file or payload, wrong key, missing subject); 2 for bad invocation
or a file that cannot be read or is no attestation.

## Environment variables

Options that show `env var:` below read that variable when the flag is absent
(flag > environment > default). `KUBECONFIG` is left to the Kubernetes client
(it may hold a list of paths). `AICR_VALIDATOR_IMAGE_REGISTRY` replaces the
registry and first path segment of the default validator image and of the
workload images, as AICR does (for mirrors).

## Output files

`-o`, `--junit`, `--snapshot-out`, `--evidence-dir` and the attestation
(`--emit-attestation`) are checked before the first check starts: a
missing or read-only folder is refused (exit 2), so a long run is never lost at the
end. A regular file is replaced atomically (a temporary file beside it, renamed over
it); a character device (`/dev/null`), a FIFO, or `/dev/stdout` / `/dev/stderr` is
written through and stays what it was; a symlink is followed and what it points at is
written. A submission directory given as a symlink is replaced where the link points.

`validate` also refuses, before any cluster work, a `-n/--namespace` that is not a
namespace name (DNS-1123 label), an `--image` that is not an image reference, and a
`--cncf-version` without requirement data.

Besides what you name, `aicr` keeps one cache: the parsed form of the data it ships
(check catalog, requirement sets, image list) as JSON under
`$XDG_CACHE_HOME/aicr/yaml/` (`~/.cache/aicr/yaml/` when unset), one small file per
shipped file's text, so later runs skip parsing. It is never required: a missing,
unwritable, corrupt or someone else's (not yours, or group/world-writable) cache is
ignored and the data parsed again, and every run still validates the data. Deleting
the folder is always safe.
"""

FORMATS_INTRO = """# File formats

Generated from the pydantic models by `python hack/gen_docs.py`; do not edit by hand.
Keys are camelCase. Unknown keys are refused everywhere (with the closest known
key suggested), so a typo never goes unnoticed; fields marked *accepted for AICR
compatibility* are read and ignored.

The report is [CTRF](https://ctrf.io) JSON, valid against the official schema:
one test per check; `suite` is `[phase]`; `labels` holds `phase`, `check` and
`requirements` (CNCF requirement ids, omitted when none); `extra` holds
`evidence` (sections: title, asked, answer, verdict), `statusDetail` (why a check
ended `other` or skipped: timeout, unschedulable, image-pull, oom-killed, crashed,
evicted, deleted, no-result, bad-result, api-unreachable, interrupted, skip-check,
no-cluster, phase-stopped...), `reason` for skips, `node` (where the check's pod
ran, when it failed there), `nodes` (every node the check read from the cluster:
each Node it got, and the node of each Pod; a CNCF submission redacts them),
`images` (every container the check's own pods ran: its validator pod's, role
`validator`, and the pods in its workload namespace or carrying its labels that it read
or that were left when it closed, role `workload`; each with `pod`, `container`,
`image` as the pod spec asked for it, `imageID` as the kubelet reported it, and
`digest`, the registry digest in it, or `noDigest` saying why there is none, never a
made-up one), `timeoutSeconds`. The
report's `extra.aicr` records the run id, recipe and snapshot sources, the phases
run, the readiness gate (`evaluated`, `passed`, each constraint's verdict), whether
the run was interrupted or timed out, warnings, and the CNCF requirement map when
the conformance phase ran, and the run's trust class (`trust`: `class` one of
`observed`, `given-snapshot`, `offline`, `simulated`, and `why`; see
docs/cncf-submission.md) and its provenance (`provenance`: `nodeGroups`, one entry per
node group of the nodes the run listed with `group`, `nodes`, and where recorded
`instanceType`, `nodeImage`, `platformVersion` (provider labels), `osImage`, `kernel`,
`kubelet`, `containerRuntime`, `nvidiaDriver`, `mixed` where the group's nodes disagree;
`validatorImage`; `images`, every image the run's pods ran, once per image and digest,
validator first: `role`, `image` (the reference asked for), `digest` or `noDigest`,
`imageID`, `containers` (how many) and `checks` (which ran it); `checkVersion`, the
tool's, since checks ship inside the validator; `catalog.sha256`).
"""


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " \\| ".join(names) + (" \\| null" if type(None) in args else "")
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[0])} to {_type_name(args[1])}"
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
                "timedelta": "duration (90s, 5m, 1h30m)"}.get(annotation.__name__,
                                                             annotation.__name__)
    return str(annotation).replace("typing.", "")


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_models(arg))
    return found


def _model_section(model: type[BaseModel], seen: set[type[BaseModel]]) -> list[str]:
    if model in seen:
        return []
    seen.add(model)
    doc = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
    lines = [f"### {model.__name__}", "", doc, "", "| key | type | required | description |",
             "|---|---|---|---|"]
    nested: list[type[BaseModel]] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        required = "yes" if info.is_required() else ""
        desc = (info.description or "").replace("|", "\\|")
        lines.append(f"| `{key}` | {_type_name(info.annotation)} | {required} | {desc} |")
        nested.extend(_models(info.annotation))
    lines.append("")
    for sub in nested:
        lines.extend(_model_section(sub, seen))
    return lines

SNAPSHOT_CAPTURE = """## Live capture and node groups

Without `-s`, `aicr validate` (and `aicr snapshot`) read the cluster through the
Kubernetes API:

| path | readings |
|---|---|
| `K8s.server` | `version`, `major`, `minor`, `platform`, `goVersion` |
| `K8s.node` | `count`, `gpuNodes`; `kubeletVersion`, `containerRuntime`, `osImage`, `kernelVersion`, `architecture` when every node agrees |
| `K8s.node.<name>` | the same per node, `instanceType`, and its GPU readings: `gpuCapacity`, `gpuAllocatable`, `gpuCount`, `gpuProduct`, `gpuMemory`, `gpuDriver`, `cuda`, `gpuSource`; context: the node's labels |
| `K8s.nodegroup.<name>` | one per node group: `nodes`, `gpu` (true/false) and the readings the group shares; context `nodes`: the node names |
| `GPU.cluster` | `count` (GPUs of all nodes), `nodes`, and `product`, `driver`, `cuda`, `memory` where every GPU node agrees |
| `OS.sysctl` | `/proc/sys/kernel/osrelease`: each group's kernel release as the kubelet reports it |
| `OS.release` | node agent: every `KEY=value` of `/etc/os-release` (`ID`, `VERSION_ID`, `PRETTY_NAME`...) |
| `OS.container-toolkit` | node agent, GPU groups: every scalar of `/etc/nvidia-container-runtime/config.toml` as a dotted key (`nvidia-container-runtime.mode`); lists joined with commas |
| `NodeTopology.numa` | node agent: `nodes` (NUMA nodes), `online`, `node<N>.cpulist` from `/sys/devices/system/node` |

The `OS.release`, `OS.container-toolkit` and `NodeTopology.numa` readings come from
one node agent pod per node group (docs/execution.md: what it may do and why it runs
in a namespace of its own); `metadata.agent-missing` names each group whose agent
did not pass or did not run. Without agents (`aicr snapshot --no-agent`, or a group
whose agent failed) those readings are missing and constraints on them fail closed.

GPU readings come from GPU feature discovery labels (`nvidia.com/gpu.product`,
`nvidia.com/gpu.count`, `nvidia.com/gpu.memory`, `nvidia.com/cuda.driver-version.full`
or `nvidia.com/cuda.driver.major/minor/rev`, `nvidia.com/cuda.runtime-version.full` or
`nvidia.com/cuda.runtime.major/minor`) and from the whole-GPU devices the NVIDIA DRA
driver (`gpu.nvidia.com`) publishes in ResourceSlices (`productName`,
`driverVersion`, `cudaDriverVersion`); labels win where both speak. nvidia-smi is
never run for a snapshot: it would need a pod holding GPUs outside any allocation,
the bypass the accelerator checks forbid.

**Node groups.** Nodes are grouped by instance type, GPU product, count, memory,
driver and CUDA, OS image, kernel, kubelet, container runtime and architecture;
groups are named `gpu-1`, `gpu-2`, ..., `cpu-1`, ... in order of their first node's
name. When groups disagree on a reading, the snapshot holds it once per group: a
subtype of the same name whose `context` has `aicr/node-group: <group>` (for example
two `GPU.cluster` subtypes, one per GPU group, each with its `driver`). A reading the
groups agree on is recorded once, without a group.

**The gate and groups.** A constraint is evaluated against the cluster-wide reading
when there is one. Otherwise, when the reading is held per group, it is evaluated
against every GPU group (every group, on a cluster without GPU groups): it passes
only when each passes, a GPU group without the reading fails it closed as missing,
and the message names each failing group (`group gpu-2: 550.54.15 does not satisfy
>= 570`). CPU-only groups never decide a constraint on a cluster with GPUs.
"""


AKS_POOLS = """## AKS GPU pools (`--aks-gpu-pools pools.json`)

`aicr snapshot` and `aicr validate` take the file `az aks nodepool list -o json`
writes on the invoking machine (it never enters the cluster) and record, under
`K8s.aks-gpu-pools`, `gpu-pools` (how many GPU pools), `gpu-driver` and one
`pool.<name>` reading per GPU pool. GPU pools are those whose `vmSize` is an Azure
N-series size (`Standard_NC…`, `Standard_ND…`, `Standard_NG…`, `Standard_NV…`).
A missing or malformed file (not JSON, not a list, a pool without `name` or
`vmSize`, a `gpuProfile.driver` other than `Install` or `None`) is refused before
any cluster work (exit 2). With `-s`, the projection is added to the given
snapshot (replacing an earlier one).

| GPU pools | `gpu-driver` | gate |
|---|---|---|
| any has `gpuProfile.nvidia.managementMode: Managed` | `Managed` | fails closed, whatever the expression, naming each pool's state |
| every one `gpuProfile.driver: Install`, or none set (AKS's default driver-only profile) | `Install` | the constraint's expression decides |
| every one `gpuProfile.driver: None` | `None` | the constraint's expression decides |
| some `Install` (or unset), some `None` | `Mixed` | fails closed, whatever the expression, naming each pool's state |
| no GPU pool in the file | not recorded | fails: "the pool dump lists no GPU pool" |
| snapshot taken without the file | not recorded | fails: "reading unavailable — recapture the snapshot with the pool dump" |

`recipes/h100-aks-ubuntu-inference-dynamo.yaml` requires `K8s.aks-gpu-pools.gpu-driver: Install`.

`aicr snapshot --redact` passes the snapshot through the CNCF submission redaction
engine (docs/cncf-submission.md): node names (also in `K8s.node.<name>`), host and
cluster names, addresses, cloud ids and credentials become stable placeholders.
"""


ATTESTATION_FORMAT = """## Run attestation (`<report>.intoto.json`)

`aicr validate -o out/report.json --emit-attestation --attestation-key KEY` writes
`out/report.intoto.json`: a [DSSE](https://github.com/secure-systems-lab/dsse) v1
envelope (`payloadType: application/vnd.in-toto+json`, `payload` base64, `signatures`
`[{keyid, sig}]`; `keyid` is the hex SHA-256 of the public key's DER
SubjectPublicKeyInfo) over an in-toto Statement v1
(`_type: https://in-toto.io/Statement/v1`). It is written after the report, JUnit XML
and submission, through the same writer, even when the run failed (a verifier then
learns that it failed). Its path is checked writable before the run starts.

- `subject`: one entry per file the run wrote: the report, `--junit`, and every file
  of the `--evidence-dir` submission when one was written; `name` is the path relative
  to the attestation's folder, `digest.sha256` its hash.
- `predicateType`: `https://aicr.dev/attestation/validate-run/v1`. Version 1 of this
  predicate; a change that removes or renames a field gets a new version.
- `predicate`:

| field | meaning |
|---|---|
| `tool` | `{name: aicr, version}` |
| `catalog.digest.sha256` | the check catalog this build ships |
| `recipe`, `snapshot`, `config` | `{source, digest.sha256}` of the text as read (`null` when not given); a captured snapshot is hashed as the YAML `--snapshot-out` writes |
| `validatorImage` | `{ref, digest}`: the check image; `digest` is set when the reference pins one (`@sha256:`) |
| `cluster` | `server.sha256`: SHA-256 of the API server URL (the URL itself is not recorded; `null` with `--no-cluster`), `kubernetesVersion` from the snapshot |
| `run` | `id`, `startedOn`, `finishedOn` (UTC ISO 8601), `phases`, `noCluster`, `gate {evaluated, passed}`, `exitCode` |
| `checks` | `[{name, phase, status}]`, one per check of the report |
| `provenance` | the report's `extra.aicr.provenance` (below), or null for a report without one |

Keys: `aicr attestation keygen -o DIR` writes `aicr-attestation.key` (PKCS#8 PEM, no
passphrase, mode 0600) and `aicr-attestation.pub` (SubjectPublicKeyInfo PEM), ed25519
by default or ECDSA P-256 (`--algorithm ecdsa-p256`; signatures DER, SHA-256). An
existing key file is never replaced.

`aicr evidence verify --attestation FILE --key PUB` checks the signature, then every
subject's digest against the file beside the attestation, then that every subject that
is a CTRF report agrees with the predicate (validator image, catalog digest, the images
run and their digests, provenance, checks and their verdicts; a disagreement is rejected,
exit 8), then the recorded run: a
failed gate or a check that ended `failed` or `other` makes it exit 1.

Keyless signing through Sigstore (Fulcio certificate, Rekor transparency log) is not
offered: it needs an OIDC identity and network access to those services, which this
project's build and test machines do not have, so it could not be tested, and an
untested signing path would be worse than none. Sign with a local key and publish the
`.pub`; a keyless mode would keep this envelope and predicate and add a certificate.
"""


def formats_md() -> str:
    from aicr.catalog.model import Catalog
    from aicr.checks.workload_images import WorkloadImages
    from aicr.config import ValidateConfig
    from aicr.recipe.model import Recipe
    from aicr.snapshot.model import Snapshot

    out = [FORMATS_INTRO]
    seen: set[type[BaseModel]] = set()
    for title, model, note in [
        ("Recipe (`kind: RecipeResult`)", Recipe,
         "AICR's hydrated recipe. `validation.<phase>.checks` selects the checks; top-level "
         "`constraints` are the readiness gate, evaluated against the snapshot."),
        ("Snapshot (`kind: Snapshot`, header optional)", Snapshot,
         "What the cluster is. Constraint paths are `Type.subtype.key`; keys may contain "
         "dots and slashes (`OS.sysctl./proc/sys/kernel/osrelease`). Quote versions such as "
         "`\"22.10\"`: YAML reads an unquoted 22.10 as the number 22.1."),
        ("Validate config (`kind: ValidateConfig`)", ValidateConfig,
         "Given with `--config`. Vendor metadata and N/A justifications feed CNCF "
         "submissions; `checks.<name>` holds per-check settings."),
        ("Catalog (package data)", Catalog,
         "The checks aicr knows (`aicr check list`). Shipped inside the package."),
        ("Workload images (package data)", WorkloadImages,
         "`aicr/checks/images.yaml`: every image the checks' own workloads run, pinned; "
         "checks take their images from it and `aicr images list` prints it."),
    ]:
        out += [f"## {title}", "", note, ""]
        out += _model_section(model, seen)
    out += [SNAPSHOT_CAPTURE, AKS_POOLS, ATTESTATION_FORMAT]
    return "\n".join(out).rstrip() + "\n"


def _command_section(cmd: click.Command, path: str, ctx: click.Context) -> list[str]:
    lines = [f"## `{path}`", "", (cmd.help or "").split("\b")[0].strip(), ""]
    sub_ctx = click.Context(cmd, info_name=path.split()[-1], parent=ctx)
    # Hidden options are AICR flags that are refused; the AICR table documents them.
    params = [p for p in cmd.get_params(sub_ctx) if isinstance(p, click.Option) and not p.hidden]
    args = [p for p in cmd.params if isinstance(p, click.Argument)]
    if args:
        lines.append("Arguments: " + ", ".join(f"`{a.human_readable_name}`" for a in args))
        lines.append("")
    if params:
        lines += ["| option | env var | default | description |", "|---|---|---|---|"]
        for opt in params:
            names = ", ".join(f"`{o}`" for o in [*opt.opts, *opt.secondary_opts])
            if opt.multiple:
                names += " (repeatable)"
            env = f"`{opt.envvar}`" if isinstance(opt.envvar, str) else ""
            default = ""
            if opt.show_default and opt.default not in (None, (), False):
                default = f"`{opt.default}`"
            if isinstance(opt.type, click.Choice):
                default += (" " if default else "") + "one of " + ", ".join(
                    f"`{c}`" for c in opt.type.choices)
            desc = (opt.help or "").replace("|", "\\|")
            lines.append(f"| {names} | {env} | {default} | {desc} |")
        lines.append("")
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(sub_ctx):
            sub = cmd.get_command(sub_ctx, name)
            if sub is not None and not sub.hidden:
                lines += _command_section(sub, f"{path} {name}", sub_ctx)
    return lines


BOUNDS_INTRO = """## Input bounds

Recipes, snapshots, configs, reports, the AKS pool dump, `--data` values files,
attestation and key files, and everything `evidence verify` reads may come from
someone else, so each is read under the bounds below, whether it is a file, an
http(s) URL or a `cm://` ConfigMap. An input over a bound is refused before it is
parsed further: exit 2, one line naming the input and the bound, nothing created
in the cluster. A check pod reads its run input (`/etc/aicr/run`) under the same
bounds.

Change a bound with the root flag `aicr --limit NAME=VALUE ...` (repeatable; it
wins) or its environment variable. Sizes take `B`, `KiB`, `MiB`, `GiB` (or
`KB`, `MB`, `GB`); the deadline takes a duration (`45s`, `2m`); every value must
be above zero.

- **Size** is checked against the file's size before it is read, a URL's
  `Content-Length` and then the bytes received (decompressed), and a ConfigMap
  value's length.
- **The fetch deadline** covers a whole URL read (connect, redirects, headers,
  body) or ConfigMap read, however slowly the server sends.
- **YAML aliases** are allowed in every YAML input (Helm values files use
  anchors) but may add at most `alias-nodes` nodes when expanded; a recursive
  alias is refused. AICR's recipes use none.
- **Depth** counts nested collections (mappings and lists) in YAML, also through
  aliases, and in JSON.

Every duration flag and field (`--timeout`, recipe and config `timeout`, check
params that bound a wait) must be above zero, and so must counts
such as `--parallel`.

| bound | default | covers | environment variable |
|---|---|---|---|
"""


def bounds_md() -> str:
    from aicr import limits

    rows = [
        f"| `{b.name}` | {b.show(b.default)} | {b.covers} | `{b.env}` |"
        for b in limits.BOUNDS.values()
    ]
    return BOUNDS_INTRO + "\n".join(rows) + "\n"


def cli_md() -> str:
    from aicr.cli import compat
    from aicr.cli.root import cli

    # The root section lists the global options, then every subcommand in turn.
    parent = click.Context(click.Group("root"))
    out = [CLI_INTRO, bounds_md(), compat.markdown(), *_command_section(cli, "aicr", parent)]
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the docs are stale")
    args = parser.parse_args()
    stale = []
    for path, text in ((DOCS / "cli.md", cli_md()), (DOCS / "formats.md", formats_md())):
        current = path.read_text() if path.exists() else ""
        if current != text:
            stale.append(path.relative_to(REPO))
            if not args.check:
                path.write_text(text)
    if args.check and stale:
        print("stale: " + ", ".join(map(str, stale)) + " (run python hack/gen_docs.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
