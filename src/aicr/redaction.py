"""Redaction: stable placeholders for sensitive values, applied to data before it is written.

Classes of sensitive text (addresses, node and host names, cluster names, cloud account
ids, GUIDs, GPU identifiers, serials, credentials, e-mail addresses) are alternatives of
one combined pattern, compiled once, so each text is scanned once whatever the number of
classes. Callers redact the values of a report or snapshot (``redact_value``) before any
writer serializes them, so every format shows the same redacted text and no escaping
(JSON, XML, YAML) can hide a value from a pattern.

Each distinct value gets one placeholder (``node-1``, ``ipv4-2``) shared by every text the
redactor sees, whatever its spelling: IPv6 addresses are canonicalised and GUIDs compared
without case, and a value keeps its placeholder whichever class found it first (a
subscription id in a resource id and the same id bare). Used by ``aicr.cncf`` and
``aicr.snapshot``, below both.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aicr.errors import InputError, Problem

try:  # RE2 scans in linear time, ~60x faster than `re` on this pattern (bench/cncf_render.py)
    import re2 as _engine  # type: ignore[import-untyped,unused-ignore]

    ENGINE = "re2"
except ImportError:  # pragma: no cover - the stdlib engine gives identical results, slower
    _engine = re
    ENGINE = "re"

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_H = r"[0-9A-Fa-f]{1,4}"
_UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
# A quote around a key or value may itself be escaped, as in JSON inside JSON (\") or XML.
_QUOTE = r"""(?:\\{0,3}["']|&quot;|&#34;|&apos;)?"""
_KEY_SEP = _QUOTE + r"\s*[:=]\s*" + _QUOTE
# A cloud resource name inside an id (EKS cluster, AKS managed cluster, GKE cluster).
_RESOURCE = r"[A-Za-z0-9][A-Za-z0-9_-]*"
# Azure resource group names: letters, digits, _ . ( ) -, not ending with a period.
_GROUP = r"[A-Za-z0-9_()-](?:[A-Za-z0-9_.()-]*[A-Za-z0-9_()-])?"
# A serial number has a digit; the shape alone is no proof, so it needs a "serial" key
# before it, or the value must be known from the run's structured data (see known_serials).
_SERIAL = r"[A-Za-z-]*[0-9][A-Za-z0-9-]{3,}"

# (class, pattern, placeholder prefix). Order matters where two classes could match at the
# same spot: the first alternative wins. A pattern may mark the part to replace with a
# group named ``v``; otherwise the whole match is replaced. Patterns avoid lookaround and
# backreferences so the same text also compiles under RE2-compatible engines.
BUILTIN_CLASSES: tuple[tuple[str, str, str], ...] = (
    ("jwt", r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", "jwt"),
    ("bearer-token", r"\b[Bb]earer\s+(?P<v>[A-Za-z0-9._~+/-]{8,}=*)", "token"),
    (
        "kubeconfig-credential",
        r"\b(?:token|client-key-data|client-certificate-data|password|id-token|refresh-token"
        r"|access-token|client-secret)" + _KEY_SEP + r"(?P<v>[^\s\"',}\\&]{4,})",
        "credential",
    ),
    ("gpu-uuid", r"(?i:\b(?:GPU|MIG)-)" + _UUID + r"\b", "gpu-uuid"),
    (
        "serial-number",
        r"(?i:\bserial(?:[ _-]?(?:number|num|no))?|\bS/N)(?:"
        + _KEY_SEP
        + r"|\s+|\s*#\s*)(?P<v>"
        + _SERIAL
        + r")\b",
        "sn",
    ),
    (
        "cloud-host",
        r"\b(?:[a-z0-9][a-z0-9-]*\.)+(?:compute\.internal|ec2\.internal"
        r"|c\.[a-z][a-z0-9-]*\.internal|internal\.cloudapp\.net|reddog\.microsoft\.com)\b"
        r"|\bip-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}\b"
        r"|\baks-[a-z0-9]+-[0-9]+-vmss[0-9a-z]{6}\b"
        r"|\bgke-[a-z0-9-]+-[0-9a-f]{8}-[a-z0-9]{4}\b",
        "host",
    ),
    (
        "cloud-account",
        r"\barn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:(?P<v>[0-9]{12})"
        r"|\b(?P<v5>[0-9]{12})\.dkr\.ecr\."
        r"|/subscriptions/(?P<v2>" + _UUID + r")"
        r"|\bprojects/(?P<v3>[a-z][a-z0-9-]{4,28}[a-z0-9])\b"
        r"|(?i:\b(?:aws[_-]?)?account[_-]?id|\bsubscription[_-]?id|\bproject[_-]?id|\btenant[_-]?id)"
        + _KEY_SEP
        + r"(?P<v4>[A-Za-z0-9-]{6,})",
        "account",
    ),
    (
        "cluster-name",
        r":cluster/(?P<v>" + _RESOURCE + r")"
        r"|\bkubernetes\.io/cluster/(?P<v2>" + _RESOURCE + r")"
        r"|(?i:/managedclusters/)(?P<v3>" + _RESOURCE + r")"
        r"|/(?:locations|zones)/[a-z0-9-]+/clusters/(?P<v4>" + _RESOURCE + r")",
        "cluster",
    ),
    (
        "resource-group",
        r"(?i:/resourcegroups/)(?P<v>" + _GROUP + r")"
        # AKS node resource groups, MC_<group>_<cluster>_<region>, wherever they stand
        r"|(?i:\bMC_)[A-Za-z0-9_.()-]*[A-Za-z0-9_()-]",
        "resource-group",
    ),
    # Azure tenant, subscription and object ids are bare GUIDs in any context (az output,
    # labels, tokens' claims); so are Kubernetes uids, which say nothing a reviewer needs.
    ("guid", r"\b" + _UUID + r"\b", "guid"),
    ("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b", "email"),
    (
        "ipv6",
        r"\b(?:" + _H + r":){7}" + _H + r"\b"
        r"|\b(?:" + _H + r":){1,6}:(?:" + _H + r":){0,5}" + _H + r"\b",
        "ipv6",
    ),
    ("ipv4", r"\b" + _OCTET + r"(?:\." + _OCTET + r"){3}\b", "ipv4"),
)
# Literal classes come first: a name the snapshot told us about beats any shape.
LITERAL_CLASSES = (
    ("known-secret", "secret"),
    ("node-name", "node"),
    ("cluster-name", "cluster"),
    ("serial-number", "sn"),
)
# What each class covers, for the README's redaction table (in this order).
CLASS_DESCRIPTIONS: dict[str, str] = {
    "node-name": "node and host names the snapshot and report name, and the nodes checks read",
    "cluster-name": "cluster names, also inside EKS ARNs, AKS and GKE resource ids",
    "resource-group": "Azure resource group names in resource ids, AKS MC_ node resource groups",
    "cloud-host": "EC2, GCE and Azure internal host names, AKS and GKE node names",
    "cloud-account": "AWS account ids, Azure subscription ids, GCP project ids",
    "guid": "Azure tenant, subscription and object ids and any other bare GUID",
    "gpu-uuid": "GPU and MIG UUIDs, in either case",
    "serial-number": "GPU and board serial numbers, after a serial or S/N key or wherever a "
    "known one stands (nvidia-smi -q, --query-gpu=serial)",
    "jwt": "JSON web tokens",
    "bearer-token": "bearer tokens",
    "kubeconfig-credential": "kubeconfig tokens, keys, certificates and passwords",
    "email": "e-mail addresses other than the configured contact",
    "ipv6": "IPv6 addresses",
    "ipv4": "IPv4 addresses",
}
# Keys whose values, anywhere in the snapshot or report, name a node, host or cluster.
NODE_KEYS = frozenset(
    {
        "node",
        "nodename",
        "node-name",
        "node_name",
        "nodes",
        "nodenames",
        "node-names",
        "node_names",
        "hostname",
        "host",
        "source-node",
        "sourcenode",
    }
)
CLUSTER_KEYS = frozenset({"cluster", "clustername", "cluster-name", "cluster_name"})
# Output of `nvidia-smi --query-gpu=...,serial,...`: the column list, and whether a header row
# precedes the values (``--format=csv`` without ``noheader``).
_QUERY = re.compile(r"--query-gpu[= ](\S+)")
_CSV_SERIAL = re.compile(r"^[0-9A-Za-z-]*[0-9][0-9A-Za-z-]{3,}$")
# RE2's DFA budget: the default 8 MiB falls back to a slower engine on big alternations.
RE2_MAX_MEM = 256 << 20
# Names shorter than this are too likely to occur as ordinary words.
MIN_LITERAL_LENGTH = 3
# What a placeholder looks like: a class's prefix and a number.
_PREFIXES = {p for _, _, p in BUILTIN_CLASSES} | {p for _, p in LITERAL_CLASSES} | {"redacted"}
_PLACEHOLDER = re.compile(
    ("(?:" + "|".join(re.escape(p) for p in sorted(_PREFIXES)) + ")-[0-9]+").encode()
)


@dataclass
class Redactor:
    """Redacts texts and data with placeholders that stay consistent across all it sees."""

    node_names: Iterable[str] = ()
    cluster_names: Iterable[str] = ()
    serials: Iterable[str] = ()
    known: Iterable[str] = ()  # values known to be secret (``evidence verify --known``)
    allow: Iterable[str] = ()
    extra_patterns: Iterable[str] = ()
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._allow = {a.encode() for a in self.allow if a}
        self._placeholders: dict[bytes, bytes] = {}  # canonical value -> placeholder
        self._issued: set[bytes] = set()  # placeholders given out: never redacted again
        self._next: Counter[str] = Counter()
        self._groups: dict[str, tuple[str, str]] = {}  # group name -> (class, prefix)
        self._inner: dict[str, list[str]] = {}  # group name -> its value groups
        parts: list[str] = []
        for (cls, prefix), names in zip(
            LITERAL_CLASSES,
            (self.known, self.node_names, self.cluster_names, self.serials),
            strict=True,
        ):
            literals = sorted(
                {n for n in names if len(n) >= MIN_LITERAL_LENGTH}, key=lambda n: (-len(n), n)
            )
            if literals:
                body = "|".join(re.escape(n) for n in literals)
                parts.append(self._group(cls, prefix, r"\b(?:" + body + r")\b"))
        for cls, pattern, prefix in BUILTIN_CLASSES:
            parts.append(self._group(cls, prefix, pattern))
        for i, pattern in enumerate(self.extra_patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InputError(
                    Problem(
                        f"not a regular expression: {exc}",
                        "config",
                        None,
                        f"spec.validate.redaction.patterns[{i}]",
                    )
                ) from None
            parts.append(self._group("custom", "redacted", f"(?:{pattern})"))
        self._pattern = _compile("|".join(parts))
        index = {
            k.decode() if isinstance(k, bytes) else k: v
            for k, v in self._pattern.groupindex.items()
        }
        self._by_index = {
            index[name]: (cls, prefix, [index[i] for i in self._inner[name]])
            for name, (cls, prefix) in self._groups.items()
        }

    def _group(self, cls: str, prefix: str, pattern: str) -> str:
        name = f"c{len(self._groups)}"
        self._groups[name] = (cls, prefix)
        # inner value groups get unique names per class
        self._inner[name] = [f"{name}_{v}" for v in re.findall(r"\(\?P<(v\d*)>", pattern)]
        pattern = re.sub(r"\(\?P<(v\d*)>", lambda m: f"(?P<{name}_{m[1]}>", pattern)
        return f"(?P<{name}>{pattern})"

    def _placeholder(self, cls: str, prefix: str, value: bytes) -> bytes:
        key = canonical(cls, value)
        found = self._placeholders.get(key)
        if found is None:
            self._next[prefix] += 1
            found = self._placeholders[key] = f"{prefix}-{self._next[prefix]}".encode()
            self._issued.add(found)
        return found

    @property
    def classes(self) -> list[tuple[str, str]]:
        """(class, what it covers) for every class this redactor scans for."""
        out = list(CLASS_DESCRIPTIONS.items())
        if any(cls == "custom" for cls, _ in self._groups.values()):
            out.append(("custom", "the config's spec.validate.redaction.patterns"))
        return out

    def _hits(self, data: bytes) -> Iterator[tuple[str, str, int, int]]:
        """(class, prefix, start, end) of every sensitive value in ``data``, in order."""
        # One span() per group read: RE2's Match checks the group count on every accessor
        # call, and these calls were a third of the large render (bench/cncf_render.py).
        for match in self._pattern.finditer(data):
            outer = match.lastindex
            cls, prefix, inner = self._by_index[outer]
            whole = start, end = match.span(outer)
            for group in inner:
                span = match.span(group)
                if span[0] >= 0:
                    start, end = span
                    break
            value = data[start:end]
            if value in self._issued:
                continue
            if self._allow and (value in self._allow or data[whole[0] : whole[1]] in self._allow):
                continue
            yield cls, prefix, start, end

    def find(self, data: bytes) -> Iterator[tuple[str, int]]:
        """(class, byte offset) of every sensitive value in ``data`` that is no placeholder.

        For the leak scan of a written submission, which knows no issued placeholders:
        a value shaped like one (``node-3``, ``credential-12``) is taken for one.
        """
        for cls, _, start, end in self._hits(data):
            if not _PLACEHOLDER.fullmatch(data[start:end]):
                yield cls, start

    def redact(self, text: str) -> str:
        """``text`` with every sensitive value replaced by its placeholder (one scan).

        Text without a sensitive value comes back as the very same object.
        """
        data = text.encode("utf-8", "surrogatepass")
        pieces: list[bytes] = []
        done = 0
        for cls, prefix, start, end in self._hits(data):
            self.counts[cls] += 1
            pieces.append(data[done:start])
            pieces.append(self._placeholder(cls, prefix, data[start:end]))
            done = end
        if not pieces:
            return text
        pieces.append(data[done:])
        return b"".join(pieces).decode("utf-8", "surrogatepass")

    def redact_lines(self, lines: list[str]) -> list[str]:
        """Captured output, one scan of the whole text; the same list when nothing changed."""
        text = "\n".join(lines)
        out = self.redact(text)
        if out is text:
            return lines
        if text.count("\n") == len(lines) - 1:
            return out.split("\n")
        return [self.redact(line) for line in lines]  # a line with a newline of its own

    def redact_value(self, value: Any) -> Any:
        """``value`` (str, list, mapping) with every string in it redacted.

        A string under a key is scanned with its key in front (``token: <value>``), so a
        class that needs a key before the value (credentials, account ids, serials) finds
        it in structured data as it does in text. Unchanged parts stay the same objects.
        """
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            if value and all(isinstance(v, str) for v in value):
                return self.redact_lines(value)
            items = [self.redact_value(v) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            changed = False
            for key, item in value.items():
                new = self._keyed(str(key), item) if isinstance(item, str) else None
                if new is None:
                    new = self.redact_value(item)
                new_key = self.redact(key) if isinstance(key, str) else key
                out[new_key] = new
                changed = changed or new is not item or new_key is not key
            return out if changed else value
        return value

    def _keyed(self, key: str, item: str) -> str:
        lead = f"{key}: "
        text = lead + item
        out = self.redact(text)
        if out is text:
            return item
        if out.startswith(lead):
            return out[len(lead) :]
        return self.redact(item)  # the key itself held a sensitive value: the value alone


def canonical(cls: str, value: bytes) -> bytes:
    """One spelling per value: IPv6 compressed and lower-case, GUIDs and UUIDs lower-case."""
    if cls == "ipv6":
        try:
            return ipaddress.IPv6Address(value.decode()).compressed.encode()
        except ValueError:
            return value.lower()
    if cls in ("guid", "gpu-uuid", "cloud-account"):
        return value.lower()
    return value


def _compile(pattern: str) -> Any:
    if _engine is re:
        return re.compile(pattern.encode())
    options = _engine.Options()
    options.max_mem = RE2_MAX_MEM
    return _engine.compile(pattern.encode(), options)


def known_names(*sources: Any) -> tuple[set[str], set[str]]:
    """Node/host names and cluster names found under telling keys anywhere in ``sources``.

    A Node object (``kind: Node``) anywhere in them names a node too.
    """
    nodes: set[str] = set()
    clusters: set[str] = set()

    def add(target: set[str], value: Any) -> None:
        if isinstance(value, str):
            if value.strip():
                target.add(value.strip())
        elif isinstance(value, list):
            for item in value:
                add(target, item)

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            if value.get("kind") == "Node":  # a Node object names itself in metadata.name
                add(nodes, (value.get("metadata") or {}).get("name"))
            for key, item in value.items():
                k = str(key).lower().rsplit(".", 1)[-1]
                if k in NODE_KEYS:
                    add(nodes, item)
                elif k in CLUSTER_KEYS:
                    add(clusters, item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for source in sources:
        walk(source)
    return nodes, clusters


def known_serials(*sources: Any) -> set[str]:
    """Serial numbers the run recorded: under a serial key, or in ``--query-gpu`` tables.

    Redacting these literally catches a serial wherever it stands, while a bare number
    (a timestamp, a byte count) that is no known serial is left alone.
    """
    found: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        keyed = "serial" in key.lower().rsplit(".", 1)[-1]
        if isinstance(value, Mapping):
            for k, item in value.items():
                walk(item, str(k))
        elif isinstance(value, list):
            try:
                text = "\n".join(value)  # captured output: one scan of the whole text
            except TypeError:
                for item in value:
                    walk(item, key)
                return
            if _mentions_serial(text):
                found.update(_query_serials(text))
            if keyed:
                found.update(v.strip() for v in value if _CSV_SERIAL.match(v.strip()))
        elif isinstance(value, str | int) and not isinstance(value, bool):
            text = str(value).strip()
            if keyed and _CSV_SERIAL.match(text):
                found.add(text)
            elif isinstance(value, str) and _mentions_serial(value):
                found.update(_query_serials(value))

    for source in sources:
        walk(source)
    return found


def _mentions_serial(text: str) -> bool:
    """Whether ``text`` may hold a serial column (Serial, serial, SERIAL; no regex: fast)."""
    return "erial" in text or "ERIAL" in text


def _query_serials(text: str) -> set[str]:
    """The serial column of every ``nvidia-smi --query-gpu`` CSV table in ``text``."""
    if "serial" not in text.lower():
        return set()
    found: set[str] = set()
    column: int | None = None
    width = 0
    header = False
    for line in text.splitlines():
        query = _QUERY.search(line)
        if query:
            names = [n.strip().lower() for n in query[1].split(",")]
            column = names.index("serial") if "serial" in names else None
            width, header = len(names), "noheader" not in line
            continue
        cells = [c.strip() for c in line.split(",")]
        if header and column is not None:
            header = False  # the header row names the columns, with units
            continue
        if column is not None and len(cells) == width and _CSV_SERIAL.match(cells[column]):
            found.add(cells[column])
        elif cells != [""]:
            column = None
        if column is None and "serial" in (c.lower() for c in cells):
            # a bare CSV table with a header row but no command line before it
            names = [c.lower() for c in cells]
            column, width = names.index("serial"), len(cells)
    return found
