import { execFileSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const CHANGESET = join(ROOT, "node_modules", "@changesets", "cli", "bin.js");

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  peerDependencies?: Record<string, string>;
}

/** Every workspace package.json (relative path → parsed). */
function workspacePackages(): string[] {
  const out = ["package.json"];
  for (const group of ["packages", "packages/capabilities", "apps", "tests", "bench"]) {
    const dir = join(ROOT, group);
    if (group === "bench") {
      out.push("bench/package.json");
      continue;
    }
    for (const name of readdirSync(dir)) {
      try {
        readFileSync(join(dir, name, "package.json"));
        out.push(`${group}/${name}/package.json`);
      } catch {
        // not a package
      }
    }
  }
  return out;
}

/**
 * A scratch copy of the repo's package.jsons and .changeset (optionally without the
 * pending changesets), plus `extra` changesets; runs `changeset version` and returns the
 * resulting version of every package.
 */
function versionScratch(extra: Record<string, string>, keepPending: boolean): Map<string, Manifest> {
  const scratch = mkdtempSync(join(tmpdir(), "capgate-changesets-"));
  try {
    for (const file of workspacePackages()) {
      mkdirSync(join(scratch, dirname(file)), { recursive: true });
      cpSync(join(ROOT, file), join(scratch, file));
    }
    cpSync(join(ROOT, "pnpm-workspace.yaml"), join(scratch, "pnpm-workspace.yaml"));
    cpSync(join(ROOT, ".changeset"), join(scratch, ".changeset"), { recursive: true });
    if (!keepPending)
      for (const f of readdirSync(join(scratch, ".changeset")))
        if (f.endsWith(".md") && f !== "README.md") rmSync(join(scratch, ".changeset", f));
    for (const [name, text] of Object.entries(extra)) writeFileSync(join(scratch, ".changeset", name), text);
    // The changelog generator resolves from the scratch copy.
    symlinkSync(join(ROOT, "node_modules"), join(scratch, "node_modules"));
    execFileSync(process.execPath, [CHANGESET, "version"], { cwd: scratch, stdio: "pipe" });
    const out = new Map<string, Manifest>();
    for (const file of workspacePackages()) {
      const m = JSON.parse(readFileSync(join(scratch, file), "utf8")) as Manifest;
      out.set(m.name, m);
    }
    return out;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const before = new Map(
  workspacePackages().map((f) => {
    const m = JSON.parse(readFileSync(join(ROOT, f), "utf8")) as Manifest;
    return [m.name, m] as const;
  }),
);
const capabilities = [...before.keys()].filter((n) => n.startsWith("@capgate/capability-"));
const major = (v: string) => Number(v.split(".")[0]);
const minor = (v: string) => Number(v.split(".")[1]);

const TOOLS_MINOR = `---
"@capgate/tools": minor
"@capgate/schema": minor
---

A new feature in tools and schema.
`;

describe("independent versions under changesets", () => {
  it("a minor of @capgate/tools and @capgate/schema leaves the capabilities alone", () => {
    const after = versionScratch({ "tools-minor.md": TOOLS_MINOR }, false);
    expect(after.get("@capgate/tools")?.version).toBe("0.2.0");
    expect(after.get("@capgate/schema")?.version).toBe("0.2.0");
    for (const name of capabilities) {
      const was = before.get(name)?.version ?? "";
      const now = after.get(name)?.version ?? "";
      expect(major(now), `${name} ${was} → ${now}`).toBe(major(was));
      expect(minor(now), `${name} ${was} → ${now}`).toBe(minor(was));
      // Their peer range still admits the new tools/schema.
      expect(after.get(name)?.peerDependencies?.["@capgate/tools"]).toBe(">=0.1.0 <1");
    }
  });

  it("with every pending changeset too, no capability gets a major", () => {
    const after = versionScratch({ "tools-minor.md": TOOLS_MINOR }, true);
    for (const name of capabilities) {
      const was = before.get(name)?.version ?? "";
      const now = after.get(name)?.version ?? "";
      expect(major(now), `${name} ${was} → ${now}`).toBe(major(was));
    }
  });

  it("the peer ranges are the contract: every capability admits every 0.x of tools, schema and the guards it uses", () => {
    // Each capability takes the contract (tools, schema) and the shared guard packages it
    // runs through (issue 19): one guard per concern, the same one every surface uses.
    const guards: Record<string, string[]> = {
      "@capgate/capability-browser-panel": ["net-guard", "sandbox", "workspace"],
      "@capgate/capability-code": ["sandbox", "workspace"],
      "@capgate/capability-cua": ["sandbox", "workspace"],
      "@capgate/capability-fs": ["workspace"],
      // git runs git on model-written trees only through the hardened git of git-guard.
      "@capgate/capability-git": ["git-guard", "sandbox", "workspace"],
      // mcp's ad-hoc servers are command lines: the shell policy, the sandbox, a process group.
      "@capgate/capability-mcp": ["process-group", "sandbox", "shell-policy"],
      "@capgate/capability-memory": [],
      "@capgate/capability-script": [],
      "@capgate/capability-shell": ["sandbox", "shell-policy", "workspace"],
      "@capgate/capability-web": ["net-guard"],
      "@capgate/capability-workers": [],
    };
    expect([...capabilities].sort()).toEqual(Object.keys(guards).sort());
    for (const name of capabilities) {
      const expected: Record<string, string> = {
        "@capgate/schema": ">=0.1.0 <1",
        "@capgate/tools": ">=0.1.0 <1",
      };
      for (const guard of guards[name] ?? []) expected[`@capgate/${guard}`] = ">=0.1.0 <1";
      expect(before.get(name)?.peerDependencies, name).toEqual(expected);
    }
  });
});
