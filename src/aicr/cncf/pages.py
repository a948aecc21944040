"""The human-readable files of a submission: PRODUCT.yaml, README.md, evidence/<id>.md.

Pure functions from the aggregation, the report, the recipe and the snapshot to text;
nothing here touches the file system.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

import yaml

from aicr import __version__
from aicr.cncf.aggregation import Aggregation, ReqStatus, RequirementResult
from aicr.cncf.export import ExportedCase
from aicr.cncf.requirements import RequirementSet
from aicr.ctrf import Report, Test
from aicr.recipe import Recipe
from aicr.snapshot import Snapshot
from aicr.trust import SIMULATED_BANNER, Trust, TrustClass

PRODUCT_FILE = "PRODUCT.yaml"
README_FILE = "README.md"
JUNIT_FILE = "junit.xml"
E2E_FILE = "e2e.log"
EVIDENCE_DIR = "evidence"
# Replaced by the redaction summary once every file has been redacted.
REDACTION_MARK = "<!-- aicr:redaction-summary -->"

# Evidence section keys shown first, in this order; any other key follows sorted.
SECTION_KEYS = ("asked", "answer", "body", "verdict")
# Shown in the steps table above the sections instead.
STEP_STATUS, STEP_TIME = "status", "timestamp"
TABLED = ("title", STEP_STATUS, STEP_TIME)
_BACKTICKS = re.compile(r"`{3,}")


def evidence_path(requirement_id: str) -> str:
    """The evidence page of a requirement, relative to the submission directory."""
    return f"{EVIDENCE_DIR}/{requirement_id}.md"


def run_id(report: Report) -> str | None:
    """The run id recorded in the report, if any (a hand-made report may have none)."""
    aicr = (report.extra or {}).get("aicr") or {}
    found = report.run_id or (aicr.get("runId") if isinstance(aicr, dict) else None)
    return str(found) if found else None


def shown_source(ref: str) -> str:
    """An input as the submission shows it: a URL or ``cm://`` as given, a file by its name.

    The submitter's folders are nobody's business and would not exist on a reviewer's machine.
    """
    if ref.startswith(("http://", "https://", "cm://")):
        return ref
    return PurePath(ref).name or ref


def observations(test: Test) -> list[Any]:
    """The evidence sections the check recorded (what it asked and what came back)."""
    sections = (test.extra or {}).get("evidence") or []
    return sections if isinstance(sections, list) else [sections]


def _utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_times(report: Report) -> list[tuple[str, str, str]]:
    """(label, value, source) of the run's start, end and duration, from ``summary``."""
    summary = report.results.summary
    seconds = max(0, summary.stop - summary.start) / 1000
    return [
        ("Run started", _utc(summary.start), "report.results.summary.start"),
        ("Run ended", _utc(summary.stop), "report.results.summary.stop"),
        ("Run duration", f"{seconds:.0f} s", "summary.stop - summary.start"),
    ]


def snapshot_capture(snapshot: Snapshot | None) -> str:
    """When and by what the snapshot was captured, as its metadata records it."""
    if snapshot is None:
        return "no snapshot"
    when = snapshot.metadata.get("timestamp") or "time not recorded in the snapshot"
    source = snapshot.metadata.get("source") or "source not recorded in the snapshot"
    return f"{when} ({source})"


