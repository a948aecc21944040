from __future__ import annotations

import pytest

from aicr.redaction import Redactor, known_names

# One canary per class: (class, text around it, the secret that must not survive).
CANARIES = [
    ("ipv4", "pod IP 10.42.7.13 ready", "10.42.7.13"),
    ("ipv6", "listening on fd00:ab12:3::7 now", "fd00:ab12:3::7"),
    ("ipv6", "addr 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
     "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("node-name", "scheduled on gpu-worker-canary-7", "gpu-worker-canary-7"),
    ("cloud-host", "node ip-10-1-2-3.us-west-2.compute.internal Ready", "ip-10-1-2-3"),
    ("cloud-host", "host i-0abc.ec2.internal up", "i-0abc.ec2.internal"),
    ("cloud-host", "vm gpu-a.us-central1-a.c.my-secret-proj.internal", "my-secret-proj"),
    ("cloud-host", "vm node7.internal.cloudapp.net", "node7.internal.cloudapp.net"),
    ("cloud-host", "node aks-gpupool-12345678-vmss00000a Ready", "aks-gpupool-12345678-vmss00000a"),
    ("cluster-name", "cluster prod-canary-cluster healthy", "prod-canary-cluster"),
    ("cloud-account", "role arn:aws:iam::123456789012:role/node", "123456789012"),
    ("cloud-account", "image 210987654321.dkr.ecr.us-east-1.amazonaws.com/x", "210987654321"),
    ("cloud-account", "/subscriptions/0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7/resourceGroups/rg",
     "0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7"),
    ("cloud-account", "projects/canary-project-42/zones/x", "canary-project-42"),
    ("gpu-uuid", "GPU 0 (UUID: GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d)",
     "GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"),
    ("serial-number", "    Serial Number                   : 1654321098765", "1654321098765"),
    ("bearer-token", "Authorization: Bearer s3cr3tT0kenValue123", "s3cr3tT0kenValue123"),
    ("jwt", "id eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlX2NhbmFyeQ",
     "eyJhbGciOiJSUzI1NiJ9"),
    ("kubeconfig-credential", "    client-key-data: LS0tLS1CRUdJTiBSU0Eg", "LS0tLS1CRUdJTiBSU0Eg"),
    ("kubeconfig-credential", "    token: kubeadm-canary-token-abc", "kubeadm-canary-token-abc"),
    ("email", "contact ops-canary@corp.example.org today", "ops-canary@corp.example.org"),
]


def _redactor(**kw) -> Redactor:  # type: ignore[no-untyped-def]
    return Redactor(node_names=["gpu-worker-canary-7"], cluster_names=["prod-canary-cluster"],
                    allow=["conformance@example.com"], **kw)


@pytest.mark.parametrize(("cls", "text", "secret"), CANARIES,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CANARIES)])
def test_no_canary_survives(cls: str, text: str, secret: str) -> None:
    r = _redactor()
    out = r.redact(text)
    assert secret not in out
    assert r.counts[cls] >= 1


def test_ordinary_text_is_left_alone() -> None:
    text = ("driver 570.86.16 on v1.35.2 at 01:35:08; std::string; max_tokens: 512; "
            "tokens: 12; image nvcr.io/nvidia/cuda:12.4.1; contact conformance@example.com")
    r = _redactor()
    assert r.redact(text) == text
    assert sum(r.counts.values()) == 0


def test_placeholders_are_consistent_across_files() -> None:
    r = _redactor()
    a = r.redact("gpu-worker-canary-7 at 10.0.0.1 and 10.0.0.2")
    b = r.redact("again 10.0.0.2 then 10.0.0.1 on gpu-worker-canary-7")
    assert a == "node-1 at ipv4-1 and ipv4-2"
    assert b == "again ipv4-2 then ipv4-1 on node-1"
    assert r.counts["ipv4"] == 4 and r.counts["node-name"] == 2


def test_only_the_value_after_a_key_is_replaced() -> None:
    assert _redactor().redact("token: abcdefgh") == "token: credential-1"


def test_config_patterns_and_allow_list() -> None:
    r = _redactor(extra_patterns=[r"TICKET-[0-9]+"])
    r2 = Redactor(allow=["10.0.0.1"])
    assert r.redact("see TICKET-4411") == "see redacted-1"
    assert r2.redact("public 10.0.0.1 private 10.0.0.2") == "public 10.0.0.1 private ipv4-1"


def test_a_bad_config_pattern_is_an_input_error() -> None:
    from aicr.errors import InputError

    with pytest.raises(InputError) as exc:
        Redactor(extra_patterns=["(unclosed"])
    assert "spec.validate.redaction.patterns[0]" in str(exc.value)


def test_known_names_come_from_telling_keys_anywhere() -> None:
    nodes, clusters = known_names(
        {"source-node": "n-a", "nested": [{"nodeName": "n-b"}], "nodes": ["n-c"]},
        {"clusterName": "c-1", "other": "x"},
    )
    assert nodes == {"n-a", "n-b", "n-c"} and clusters == {"c-1"}


def test_known_names_include_node_objects_and_node_name_lists() -> None:
    nodes, _ = known_names(
        {"items": [{"kind": "Node", "metadata": {"name": "gpu-h100-0"}},
                   {"kind": "Pod", "metadata": {"name": "not-a-node"}}]},
        {"extra": {"nodeNames": ["gpu-h100-1"]}},
    )
    assert nodes == {"gpu-h100-0", "gpu-h100-1"}


def test_a_report_learned_node_keeps_token_boundaries() -> None:
    r = Redactor(node_names=["gpu-h100-0"])
    assert r.redact("gpu-h100-0 8; gpu-h100-0x; xgpu-h100-0; v1.35.2 at 01:35:08") == \
        "node-1 8; gpu-h100-0x; xgpu-h100-0; v1.35.2 at 01:35:08"


