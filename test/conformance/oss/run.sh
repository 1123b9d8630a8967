#!/usr/bin/env bash
# Runs the SDK conformance suite (test/conformance) against the open-source agent server: the
# `langgraph dev` server of @langchain/langgraph-api, installed from the npm registry into a
# temporary directory, serving agent.ts (the same graph as plumb's simulated one).
# Usage: test/conformance/oss/run.sh [vitest args]   (npm run conformance:oss)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill -- "-$server" 2>/dev/null || kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cp "$here/agent.ts" "$here/langgraph.json" "$here/package.json" "$work/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
# Runs take this long there (they end on their own: there is no clock to hold them).
export CONFORMANCE_RUN_MS="${CONFORMANCE_RUN_MS:-1500}"
# The server extracts the graph's schemas by compiling it with TypeScript, giving up after 30 s
# (a 500); on a shared 2-core machine that can take longer.
export LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS="${LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS:-110000}"
setsid bash -c "cd '$work' && exec npx langgraphjs dev --host 127.0.0.1 --port $port --no-browser --config langgraph.json" \
  >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 90); do
  curl -sf "http://127.0.0.1:$port/ok" >/dev/null && break
  sleep 1
done
if ! curl -sf "http://127.0.0.1:$port/ok" >/dev/null; then
  echo "the open-source agent server did not start:" >&2
  tail -40 "$work/server.log" >&2
  exit 1
fi
echo "open-source agent server: $(curl -s "http://127.0.0.1:$port/info")"
cd "$repo"
CONFORMANCE_URL="http://127.0.0.1:$port" npx vitest run test/conformance "$@"
