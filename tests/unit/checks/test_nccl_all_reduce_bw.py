"""nccl-all-reduce-bw: nccl-tests' output read as printed, and every pinned outcome."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from aicr.checks.performance.nccl_all_reduce_bw import build
from aicr.checks.performance.nccl_all_reduce_bw.judge import Host, judge
from aicr.constraints import parse_gate
from aicr.parsers import ParseError
from aicr.parsers.nccl_tests import parse

SAMPLES = Path(__file__).parent / "nccl"
HOSTS = [Host("nccl-worker-0", "gpu-a", 8), Host("nccl-worker-1", "gpu-b", 8)]


def sample(name: str) -> str:
    return (SAMPLES / f"{name}-2x8-h100.txt").read_text()


def test_reads_ranks_table_and_summary() -> None:
    report = parse(sample("pass"))
    assert report.max_bytes == 17179869184
    assert [r.rank for r in report.ranks] == list(range(16))
    assert report.ranks[9].host == "nccl-worker-1" and report.ranks[9].device == 1
    assert report.ranks[9].bus == "0000:2a:00" and report.ranks[9].name == "NVIDIA H100 80GB HBM3"
    assert len(report.rows) == 5
    big = report.largest
    assert big is not None and big.size == 17179869184
    assert (big.out_of_place.busbw, big.in_place.busbw) == (157.29, 156.98)
    assert big.out_of_place.wrong == 0 and big.out_of_place.time_us == 204795
    assert report.avg_busbw == 114.589 and report.out_of_bounds == 0 and report.concluded
    assert report.incomplete() is None


def test_passes_at_the_gate_with_its_own_operator() -> None:
    v = judge(parse(sample("pass")), HOSTS, parse_gate(">= 150"))
    assert v.outcome == "passed" and v.busbw == 157.29 and v.size == 17179869184
    assert "157.29" in v.message and ">= 150" in v.message


def test_no_hidden_tolerance() -> None:
    # 157.29 is within 90% of 170; AICR's tolerance would pass it, the constraint does not.
    v = judge(parse(sample("pass")), HOSTS, parse_gate(">= 170"))
    assert v.outcome == "failed"
    assert "157.29" in v.message and ">= 170" in v.message
    assert judge(parse(sample("pass")), HOSTS, parse_gate("> 157.29")).outcome == "failed"
    assert judge(parse(sample("pass")), HOSTS, parse_gate("<= 157.29")).outcome == "passed"


def test_below_the_gate_fails_with_both_numbers() -> None:
    v = judge(parse(sample("slow")), HOSTS, parse_gate(">= 150"))
    assert v.outcome == "failed" and "61.4 GB/s" in v.message and ">= 150" in v.message


def test_wrong_data_fails_even_above_the_gate() -> None:
    v = judge(parse(sample("wrong")), HOSTS, parse_gate(">= 100"))
    assert v.outcome == "failed" and "2048 wrong elements" in v.message


def test_truncated_table_is_other() -> None:
    v = judge(parse(sample("truncated")), HOSTS, parse_gate(">= 100"))
    assert v.outcome == "other" and "truncated" in v.message


def test_missing_rank_is_other() -> None:
    text = "\n".join(line for line in sample("pass").splitlines() if "Rank 12 " not in line)
    v = judge(parse(text), HOSTS, parse_gate(">= 100"))
    assert v.outcome == "other"
    assert "ranks 12 of 16" in v.message and "nccl-worker-1 (node gpu-b)" in v.message


def test_rank_on_the_wrong_host_is_other() -> None:
    hosts = [HOSTS[0], Host("nccl-worker-2", "gpu-c", 8)]
    v = judge(parse(sample("pass")), hosts, parse_gate(">= 100"))
    assert v.outcome == "other" and "nccl-worker-2" in v.message
    assert "unknown host nccl-worker-1" in v.message


def test_no_output_is_not_nccl_tests_output() -> None:
    with pytest.raises(ParseError, match=r"^not nccl-tests output: .* 'ORTE was unable"):
        parse("ORTE was unable to reliably start one or more daemons.\n")


def test_per_iteration_columns_and_na() -> None:
    header = (
        "#       size         count      type   redop    root     time   algbw   busbw  "
        "#wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    "
        "i_min    i_max    i_p99    i_cv% "
    )
    row = (
        "     1048576        262144     float     sum      -1    40.12   26.14   49.01     "
        "N/A    39.00    42.00    41.90     1.20    40.50   25.89   48.54     N/A    39.10    "
        "43.00    42.80     1.30"
    )
    report = parse(f"{header}\n{row}\n")
    assert report.rows[0].out_of_place.busbw == 49.01 and report.rows[0].in_place.busbw == 48.54
    assert report.rows[0].out_of_place.wrong is None


@pytest.mark.parametrize("value", ["fast", ">= lots", ">= nan", ""])
def test_gate_must_be_a_number(value: str) -> None:
    with pytest.raises(ValueError):
        parse_gate(value)


LAUNCH = build.Launch(
    image="registry.example/nccl-tests:1",
    nodes=2,
    gpus_per_node=8,
    min_bytes="8",
    max_bytes="16G",
    path="/opt/bin:/usr/bin",
    env={"NCCL_IB_HCA": "mlx5"},
    capabilities=("IPC_LOCK",),
    resources={"rdma/ib": "1"},
    labels={"aicr.dev/run-id": "r1"},
)


def test_job_path_workers_one_per_node_all_gpus_never_privileged() -> None:
    job = build.worker_job(LAUNCH)
    spec = job["spec"]["template"]["spec"]
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == 2
    assert spec["subdomain"] == build.worker_service()["metadata"]["name"]
    assert job["spec"]["template"]["metadata"]["labels"]["aicr.dev/run-id"] == "r1"
    c = spec["containers"][0]
    assert c["resources"]["limits"] == {"nvidia.com/gpu": "8", "rdma/ib": "1"}
    assert c["securityContext"] == {"privileged": False, "allowPrivilegeEscalation": False,
                                    "capabilities": {"add": ["IPC_LOCK"]}}  # fmt: skip
    assert "hostNetwork" not in spec and "hostIPC" not in spec and "hostPID" not in spec
    anti = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["topologyKey"] == "kubernetes.io/hostname"


def test_launcher_runs_every_rank_with_the_fabric_env() -> None:
    argv = LAUNCH.mpirun_argv(build.worker_hosts(LAUNCH))
    assert argv[argv.index("-np") + 1] == "16"
    assert (
        argv[argv.index("--host") + 1] == "nccl-worker-0.nccl-worker:8,nccl-worker-1.nccl-worker:8"
    )
    assert argv[argv.index("NCCL_IB_HCA") - 1] == "-x"
    # by its path in the image; the image's library path goes to the ranks ssh starts
    assert argv[0] == "/opt/amazon/openmpi/bin/mpirun"
    assert argv[argv.index("LD_LIBRARY_PATH") - 1] == "-x"
    assert argv[-11:] == [
        "all_reduce_perf",
        "-b",
        "8",
        "-e",
        "16G",
        "-f",
        "2",
        "-g",
        "1",
        "-c",
        "1",
    ]
    script = build.launcher_job(LAUNCH)["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "exec /opt/amazon/openmpi/bin/mpirun" in script and "authorized_keys id_rsa" in script


def test_ssh_keys_are_fresh_openssh_keys() -> None:
    from aicr.checks.performance.nccl_all_reduce_bw.keys import ed25519_pair

    (priv1, pub1), (_, pub2) = ed25519_pair(), ed25519_pair()
    assert priv1.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    assert pub1.startswith("ssh-ed25519 ") and pub1 != pub2


@pytest.mark.parametrize(
    ("served", "chosen"),
    [
        (
            {build.TRAINER_API: ["trainjobs", "trainingruntimes"], build.MPI_API: ["mpijobs"]},
            "trainjob",
        ),
        ({build.TRAINER_API: ["trainjobs"], build.MPI_API: ["mpijobs"]}, "mpijob"),
        ({build.TRAINER_API: None, build.MPI_API: ["mpijobs"]}, "mpijob"),
        ({build.TRAINER_API: None, build.MPI_API: None}, "job"),
    ],
)
def test_launcher_detected_from_the_api(served: dict, chosen: str) -> None:
    launcher, why = build.choose(served)
    assert launcher == chosen and why


def pod_templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pod template in an MPIJob, TrainingRuntime or Job, where each API nests it."""
    spec = obj["spec"]
    if obj["kind"] == "MPIJob":
        return [r["template"] for r in spec["mpiReplicaSpecs"].values()]
    if obj["kind"] == "TrainingRuntime":
        return [
            r["template"]["spec"]["template"] for r in spec["template"]["spec"]["replicatedJobs"]
        ]
    return [spec["template"]]


