#!/usr/bin/env node
// Checks the package graph of SPEC §1: who may depend on whom, no cycles, no deep
// imports into another package's src/, and every @capgate import declared.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { DOC, renderGraph, withGraph } from "./graph-doc.mjs";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const groups = ["packages", "packages/capabilities", "apps", "bench", "tests", "examples"];

const packages = new Map(); // name -> { dir, deps:Set }
function addPackage(dir) {
  const file = join(dir, "package.json");
  if (!existsSync(file)) return;
  const pkg = JSON.parse(readFileSync(file, "utf8"));
  const deps = new Set(
    [pkg.dependencies, pkg.peerDependencies, pkg.devDependencies, pkg.optionalDependencies]
      .flatMap((d) => Object.keys(d ?? {}))
      .filter((n) => n.startsWith("@capgate/") || n === "capgate"),
  );
  packages.set(pkg.name, { dir, deps, pkg });
}
for (const g of groups) {
  const abs = join(root, g);
  if (!existsSync(abs)) continue;
  if (existsSync(join(abs, "package.json"))) addPackage(abs);
  for (const entry of readdirSync(abs)) {
    const d = join(abs, entry);
    if (statSync(d).isDirectory() && existsSync(join(d, "package.json"))) addPackage(d);
  }
}

const CORE = [
  "@capgate/errors",
  "@capgate/schema",
  "@capgate/shell-policy",
  "@capgate/registry",
  "@capgate/router",
  "@capgate/profiles",
  "@capgate/tools",
  "@capgate/process-group",
  "@capgate/workspace",
  "@capgate/net-guard",
  "@capgate/sandbox",
  "@capgate/mcp-client",
  "@capgate/models",
  "@capgate/loop",
];
const isCapability = (n) => n.startsWith("@capgate/capability-");
// The bottom of the graph: the one error base (with its cross-copy marker), which even the
// packages that stand alone (models, shell-policy) share. It depends on nothing.
const ERRORS = "@capgate/errors";
// @capgate/shell-policy stands alone at run time (the Claude Code hook loads nothing else but
// the error base); its tests run the sandbox's runner with the real policy, so the sandbox and
// the contract may be devDependencies.
const SHELL_POLICY = "@capgate/shell-policy";
const SHELL_POLICY_DEV = ["@capgate/tools", "@capgate/schema", "@capgate/sandbox"];
// The guards, each one idea on top of the contract (@capgate/tools + @capgate/schema):
// process groups (Node only, below everything that starts processes, mcp-client's stdio
// included), the workspace guard, the network guard, the sandbox, which builds on the
// three, and the git guard (git run on a tree the model wrote, nothing from the tree runs),
// which builds on the sandbox and the workspace guard. A capability depends on the guards
// it uses, as peers, like the contract.
const PROCESS_GROUP = "@capgate/process-group";
const WORKSPACE = "@capgate/workspace";
const NET_GUARD = "@capgate/net-guard";
const SANDBOX = "@capgate/sandbox";
const GIT_GUARD = "@capgate/git-guard";
const CONTRACT = ["@capgate/tools", "@capgate/schema"];
const GUARDS = [PROCESS_GROUP, WORKSPACE, NET_GUARD, SANDBOX, GIT_GUARD, SHELL_POLICY];
const HOST = "@capgate/host";
// Test support every package's tests may use: private, reached only through devDependencies,
// and depending on nothing of ours but other test support (the PostgreSQL cluster asks
// system-parts whether PostgreSQL is here). Test helpers never ship inside a published package.
const TEST_SUPPORT = ["@capgate/test-system-parts", "@capgate/test-postgres"];
const allowed = (from, to) => {
  if (from === "@capgate/bench" || from === "@capgate/e2e") return true;
  if (TEST_SUPPORT.includes(from))
    return from === "@capgate/test-postgres" && to === "@capgate/test-system-parts";
  if (TEST_SUPPORT.includes(to)) return packages.get(from)?.pkg.devDependencies?.[to] !== undefined;
  switch (from) {
    case ERRORS:
    case PROCESS_GROUP:
      return false;
    case "@capgate/schema":
      return to === ERRORS;
    case SHELL_POLICY:
      return to === ERRORS || SHELL_POLICY_DEV.includes(to);
    case WORKSPACE:
    case NET_GUARD:
      return CONTRACT.includes(to);
    case SANDBOX:
      return CONTRACT.includes(to) || [PROCESS_GROUP, WORKSPACE, NET_GUARD].includes(to);
    case "@capgate/registry":
      return to === "@capgate/schema";
    case "@capgate/search-semantic":
      // The optional semantic ranker: it implements @capgate/registry's ranker interface.
      return to === "@capgate/registry";
    case "@capgate/router":
      return ["@capgate/schema", "@capgate/registry"].includes(to);
    case "@capgate/profiles":
      return ["@capgate/schema", "@capgate/registry", "@capgate/router"].includes(to);
    case "@capgate/tools":
      return to === "@capgate/schema";
    case GIT_GUARD:
      return CONTRACT.includes(to) || [SANDBOX, WORKSPACE].includes(to);
    case "@capgate/mcp-client":
      // Process groups for its stdio servers (the ./stdio entry; the root stays runtime-neutral).
      return to === "@capgate/schema" || to === PROCESS_GROUP;
    case "@capgate/models":
      return to === ERRORS;
    case "@capgate/loop":
      return CORE.includes(to) && to !== "@capgate/loop";
    case "@capgate/telemetry":
      // Opt-in OpenTelemetry: it reads the loop's events and nothing else of ours.
      return ["@capgate/loop", "@capgate/schema"].includes(to);
    case "@capgate/harness":
      // The guard packages too: the harness provides the peers of the capabilities it composes.
      return (
        CORE.includes(to) ||
        isCapability(to) ||
        GUARDS.includes(to) ||
        to === "@capgate/search-semantic" ||
        to === "@capgate/telemetry"
      );
    case "@capgate/postgres":
      // The database side stays out of the core: it implements loop's interfaces and nothing more.
      // The git guard: a run's checkout is a tree the model wrote, and publishing it runs git.
      return ["@capgate/loop", "@capgate/schema", "@capgate/tools", GIT_GUARD].includes(to);
    case "@capgate/eval":
      // The evaluation harness: runs the loop through the harness; apps render it.
      return to === "@capgate/harness" || CORE.includes(to);
    case "@capgate/host":
      // What a frontend needs (runs, the run feed, approvals, MCP logins, elicitations and
      // gate sessions): above the harness, and the one package that reaches the database side.
      return to === "@capgate/harness" || to === "@capgate/postgres" || CORE.includes(to);
    case "@capgate/examples":
      // Frontends built on the host alone: that they need nothing else is the point.
      return to === HOST;
    case "@capgate/server":
      // Its queue-mode tests break a real database under it: postgres as a devDependency only.
      if (to === "@capgate/postgres") return packages.get(from)?.pkg.devDependencies?.[to] !== undefined;
      return to === "@capgate/harness" || to === HOST || CORE.includes(to);
    case "capgate":
      return (
        to === "@capgate/harness" ||
        to === HOST ||
        to === "@capgate/server" ||
        to === "@capgate/eval" ||
        CORE.includes(to)
      );
  }
  if (isCapability(from)) {
    // The contract, and the guards it uses: shell-policy for capabilities that run command
    // lines (shell, mcp's ad-hoc servers), the sandbox for those that start processes, the
    // workspace guard for paths, the network guard for URLs, git-guard for the one that runs
    // git. Never the host.
    if (CONTRACT.includes(to) || GUARDS.includes(to)) return true;
    return from === "@capgate/capability-mcp" && to === "@capgate/mcp-client";
  }
  return false;
};

