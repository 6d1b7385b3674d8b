#!/usr/bin/env bash
# Creates (or deletes) the nodemend kind cluster and, optionally, a kwok controller so fake nodes work too.
#
#   deploy/kind/up.sh            create the cluster, install kwok, write .nodemend/kind-kubeconfig
#   deploy/kind/up.sh --no-kwok  create the cluster only
#   deploy/kind/up.sh --down     delete the cluster
#
# Needs: docker (or podman with KIND_EXPERIMENTAL_PROVIDER=podman), kind >= 0.30, kubectl.
# Then run tests against it:  NODEMEND_KUBECONFIG=.nodemend/kind-kubeconfig npm run test:cluster
set -euo pipefail
cd "$(dirname "$0")/../.."

CLUSTER=nodemend
KWOK_VERSION=v0.8.0 # keep in step with tools/cluster/versions.mjs
KUBECONFIG_OUT=.nodemend/kind-kubeconfig

for tool in kind kubectl; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found on PATH" >&2; exit 1; }
done

if [[ "${1:-}" == "--down" ]]; then
  kind delete cluster --name "$CLUSTER"
  rm -f "$KUBECONFIG_OUT"
  exit 0
fi

mkdir -p .nodemend
if ! kind get clusters | grep -qx "$CLUSTER"; then
  kind create cluster --config deploy/kind/kind-config.yaml --wait 120s
fi
kind get kubeconfig --name "$CLUSTER" > "$KUBECONFIG_OUT"
export KUBECONFIG="$KUBECONFIG_OUT"

if [[ "${1:-}" != "--no-kwok" ]]; then
  # The release manifest's kwok manages Nodes annotated kwok.x-k8s.io/node=fake. @nodemend/cluster-harness's
  # createFakeNode sets that annotation (and the label the local cluster's kwok selects on), so the same
  # tests run against kind. Stages: the same set the local cluster uses (tools/cluster/kwok/stages.yaml:
  # node-initialize, a 2-4 s node-heartbeat, pod-ready/complete/delete), applied as Stage objects.
  base="https://github.com/kubernetes-sigs/kwok/releases/download/${KWOK_VERSION}"
  kubectl apply -f "${base}/kwok.yaml"
  kubectl wait --for=condition=Established crd/stages.kwok.x-k8s.io --timeout=60s
  kubectl apply -f tools/cluster/kwok/stages.yaml
  kubectl -n kube-system rollout status deployment/kwok-controller --timeout=120s
fi

echo "kind cluster '$CLUSTER' ready; kubeconfig: $KUBECONFIG_OUT"
