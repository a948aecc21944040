"""inference-gateway: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from aicr.catalog.params import CheckParams
from aicr.document import Document


class SecretRef(Document):
    """A key of one Secret."""

    namespace: str = Field(min_length=1, description="The Secret's namespace.")
    name: str = Field(min_length=1, description="The Secret's name.")
    key: str = Field(min_length=1, description="The data key holding the header's value.")


class ApiKey(Document):
    """The API key the route requires."""

    secret_ref: SecretRef = Field(description="Where the header's full value is kept.")
    header: str = Field(min_length=1, description="The request header that carries it.")


class Params(CheckParams):
    """``spec.validate.checks.inference-gateway.params``."""

    gateway: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9-.]+/[a-z0-9-.]+$",
        description="The Gateway to test, as namespace/name (default: discovered).",
    )
    gateway_class: str | None = Field(
        default=None,
        min_length=1,
        description="Only Gateways of this GatewayClass.",
    )
    inference_extension: bool | None = Field(
        default=None,
        description="Require the Inference Extension's CRDs (default: when a recipe component's "
        "name contains inference-extension).",
    )
    api_key: ApiKey | None = Field(
        default=None,
        description="The route requires this API key: run the security probes.",
    )
    requests: int = Field(default=500, ge=20, description="Requests of the weighted split.")
    header_requests: int = Field(default=50, ge=1, description="Requests with the canary header.")
    weights: tuple[int, int] = Field(default=(70, 30), description="stable, canary weights.")
    tolerance_points: float = Field(
        default=5,
        gt=0,
        lt=50,
        description="Allowed distance of stable's share, in points.",
    )
    route_seconds: float = Field(
        default=60,
        gt=0,
        description="How long the route may take to be attached and served.",
    )
    request_seconds: float = Field(default=5, gt=0, description="Timeout of one request.")

    @model_validator(mode="after")
    def _weights(self) -> Params:
        if min(self.weights) < 1:
            raise ValueError("weights: both must be at least 1")
        return self
