"""A fresh SSH key pair for the operator-less launch (mpirun logs in to the workers with it).

Made per run and kept only in the run's Secret, which the run deletes; never in evidence.
"""

from __future__ import annotations


def ed25519_pair() -> tuple[str, str]:
    """``(private key in OpenSSH format, public key as an authorized_keys line)``."""
    # cryptography costs about 50 ms to import: only a run that launches pays it.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    return private, f"{public} aicr-nccl\n"
