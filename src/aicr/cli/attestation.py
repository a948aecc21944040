"""``aicr attestation``: make the key pair that signs run attestations."""

from __future__ import annotations

from pathlib import Path

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def attestation() -> None:
    """Keys for the signed attestations of aicr validate --emit-attestation."""


@attestation.command()
@click.option(
    "-o",
    "--output",
    "folder",
    required=True,
    type=click.Path(dir_okay=True, file_okay=False),
    help="Folder to write aicr-attestation.key and aicr-attestation.pub into.",
)
@click.option(
    "--algorithm",
    type=click.Choice(["ed25519", "ecdsa-p256"]),
    default="ed25519",
    show_default=True,
    help="Key type.",
)
def keygen(folder: str, algorithm: str) -> None:
    """Write a new signing key pair; existing key files are never replaced.

    The private key (mode 0600, no passphrase) goes to --attestation-key; hand the
    .pub to whoever verifies. Exit codes: 0 written, 2 a key file exists or the
    folder cannot be written.
    """
    from aicr.attestation.keys import Algorithm, write_keypair

    pair = write_keypair(Path(folder), Algorithm(algorithm))
    click.echo(f"private key: {pair.private}", err=True)
    click.echo(f"public key: {pair.public}", err=True)
