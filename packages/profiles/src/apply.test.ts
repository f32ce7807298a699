import { Router } from "@capgate/router";
import { type CapabilityManifest, CapgateError } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { applyProfile, type ManifestSource } from "./apply.js";
import { resolveProfiles } from "./config.js";
import { profiles } from "./policy.js";

function manifest(name: string, verbs: string[]): CapabilityManifest {
  return {
    name,
    version: "0.1.0",
    description: `${name} capability`,
    profileFit: [],
    tools: verbs.map((v) => ({
      name: `${name}.${v}`,
      description: `${v} tool`,
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    })),
  };
}

// The ten built-in capability names with a few of their tools: enough to watch what is callable.
const BUILTINS = [
  manifest("fs", ["read", "write", "patch"]),
  manifest("shell", ["run", "start"]),
  manifest("git", ["status", "commit"]),
  manifest("web", ["fetch", "request"]),
  manifest("browser_panel", ["open", "click"]),
  manifest("cua", ["click", "screenshot"]),
  manifest("mcp", ["call"]),
  manifest("workers", ["spawn"]),
  manifest("memory", ["remember"]),
  manifest("code", ["run"]),
];

function source(manifests: CapabilityManifest[] = BUILTINS): ManifestSource & { gets: string[] } {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const gets: string[] = [];
  return {
    gets,
    get: (name) => {
      gets.push(name);
      return byName.get(name);
    },
    list: () => [...byName.values()],
  };
}

describe("applyProfile", () => {
  it("loads the profile's preload set and returns the loaded names, sorted", () => {
    const router = new Router();
    expect(applyProfile(router, source(), profiles.Coder)).toEqual(["fs", "git", "shell"]);
    expect(router.isToolLoaded("shell.run")).toBe(true);
    expect(router.isToolLoaded("fs.patch")).toBe(true);
    expect(applyProfile(router, source(), profiles.ComputerOperator)).toEqual(["browser_panel", "cua"]);
  });

  it("clears before loading: after Coder → Researcher, shell.run is not callable", () => {
    const router = new Router();
    applyProfile(router, source(), profiles.Coder);
    router.load(manifest("code", ["run"])); // loaded on demand during the Coder phase
    expect(applyProfile(router, source(), profiles.Researcher)).toEqual(["browser_panel", "memory", "web"]);
    for (const tool of ["shell.run", "shell.start", "fs.write", "git.commit", "code.run"])
      expect(router.isToolLoaded(tool), tool).toBe(false);
    expect(router.isToolLoaded("web.fetch")).toBe(true);
  });

  it("leaves the Orchestrator with nothing loaded, whatever was loaded before", () => {
    const router = new Router();
    applyProfile(router, source(), profiles.Verifier);
    expect(applyProfile(router, source(), profiles.Orchestrator)).toEqual([]);
    expect(router.loaded()).toEqual([]);
    expect(router.loadedSignatures()).toEqual([]);
  });

  it("rejects an unknown preload name, naming it, and leaves the router cleared", () => {
    const router = new Router();
    applyProfile(router, source(), profiles.Coder);
    const custom = { ...profiles.Coder, name: "Custom", preload: ["fs", "shel", "git"] };
    let caught: unknown;
    try {
      applyProfile(router, source(), custom);
    } catch (error) {
      caught = error;
    }
    expect(CapgateError.isInstance(caught)).toBe(true);
    const err = caught as CapgateError;
    expect(err.code).toBe("unknown_capability");
    expect(err.message).toContain("'shel'");
    expect(err.message).toContain("Did you mean 'shell'?");
    expect(err.property).toBe("profiles.Custom.preload[1]");
    // Neither the old Coder set nor a half-loaded "fs" survives.
    expect(router.loaded()).toEqual([]);
    expect(router.isToolLoaded("shell.run")).toBe(false);
  });

  it("works with a source that has only get (no suggestions then)", () => {
    const router = new Router();
    const only = { get: (n: string) => BUILTINS.find((m) => m.name === n) };
    expect(applyProfile(router, only, profiles.Researcher)).toEqual(["browser_panel", "memory", "web"]);
    expect(() => applyProfile(router, only, { ...profiles.Coder, preload: ["nope"] })).toThrow(/'nope'/);
    expect(router.loaded()).toEqual([]);
  });

  it("clears again when a load fails midway, never leaving a half-loaded set", () => {
    const router = new Router();
    // Two manifests that claim the same tool: the second load throws tool_conflict.
    const clash = source([
      manifest("fs", ["read"]),
      { ...manifest("fs2", []), tools: manifest("fs", ["read"]).tools },
    ]);
    const profile = { ...profiles.Coder, name: "Clash", preload: ["fs", "fs2"] };
    expect(() => applyProfile(router, clash, profile)).toThrow(/already provided/);
    expect(router.loaded()).toEqual([]);
  });

  it("applies profiles resolved from config, with their own preload sets", () => {
    const set = resolveProfiles({
      Reviewer: {
        promptDelta: "Read the diff and report problems with evidence.",
        charBudget: 40000,
        preload: ["git", "fs"],
      },
    });
    const router = new Router();
    expect(applyProfile(router, source(), set.Reviewer!)).toEqual(["fs", "git"]);
    expect(router.isToolLoaded("shell.run")).toBe(false);
  });
});
