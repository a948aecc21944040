"""The pure parts of robust-controller: verdicts on the operator's objects and the API's answers.

No client and no I/O: functions of the API's dicts and error messages, tested as tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aicr.checks.conformance.robust_controller.operators import Operator, condition

Obj = dict[str, Any]
UNREACHABLE = "failed calling webhook"  # how the API server says it could not call one


@dataclass(frozen=True)
class Verdict:
    """One judged thing: whether it is right, what was seen, and why."""

    ok: bool
    answer: str
    reason: str


def deployment(dep: Obj | None, where: str) -> Verdict:
    """The controller Deployment has every wanted replica available (and at least one)."""
    if dep is None:
        return Verdict(False, "not found", f"no Deployment {where}")
    want = int((dep.get("spec") or {}).get("replicas", 1))
    have = int((dep.get("status") or {}).get("availableReplicas") or 0)
    available = condition(dep, "Available")
    answer = f"{have}/{want} replicas available, condition Available={available}"
    if want >= 1 and have >= want and available == "True":
        return Verdict(True, answer, f"{where} is available")
    return Verdict(False, answer, f"{where}: {have}/{want} replicas available")


def crds(found: dict[str, Obj | None]) -> Verdict:
    """Every CRD exists and is Established."""
    seen = {
        name: ("absent" if crd is None else f"Established={condition(crd, 'Established')}")
        for name, crd in found.items()
    }
    answer = "; ".join(f"{n}: {s}" for n, s in seen.items())
    bad = [n for n, s in seen.items() if s != "Established=True"]
    if bad:
        return Verdict(
            False, answer, "not established: " + ", ".join(f"{n} ({seen[n]})" for n in bad)
        )
    return Verdict(True, answer, f"{len(found)} CRDs established")


@dataclass(frozen=True)
class Hook:
    """A registered validating webhook and the configuration it is in."""

    config: str
    hook: Obj

    @property
    def policy(self) -> str:
        """Its failurePolicy (the API's default is Fail)."""
        return str(self.hook.get("failurePolicy") or "Fail")

    def describe(self) -> str:
        """Where the API server calls it, for evidence."""
        client = self.hook.get("clientConfig") or {}
        svc = client.get("service")
        target = (
            f"Service {svc.get('namespace')}/{svc.get('name')}:{svc.get('port', 443)}"
            f"{svc.get('path') or ''}"
            if svc
            else f"URL {client.get('url')}"
        )
        rules = "; ".join(
            f"{','.join(r.get('operations') or [])} {','.join(r.get('resources') or [])}"
            for r in self.hook.get("rules") or []
        )
        ca = "with" if client.get("caBundle") else "without"
        return (
            f"{self.hook.get('name')} in ValidatingWebhookConfiguration {self.config}: "
            f"{target} ({ca} a caBundle), failurePolicy {self.policy}, rules {rules}"
        )


def find_hook(configs: list[Obj], name: str) -> Hook | None:
    """The validating webhook called ``name`` in any configuration."""
    for config in configs:
        for hook in config.get("webhooks") or []:
            if hook.get("name") == name:
                return Hook(str((config.get("metadata") or {}).get("name")), hook)
    return None


def refusal(op: Operator, kind: str, error: str | None, hook: Hook | None) -> Verdict:
    """How the API server answered the invalid object (None: it was accepted).

    Only a denial that names the operator's webhook passes: the API server words
    it ``admission webhook "<name>" denied the request: ...``; a schema or
    built-in validation error has no such prefix.
    """
    if error is None:
        if hook is not None and hook.policy == "Ignore":
            return Verdict(
                False,
                "accepted (server-side dry run)",
                f"invalid {kind} accepted without webhook review ({op.webhook} "
                "has failurePolicy Ignore)",
            )
        return Verdict(
            False,
            "accepted (server-side dry run)",
            f"invalid {kind} accepted: {op.webhook} did not refuse it",
        )
    if f'admission webhook "{op.webhook}" denied the request' in error:
        return Verdict(True, error, f"refused by {op.webhook}, not by schema validation")
    if UNREACHABLE in error:
        return Verdict(False, error, f"webhook unreachable: {error}")
    if "admission webhook" in error:
        return Verdict(False, error, f"refused by another webhook, not {op.webhook}: {error}")
    return Verdict(
        False,
        error,
        f"refused before any webhook (schema or API validation), not by {op.webhook}: {error}",
    )


def children(objs: list[Obj], owner_kind: str) -> str:
    """The children seen, with who owns each, for evidence."""
    out = []
    for o in objs:
        meta = o.get("metadata") or {}
        owners = ",".join(
            f"{r.get('kind')}/{r.get('name')}" for r in meta.get("ownerReferences") or []
        )
        phase = (o.get("status") or {}).get("phase")
        out.append(
            f"{o.get('kind')} {meta.get('name')}"
            + (f" ({phase})" if phase else "")
            + (f" owned by {owners}" if owners else "")
        )
    return "; ".join(out) if out else f"no children of the {owner_kind}"
