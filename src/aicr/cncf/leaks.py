r"""The leak scan of a written submission: no value of a redaction class in any file.

Every file is scanned raw, once, by the redaction engine's combined pattern; each line
holding an escape (``\\``, ``&``, ``''``) is scanned again as JSON, XML and YAML would
read it, so a value a writer escaped cannot hide. Values known to be secret
(``evidence verify --known FILE``) are looked for too. Placeholders and the vendor's
own metadata (PRODUCT.yaml's ``metadata``, published on purpose) are no leak.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aicr import sources, yaml_io
from aicr.errors import BoundExceededError, FileFormatError
from aicr.limits import Kind
from aicr.redaction import Redactor

PRODUCT_FILE = "PRODUCT.yaml"
# A line with an escape some writer uses: JSON/YAML double-quoted (\), XML (&), YAML ('').
_ESCAPED_LINE = re.compile(rb"^[^\n]*(?:\\|&|'')[^\n]*$", re.MULTILINE)
_JSON_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")
_JSON_CHARS = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


@dataclass(frozen=True, order=True)
class Leak:
    """One value of a redaction class found in a file."""

    file: str
    line: int
    cls: str
    encoding: str

    def __str__(self) -> str:
        how = "" if self.encoding == "raw" else f" ({self.encoding}-escaped)"
        return f"{self.file}:{self.line}: a value of class {self.cls}{how}"


def read_known(path: str) -> list[str]:
    """Values known to be secret: one per line (blank lines and ``#`` comments ignored)."""
    text = sources.read(path, kind=Kind.KNOWN)
    return [s for line in text.splitlines() if (s := line.strip()) and not s.startswith("#")]


def scan(directory: Path, known: list[str] | None = None) -> list[Leak]:
    """Every leak in every file under ``directory``, sorted."""
    finder = Redactor(known=known or [], allow=_published(directory))
    leaks: set[Leak] = set()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix()
        leaks.update(scan_bytes(sources.read_bytes(str(path), kind=Kind.ARTIFACT), rel, finder))
    return sorted(leaks)


def scan_bytes(data: bytes, rel: str, finder: Redactor) -> set[Leak]:
    """The leaks in one file's bytes: one raw scan, then each escaped line decoded."""
    found: set[Leak] = set()
    line, at = 1, 0
    for cls, offset in finder.find(data):
        line += data.count(b"\n", at, offset)
        at = offset
        found.add(Leak(rel, line, cls, "raw"))
    line, at = 1, 0
    for match in _ESCAPED_LINE.finditer(data):
        line += data.count(b"\n", at, match.start())
        at = match.start()
        text = match.group().decode("utf-8", "replace")
        for encoding, decoded in _decodings(text):
            if decoded != text:
                for cls, _ in finder.find(decoded.encode("utf-8", "replace")):
                    found.add(Leak(rel, line, cls, encoding))
    return found


def _decodings(text: str) -> list[tuple[str, str]]:
    return [
        ("JSON", _JSON_ESCAPE.sub(_json_char, text)),
        ("XML", html.unescape(text)),
        ("YAML", _JSON_ESCAPE.sub(_json_char, text).replace("''", "'")),
    ]


def _json_char(match: re.Match[str]) -> str:
    code = match[1]
    if code.startswith("u") and len(code) == 5:
        return chr(int(code[1:], 16))
    return _JSON_CHARS.get(code, code)


def _published(directory: Path) -> list[str]:
    """The vendor metadata of PRODUCT.yaml: public on purpose, so never a leak."""
    try:
        text = sources.read(str(directory / PRODUCT_FILE), kind=Kind.PRODUCT)
        data: Any = yaml_io.parse(text, PRODUCT_FILE).data
    except BoundExceededError:
        raise  # refused as input (exit 2)
    except FileFormatError:
        return []
    metadata = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(metadata, dict):
        return []
    return [v for v in metadata.values() if isinstance(v, str)]
