#!/usr/bin/env bash
# Deploy what hack/kind/recipe.yaml needs beyond a fresh kind cluster, and wait
# until it is ready: cert-manager from its release manifest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the one pin: the recipe's cert-manager component version
CERT_MANAGER_VERSION=$(python3 -c 'import sys, yaml
refs = yaml.safe_load(open(sys.argv[1]))["componentRefs"]
print(next(c["version"] for c in refs if c["name"] == "cert-manager"))' "$here/recipe.yaml")
kubectl apply -f "https://github.com/cert-manager/cert-manager/releases/download/$CERT_MANAGER_VERSION/cert-manager.yaml"
kubectl -n cert-manager wait --for=condition=Available deployment --all --timeout=300s
kubectl -n local-path-storage wait --for=condition=Available deployment --all --timeout=120s
kubectl -n kube-system wait --for=condition=Available deployment/coredns --timeout=120s
