"""A signed record of one run: which inputs went in, what came out, on which cluster.

``aicr validate --emit-attestation`` writes a DSSE envelope over an in-toto
Statement (``statement``), signed with a local key (``keys``, ``dsse``);
``aicr evidence verify --attestation`` checks it (``verify``).
"""

from aicr.attestation.statement import PREDICATE_TYPE

__all__ = ["PREDICATE_TYPE"]
