#!/usr/bin/env bash
# First start on a fresh clone (issue 11, item 5): clones REPO (default /work/main) into a temporary
# directory, runs `npm ci`, then times `npm start` until GET /healthz answers: ROUNDS first starts
# (no dist/, no data/) and ROUNDS restarts. Stops each server it started, by its pid.
#   bash bench/footprint/first-start.sh [REPO]      ROUNDS=2 PORT=18090 by default
set -euo pipefail
REPO=${1:-/work/main}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-18090}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
git clone -q "$REPO" "$DIR/clone"
cd "$DIR/clone"
start=$(date +%s.%N)
npm ci --no-audit --no-fund >/dev/null 2>&1
echo "npm ci: $(echo "$(date +%s.%N) - $start" | bc) s"

time_start() {
  local begin end server
  begin=$(date +%s.%N)
  PORT=$PORT HOST=127.0.0.1 LOG_LEVEL=warn npm start >"$DIR/start.log" 2>&1 &
  local npm_pid=$!
  until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
    kill -0 "$npm_pid" 2>/dev/null || { cat "$DIR/start.log"; exit 1; }
    sleep 0.1
  done
  end=$(date +%s.%N)
  echo "$1: answered after $(echo "$end - $begin" | bc) s"
  for server in $(pgrep -f 'dist/src/server.js'); do
    if [ "$(readlink "/proc/$server/cwd")" = "$PWD" ]; then kill -TERM "$server"; fi
  done
  wait "$npm_pid" || true
}

for _ in $(seq "$ROUNDS"); do
  rm -rf dist data
  time_start "first start (no dist, no data)"
done
for _ in $(seq "$ROUNDS"); do
  time_start "restart"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
