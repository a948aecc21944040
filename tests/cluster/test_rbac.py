"""RBAC is real: a ServiceAccount without rights is denied, one with a Role is allowed."""

from __future__ import annotations

import pytest
from harness import SimCluster
from kubernetes import client
from kubernetes.client.rest import ApiException


def test_service_account_without_rights_is_denied(cluster: SimCluster, namespace: str) -> None:
    cluster.core().create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="nobody"))
    )
    as_sa = client.CoreV1Api(cluster.api_as(cluster.token_for(namespace, "nobody")))
    with pytest.raises(ApiException) as denied:
        as_sa.list_namespaced_pod(namespace)
    assert denied.value.status == 403
    assert f"system:serviceaccount:{namespace}:nobody" in denied.value.body


def test_service_account_with_role_is_allowed_only_that(
    cluster: SimCluster, namespace: str
) -> None:
    cluster.apply(
        f"""
apiVersion: v1
kind: ServiceAccount
metadata: {{name: reader}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: pod-reader}}
rules:
- {{apiGroups: [""], resources: [pods], verbs: [get, list]}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: reader-pods}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}}
subjects:
- {{kind: ServiceAccount, name: reader, namespace: {namespace}}}
""",
        namespace=namespace,
    )
    as_sa = client.CoreV1Api(cluster.api_as(cluster.token_for(namespace, "reader")))
    assert as_sa.list_namespaced_pod(namespace).items == []
    with pytest.raises(ApiException) as denied:
        as_sa.list_namespaced_secret(namespace)
    assert denied.value.status == 403
    with pytest.raises(ApiException) as other_ns:
        as_sa.list_namespaced_pod("kube-system")
    assert other_ns.value.status == 403
