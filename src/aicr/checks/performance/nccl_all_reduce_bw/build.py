"""The pure parts of nccl-all-reduce-bw's launch: the workloads for each launcher, as dicts.

Three ways to run ``all_reduce_perf`` over MPI across GPU nodes, most preferred first:

- ``trainjob``: a Kubeflow Trainer ``TrainJob`` on the cluster's ClusterTrainingRuntime
  with an MPI policy (the Trainer's MPI plugin makes the SSH keys and the hostfile);
- ``mpijob``: a Kubeflow ``MPIJob`` (mpi-operator v2beta1; the operator does the same);
- ``job``: no operator: an indexed Job of workers (one per node, all its GPUs, ``sshd``)
  behind a headless Service, a Secret with a fresh SSH key pair, then a one-pod launcher
  Job running ``mpirun``.

In every case the workers run the image's ``sshd`` and one launcher runs ``mpirun``
with the fabric's environment forwarded (``-x NAME``); the worker containers get the
capabilities the fabric needs (``IPC_LOCK`` for InfiniBand/EFA memory registration) and
never ``privileged``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from aicr.checks.gpu import GPU_RESOURCE
from aicr.checks.probe_pods import gpu_toleration

Obj = dict[str, Any]
Launcher = Literal["trainjob", "mpijob", "job"]
IMAGE = "nccl-tests"  # in aicr/checks/images.yaml
NAME = "nccl"
WORKER = f"{NAME}-worker"
LAUNCHER = f"{NAME}-launcher"
SSH_SECRET = f"{NAME}-ssh"
SSH_MOUNT = "/etc/nccl-ssh"
CONTAINER = "node"  # the container name the Trainer's MPI plugin expects
ROLE_LABEL = "aicr.dev/nccl-role"
HOSTNAME_TOPOLOGY = "kubernetes.io/hostname"
MPI_API = "kubeflow.org/v2beta1"
JOBSET = "jobset.sigs.k8s.io"  # the Trainer runs a TrainJob as a JobSet
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
RSH_ARGS = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectionAttempts=10"


@dataclass(frozen=True)
class Launch:
    """What the check runs: how many nodes, their GPUs, the test's sizes, the fabric."""

    image: str
    nodes: int
    gpus_per_node: int
    min_bytes: str
    max_bytes: str
    path: str  # PATH inside the image: where mpirun, sshd and all_reduce_perf are
    binary: str = "all_reduce_perf"
    env: dict[str, str] = field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    resources: dict[str, str] = field(default_factory=dict)  # per worker, e.g. EFA devices
    labels: dict[str, str] = field(default_factory=dict)  # the run's, onto every pod

    @property
    def ranks(self) -> int:
        """Every GPU of every worker node is one rank."""
        return self.nodes * self.gpus_per_node

    def test_argv(self) -> list[str]:
        """``all_reduce_perf`` doubling from min to max bytes, one GPU per rank, data checked."""
        return [
            self.binary,
            "-b",
            self.min_bytes,
            "-e",
            self.max_bytes,
            "-f",
            "2",
            "-g",
            "1",
            "-c",
            "1",
        ]

    def mpirun_argv(self, hosts: list[str] | None) -> list[str]:
        """``mpirun`` over ``hosts`` (None: the operator's hostfile names them)."""
        argv = [
            "mpirun",
            "--allow-run-as-root",
            "-np",
            str(self.ranks),
            "--bind-to",
            "none",
            "--mca",
            "plm_rsh_args",
            RSH_ARGS,
        ]
        if hosts is not None:
            argv += ["--host", ",".join(f"{h}:{self.gpus_per_node}" for h in hosts)]
        for name in ["PATH", *sorted(self.env)]:
            argv += ["-x", name]
        return [*argv, *self.test_argv()]

    def container_env(self) -> list[Obj]:
        """The fabric's environment, and PATH for the image's tools."""
        return [
            {"name": "PATH", "value": self.path},
            *({"name": k, "value": v} for k, v in sorted(self.env.items())),
        ]


def worker_hosts(launch: Launch) -> list[str]:
    """The workers' DNS names in the operator-less path (indexed Job behind its Service)."""
    return [f"{WORKER}-{i}.{WORKER}" for i in range(launch.nodes)]


