"""The pure parts of nccl-all-reduce-bw's launch: the workloads for each launcher, as dicts.

Three ways to run ``all_reduce_perf`` over MPI across GPU nodes, most preferred first:

- ``trainjob``: Kubeflow Trainer: a TrainingRuntime of the check's own (namespaced,
  MPI policy: launcher and ``node`` replicated jobs) and a TrainJob on it; the
  Trainer's MPI plugin makes the SSH keys and the hostfile;
- ``mpijob``: a Kubeflow ``MPIJob`` (mpi-operator v2beta1), which does the same;
- ``job``: no operator: an indexed Job of workers behind a headless Service, a Secret
  with an SSH key pair made for the run, then a one-pod launcher Job.

In every case each worker is one pod per node with all its GPUs running the image's
``sshd``, and one launcher without GPUs runs ``mpirun`` with the fabric's environment
forwarded (``-x NAME``). The keys are mounted at ``SSH_MOUNT`` (the operators'
``sshAuthMountPath``; their file names ``id_rsa`` and ``authorized_keys``) and copied
into ``~/.ssh`` with the modes ssh insists on. Workers get the capabilities the
fabric needs (``IPC_LOCK`` for InfiniBand/EFA memory registration; the run then
labels the workload namespace privileged), never ``privileged`` or host
namespaces. The run's labels and the ``--node-selector``/``--toleration`` placement
reach every pod template, however deep the operator's object nests it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from aicr.checks.performance.nccl_all_reduce_bw.params import MPIRUN
from aicr.checks.probe_pods import place
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration
from aicr.kube.placement import Placement

Obj = dict[str, Any]
Launcher = Literal["trainjob", "mpijob", "job"]
IMAGE = "nccl-tests"  # in aicr/checks/images.yaml
NAME = "nccl"
WORKER = f"{NAME}-worker"
LAUNCHER = f"{NAME}-launcher"
SSH_SECRET = f"{NAME}-ssh"
SSH_MOUNT = "/etc/nccl-ssh"
PRIVATE_KEY, AUTHORIZED_KEYS = "id_rsa", "authorized_keys"  # as both operators name them
CONTAINER = "node"  # the container name the Trainer's MPI plugin acts on
ROLE_LABEL = "aicr.dev/nccl-role"
HOSTNAME_TOPOLOGY = "kubernetes.io/hostname"
MPI_API = "kubeflow.org/v2beta1"
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
TRAINER_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"  # "trainer": gets the command
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
    mpirun: str = MPIRUN  # called by its path, so Open MPI finds its orted on every host
    binary: str = "all_reduce_perf"
    env: dict[str, str] = field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    resources: dict[str, str] = field(default_factory=dict)  # per worker, e.g. EFA devices
    labels: dict[str, str] = field(default_factory=dict)  # the run's, onto every pod
    placement: Placement = field(default_factory=Placement)

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
            self.mpirun,
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
        # ssh starts the remote ranks without the image's ENV: forward what the test needs
        for name in ["PATH", "LD_LIBRARY_PATH", *sorted(set(self.env) - {"LD_LIBRARY_PATH"})]:
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


def _ssh_setup(files: str) -> str:
    return (
        f'mkdir -p "$HOME/.ssh" && for f in {files}; do cp "{SSH_MOUNT}/$f" "$HOME/.ssh/"; '
        'done && chmod 700 "$HOME/.ssh" && chmod 600 "$HOME/.ssh/"*'
    )


def worker_container(launch: Launch) -> Obj:
    """A worker: all the node's GPUs, the fabric's devices and capabilities, ``sshd`` in front."""
    limits = {GPU_RESOURCE: str(launch.gpus_per_node), **launch.resources}
    security: Obj = {"privileged": False, "allowPrivilegeEscalation": False}
    if launch.capabilities:
        security["capabilities"] = {"add": list(launch.capabilities)}
    return {
        "name": CONTAINER,
        "image": launch.image,
        "command": _shell(_ssh_setup(AUTHORIZED_KEYS), 'exec "$(command -v sshd)" -De'),
        "env": launch.container_env(),
        "resources": {"limits": dict(limits), "requests": dict(limits)},
        "securityContext": security,
    }


def launcher_container(launch: Launch, hosts: list[str] | None) -> Obj:
    """The launcher: no GPU; ``mpirun`` of the test over every worker."""
    return {
        "name": CONTAINER,
        "image": launch.image,
        "command": _shell(
            _ssh_setup(f"{AUTHORIZED_KEYS} {PRIVATE_KEY}"),
            "exec " + shlex.join(launch.mpirun_argv(hosts)),
        ),
        "env": launch.container_env(),
        "securityContext": {"privileged": False, "allowPrivilegeEscalation": False},
    }


def _template(launch: Launch, role: str, container: Obj, secret: bool) -> Obj:
    """A pod template: the run's labels and the role, tolerating GPU nodes, placed."""
    spec: Obj = {
        "restartPolicy": "Never",
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
        "tolerations": [gpu_toleration()],
        "containers": [container],
    }
    if role == "worker":  # one per node
        term = {
            "labelSelector": {"matchLabels": {ROLE_LABEL: role}},
            "topologyKey": HOSTNAME_TOPOLOGY,
        }
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    if secret:  # the operators mount their own Secret at SSH_MOUNT
        spec["volumes"] = [
            {"name": "ssh", "secret": {"secretName": SSH_SECRET, "defaultMode": 0o400}}
        ]
        container["volumeMounts"] = [{"name": "ssh", "mountPath": SSH_MOUNT, "readOnly": True}]
    placed = place({"kind": "Pod", "spec": spec}, launch.placement)["spec"]
    return {"metadata": {"labels": {**launch.labels, ROLE_LABEL: role}}, "spec": placed}


