#!/usr/bin/env bash
# Creates (or deletes) the nodemend kind cluster, loads the images `npm run images` built into its nodes and
# installs the Helm chart with them (kwok provider: kind has no cloud), plus a kwok controller so fake nodes work.
#
#   deploy/kind/up.sh              create the cluster, install kwok, load the images, install the chart
#   deploy/kind/up.sh --no-kwok    the same without kwok
#   deploy/kind/up.sh --no-chart   create the cluster (and kwok) only
#   deploy/kind/up.sh --down       delete the cluster
#
# Needs: docker (or podman with KIND_EXPERIMENTAL_PROVIDER=podman), kind >= 0.30, kubectl; for the chart also
# the images (`npm run images`: .nodemend/images/*.tar) and helm (`npm run helm:build` builds the pinned one).
# Then run tests against it:  NODEMEND_KUBECONFIG=.nodemend/kind-kubeconfig npm run test:cluster
set -euo pipefail
cd "$(dirname "$0")/../.."

CLUSTER=nodemend
KWOK_VERSION=v0.8.0 # keep in step with tools/cluster/versions.mjs
KUBECONFIG_OUT=.nodemend/kind-kubeconfig
IMAGES_DIR=.nodemend/images
kwok=1
chart=1
for arg in "$@"; do
  case "$arg" in
    --down) ;;
    --no-kwok) kwok=0 ;;
    --no-chart) chart=0 ;;
    *) echo "error: unknown argument $arg" >&2; exit 2 ;;
  esac
done

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

if [[ "$kwok" == 1 ]]; then
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

if [[ "$chart" == 1 ]]; then
  helm=$(node tools/helm/build.mjs 2>/dev/null | tail -1)
  [[ -x "$helm" ]] || helm=$(command -v helm) || { echo "error: no helm (npm run helm:build)" >&2; exit 1; }
  for name in agent controller; do
    archive="$IMAGES_DIR/$name.tar"
    [[ -f "$archive" ]] || { echo "error: $archive missing: run npm run images first" >&2; exit 1; }
    # The OCI archive names its image (ghcr.io/nodemend/<name>:<version>, the chart's default), which kind
    # imports into every node's containerd under that name; imagePullPolicy IfNotPresent then uses it.
    kind load image-archive "$archive" --name "$CLUSTER"
  done
  "$helm" upgrade --install nodemend deploy/helm/nodemend -n nodemend-system --create-namespace \
    --set controller.cloudProvider=kwok --kubeconfig "$KUBECONFIG_OUT" --wait --timeout 5m
fi

echo "kind cluster '$CLUSTER' ready; kubeconfig: $KUBECONFIG_OUT"