def _shell(*lines: str) -> list[str]:
    return ["/bin/sh", "-c", "set -eu\n" + "\n".join(lines)]


def _ssh_setup(private: bool) -> str:
    files = "authorized_keys id_ed25519" if private else "authorized_keys"
    return (
        f'mkdir -p "$HOME/.ssh" && for f in {files}; do cp "{SSH_MOUNT}/$f" "$HOME/.ssh/"; '
        'done && chmod 700 "$HOME/.ssh" && chmod 600 "$HOME/.ssh/"*'
    )


def worker_container(launch: Launch, ssh_setup: bool) -> Obj:
    """A worker: all the node's GPUs, the fabric's devices and capabilities, ``sshd`` in front."""
    limits = {GPU_RESOURCE: str(launch.gpus_per_node), **launch.resources}
    lines = [_ssh_setup(private=False)] if ssh_setup else []
    container: Obj = {
        "name": CONTAINER,
        "image": launch.image,
        "command": _shell(*lines, 'exec "$(command -v sshd)" -De'),
        "env": launch.container_env(),
        "resources": {"limits": dict(limits), "requests": dict(limits)},
        "securityContext": {"privileged": False, "allowPrivilegeEscalation": False},
    }
    if launch.capabilities:
        container["securityContext"]["capabilities"] = {"add": list(launch.capabilities)}
    return container


def launcher_container(launch: Launch, hosts: list[str] | None, ssh_setup: bool) -> Obj:
    """The launcher: no GPU; ``mpirun`` of the test over every worker."""
    lines = [_ssh_setup(private=True)] if ssh_setup else []
    return {
        "name": CONTAINER,
        "image": launch.image,
        "command": _shell(*lines, "exec " + shlex.join(launch.mpirun_argv(hosts))),
        "env": launch.container_env(),
        "securityContext": {"privileged": False, "allowPrivilegeEscalation": False},
    }


def _pod_spec(containers: list[Obj], secret: bool) -> Obj:
    spec: Obj = {
        "restartPolicy": "Never",
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
        "tolerations": [gpu_toleration()],
        "containers": containers,
    }
    if secret:
        spec["volumes"] = [
            {"name": "ssh", "secret": {"secretName": SSH_SECRET, "defaultMode": 0o400}}
        ]
        for c in containers:
            c["volumeMounts"] = [{"name": "ssh", "mountPath": SSH_MOUNT, "readOnly": True}]
    return spec


def _one_per_node(role: str) -> Obj:
    term = {"labelSelector": {"matchLabels": {ROLE_LABEL: role}}, "topologyKey": HOSTNAME_TOPOLOGY}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _template(launch: Launch, role: str, spec: Obj) -> Obj:
    return {"metadata": {"labels": {**launch.labels, ROLE_LABEL: role}}, "spec": spec}


# ---- job: no operator ----------------------------------------------------------------
def ssh_secret(private_key: str, public_key: str) -> Obj:
    """The SSH key pair the launcher logs in to the workers with."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SSH_SECRET},
        "type": "Opaque",
        "stringData": {"id_ed25519": private_key, "authorized_keys": public_key},
    }


def worker_service() -> Obj:
    """The headless Service that gives each worker pod its DNS name (before it is ready)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": WORKER},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {ROLE_LABEL: "worker"},
            "ports": [{"name": "ssh", "port": 22}],
        },
    }


def _job(launch: Launch, name: str, role: str, pods: int, spec: Obj) -> Obj:
    job_spec: Obj = {"completions": pods, "parallelism": pods, "backoffLimit": 0,
                     "template": _template(launch, role, spec)}  # fmt: skip
    if pods > 1:  # indexed: each pod has a stable hostname, <job>-<index>
        job_spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": job_spec}  # fmt: skip


def worker_job(launch: Launch) -> Obj:
    """One worker pod per node, all its GPUs, each reachable as ``<job>-<index>.<service>``."""
    spec = _pod_spec([worker_container(launch, ssh_setup=True)], secret=True)
    spec |= {"subdomain": WORKER, "affinity": _one_per_node("worker")}
    return _job(launch, WORKER, "worker", launch.nodes, spec)