const problems = [];
for (const [name, { deps, pkg }] of packages) {
  for (const dep of deps) {
    if (!packages.has(dep)) problems.push(`${name}: depends on unknown workspace package ${dep}`);
    else if (!allowed(name, dep)) problems.push(`${name}: may not depend on ${dep} (SPEC §1 graph)`);
  }
  if (name === SHELL_POLICY) {
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })) {
      if (dep.startsWith("@capgate/") && dep !== ERRORS)
        problems.push(`${name}: may not depend on ${dep} at run time (devDependencies only, for its tests)`);
    }
  }
  // One copy of the contract and of each guard in an install, shared with the host: the
  // sandbox keeps process-wide state (running sandboxes, egress proxies, tracked groups).
  if (isCapability(name) || GUARDS.includes(name)) {
    for (const dep of [...CONTRACT, ...GUARDS]) {
      if (pkg.dependencies?.[dep])
        problems.push(`${name}: ${dep} must be a peer dependency, not a dependency`);
    }
  }
}

// Cycles over declared dependencies.
const state = new Map();
const visit = (n, path) => {
  if (state.get(n) === 2) return;
  if (state.get(n) === 1) {
    problems.push(`cycle: ${[...path.slice(path.indexOf(n)), n].join(" → ")}`);
    return;
  }
  state.set(n, 1);
  for (const d of packages.get(n)?.deps ?? []) if (packages.has(d)) visit(d, [...path, n]);
  state.set(n, 2);
};
for (const n of packages.keys()) visit(n, []);

