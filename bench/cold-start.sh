#!/usr/bin/env bash
# Times the README's first command as a new user meets it (issue #26): `npm ci`, then `npm start` to its first
# view ("ready in"), then Ctrl-C (SIGINT to the demo's process group, as a terminal sends it) until everything has
# exited, and what was left running. Cold when the project's cache (~/.cache/nodemend, or under NODEMEND_CACHE_DIR or
# XDG_CACHE_HOME) and Go's build cache are empty, as on a fresh machine; to time a cold start on a used one, point
# both at empty directories (XDG_CACHE_HOME=... GOCACHE=... bash bench/cold-start.sh).
# Prints the figures; asserts nothing. Usage: bash bench/cold-start.sh [log dir, default a temporary one]
set -euo pipefail
cd "$(dirname "$0")/.."
logs=${1:-$(mktemp -d /tmp/nodemend-cold-start-XXXX)}
mkdir -p "$logs"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
cache=${NODEMEND_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodemend}
gocache=$(go env GOCACHE)
state() { [ -n "$(ls -A "$1" 2> /dev/null)" ] && echo "warm" || echo "cold"; }
echo "project cache $cache: $(state "$cache"); Go build cache $gocache: $(state "$gocache"); logs: $logs"
t0=$(now)
npm ci --no-audit --no-fund > "$logs/npm-ci.log" 2>&1
t1=$(now)
echo "npm ci: $(secs "$t0" "$t1") s"
setsid npm start > "$logs/npm-start.log" 2>&1 &
pid=$!
until grep -q "ready in" "$logs/npm-start.log"; do
  kill -0 "$pid" 2> /dev/null || { echo "npm start exited before its first view (see $logs/npm-start.log)"; exit 1; }
  sleep 0.5
done
t2=$(now)
echo "npm start -> first view: $(secs "$t1" "$t2") s ($(grep -o 'ready in [0-9.]* s' "$logs/npm-start.log"))"
grep -o 'done in [0-9hms]*' "$logs/npm-start.log" | sed 's/^/  control plane build: /' || true
sleep 10
t3=$(now)
kill -INT -- "-$pid"
while kill -0 "$pid" 2> /dev/null; do sleep 0.1; done
t4=$(now)
left=$(pgrep -f "nodemend|kube-apiserver|etcd --data-dir|kwok|fake-cloud" | grep -cv "^$$\$" || true)
echo "Ctrl-C -> all exited: $(secs "$t3" "$t4") s; processes left: $left"
