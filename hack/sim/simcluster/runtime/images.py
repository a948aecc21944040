"""What the process runtime runs for a container of each image the sim plays.

- a platform component's image (`components.registry`) runs the component's
  cached binary as its entrypoint (`argv`);
- the inference-perf check's load generator image (repository `aicr-aiperf`)
  runs its own command with the AIPerf installed in the sim cache first on
  PATH (`hack/sim/loadgen.sh`) and that install's Hugging Face cache, which
  holds one tokenizer, `TOKENIZER_REPO` (the check's `tokenizer` param names it);
- the vLLM image (repository `vllm-openai`) runs the stand-in server
  (`server`) instead of `vllm serve MODEL --port P [--served-model-name N]`,
  on the same port and model name, at the node's speed.

The speed is the node's: `TOKENS_PER_SECOND` per request and `FIRST_TOKEN_MS`,
changed by the node's GPU faults `inference-slow` (a quarter of the tokens per
second), `inference-slow-first-token` (the first token `SLOW_FIRST_TOKEN_MS`
late) and `model-loading` (the server is up but answers completions 503 for
`LOADING_SECONDS`).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simcluster.cluster import paths
from simcluster.components.registry import image_binary
from simcluster.gpu.model import node_faults
from simcluster.runtime.ownership import image_repo_name

LOADGEN_REPO = "aicr-aiperf"
SERVER_REPOS = ("vllm-openai",)
REPOS = (LOADGEN_REPO, *SERVER_REPOS)
TOKENIZER_REPO = "aicr-sim/tokenizer"  # loadgen.sh caches the stand-in tokenizer under it
TOKENS_PER_SECOND = 200.0
FIRST_TOKEN_MS = 20.0
SLOW_FACTOR = 4.0
SLOW_FIRST_TOKEN_MS = 1500.0
LOADING_SECONDS = 600.0
DEFAULT_PORT = 8000
FAULTS = ("inference-slow", "inference-slow-first-token", "model-loading")


def loadgen_dir() -> Path:
    """Where `hack/sim/loadgen.sh` installs the load generator for the current pins."""
    keyed = [
        paths.SIM_ROOT / name
        for name in ("loadgen-requirements.txt", "simcluster/serving/tokenizer.py")
    ]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in keyed)).hexdigest()[:12]
    return paths.cache_root() / f"aiperf-{paths.read_pins()['AIPERF_VERSION']}_{digest}"


def argv(container: dict[str, Any], sim_dir: Path, python: str) -> list[str]:
    """The container's command line, the image's entrypoint being the component's binary.

    As with a real image: `args` without `command` replace the image's default
    arguments; a `command` naming the binary (`/bin/prometheus`) runs the
    cached one; any other command runs as written.
    """
    command = [str(a) for a in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]
    found = image_binary(str(container.get("image", "")))
    if found is None:
        return [*command, *args]
    component, image = found
    if image.script is not None:  # a sim model: its flags come from the pod spec
        return [python, str(image.script), "--sim-dir", str(sim_dir), *command[1:], *args]
    binary = str(component.bin_dir() / image.binary)
    if not command:
        return [binary, *(args or image.args)]
    if command[0].rsplit("/", 1)[-1] == image.binary:
        return [binary, *command[1:], *args]
    return [*command, *args]


@dataclass(frozen=True)
class Played:
    """A container's command and environment as the sim runs it, or why it cannot."""

    argv: list[str]
    env: dict[str, str]
    problem: str | None = None


def plays(container: dict[str, Any]) -> bool:
    """True for the serving stand-in's and the load generator's images (`play`)."""
    return image_repo_name(container.get("image", "")) in REPOS


def _flag(argv: list[str], name: str) -> str | None:
    for i, word in enumerate(argv):
        if word == name and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def server_argv(argv: list[str], node: dict[str, Any], python: str) -> list[str]:
    """The stand-in's command for a `vllm serve MODEL ...` (or `--model MODEL`) command."""
    model = argv[2] if argv[:2] == ["vllm", "serve"] and len(argv) > 2 else _flag(argv, "--model")
    name = _flag(argv, "--served-model-name") or model or "model"
    port = _flag(argv, "--port") or str(DEFAULT_PORT)
    faults = node_faults(node)
    rate = TOKENS_PER_SECOND / (SLOW_FACTOR if "inference-slow" in faults else 1.0)
    first = SLOW_FIRST_TOKEN_MS if "inference-slow-first-token" in faults else FIRST_TOKEN_MS
    out = [
        python,
        "-m",
        "simcluster.serving.server",
        "--host",
        "0.0.0.0",
        "--port",
        port,
        "--model",
        name,
        "--tokens-per-second",
        str(rate),
        "--first-token-ms",
        str(first),
    ]
    if "model-loading" in faults:
        out += ["--mode", "slow-health", "--health-delay", str(LOADING_SECONDS)]
    return out


def play(
    container: dict[str, Any],
    argv: list[str],
    env: dict[str, str],
    node: dict[str, Any],
    python: str = sys.executable,
) -> Played:
    """How the runtime runs ``container`` (one of `REPOS`)."""
    if image_repo_name(container.get("image", "")) != LOADGEN_REPO:
        return Played(server_argv(argv, node, python), {**env, "PYTHONPATH": str(paths.SIM_ROOT)})
    home = loadgen_dir()
    if not (home / "complete").exists():
        return Played(
            argv,
            env,
            f"the load generator is not installed at {home}: "
            "run hack/sim/loadgen.sh (make sim-build does)",
        )
    path = f"{home / 'venv' / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    return Played(argv, {**env, "PATH": path, "HF_HOME": str(home / "hf")})
