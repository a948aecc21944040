from __future__ import annotations

import pytest

from aicr.cncf.redaction import Redactor, known_names

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