// Source imports: declared, allowed, no deep src imports, no escaping relative imports.
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;
function* sourceFiles(dir) {
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry === "dist") continue;
    const p = join(dir, entry);
    const st = statSync(p);
    if (st.isDirectory()) yield* sourceFiles(p);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry)) yield p;
  }
}
for (const [name, { dir, deps }] of packages) {
  const src = join(dir, "src");
  if (!existsSync(src)) continue;
  for (const file of sourceFiles(src)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      const where = relative(root, file);
      if (spec.startsWith(".")) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(`${dir}/`))
          problems.push(`${where}: relative import '${spec}' leaves the package`);
        continue;
      }
      const parts = spec.split("/");
      const pkgName = spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
      if (!(pkgName.startsWith("@capgate/") || pkgName === "capgate")) continue;
      if (/\/src(\/|$)/.test(spec)) problems.push(`${where}: imports another package's src/ (${spec})`);
      const isTest = /\.test\.tsx?$/.test(file);
      if (name === SHELL_POLICY && !isTest && pkgName !== ERRORS)
        problems.push(`${where}: imports ${pkgName}, but @capgate/shell-policy stands alone at run time`);
      if (/\/apps\/cli\/src\/hook\//.test(file) && !isTest && pkgName !== SHELL_POLICY)
        problems.push(
          `${where}: the hook loads only @capgate/shell-policy (it runs on every Bash call), not ${pkgName}`,
        );
      if (pkgName === name) problems.push(`${where}: imports its own package by name (${spec})`);
      else if (!deps.has(pkgName)) problems.push(`${where}: imports ${pkgName} without declaring it`);
      else if (!allowed(name, pkgName)) problems.push(`${where}: may not import ${pkgName} (SPEC §1 graph)`);
    }
  }
}

// Module cycles inside a package: imports between its own source files must be one-way,
// type-only imports included (a type imported back from an implementation is a cycle in
// what a reader must hold in mind, even though the build erases it; the type belongs beside
// the interface). TypeScript's own scanner finds the imports, so comments, strings and
// multi-line import lists read as the compiler reads them. Each strongly connected group
// of files counts as one cycle.
function resolveModule(from, spec) {
  const base = resolve(dirname(from), spec);
  const candidates = [
    base,
    base.replace(/\.js$/, ".ts"),
    base.replace(/\.js$/, ".tsx"),
    `${base}.ts`,
    join(base, "index.ts"),
  ];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}
function moduleCycles(files) {
  const edges = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = [];
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = resolveModule(file, fileName);
      if (target) targets.push(target);
    }
    edges.set(file, targets);
  }
  // Tarjan's strongly connected components, iteratively (no recursion limit on long chains).
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      const out = edges.get(v) ?? [];
      if (i < out.length) {
        frame[1]++;
        const w = out[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const group = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          group.push(w);
        } while (w !== v);
        if (group.length > 1 || out.includes(v)) groups.push(group.sort());
      }
    }
  }
  return groups;
}
let cycleCount = 0;
for (const [name, { dir }] of packages) {
  const roots = ["src", "test", "test-support"].map((d) => join(dir, d)).filter((d) => existsSync(d));
  const files = roots.flatMap((r) => [...sourceFiles(r)]);
  for (const group of moduleCycles(files)) {
    cycleCount++;
    problems.push(`${name}: module cycle among ${group.map((f) => relative(dir, f)).join(", ")}`);
  }
}

// The drawing in docs/architecture.md is generated from the same package.json files.
{
  const doc = readFileSync(DOC, "utf8");
  let current;
  try {
    current = withGraph(doc, renderGraph()) === doc;
  } catch (error) {
    problems.push(`${relative(root, DOC)}: ${error.message}`);
    current = true;
  }
  if (!current)
    problems.push(
      `${relative(root, DOC)}: the package graph is stale; run node scripts/graph-doc.mjs --write`,
    );
}

if (problems.length > 0) {
  console.error(`dependency graph: ${problems.length} problem(s), ${cycleCount} module cycle(s)`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log(
  `dependency graph: ok (${packages.size} packages, one-way; 0 cycles between packages, 0 between modules, type-only imports included)`,
);
