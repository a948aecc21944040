"""DSSE envelopes (Dead Simple Signing Envelope, v1.0): sign a payload, check a signature.

The signature covers the Pre-Authentication Encoding of payload type and payload,
so neither can be swapped without breaking it.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from aicr.attestation import keys

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSEv1 Pre-Authentication Encoding."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def envelope(
    payload: bytes, key: keys.PrivateKey, payload_type: str = IN_TOTO_PAYLOAD_TYPE
) -> dict[str, Any]:
    """A DSSE envelope over ``payload`` with one signature by ``key``."""
    signature = keys.sign(key, pae(payload_type, payload))
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [
            {
                "keyid": keys.key_id(key.public_key()),
                "sig": base64.b64encode(signature).decode("ascii"),
            }
        ],
    }


@dataclass(frozen=True)
class Opened:
    """An envelope read back: its payload, and whether a signature by the key checks."""

    payload_type: str
    payload: bytes
    signed: bool


class MalformedEnvelope(ValueError):
    """The document is not a DSSE envelope."""


def open_envelope(document: Any, key: keys.PublicKey) -> Opened:
    """Decode ``document`` and check its signatures against ``key``."""
    if not isinstance(document, dict):
        raise MalformedEnvelope("expected a JSON object (a DSSE envelope)")
    payload_type, payload, signatures = (
        document.get("payloadType"),
        document.get("payload"),
        document.get("signatures"),
    )
    if not isinstance(payload_type, str) or not isinstance(payload, str):
        raise MalformedEnvelope("payloadType and payload must be strings")
    if not isinstance(signatures, list) or not signatures:
        raise MalformedEnvelope("signatures must be a non-empty list")
    body = _b64(payload, "payload")
    message = pae(payload_type, body)
    signed = any(
        isinstance(s, dict)
        and isinstance(s.get("sig"), str)
        and keys.signature_ok(key, message, _b64(s["sig"], "signatures[].sig"))
        for s in signatures
    )
    return Opened(payload_type, body, signed)


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedEnvelope(f"{what} is not base64") from None