@pytest.mark.parametrize("launcher", ["trainjob", "mpijob", "job"])
def test_every_path_labels_and_places_every_pod(launcher: build.Launcher) -> None:
    from aicr.kube.placement import Placement, Toleration

    placed = build.Launch(
        **{
            **LAUNCH.__dict__,
            "placement": Placement(
                {"pool": "h100"}, (Toleration(key="dedicated", value="gpu", effect="NoSchedule"),)
            ),
        }
    )
    made = build.objects(launcher, placed, ("k", "p"))
    if launcher == "job":
        made.append(build.launcher_job(placed))
    templates = [
        t
        for obj in made
        if obj["kind"] not in ("Secret", "Service", "TrainJob")
        for t in pod_templates(obj)
    ]
    roles = sorted(t["metadata"]["labels"][build.ROLE_LABEL] for t in templates)
    assert roles == ["launcher", "worker"]
    for t in templates:
        assert t["metadata"]["labels"]["aicr.dev/run-id"] == "r1"
        assert t["spec"]["nodeSelector"] == {"pool": "h100"}
        assert {
            "key": "dedicated",
            "value": "gpu",
            "effect": "NoSchedule",
            "operator": "Equal",
        } in (t["spec"]["tolerations"])
        script = t["spec"]["containers"][0]["command"][2]
        assert f"{build.SSH_MOUNT}/$f" in script and "chmod 600" in script