def _q(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar: every value stays a string.
    return json.dumps(value, ensure_ascii=False)


def evidence_refs(res: RequirementResult, hybrid: bool) -> list[str]:
    """Evidence entries for one requirement; only files that show the claim.

    The page shows every status. From 1.37 an Implemented requirement also cites its
    test cases in junit.xml and e2e.log (they exist and passed); other statuses do not,
    since their checks may be absent from those files.
    """
    refs = [evidence_path(res.id)]
    if hybrid and res.status == ReqStatus.IMPLEMENTED:
        for check in res.checks:
            refs.append(f"file://{JUNIT_FILE}#{check.name}")
            refs.append(f"file://{E2E_FILE}#{check.name}")
    return refs


def note(res: RequirementResult, hybrid: bool, run: str | None) -> str:
    """The PRODUCT.yaml notes of one requirement; they claim only what the page shows."""
    page = evidence_path(res.id)
    if res.status == ReqStatus.NOT_APPLICABLE:
        return f"{res.justification} (Declared N/A in the validate config; see {page}.)"
    if res.status == ReqStatus.IMPLEMENTED:
        checks = ", ".join(
            f"{c.name} ({c.test.duration / 1000:.1f}s)" for c in res.checks if c.test
        )
        which = f"in run {run}" if run else "in the run"
        text = f"Every check aicr expects for this requirement ran and passed {which}: {checks}."
        blind = [c.name for c in res.checks if c.test and not observations(c.test)]
        if not blind:
            where = f"{page}" + (f", {JUNIT_FILE} and {E2E_FILE}" if hybrid else "")
            return f"{text} What each asked of the cluster and what came back: {where}."
        return (
            f"{text} The report holds no recorded observations for {', '.join(blind)}; "
            f"{page} shows the verdicts and what was recorded."
        )
    return "Not demonstrated by this run: " + "; ".join(res.reasons) + f". See {page}."


def product_yaml(
    reqs: RequirementSet,
    agg: Aggregation,
    metadata: dict[str, str],
    run: str | None,
    trust: Trust,
    cite_artifacts: bool,
) -> str:
    """PRODUCT.yaml: the template's spec in order, metadata quoted, statuses from ``agg``.

    ``cite_artifacts``: Implemented requirements also cite junit.xml and e2e.log (from
    1.37, and only when no test case in them fails: one failure fails the whole artifact).
    """
    which = f"run {run}" if run else "one run (its report records no run id)"
    lines = [
        "# Kubernetes AI Conformance Checklist",
        f"# Generated by aicr {__version__} from {which}. Every status follows the checks",
        "# the run recorded; see README.md for the platform facts and evidence/ for details.",
        f"# Trust class: {trust.cls.value} ({trust.why}).",
        *([f"# {SIMULATED_BANNER}"] if trust.cls == TrustClass.SIMULATED else []),
        "",
        "metadata:",
    ]
    banner = f"{SIMULATED_BANNER} " if trust.cls == TrustClass.SIMULATED else ""
    lines += [f"  {key}: {_q(value)}" for key, value in metadata.items()]
    lines += ["", "spec:"]
    for category in reqs.categories:
        lines.append(f"  {category}:")
        for req in (r for r in reqs.requirements if r.category == category):
            res = agg.result(req.id)
            assert res is not None
            lines += [
                f"    - id: {req.id}",
                f"      description: {_q(req.description)}",
                f"      level: {req.level.value}",
                f"      status: {_q(res.product_status)}",
                "      evidence:",
                *(f"        - {_q(ref)}" for ref in evidence_refs(res, cite_artifacts)),
                f"      notes: {_q(banner + note(res, cite_artifacts, run))}",
            ]
    return "\n".join(lines) + "\n"


def _fence(text: str, lang: str = "text") -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _value(value: Any) -> str:
    if isinstance(value, str):
        if "\n" in value or len(value) > 120:
            return "\n\n" + _fence(value)
        return f" {value}" if value else " (empty)"
    dumped = yaml.safe_dump(value, sort_keys=False, default_flow_style=False)
    return "\n\n" + _fence(dumped, "yaml")


def _steps(sections: list[Any]) -> list[str]:
    """The check's steps (sections with a status) as one table: what ran, how, when, why."""
    rows = [s for s in sections if isinstance(s, dict) and s.get(STEP_STATUS)]
    if not rows:
        return []
    out = ["| step | status | at | reason |", "|---|---|---|---|"]
    out += [
        f"| {_cell(str(s.get('title') or '-'))} | {_cell(str(s[STEP_STATUS]))} | "
        f"{_cell(str(s.get(STEP_TIME) or '-'))} | {_cell(str(s.get('verdict') or '-'))} |"
        for s in rows
    ]
    return [*out, ""]


def _sections(test: Test) -> list[str]:
    sections = observations(test)
    out: list[str] = _steps(sections)
    for i, section in enumerate(sections, 1):
        if not isinstance(section, dict):
            out += [f"#### Record {i}", _value(section).strip(), ""]
            continue
        title = str(section.get("title") or f"Record {i}")
        out.append(f"#### {title}")
        keys = [k for k in SECTION_KEYS if k in section]
        keys += sorted(k for k in section if k not in (*SECTION_KEYS, *TABLED))
        for key in keys:
            out.append(f"- **{key}**:{_value(section[key])}")
        out.append("")
    return out


def check_block(test: Test | None, name: str, planned: bool) -> list[str]:
    """The part of an evidence page about one check."""
    out = [f"### Check `{name}`", ""]
    if test is None:
        where = "planned by the recipe" if planned else "not planned by the recipe"
        out += [f"- Verdict: **missing**: the check is not in the run's report ({where}).", ""]
        return out
    extra = test.extra or {}
    out.append(f"- Verdict: **{test.status.value}**")
    if (test.message or "").strip():
        out.append(f"- Message: {(test.message or '').strip()}")
    out.append(f"- Duration: {test.duration / 1000:.2f} s")
    if test.phase:
        out.append(f"- Phase: {test.phase}")
    for key, label in (("reason", "Skip reason"), ("statusDetail", "Detail")):
        if extra.get(key):
            out.append(f"- {label}: {extra[key]}")
    out.append("")
    sections = _sections(test)
    if sections:
        out += ["#### What was asked of the cluster and what came back", "", *sections]
    else:
        out += [
            "The report holds no observations for this check: it records the verdict but "
            "not what was asked of the cluster or what came back (a report from an older "
            "aicr, or one made by hand).",
            "",
        ]
    out += _images_run(extra)
    if test.stdout:
        out += ["#### Captured output", "", _fence("\n".join(test.stdout)), ""]
    return out


def _images_run(extra: dict[str, Any]) -> list[str]:
    """Each container the check's pods ran, by the digest its status reported, or why none."""
    images = [i for i in extra.get("images") or [] if isinstance(i, dict)]
    if not images:
        return []
    out = ["#### Images run (the digest each pod's status reported)", ""]
    for i in images:
        ran = f"`{i['digest']}`" if i.get("digest") else f"no digest: {i.get('noDigest')}"
        where = f"`{i.get('pod')}` container `{i.get('container')}`"
        out.append(f"- {i.get('role')} {where}: `{i.get('image')}` ran {ran}")
    return [*out, ""]


def banner(trust: Trust) -> list[str]:
    """The lines that open every page of a simulated submission (none otherwise)."""
    return [f"> **{SIMULATED_BANNER}**", ""] if trust.cls == TrustClass.SIMULATED else []


def evidence_page(res: RequirementResult, version: str, trust: Trust) -> str:
    """evidence/<id>.md: the requirement, the checks expected and what each did."""
    req = res.requirement
    out = [
        f"# {req.id} ({req.level.value}): {res.product_status}",
        "",
        *banner(trust),
        f"CNCF Kubernetes AI Conformance v{version}, category `{req.category}`.",
        "",
        f"> {req.description}",
        "",
        "## Status",
        "",
        f"**{res.product_status}**. "
        + {
            ReqStatus.IMPLEMENTED: "Every expected check is in the run and passed.",
            ReqStatus.NOT_APPLICABLE: f"Declared N/A in the validate config: {res.justification}",
            ReqStatus.NOT_IMPLEMENTED: "Not demonstrated: " + "; ".join(res.reasons) + ".",
            ReqStatus.INCOMPLETE: "Incomplete: " + "; ".join(res.reasons) + ".",
        }[res.status],
        "",
        "## Checks expected",
        "",
    ]
    if not res.checks:
        out += ["No aicr check backs this requirement yet.", ""]
    else:
        out += ["| check | verdict | duration |", "|---|---|---|"]
        for c in res.checks:
            duration = f"{c.test.duration / 1000:.2f} s" if c.test else "-"
            out.append(f"| `{c.name}` | {c.verdict} | {duration} |")
        out.append("")
        for c in res.checks:
            out += check_block(c.test, c.name, c.planned)
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Fact:
    """One platform fact for README.md."""

    label: str
    value: str
    source: str


# (label, measurement type, key pattern): the first reading whose key matches wins.
FACT_READINGS: tuple[tuple[str, str, str], ...] = (
    ("Kubernetes version", "K8s", r"^server\.version$"),
    ("Node OS image", "K8s", r"(?i)osimage$"),
    ("Node OS image", "OS", r"^release\.PRETTY_NAME$"),
    ("Kernel", "OS", r"(?i)kernel/osrelease$|kernelversion$"),
    ("GPU model", "GPU", r"(?i)(model|product|product[._-]?name|gpu[._-]?name)$"),
    ("GPU driver", "GPU", r"(?i)driver([._-]?version)?$"),
    ("Container runtime", "K8s", r"(?i)containerruntime(version)?$|runtime[._-]?version$"),
    ("Container runtime", "SystemD", r"(?i)containerd.*version$"),
)


def platform_facts(snapshot: Snapshot | None) -> list[Fact]:
    """The facts the notes rely on, as the snapshot recorded them."""
    found: dict[str, Fact] = {}
    labels = list(dict.fromkeys(label for label, _, _ in FACT_READINGS))
    if snapshot is not None:
        for label, mtype, pattern in FACT_READINGS:
            if label in found:
                continue
            regex = re.compile(pattern)
            for m in snapshot.measurements:
                if m.type.value != mtype:
                    continue
                for sub in m.subtypes:
                    for key, value in sub.data.items():
                        if value is not None and regex.search(f"{sub.subtype}.{key}"):
                            found.setdefault(
                                label, Fact(label, str(value), f"{mtype}.{sub.subtype}.{key}")
                            )
        if "Node OS image" not in found:
            os_id = snapshot.reading("OS.release.ID")
            os_ver = snapshot.reading("OS.release.VERSION_ID")
            if os_id is not None:
                value = f"{os_id} {os_ver or ''}".strip()
                found["Node OS image"] = Fact("Node OS image", value, "OS.release.ID/VERSION_ID")
    return [found.get(label, Fact(label, "not recorded in the snapshot", "-")) for label in labels]


@dataclass(frozen=True)
class Inputs:
    """The inputs of the run as the README names them (see ``shown_source``)."""

    recipe: str
    snapshot: str | None  # None: captured live from the cluster
    config: str
    directory: str  # the submission directory's own name


def readme(
    *,
    reqs: RequirementSet,
    agg: Aggregation,
    report: Report,
    recipe: Recipe,
    snapshot: Snapshot | None,
    metadata: dict[str, str],
    inputs: Inputs,
    planned: list[str],
    exported: list[ExportedCase],
    verifier_revision: str,
    warnings: list[str],
    trust: Trust,
) -> str:
    """README.md: platform facts, the requirement table, other checks, how to reproduce."""
    run = run_id(report)
    tool = report.results.tool
    facts = platform_facts(snapshot)
    facts += [
        Fact("Recipe", shown_source(inputs.recipe), "--recipe"),
        Fact(
            "Snapshot",
            shown_source(inputs.snapshot) if inputs.snapshot else "captured live from the cluster",
            "--snapshot",
        ),
        Fact("Validate config", shown_source(inputs.config), "--config"),
        Fact("Recipe criteria", _criteria(recipe), "recipe.criteria"),
    ]
    if recipe.metadata and recipe.metadata.version:
        facts.append(
            Fact("Recipe hydrated by", f"aicr {recipe.metadata.version}", "recipe.metadata")
        )
    facts += [
        Fact("Run by", f"{tool.name} {tool.version or ''}".strip(), "report.results.tool"),
        Fact("Rendered by", f"aicr {__version__}", "this tool"),
    ]
    if run:
        facts.append(Fact("Run id", run, "report"))
    facts += [Fact(label, value, source) for label, value, source in run_times(report)]
    facts.append(
        Fact("Snapshot captured", snapshot_capture(snapshot), "snapshot.metadata.timestamp/source")
    )
    facts.append(Fact("Trust class", f"{trust.cls.value}: {trust.why}", "report.extra.aicr.trust"))
    name = f"{metadata.get('platformName', '')} {metadata.get('platformVersion', '')}".strip()
    vendor = metadata.get("vendorName", "").rstrip(".")
    out = [
        f"# {name}: CNCF Kubernetes AI Conformance v{reqs.version}",
        "",
        *banner(trust),
        f"Vendor: {vendor}. Every status in `PRODUCT.yaml` was decided "
        "by aicr from the checks of one run, fail closed: a requirement is Implemented only "
        "when every check that backs it ran and passed.",
        "",
        "## Platform facts the notes rely on",
        "",
        "| fact | value | from |",
        "|---|---|---|",
        *(f"| {f.label} | {_cell(f.value)} | `{f.source}` |" for f in facts),
        "",
    ]
    if not run:
        out += ["The report records no run id, so no run log can be matched to it by id.", ""]
    out += [
        *provenance_section(report),
        *_checks_summary(agg, planned, report),
        "## Requirements",
        "",
        "| requirement | level | status | checks |",
        "|---|---|---|---|",
        *(
            f"| [{r.id}]({evidence_path(r.id)}) | {r.requirement.level.value} | "
            f"{r.product_status} | {_checks_cell(r)} |"
            for r in agg.results
        ),
        "",
        "## Checks that back no requirement",
        "",
    ]
    unbacked = agg.unbacked_tests
    if unbacked:
        out += [
            "They decide no requirement; a failed one would have blocked this submission.",
            "",
            "| check | phase | status | message |",
            "|---|---|---|---|",
        ]
        out += [
            f"| `{t.name}` | {t.phase or '-'} | {t.status.value} | "
            f"{_cell(_first_line(t.message))} |"
            for t in unbacked
        ]
    else:
        out.append("None: every check of the run backs a requirement.")
    out += [
        "",
        "## Test artifacts",
        "",
        f"`{JUNIT_FILE}` and `{E2E_FILE}` hold one test case per check in the report "
        f"({len(exported)} in all), under aicr's check names, both built from the same report. "
        "A check that did not pass and sits behind N/A requirements only is "
        "exported as skipped with the reason; any other check that did not pass is a "
        "failure (a failed SHOULD check included), and then no requirement cites these "
        "files, since one failing test case fails a whole artifact.",
        "",
        *_reproduce(inputs, reqs.version),
        "## Verifier",
        "",
        f"Checked with `aicr evidence verify` against: {verifier_revision}.",
        "",
    ]
    if warnings:
        out += ["## Warnings", "", *(f"- {w}" for w in warnings), ""]
    out += ["## Redaction", "", REDACTION_MARK, ""]
    return "\n".join(out)


# (provenance key, column heading) of the README's node group table
GROUP_COLUMNS = (
    ("group", "group"),
    ("nodes", "nodes"),
    ("instanceType", "instance type"),
    ("nodeImage", "node image"),
    ("platformVersion", "platform version"),
    ("osImage", "OS image"),
    ("kernel", "kernel"),
    ("kubelet", "kubelet"),
    ("containerRuntime", "container runtime"),
    ("nvidiaDriver", "NVIDIA driver"),
)


def provenance_section(report: Report) -> list[str]:
    """What the results came from, as the run recorded it (``extra.aicr.provenance``)."""
    aicr = (report.extra or {}).get("aicr") or {}
    found = aicr.get("provenance") if isinstance(aicr, dict) else None
    out = ["## Provenance", ""]
    if not isinstance(found, dict):
        return [*out, "The report records no provenance (a report from an older aicr).", ""]
    catalog = (found.get("catalog") or {}).get("sha256") or "not recorded"
    out += [
        f"- Validator image: `{found.get('validatorImage') or 'not recorded'}`",
        f"- Check version: {found.get('checkVersion') or 'not recorded'} (checks ship "
        "inside the validator); catalog sha256 `" + str(catalog) + "`",
        "",
    ]
    out += _images_table(found)
    groups = [g for g in found.get("nodeGroups") or [] if isinstance(g, dict)]
    if not groups:
        return [*out, "No node was listed from the cluster (no check ran on one).", ""]
    out += [
        "| " + " | ".join(h for _, h in GROUP_COLUMNS) + " |",
        "|" + "---|" * len(GROUP_COLUMNS),
    ]
    out += [
        "| " + " | ".join(_cell(str(g.get(k, "-"))) for k, _ in GROUP_COLUMNS) + " |"
        for g in groups
    ]
    return [*out, ""]


def _images_table(found: dict[str, Any]) -> list[str]:
    """Every image the run's pods ran, by the digest the kubelet reported, or why none."""
    images = found.get("images")
    if images is None:
        return ["The report records no images run (a report from an older aicr).", ""]
    rows = [i for i in images if isinstance(i, dict)]
    if not rows:
        return ["No pod of the run reported a container status (no image is recorded).", ""]
    out = [
        "Images run, by the digest each pod's status reported (`imageID`):",
        "",
        "| role | image asked for | digest run | containers | checks |",
        "|---|---|---|---|---|",
    ]
    for i in rows:
        digest = f"`{i['digest']}`" if i.get("digest") else f"none: {i.get('noDigest')}"
        checks = ", ".join(str(c) for c in i.get("checks") or [])
        cells = [str(i.get("role")), f"`{i.get('image')}`", digest, str(i.get("containers"))]
        out.append("| " + " | ".join(_cell(c) for c in [*cells, checks]) + " |")
    return [*out, ""]


def _checks_summary(agg: Aggregation, planned: list[str], report: Report) -> list[str]:
    """How many checks the recipe planned and the report holds; every missing one by name."""
    in_report = {t.name for t in report.tests}
    missing = [c for c in planned if c not in in_report]
    out = [
        "## Checks",
        "",
        f"The recipe planned {len(planned)} checks for this submission; the report holds "
        f"{len(report.tests)} checks, {len(planned) - len(missing)} of them planned.",
    ]
    if missing:
        out += [
            "",
            f"Planned but missing from the report ({len(missing)}); a requirement they back "
            "is not Implemented:",
            "",
        ]
        for name in missing:
            backs = ", ".join(r.id for r in agg.reqs.backed_by(name)) or "no requirement"
            out.append(f"- `{name}` (backs {backs})")
    return [*out, ""]


def _reproduce(inputs: Inputs, version: str) -> list[str]:
    recipe, config = shown_source(inputs.recipe), shown_source(inputs.config)
    snapshot = f" --snapshot {shown_source(inputs.snapshot)}" if inputs.snapshot else ""
    where = f"v{version}/{inputs.directory}"
    out = [
        "## How to reproduce",
        "",
        "```sh",
        f"aicr validate --recipe {recipe}{snapshot} --config {config} \\",
        f"  --cncf-submission --evidence-dir {where} -o report.json",
        f"aicr evidence verify {where}",
        "```",
        "",
    ]
    if not inputs.snapshot:
        return [
            *out,
            "The snapshot was captured live; rendering again from `report.json` with "
            "`aicr evidence render` needs a snapshot of the cluster saved as a file.",
            "",
        ]
    return [
        *out,
        "Or render again from the report the run wrote:",
        "",
        "```sh",
        f"aicr evidence render --report report.json --recipe {recipe}{snapshot} "
        f"--config {config} --out {where}",
        "```",
        "",
    ]


def redaction_summary(counts: dict[str, int], classes: list[tuple[str, str]], engine: str) -> str:
    """The README's redaction section: every class scanned for, and how often each was found."""
    rows = "\n".join(f"| {cls} | {what} | {counts.get(cls, 0)} |" for cls, what in classes)
    found = sum(counts.values())
    return (
        "The run's data was redacted before any file was written. Values of these classes are "
        "replaced by placeholders that are consistent across the submission (`node-1`, "
        f"`ipv4-2`, ...), so the same value reads the same everywhere (engine: {engine}); "
        + ("nothing needed redacting." if not found else f"{found} values were replaced.")
        + f"\n\n| class | what | occurrences |\n|---|---|---|\n{rows}"
    )


def _criteria(recipe: Recipe) -> str:
    c = recipe.criteria
    if c is None:
        return "none"
    parts = [f"{k}={v}" for k, v in c.model_dump(exclude_none=True).items()]
    return ", ".join(parts) or "none"


def _checks_cell(res: RequirementResult) -> str:
    return ", ".join(f"`{c.name}` {c.verdict}" for c in res.checks) or "-"


def _first_line(text: str | None) -> str:
    stripped = (text or "").strip()
    return stripped.splitlines()[0] if stripped else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