# Serial numbers wherever they stand, and cloud resource ids (issue: redaction misses).
SERIAL = "1654922012345"
MORE_CANARIES = [
    ("serial-number", f"board serial {SERIAL} seen", SERIAL),
    ("serial-number", f"serial number {SERIAL}", SERIAL),
    ("serial-number", f"Serial # {SERIAL}", SERIAL),
    ("serial-number", f'{{"gpu": {{"serial": "{SERIAL}"}}}}', SERIAL),
    ("cluster-name", "arn:aws:eks:us-west-2:123456789012:cluster/eks-secret-prod",
     "eks-secret-prod"),
    ("cluster-name", "tag kubernetes.io/cluster/eks-secret-prod: owned", "eks-secret-prod"),
    ("cluster-name", "/subscriptions/0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7/resourceGroups/rg-x"
     "/providers/Microsoft.ContainerService/managedClusters/aks-secret-prod", "aks-secret-prod"),
    ("cluster-name", "projects/canary-project-42/locations/us-central1/clusters/gke-secret-prod",
     "gke-secret-prod"),
    ("resource-group", "/subscriptions/0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7/resourceGroups/"
     "rg-secret-gpu/providers/x", "rg-secret-gpu"),
    ("resource-group", "azure:///subscriptions/0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7/"
     "resourcegroups/mc_rg-secret_aks_eastus/providers/Microsoft.Compute", "mc_rg-secret"),
]


@pytest.mark.parametrize(("cls", "text", "secret"), MORE_CANARIES,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(MORE_CANARIES)])
def test_serials_and_names_inside_cloud_ids_do_not_survive(cls: str, text: str,
                                                           secret: str) -> None:
    r = _redactor()
    out = r.redact(text)
    assert secret not in out
    assert r.counts[cls] >= 1


def test_every_part_of_a_cloud_id_is_redacted_with_stable_placeholders() -> None:
    r = Redactor(cluster_names=["eks-secret-prod"])
    arn = "arn:aws:eks:us-west-2:123456789012:cluster/eks-secret-prod"
    assert r.redact(arn) == "arn:aws:eks:us-west-2:account-1:cluster/cluster-1"
    assert r.redact("cluster eks-secret-prod") == "cluster cluster-1"
    aks = ("/subscriptions/0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7/resourceGroups/rg-gpu/providers/"
           "Microsoft.ContainerService/managedClusters/aks-prod")
    assert r.redact(aks) == ("/subscriptions/account-2/resourceGroups/resource-group-1/providers/"
                             "Microsoft.ContainerService/managedClusters/cluster-2")


NVIDIA_SMI_Q = f"""==============NVSMI LOG==============
Timestamp                                 : Mon Jun  1 10:00:00 2026
Driver Version                            : 570.86.16
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Serial Number                         : {SERIAL}
    GPU UUID                              : GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d
    FB Memory Usage
        Total                             : 81559 MiB
"""
QUERY_CSV = ["$ nvidia-smi --query-gpu=index,name,serial,memory.total --format=csv",
             "index, name, serial, memory.total [MiB]",
             f"0, NVIDIA H100 80GB HBM3, {SERIAL}, 81559 MiB",
             "1, NVIDIA H100 80GB HBM3, 1654922012346, 81559 MiB"]
QUERY_NOHEADER = ["nvidia-smi --query-gpu=serial,uuid --format=csv,noheader",
                  "1654922012347, GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"]


def test_serials_are_known_from_query_tables_and_serial_keys() -> None:
    from aicr.redaction import known_serials

    found = known_serials({"stdout": QUERY_CSV}, {"answer": "\n".join(QUERY_NOHEADER)},
                          {"gpu": {"serialNumber": "0321455012345", "timestamp": 1780000000000}},
                          {"stdout": NVIDIA_SMI_Q.splitlines()})
    assert found == {SERIAL, "1654922012346", "1654922012347", "0321455012345"}


def test_a_known_serial_is_redacted_wherever_it_stands() -> None:
    r = Redactor(serials=[SERIAL])
    out = r.redact(f"0, NVIDIA H100, {SERIAL}, 81559 MiB\nsee {SERIAL} above")
    assert SERIAL not in out and out.count("sn-1") == 2
    assert r.redact(NVIDIA_SMI_Q).count("sn-1") == 1


# What only looks like a serial stays: timestamps, durations, byte counts, versions, bandwidth.
LOOKALIKES = [
    "start 1780000000000 stop 1780000100000",
    '"duration": 1654922012, "durationMs": 1654922',
    "Total : 81559 MiB; 85520809984 bytes; 1654922012345678 B",
    "driver 570.86.16, CUDA 12.8, kernel 6.8.0-1021-aws, v1.35.2",
    "busbw 450.12 GB/s, algbw 392.4 GB/s, 1654922 MB/s",
    "Serial Number : N/A; serial console ready; serialized 12 objects",
]


@pytest.mark.parametrize("text", LOOKALIKES,
                         ids=["timestamps", "durations", "bytes", "versions", "bandwidth",
                              "words"])
def test_what_only_looks_like_a_serial_stays(text: str) -> None:
    r = Redactor(serials=[SERIAL])
    assert r.redact(text) == text
    assert sum(r.counts.values()) == 0


def test_every_class_is_listed_for_the_readme() -> None:
    classes = [cls for cls, _ in Redactor(extra_patterns=["X-[0-9]+"]).classes]
    assert {"serial-number", "cluster-name", "resource-group", "node-name", "ipv4",
            "custom"} <= set(classes)
    assert len(classes) == len(set(classes))
