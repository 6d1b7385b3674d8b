#!/usr/bin/env bash
# GPU device check: run on a machine with a real NVIDIA GPU (driver loaded; nv-hostengine optional).
# Loads the real libnvidia-ml.so.1 (and libdcgm.so.4) through @nodemend/dcgm-native and prints device count,
# fabric state, clock event reasons, retired pages / remapped rows and event registration, asserting the
# decoding invariants (bench/gpu-device-check.ts), incl. PCI info, health watches + a decoded dcgmHealthCheck and a
# level-1 DCGM diagnostic (DIAG_LEVEL=0 skips it). One run takes one to three minutes.
#
#   bench/gpu-device-check.sh                 # NVML + DCGM at localhost:5555
#   DCGM_ADDRESS=embedded bench/gpu-device-check.sh
#   NVML_LIBRARY=/usr/lib64/libnvidia-ml.so.1 bench/gpu-device-check.sh
#
# Exit codes: 0 ok, 1 invariant failed, 2 library missing (no NVIDIA driver), 3 a step timed out.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE=node_modules/.bin/node
if [[ ! -x $NODE ]]; then
  echo "node_modules missing: run npm ci in $(pwd) first" >&2
  exit 4
fi
echo "--- host"
uname -srm
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader || true
else
  echo "nvidia-smi: not installed"
fi
ls /dev/nvidia* 2>/dev/null | tr '\n' ' ' || true
echo
echo "--- check"
exec timeout "${CHECK_TIMEOUT_SECONDS:-300}" "$NODE" --conditions=source bench/gpu-device-check.ts "$@"