def launcher_job(launch: Launch) -> Obj:
    """The one-pod Job whose ``mpirun`` runs the test across the workers."""
    spec = _pod_spec([launcher_container(launch, worker_hosts(launch), True)], secret=True)
    return _job(launch, LAUNCHER, "launcher", 1, spec)


# ---- mpijob: mpi-operator ------------------------------------------------------------
def mpijob(launch: Launch) -> Obj:
    """The MPIJob: the operator makes the keys and the hostfile, and starts the launcher."""
    launcher = _pod_spec([launcher_container(launch, None, ssh_setup=False)], secret=False)
    worker = _pod_spec([worker_container(launch, ssh_setup=False)], secret=False)
    worker["affinity"] = _one_per_node("worker")

    def replica(count: int, role: str, spec: Obj) -> Obj:
        return {
            "replicas": count,
            "restartPolicy": "Never",
            "template": _template(launch, role, spec),
        }

    return {
        "apiVersion": MPI_API,
        "kind": "MPIJob",
        "metadata": {"name": NAME},
        "spec": {
            "slotsPerWorker": launch.gpus_per_node,
            "mpiImplementation": "OpenMPI",
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": replica(1, "launcher", launcher),
                "Worker": replica(launch.nodes, "worker", worker),
            },
        },
    }


# ---- trainjob: Kubeflow Trainer ------------------------------------------------------
def mpi_runtime(runtimes: list[Obj]) -> str | None:
    """The first ClusterTrainingRuntime (by name) with an MPI policy, or None."""
    names = sorted(
        str(r["metadata"]["name"])
        for r in runtimes
        if ((r.get("spec") or {}).get("mlPolicy") or {}).get("mpi") is not None
    )
    return names[0] if names else None


def trainjob(launch: Launch, runtime: str) -> Obj:
    """The TrainJob on ``runtime``: ``numNodes`` workers with all their GPUs; mpirun first."""
    limits = {GPU_RESOURCE: str(launch.gpus_per_node), **launch.resources}
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": NAME, "labels": dict(launch.labels)},
        "spec": {
            "runtimeRef": {
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
                "name": runtime,
            },
            "labels": dict(launch.labels),
            "trainer": {
                "image": launch.image,
                "numNodes": launch.nodes,
                "numProcPerNode": launch.gpus_per_node,
                "command": launch.mpirun_argv(None),
                "env": launch.container_env(),
                "resourcesPerNode": {"limits": dict(limits), "requests": dict(limits)},
            },
        },
    }


# ---- which pods are which ------------------------------------------------------------
def role_selector(launcher: Launcher, role: Literal["launcher", "worker"]) -> str:
    """The label selector of the launcher's or the workers' pods on each path."""
    if launcher == "trainjob":
        replicated = "launcher" if role == "launcher" else "node"
        return f"{JOBSET}/jobset-name={NAME},{JOBSET}/replicatedjob-name={replicated}"
    return f"{ROLE_LABEL}={role}"


def hostname(pod: Obj) -> str:
    """The hostname a pod's processes see (nccl-tests prints it up to the first dot)."""
    spec = pod.get("spec") or {}
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "").split(".")[0]


def choose(served: dict[str, list[str] | None], runtime: str | None) -> tuple[Launcher, str]:
    """The launcher to use and why, from API discovery of the Trainer and mpi-operator APIs."""
    trainer = served.get(TRAINER_API)
    if trainer is not None and "trainjobs" in trainer:
        if runtime:
            return (
                "trainjob",
                f"{TRAINER_API} serves trainjobs; ClusterTrainingRuntime {runtime} has an MPI "
                "policy",
            )
        why = f"{TRAINER_API} is served but no ClusterTrainingRuntime has an MPI policy"
    else:
        why = f"{TRAINER_API} trainjobs not served"
    mpi = served.get(MPI_API)
    if mpi is not None and "mpijobs" in mpi:
        return "mpijob", f"{why}; {MPI_API} serves mpijobs"
    return "job", f"{why}; {MPI_API} mpijobs not served: an indexed Job and a headless Service"