def worker_template(launch: Launch, secret: bool = False) -> Obj:
    """The workers' pod template."""
    return _template(launch, "worker", worker_container(launch), secret)


def launcher_template(launch: Launch, hosts: list[str] | None, secret: bool = False) -> Obj:
    """The launcher's pod template."""
    return _template(launch, "launcher", launcher_container(launch, hosts), secret)


# ---- job: no operator ----------------------------------------------------------------
def ssh_secret(private_key: str, public_key: str) -> Obj:
    """The SSH key pair the launcher logs in to the workers with."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SSH_SECRET},
        "type": "Opaque",
        "stringData": {PRIVATE_KEY: private_key, AUTHORIZED_KEYS: public_key},
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


def _job(name: str, pods: int, template: Obj) -> Obj:
    spec: Obj = {"completions": pods, "parallelism": pods, "backoffLimit": 0, "template": template}
    if pods > 1:  # indexed: each pod has a stable hostname, <job>-<index>
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def worker_job(launch: Launch) -> Obj:
    """One worker pod per node, all its GPUs, each reachable as ``<job>-<index>.<service>``."""
    template = worker_template(launch, secret=True)
    template["spec"]["subdomain"] = WORKER
    return _job(WORKER, launch.nodes, template)


def launcher_job(launch: Launch) -> Obj:
    """The one-pod Job whose ``mpirun`` runs the test across the workers."""
    return _job(LAUNCHER, 1, launcher_template(launch, worker_hosts(launch), secret=True))


# ---- mpijob: mpi-operator ------------------------------------------------------------
def mpijob(launch: Launch) -> Obj:
    """The MPIJob: the operator makes the keys and the hostfile, and starts the launcher."""

    def replica(count: int, template: Obj) -> Obj:
        return {"replicas": count, "restartPolicy": "Never", "template": template}

    return {
        "apiVersion": MPI_API,
        "kind": "MPIJob",
        "metadata": {"name": NAME},
        "spec": {
            "slotsPerWorker": launch.gpus_per_node,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": SSH_MOUNT,
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": replica(1, launcher_template(launch, None)),
                "Worker": replica(launch.nodes, worker_template(launch)),
            },
        },
    }


# ---- trainjob: Kubeflow Trainer ------------------------------------------------------
def training_runtime(launch: Launch) -> Obj:
    """The check's own MPI TrainingRuntime: a launcher, and ``node`` workers of this image."""

    def replicated(name: str, template: Obj, labels: dict[str, str]) -> Obj:
        return {
            "name": name,
            "replicas": 1,
            "template": {"metadata": {"labels": labels}, "spec": {"template": template}},
        }

    mpi = {
        "mpiImplementation": "OpenMPI",
        "numProcPerNode": launch.gpus_per_node,
        "runLauncherAsNode": False,
        "sshAuthMountPath": SSH_MOUNT,
    }
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainingRuntime",
        "metadata": {"name": NAME},
        "spec": {
            "mlPolicy": {"numNodes": launch.nodes, "mpi": mpi},
            "template": {
                "spec": {
                    "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                    "replicatedJobs": [
                        replicated(
                            "launcher",
                            launcher_template(launch, None),
                            {TRAINER_ANCESTOR: "trainer"},
                        ),
                        replicated("node", worker_template(launch), {}),
                    ],
                }
            },
        },
    }


def trainjob(launch: Launch) -> Obj:
    """The TrainJob on the check's TrainingRuntime, with one worker per node."""
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": NAME},
        "spec": {
            "runtimeRef": {
                "apiGroup": "trainer.kubeflow.org",
                "kind": "TrainingRuntime",
                "name": NAME,
            },
            "trainer": {"numNodes": launch.nodes},
        },
    }


def objects(launcher: Launcher, launch: Launch, keys: tuple[str, str]) -> list[Obj]:
    """What the check creates first: everything but the ``job`` path's launcher."""
    if launcher == "trainjob":
        return [training_runtime(launch), trainjob(launch)]
    if launcher == "mpijob":
        return [mpijob(launch)]
    return [ssh_secret(*keys), worker_service(), worker_job(launch)]


# ---- which pods are which ------------------------------------------------------------
def role_selector(role: Literal["launcher", "worker"]) -> str:
    """The label selector of the launcher's or the workers' pods (every path labels them)."""
    return f"{ROLE_LABEL}={role}"


def hostname(pod: Obj) -> str:
    """The hostname a pod's processes see (nccl-tests prints it up to the first dot)."""
    spec = pod.get("spec") or {}
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "").split(".")[0]


def choose(served: dict[str, list[str] | None]) -> tuple[Launcher, str]:
    """The launcher to use and why, from API discovery of the Trainer and mpi-operator APIs."""
    trainer = served.get(TRAINER_API) or []
    if {"trainjobs", "trainingruntimes"} <= set(trainer):
        return "trainjob", f"{TRAINER_API} serves trainjobs and trainingruntimes"
    why = f"{TRAINER_API} trainjobs/trainingruntimes not served"
    if "mpijobs" in (served.get(MPI_API) or []):
        return "mpijob", f"{why}; {MPI_API} serves mpijobs"
    return "job", f"{why}; {MPI_API} mpijobs not served: an indexed Job and a headless Service"