def test_operator_paths_leave_keys_and_hostfile_to_the_operator() -> None:
    mpi = build.mpijob(LAUNCH)
    assert mpi["spec"]["sshAuthMountPath"] == build.SSH_MOUNT
    assert mpi["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    assert mpi["spec"]["slotsPerWorker"] == 8
    launcher = mpi["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert "--host" not in launcher["command"][2] and "-np 16" in launcher["command"][2]
    runtime, job = build.objects("trainjob", LAUNCH, ("", ""))
    assert runtime["spec"]["mlPolicy"]["mpi"]["sshAuthMountPath"] == build.SSH_MOUNT
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["launcher", "node"]  # the names the MPI plugin knows
    assert jobs[0]["template"]["metadata"]["labels"] == {build.TRAINER_ANCESTOR: "trainer"}
    assert job["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
        "name": "nccl",
    }
    assert job["spec"]["trainer"] == {"numNodes": 2}


# ---- the check on fakes ---------------------------------------------------------------
sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube  # noqa: E402

from aicr.catalog import load_catalog  # noqa: E402
from aicr.checks import RunInputs, entrypoint  # noqa: E402
from aicr.config import EMPTY_CONFIG  # noqa: E402
from aicr.ctrf import Status  # noqa: E402
from aicr.recipe.load import parse_recipe  # noqa: E402

GATED = (
    "validation:\n  performance:\n    constraints:\n    - name: nccl-all-reduce-bw\n"
    "      value: '>= 150'\n    checks: [nccl-all-reduce-bw]\n"
)


def gpu_node(name: str, gpus: int = 8) -> dict[str, Any]:
    labels = {"nvidia.com/gpu.present": "true"}
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}},
    }


def cluster(
    nodes: int, log: str | None = None, workers_start: bool = True, launcher_ends: bool = True
) -> FakeKube:
    kube = FakeKube([gpu_node(f"gpu-{i}") for i in range(nodes)])

    def job_runs(job: dict[str, Any]) -> list[dict[str, Any]]:
        template = job["spec"]["template"]
        name, count = job["metadata"]["name"], job["spec"]["completions"]
        phase = "Running" if name == build.WORKER or not launcher_ends else "Succeeded"
        if name == build.WORKER and not workers_start:
            return []
        state = {"running": {}} if phase == "Running" else {"terminated": {"exitCode": 0}}
        return [
            {
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-{i}-x",
                    "namespace": job["metadata"]["namespace"],
                    "labels": dict(template["metadata"]["labels"]),
                },
                "spec": {
                    "hostname": f"{name}-{i}",
                    "nodeName": f"gpu-{i}",
                    "containers": template["spec"]["containers"],
                },
                "status": {
                    "phase": phase,
                    "containerStatuses": [
                        {
                            "name": "node",
                            "state": state,
                            "image": "nccl-tests:1",
                            "imageID": "nccl-tests@sha256:abc",
                        }
                    ],
                },
            }
            for i in range(count)
        ]

    kube.script["Job"] = job_runs
    kube.logs_of[f"{build.LAUNCHER}-0-x"] = log if log is not None else sample("pass")
    return kube


