"""Attestation keys: ed25519 or ECDSA P-256, PEM on disk, created without replacing any file.

The private key is PKCS#8 PEM without a passphrase (mode 0600): it signs in
unattended CI runs. The public key is SubjectPublicKeyInfo PEM; its key id is the
SHA-256 of its DER form, so an envelope names the key that signed it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from aicr import sources
from aicr.errors import FileFormatError, FlagConflictError, Problem
from aicr.limits import Kind

PRIVATE_NAME = "aicr-attestation.key"
PUBLIC_NAME = "aicr-attestation.pub"

PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey
_Key = TypeVar("_Key", PrivateKey, PublicKey)


class Algorithm(StrEnum):
    """The key types an attestation may be signed with."""

    ED25519 = "ed25519"
    ECDSA_P256 = "ecdsa-p256"


@dataclass(frozen=True)
class KeyPair:
    """Where ``keygen`` wrote the two halves."""

    private: Path
    public: Path


def key_id(public: PublicKey) -> str:
    """The SHA-256 of the public key's DER SubjectPublicKeyInfo, hex."""
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def generate(algorithm: Algorithm) -> PrivateKey:
    """A new private key."""
    if algorithm == Algorithm.ED25519:
        return ed25519.Ed25519PrivateKey.generate()
    return ec.generate_private_key(ec.SECP256R1())


def write_keypair(folder: Path, algorithm: Algorithm) -> KeyPair:
    """Write a new key pair into ``folder``; an existing key file is refused, never replaced."""
    pair = KeyPair(folder / PRIVATE_NAME, folder / PUBLIC_NAME)
    taken = [p for p in (pair.private, pair.public) if p.exists() or p.is_symlink()]
    if taken:
        hint = "keys are never replaced; move it away or choose another folder"
        raise FlagConflictError(
            [Problem(f"-o {folder}: {p.name} already exists", hint=hint) for p in taken]
        )
    key = generate(algorithm)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _create(pair.private, private_pem, 0o600)
        _create(pair.public, public_pem, 0o644)
    except OSError as exc:
        raise FileFormatError(
            Problem(f"cannot write the key pair: {exc.strerror or exc}", source=str(folder))
        ) from None
    return pair


def _create(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` exclusively (O_EXCL: a file that appeared meanwhile is not replaced)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as stream:
        stream.write(data)


def _read(path: str, flag: str) -> bytes:
    try:
        return sources.read_bytes(path, kind=Kind.KEY)
    except FileFormatError as exc:
        raise FileFormatError(
            [replace(p, problem=f"{flag}: {p.problem}") for p in exc.problems]
        ) from None


def load_private(path: str, flag: str = "--attestation-key") -> PrivateKey:
    """Read a PEM private key; anything but ed25519 or ECDSA P-256 is bad input (exit 2)."""
    try:
        key = serialization.load_pem_private_key(_read(path, flag), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise FileFormatError(
            Problem(f"{flag}: not an unencrypted PEM private key ({exc})", source=path)
        ) from None
    if isinstance(key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey):
        return _supported(key, path, flag)
    raise _unsupported(path, flag)


def load_public(path: str, flag: str = "--key") -> PublicKey:
    """Read a PEM public key (ed25519 or ECDSA P-256)."""
    try:
        key = serialization.load_pem_public_key(_read(path, flag))
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise FileFormatError(
            Problem(f"{flag}: not a PEM public key ({exc})", source=path)
        ) from None
    if isinstance(key, ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey):
        return _supported(key, path, flag)
    raise _unsupported(path, flag)


def _supported(key: _Key, path: str, flag: str) -> _Key:
    """``key`` when it is ed25519 or on curve P-256 (other EC curves are refused)."""
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) and not isinstance(
        key.curve, ec.SECP256R1
    ):
        raise _unsupported(path, flag)
    return key


def _unsupported(path: str, flag: str) -> FileFormatError:
    return FileFormatError(Problem(f"{flag}: expected an ed25519 or ECDSA P-256 key", source=path))


def sign(key: PrivateKey, message: bytes) -> bytes:
    """A signature over ``message`` (ECDSA: DER-encoded, SHA-256)."""
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(message)
    return key.sign(message, ec.ECDSA(hashes.SHA256()))


def signature_ok(key: PublicKey, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` over ``message`` checks against ``key``."""
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, message)
        else:
            key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True
