#!/usr/bin/env bash
# First start on a fresh clone (issue 11, item 5; issue 29, item 4): clones REPO (default /work/main)
# into a temporary directory, runs `npm ci` (whose `prepare` builds dist/ and the embedded database's
# template, as `npm install` does), then times `npm start` until GET /healthz answers: ROUNDS first
# starts (no data/), ROUNDS restarts, and one start with no dist/ (the compile a changed checkout pays).
# Each start is also given as a ratio to `node -e 0` timed just before it, so that a busy machine slows
# both alike. Stops each server it started, by its pid.
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
  local begin end server bare
  begin=$(date +%s.%N)
  node -e 0
  bare=$(echo "$(date +%s.%N) - $begin" | bc)
  begin=$(date +%s.%N)
  PORT=$PORT HOST=127.0.0.1 LOG_LEVEL=warn npm start >"$DIR/start.log" 2>&1 &
  local npm_pid=$!
  until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
    kill -0 "$npm_pid" 2>/dev/null || { cat "$DIR/start.log"; exit 1; }
    sleep 0.1
  done
  end=$(date +%s.%N)
  echo "$1: answered after $(echo "$end - $begin" | bc) s = $(echo "scale=1; ($end - $begin) / $bare" | bc) x node -e ($bare s)"
  local servers=()
  for server in $(pgrep -f 'dist/src/server.js'); do
    if [ "$(readlink "/proc/$server/cwd")" = "$PWD" ]; then servers+=("$server"); kill -TERM "$server"; fi
  done
  wait "$npm_pid" || true
  # npm may be gone before the server (the start script's shell ends first): the next round's
  # `rm -rf data` must not race the server's own shutdown, which still writes the database.
  for server in "${servers[@]}"; do
    while kill -0 "$server" 2>/dev/null; do sleep 0.05; done
  done
}

for _ in $(seq "$ROUNDS"); do
  rm -rf data
  time_start "first start (no data)"
done
for _ in $(seq "$ROUNDS"); do
  time_start "restart"
done
rm -rf dist data
time_start "start with no dist and no data (compiles, prepares the template)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