def check(kube: FakeKube, recipe: str = GATED, params: str = "") -> Any:
    from aicr.config import parse_config

    config = EMPTY_CONFIG
    if params:
        config = parse_config(
            "apiVersion: aicr.nvidia.com/v1alpha1\nkind: ValidateConfig\n"
            "spec:\n  validate:\n    checks:\n      nccl-all-reduce-bw:\n"
            f"        params: {params}\n"
        )
    spec = load_catalog().get("nccl-all-reduce-bw")
    assert spec is not None
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(recipe), config)
    return entrypoint.run_check("nccl-all-reduce-bw", inputs, kube=kube)


def test_check_passes_on_the_operatorless_path_and_cleans_up() -> None:
    kube = cluster(2)
    result = check(kube, params="{worker_start_seconds: 5, run_seconds: 5}")
    assert result.status == Status.PASSED, result.message
    assert "157.29" in result.message and "(job)" in result.message
    made = [c[1:] for c in kube.calls if c[0] == "create"]
    assert [m[0] for m in made] == ["Secret", "Service", "Job", "Job"]
    deleted = {c[3] for c in kube.calls if c[0] == "delete"}
    assert {build.WORKER, build.LAUNCHER, build.SSH_SECRET} <= deleted
    titles = [s.title for s in result.evidence]
    assert "launcher log" in titles and "images" in titles and "topology" in titles
    judged = next(s for s in result.evidence if s.title == "all-reduce bus bandwidth")
    where = "nccl-worker-1 on gpu-1 (8 GPUs): ranks 8-15; devices 0 [0000:18:00],1 [0000:2a:00]"
    assert where in judged.answer
    secret = "".join(s.answer for s in result.evidence)
    assert "PRIVATE KEY" not in secret


def test_ipc_lock_run_records_the_namespace_level_and_unprivileged_workers() -> None:
    kube = cluster(2)
    params = "{worker_start_seconds: 5, run_seconds: 5, capabilities: [IPC_LOCK]}"
    result = check(kube, params=params)
    assert result.status == Status.PASSED, result.message
    seen = next(s for s in result.evidence if s.title == "pod security")
    assert seen.answer.splitlines() == [
        "workload namespace Pod Security: privileged",
        "nccl-worker-0-x/node: privileged False, allowPrivilegeEscalation False, "
        "capabilities.add [IPC_LOCK], hostNetwork False",
        "nccl-worker-1-x/node: privileged False, allowPrivilegeEscalation False, "
        "capabilities.add [IPC_LOCK], hostNetwork False",
    ]
    default = next(s for s in check(cluster(2), params="{run_seconds: 5}").evidence
                   if s.title == "pod security")  # fmt: skip
    assert default.answer.splitlines()[0] == "workload namespace Pod Security: baseline"


def test_check_fails_below_the_gate() -> None:
    result = check(cluster(2, log=sample("slow")), params="{run_seconds: 5}")
    assert (
        result.status == Status.FAILED and "61.4" in result.message and ">= 150" in result.message
    )


def test_worker_that_never_starts_is_other() -> None:
    result = check(cluster(2, workers_start=False), params="{worker_start_seconds: 0.5}")
    assert result.status == Status.OTHER and "workers did not all start" in result.message


def test_one_gpu_node_skips_without_a_constraint_and_fails_with_one() -> None:
    assert check(cluster(1), recipe="{}").status == Status.SKIPPED
    assert "needs ≥ 2 GPU nodes" in check(cluster(1), recipe="{}").message
    gated = check(cluster(1))
    assert gated.status == Status.FAILED and ">= 150" in gated.message


def test_a_malformed_constraint_is_refused_before_any_job() -> None:
    from aicr.checks.performance.nccl_all_reduce_bw import preflight
    from aicr.errors import InputError

    with pytest.raises(InputError, match="nccl-all-reduce-bw"):
        preflight(parse_recipe(GATED.replace(">= 150", "fast")), None, "recipe.yaml")


@pytest.mark.parametrize(
    ("launcher", "served", "hostnames"),
    [
        ("mpijob", {build.MPI_API: ["mpijobs"]}, "nccl-worker-{i}"),
        ("trainjob", {build.TRAINER_API: ["trainjobs", "trainingruntimes"]}, "nccl-node-0-{i}"),
    ],
)
def test_operator_paths_run_on_the_pods_the_operator_makes(
    launcher: str, served: dict[str, list[str]], hostnames: str
) -> None:
    kube = FakeKube([gpu_node("gpu-0"), gpu_node("gpu-1")])
    kube.discovery.update(served)
    log = sample("pass").replace("nccl-worker-", hostnames.replace("{i}", ""))

    def operator_runs(obj: dict[str, Any]) -> list[dict[str, Any]]:
        # as mpi-operator or the Trainer (via JobSet) would: pods from the check's templates
        runtime = next(o for o in kube.objects if o["kind"] in ("TrainingRuntime", "MPIJob"))
        templates = {t["metadata"]["labels"][build.ROLE_LABEL]: t for t in pod_templates(runtime)}
        ns = obj["metadata"]["namespace"]

        def pod(name: str, host: str, node: str | None, role: str, phase: str) -> dict[str, Any]:
            state = {"running": {}} if phase == "Running" else {"terminated": {"exitCode": 0}}
            return {
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": dict(templates[role]["metadata"]["labels"]),
                },
                "spec": {"hostname": host, "nodeName": node},
                "status": {"phase": phase, "containerStatuses": [{"name": "node", "state": state}]},
            }

        workers = [
            pod(f"w{i}", hostnames.format(i=i), f"gpu-{i}", "worker", "Running") for i in range(2)
        ]
        return [*workers, pod("launch", "l", None, "launcher", "Succeeded")]

    kube.script["MPIJob" if launcher == "mpijob" else "TrainJob"] = operator_runs
    kube.logs_of["launch"] = log
    result = check(kube, params="{worker_start_seconds: 5, run_seconds: 5}")
    assert result.status == Status.PASSED, result.message
    assert result.message.endswith(f"({launcher})")
    assert next(s for s in result.evidence if s.title == "launcher").answer == launcher


@pytest.mark.parametrize(
    ("launcher", "served", "status", "why"),
    [
        ("trainjob", {build.TRAINER_API: ["trainjobs", "trainingruntimes"]}, None,
         "TrainJob nccl has no status: no operator reconciled it"),
        ("mpijob", {build.MPI_API: ["mpijobs"]},
         {"conditions": [{"type": "Created", "status": "False", "reason": "Invalid",
                          "message": "bad spec"}]},
         "MPIJob nccl: Created=False Invalid: bad spec"),
    ],
)  # fmt: skip
def test_an_operator_object_nothing_reconciles_is_other_with_its_status(
    launcher: str, served: dict[str, list[str]], status: dict[str, Any] | None, why: str
) -> None:
    kube = FakeKube([gpu_node("gpu-0"), gpu_node("gpu-1")])
    kube.discovery.update(served)
    if status is not None:  # the operator looked at it and said why it made nothing

        def judged(obj: dict[str, Any]) -> list[dict[str, Any]]:
            next(o for o in kube.objects if o["kind"] == obj["kind"])["status"] = status
            return []

        kube.script["MPIJob"] = judged
    result = check(kube, params="{worker_start_seconds: 0.5}")
    assert (result.status, result.message) == (
        Status.OTHER, f"workers did not all start within 0.5s: 0 of 2 worker pods exist; {why}"
    )  # fmt: skip


def test_topology_names_the_fabric_devices_each_node_advertises() -> None:
    from aicr.checks.performance.nccl_all_reduce_bw import evidence

    node = gpu_node("gpu-0")
    node["status"]["allocatable"] |= {"vpc.amazonaws.com/efa": "32", "cpu": "192",
                                      "hugepages-2Mi": "0"}  # fmt: skip
    nics = {"gpu-0": evidence.fabric_resources(node), "gpu-1": {}}
    assert evidence.topology({"gpu-0": 8, "gpu-1": 8}, nics) == (
        "gpu-0: 8 GPUs, vpc.amazonaws.com/efa 32; gpu-1: 8 GPUs (no NIC resource)")  # fmt: skip


def test_a_launcher_that_never_finishes_is_other_and_keeps_no_verdict() -> None:
    result = check(cluster(2, launcher_ends=False), params="{run_seconds: 0.5}")
    assert result.status == Status.OTHER
    assert result.message.startswith("the launcher did not finish within 0.5s: nccl-launcher-0-x")


def test_a_truncated_run_is_other_with_the_launcher_exit() -> None:
    result = check(cluster(2, log=sample("truncated")), params="{run_seconds: 5}")
    assert result.status == Status.OTHER and "truncated" in result.message
    assert any(s.title == "worker log nccl-worker-1-x" for s in result.evidence)


def test_capabilities_no_fabric_needs_are_refused_naming_the_field() -> None:
    from aicr.catalog.params import check_params
    from aicr.errors import SchemaError

    for cap in ("SYS_ADMIN", "NET_ADMIN", "ALL"):
        with pytest.raises(SchemaError) as err:
            check_params("nccl-all-reduce-bw", {"capabilities": ["IPC_LOCK", cap]}, None)
        text = str(err.value)
        assert "spec.validate.checks.nccl-all-reduce-bw.params.capabilities" in text
        assert f"{cap}: not a capability an NCCL fabric needs" in text and "IPC_LOCK" in text
    with pytest.raises(SchemaError, match="NCCL-IB"):
        check_params("nccl-all-reduce-bw", {"env": {"NCCL-IB": "1"}}, None)


def test_ipc_lock_makes_only_the_workload_namespace_privileged() -> None:
    from aicr.catalog.params import check_params

    rdma = check_params("nccl-all-reduce-bw", {"capabilities": ["cap_ipc_lock"]}, None)
    assert rdma.capabilities == ["IPC_LOCK"] and rdma.workload_pod_security() == "privileged"
    plain = check_params("nccl-all-reduce-bw", {"capabilities": ["NET_BIND_SERVICE"]}, None)
    assert plain.workload_pod_security() is None  # the catalog default: baseline


def test_dry_run_labels_the_nccl_workload_namespace_privileged_for_ipc_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from aicr.cli.main import run

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "kind: RecipeResult\napiVersion: aicr.nvidia.com/v1alpha1\ncomponentRefs: []\n" + GATED
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
        "    checks:\n      nccl-all-reduce-bw:\n        params: {capabilities: [IPC_LOCK]}\n"
    )

    def levels(*extra: str) -> dict[str, str]:
        code = run(["validate", "-r", str(recipe), "--dry-run", "--phase", "performance", *extra])
        out, err = capsys.readouterr()
        assert code == 0, err
        return {
            d["metadata"]["name"]: d["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
            for d in yaml.safe_load_all(out)
            if d["kind"] == "Namespace"
        }

    asked = levels("--config", str(config))
    workloads = [n for n in asked if n.endswith("-nccl-all-reduce-bw-w")]
    assert len(workloads) == 1 and asked[workloads[0]] == "privileged"
    assert [v for n, v in asked.items() if n not in workloads] == ["restricted"]  # the run's
    default = levels()
    assert [v for n, v in default.items() if n.endswith("-nccl-all-reduce-bw-w")] == ["baseline"]


def test_a_release_without_the_concluded_footer_is_judged_by_table_and_average() -> None:
    # before 2.16.7 nccl-tests ends with `# Avg bus bandwidth` and no `# Collective test concluded`
    text = "\n".join(line for line in sample("pass").splitlines() if "Collective test" not in line)
    v = judge(parse(text), HOSTS, parse_gate(">= 150"))
    assert v.outcome == "passed" and v.message.startswith("out-of-place busbw 157.29 GB/s at")


def test_a_memory_reduced_run_is_judged_at_the_largest_size_it_reached() -> None:
    # an A100-SXM4-40GB (totalGlobalMem 42505273344): nccl-tests 2.16.6+ cuts -e 16G to
    # (memory - 3 GiB reserve - 1 GiB) / 3 = 12736768682; doubling from 1 GiB stops at 8 GiB
    text = sample("pass").replace(
        "#\n# Using devices",
        "#\n# Reducing maxBytes to 12736768682 due to memory limitation\n#\n# Using devices",
    )
    text = "\n".join(line for line in text.splitlines() if not line.startswith(" 17179869184"))
    v = judge(parse(text), HOSTS, parse_gate(">= 130"))
    assert (v.outcome, v.size, v.busbw) == ("passed", 8589934592, 132.26)
